"""The statistics of every scenario (vmbench's report, profile, deaths,
boot), in one place: Student's t distribution, intervals of a mean and
of a ratio on the log scale (they cannot leave (0, inf)), ratios paired by
repeat with a paired t-test, Wilson intervals of a rate, Fisher's exact
test of two rates.  tests/py/test_stats.py checks them against known
values.
"""
import functools
import math
import statistics

ALPHA = 0.05


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
           + a * math.log(x) + b * math.log1p(-x))
    bt = math.exp(lbt)
    if x < (a + 1.0) / (a + b + 2.0):
        return bt * _betacf(a, b, x) / a
    return 1.0 - bt * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p, df):
    """The p quantile (p > 0.5) of Student's t, by bisection."""
    target = 2.0 * (1.0 - p)  # two-sided tail
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > target:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@functools.lru_cache(maxsize=None)
def t95(df):
    """The two-sided 95% quantile of Student's t with DF degrees of freedom."""
    return t_quantile(1 - ALPHA / 2, df)


def _mean_se(xs):
    """(mean, standard error of the mean) of XS (2 or more values)."""
    return statistics.mean(xs), statistics.stdev(xs) / math.sqrt(len(xs))


def mean_interval(xs):
    """(n, mean, sd, (lo, hi)) of a sample of positive figures: the 95%
    t interval is taken on the log scale (around the geometric mean), so
    it stays above 0; sd and the interval are None below 2 values.  A
    sample with a value <= 0 gets the plain t interval, cut at 0."""
    n = len(xs)
    if n == 0:
        return 0, None, None, (None, None)
    m = statistics.mean(xs)
    if n < 2:
        return n, m, None, (None, None)
    sd = statistics.stdev(xs)
    if min(xs) > 0:
        lm, se = _mean_se([math.log(x) for x in xs])
        h = t95(n - 1) * se
        return n, m, sd, (math.exp(lm - h), math.exp(lm + h))
    h = t95(n - 1) * sd / math.sqrt(n)
    return n, m, sd, (max(0.0, m - h), m + h)


def paired_ratio(pairs):
    """OTHER / BASE over PAIRS [(base, other)] of positive values taken
    in the same repeat: {n, ratio (geometric mean of the per-pair ratios),
    lo, hi (95% t interval on the log scale), p (paired t-test of the
    logs, two-sided)}.  Each pair's ratio carries both values' noise, so
    the baseline's own uncertainty is in the interval.  lo, hi and p are
    None below 2 pairs; pairs with a value <= 0 are left out."""
    logs = [math.log(o / b) for b, o in pairs if b > 0 and o > 0]
    n = len(logs)
    if n == 0:
        return {"n": 0, "ratio": None, "lo": None, "hi": None, "p": None}
    r = {"n": n, "ratio": math.exp(statistics.mean(logs)), "lo": None, "hi": None, "p": None}
    if n < 2:
        return r
    m, se = _mean_se(logs)
    h = t95(n - 1) * se
    r.update(lo=math.exp(m - h), hi=math.exp(m + h),
             p=(1.0 if m == 0 else 0.0) if se == 0 else t_two_sided_p(m / se, n - 1))
    return r


def paired_log_ratio(by_round, base, other):
    """paired_ratio of OTHER / BASE over the rounds of BY_ROUND ({round:
    {name: value}}) as (n, ratio, lo, hi); None below 2 pairs."""
    r = paired_ratio([(v[base], v[other]) for v in by_round.values()
                      if base in v and other in v])
    return None if r["lo"] is None else (r["n"], r["ratio"], r["lo"], r["hi"])


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


def binom_two_sided(k, n, p):
    """p-value of the exact two-sided binomial test of k successes in n
    trials of probability p (outcomes no likelier than k's summed)."""
    def prob(x):
        return math.comb(n, x) * p ** x * (1 - p) ** (n - x)
    pk = prob(k)
    return min(1.0, sum(prob(x) for x in range(n + 1) if prob(x) <= pk * (1 + 1e-9)))
