"""The statistics of every scenario (vmbench's report, profile, deaths,
boot), in one place: intervals of a mean and of a ratio on the log scale
(they cannot leave (0, inf)), ratios paired by repeat with a paired
t-test, Wilson intervals of a rate, Fisher's exact test of two rates, the
exact binomial test.  The distributions and tests are scipy.stats's
(Debian's python3-scipy); this module only chooses them and shapes their
answers for the callers.  tests/py/test_stats.py checks them against
known values.
"""
import functools
import math
import statistics

from scipy import stats as sps

ALPHA = 0.05


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    return float(2.0 * sps.t.sf(abs(t), df))


def t_quantile(p, df):
    """The p quantile of Student's t with df degrees of freedom."""
    return float(sps.t.ppf(p, df))


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
    kept = [(b, o) for b, o in pairs if b > 0 and o > 0]
    logs = [math.log(o / b) for b, o in kept]
    n = len(logs)
    if n == 0:
        return {"n": 0, "ratio": None, "lo": None, "hi": None, "p": None}
    r = {"n": n, "ratio": math.exp(statistics.mean(logs)), "lo": None, "hi": None, "p": None}
    if n < 2:
        return r
    m, se = _mean_se(logs)
    h = t95(n - 1) * se
    if se == 0:
        # Every pair the same ratio: the t statistic is infinite (or
        # 0/0 at a ratio of 1), where ttest_rel answers nan.
        p = 1.0 if m == 0 else 0.0
    else:
        p = float(sps.ttest_rel([math.log(o) for _, o in kept],
                                [math.log(b) for b, _ in kept]).pvalue)
    r.update(lo=math.exp(m - h), hi=math.exp(m + h), p=p)
    return r


def paired_log_ratio(by_round, base, other):
    """paired_ratio of OTHER / BASE over the rounds of BY_ROUND ({round:
    {name: value}}) as (n, ratio, lo, hi); None below 2 pairs."""
    r = paired_ratio([(v[base], v[other]) for v in by_round.values()
                      if base in v and other in v])
    return None if r["lo"] is None else (r["n"], r["ratio"], r["lo"], r["hi"])


def wilson(k, n):
    """95% interval of a binomial proportion k/n (Wilson score); (0, 1)
    when n is 0."""
    if not n:
        return (0.0, 1.0)
    ci = sps.binomtest(k, n).proportion_ci(1 - ALPHA, method="wilson")
    return (float(ci.low), float(ci.high))


def fisher_two_sided(a, b, c, d):
    """p-value of Fisher's exact test on [[a, b], [c, d]] (two-sided)."""
    return float(sps.fisher_exact([[a, b], [c, d]])[1])


def binom_two_sided(k, n, p):
    """p-value of the exact two-sided binomial test of k successes in n
    trials of probability p (outcomes no likelier than k's summed); 1
    when n is 0."""
    if not n:
        return 1.0
    return float(sps.binomtest(k, n, p).pvalue)
