"""The statistics of the scenarios (profile, deaths, boot), in one place:
ratios paired by round with a t interval on the log scale, Wilson
intervals of a rate, Fisher's exact test of two rates.  (vmbench's
report computes its means, spreads and Welch tests in bench/lib/vmstats.py.)
"""
import math
import statistics

# Two-sided 95% t quantiles by degrees of freedom (1..30; normal after).
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
       2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
       2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
       2.048, 2.045, 2.042]


def t95(df):
    return T95[df - 1] if df <= len(T95) else 1.96


def log_ratio_interval(logs):
    """(n, geometric mean, lo, hi) of ratios given as their logs, with a
    95% t interval on the log scale (which cannot leave (0, inf)); None
    for fewer than 2."""
    if len(logs) < 2:
        return None
    m = statistics.mean(logs)
    h = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return len(logs), math.exp(m), math.exp(m - h), math.exp(m + h)


def paired_log_ratio(by_round, base, other):
    """log_ratio_interval of OTHER / BASE over the rounds of BY_ROUND
    ({round: {name: value}}) where both have a value above 0."""
    return log_ratio_interval([math.log(v[other] / v[base]) for v in by_round.values()
                               if v.get(base, 0) > 0 and v.get(other, 0) > 0])


def wilson(k, n, z=1.96):
    """95% interval of a binomial proportion k/n (Wilson score)."""
    if not n:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, (c - h) / d), min(1.0, (c + h) / d))


def fisher_two_sided(a, b, c, d):
    """p-value of Fisher's exact test on [[a, b], [c, d]]."""
    n1, n2, m1, n = a + b, c + d, a + c, a + b + c + d

    def prob(x):
        return math.comb(n1, x) * math.comb(n2, m1 - x) / math.comb(n, m1)
    p0 = prob(a)
    lo, hi = max(0, m1 - n2), min(n1, m1)
    return min(1.0, sum(prob(x) for x in range(lo, hi + 1) if prob(x) <= p0 * (1 + 1e-9)))
