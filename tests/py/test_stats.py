"""vmharness/stats.py against known values (closed forms where Student's
t has one: with 2 degrees of freedom, P(|T| >= t) = 1 - t / sqrt(2 + t^2))."""
import math

import pytest

from vmharness import stats


def p_df2(t):
    return 1 - t / math.sqrt(2 + t * t)


def test_t_quantiles():
    assert stats.t_quantile(0.975, 2) == pytest.approx(math.sqrt(1.805 / 0.0975), abs=1e-5)
    assert stats.t_quantile(0.975, 4) == pytest.approx(2.776445, abs=1e-5)
    assert stats.t_quantile(0.975, 1e6) == pytest.approx(1.959966, abs=1e-4)
    assert stats.t95(1) == pytest.approx(12.7062, abs=1e-4)


def test_t_two_sided_p_df2():
    for t in (0.5, 1.0, 3.4641, 10.0):
        assert stats.t_two_sided_p(t, 2) == pytest.approx(p_df2(t), abs=1e-9)


def test_paired_ratio_known_values():
    # log ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, se 0.1/sqrt(3), df 2
    pairs = [(100.0, 100.0 * math.exp(d)) for d in (0.1, 0.2, 0.3)]
    r = stats.paired_ratio(pairs)
    se = 0.1 / math.sqrt(3)
    h = stats.t_quantile(0.975, 2) * se
    assert r["n"] == 3
    assert r["ratio"] == pytest.approx(math.exp(0.2))
    assert r["lo"] == pytest.approx(math.exp(0.2 - h)) and r["hi"] == pytest.approx(math.exp(0.2 + h))
    assert r["p"] == pytest.approx(p_df2(0.2 / se), abs=1e-9)
    assert r["p"] == pytest.approx(0.07418, abs=1e-5)


def test_paired_ratio_carries_the_baselines_noise():
    steady = stats.paired_ratio([(100, 150), (100, 160), (100, 155)])
    noisy = stats.paired_ratio([(80, 150), (130, 160), (100, 155)])
    assert noisy["hi"] - noisy["lo"] > steady["hi"] - steady["lo"]


def test_paired_ratio_cannot_reach_minus_100_percent():
    r = stats.paired_ratio([(100, 1), (100, 90), (100, 5)])
    assert 0 < r["lo"] < r["ratio"] < r["hi"]


def test_paired_ratio_too_few_pairs():
    assert stats.paired_ratio([]) == {"n": 0, "ratio": None, "lo": None, "hi": None, "p": None}
    one = stats.paired_ratio([(100, 200)])
    assert one["n"] == 1 and one["ratio"] == pytest.approx(2.0)
    assert one["lo"] is None and one["p"] is None
    # pairs with a value <= 0 are left out
    assert stats.paired_ratio([(0, 200), (100, 0), (100, 300)])["n"] == 1
    same = stats.paired_ratio([(100, 200), (50, 100)])
    assert same["lo"] == same["hi"] == pytest.approx(2.0) and same["p"] == 0.0


def test_mean_interval_stays_above_zero():
    xs = [1.0, 100.0, 1000.0]
    n, m, sd, (lo, hi) = stats.mean_interval(xs)
    plain = m - stats.t95(2) * sd / math.sqrt(3)
    assert plain < 0 < lo
    logs = [math.log(x) for x in xs]
    lm = sum(logs) / 3
    lsd = math.sqrt(sum((v - lm) ** 2 for v in logs) / 2)
    assert lo == pytest.approx(math.exp(lm - stats.t95(2) * lsd / math.sqrt(3)))
    assert hi == pytest.approx(math.exp(lm + stats.t95(2) * lsd / math.sqrt(3)))
    assert n == 3 and m == pytest.approx(367.0)
    assert stats.mean_interval([5.0]) == (1, 5.0, None, (None, None))
    # a zero in the sample: the plain interval, cut at 0
    n, m, sd, (lo, hi) = stats.mean_interval([0.0, 1.0, 100.0])
    assert lo == 0.0 and hi > m


def test_binom_two_sided_known_values():
    # 2 of 10 at 1/2: P(X <= 2) = 56/1024, twice (symmetric).
    assert abs(stats.binom_two_sided(2, 10, 0.5) - 0.109375) < 1e-9
    assert abs(stats.binom_two_sided(5, 10, 0.5) - 1.0) < 1e-9
    assert abs(stats.binom_two_sided(0, 5, 0.5) - 0.0625) < 1e-9
    assert stats.binom_two_sided(10, 10, 0.5) < 0.002
    # Asymmetric: 2 of 3 at 0.2: P(2) = 0.096 and P(3) = 0.008 are the
    # outcomes no likelier than 2; P(0) = 0.512 and P(1) = 0.384 are not.
    assert abs(stats.binom_two_sided(2, 3, 0.2) - 0.104) < 1e-9
    assert abs(stats.binom_two_sided(0, 3, 0.2) - 1.0) < 1e-9
