"""The statistics core (ragtriage.core.stats): the issue's and evaluation.md's worked
numbers, and every test and interval cross-checked against scipy, statsmodels,
scikit-learn and ppi_py (the reference implementation of prediction-powered inference)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from ragtriage.core.stats import (
    INCONCLUSIVE,
    NO_REGRESSION,
    REGRESSION,
    PairedTable,
    benjamini_hochberg,
    bootstrap_mean,
    codes,
    compare_binary,
    compare_scores,
    decide,
    detectable_change,
    holm,
    kappa,
    mcnemar,
    newcombe_paired,
    paired_bootstrap,
    ppi_rate,
    sign_flip,
    wilson,
)
from ragtriage.core.stats.text import interval_points, p_text, points


def paired(both: int, worse: int, better: int, neither: int) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([1] * both + [1] * worse + [0] * better + [0] * neither, dtype=bool)
    b = np.array([1] * both + [0] * worse + [1] * better + [0] * neither, dtype=bool)
    return a, b


# ------------------------------------------------------------------ the worked numbers (n = 200)


def test_four_down_none_up_is_mid_p_0031_and_exact_0063():
    assert mcnemar(4, 0).p == 1 / 32 and p_text(mcnemar(4, 0).p) == "0.031"
    exact = mcnemar(4, 0, conservative=True).p
    assert exact == 1 / 16 and p_text(exact) == "0.063"  # written half up, as a person rounds


def test_three_flips_can_never_show_a_regression():
    """With no case improving, fewer than 4 flips never reach α = 0.05, whatever n."""
    assert mcnemar(3, 0).p > 0.05
    assert mcnemar(4, 0).p < 0.05


def test_nine_down_two_up_is_mid_p_0019():
    assert p_text(mcnemar(9, 2).p) == "0.019"


def test_newcombe_of_150_9_2_39_is_minus_35_points_within_minus_71_and_minus_01():
    t = PairedTable(both=150, worse=9, better=2, neither=39)
    assert t.n == 200
    assert round(t.delta * 100, 1) == -3.5
    iv = newcombe_paired(t)
    assert (round(iv.lo * 100, 1), round(iv.hi * 100, 1)) == (-7.1, -0.1)
    assert f"{points(t.delta)} {interval_points(iv)}" == "−3.5 pp [−7.1, −0.1]"


def test_the_worked_table_is_a_real_regression():
    a, b = paired(150, 9, 2, 39)
    g = decide([compare_binary("pass", a, b)])
    assert g.verdict == REGRESSION
    c = g.comparisons[0]
    assert c.method == "mid-p McNemar" and round(c.p, 3) == 0.019


def test_kappa_060_on_30_grades_is_about_029_to_087():
    j = [1] * 12 + [1] * 3 + [0] * 3 + [0] * 12
    h = [1] * 12 + [0] * 3 + [1] * 3 + [0] * 12
    k = kappa(j, h)
    assert round(k.kappa, 2) == 0.60
    assert 0.24 <= k.interval.lo <= 0.33 and 0.84 <= k.interval.hi <= 0.90


def test_detectable_change_of_11_discordant_in_200_is_41_points():
    d = np.array([-1.0] * 9 + [1.0] * 2 + [0.0] * 189)
    assert round(detectable_change(d) * 100, 1) == 4.1


# ------------------------------------------------------------------ cross-checks


@pytest.mark.parametrize("worse,better", [(0, 0), (1, 0), (4, 0), (9, 2), (2, 9), (30, 17), (400, 350)])
def test_mcnemar_against_scipy_binomtest_and_statsmodels(worse, better):
    n = worse + better
    exact = sps.binomtest(worse, n, 0.5, alternative="greater").pvalue if n else 1.0
    assert mcnemar(worse, better, conservative=True).p == pytest.approx(exact, rel=1e-9)
    mid = exact - 0.5 * (sps.binom.pmf(worse, n, 0.5) if n else 1.0)
    assert mcnemar(worse, better).p == pytest.approx(mid, rel=1e-9, abs=1e-15)
    if n and worse >= better:  # statsmodels' exact test is two-sided: twice the smaller tail
        two = sm_mcnemar([[10, worse], [better, 10]], exact=True).pvalue
        assert min(1.0, 2 * mcnemar(worse, better, conservative=True).p) == pytest.approx(two, rel=1e-9)


def test_mcnemar_beyond_2000_discordant_cases_in_log_space():
    exact = sps.binomtest(2100, 4000, 0.5, alternative="greater").pvalue
    assert mcnemar(2100, 1900, conservative=True).p == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("x,n", [(0, 10), (1, 10), (7, 8), (8, 8), (152, 200), (500, 1000), (3, 7)])
def test_wilson_against_statsmodels(x, n):
    iv = wilson(x, n)
    lo, hi = proportion_confint(x, n, alpha=0.05, method="wilson")
    assert (iv.lo, iv.hi) == pytest.approx((lo, hi), abs=1e-12)


def test_newcombe_without_correlation_is_newcombes_unpaired_interval():
    """With φ = 0 (here ad − bc = 0), method 10 for paired data reduces to Newcombe's
    hybrid score interval for two independent rates of the same n."""
    t = PairedTable(both=40, worse=10, better=20, neither=5)  # ad = bc = 200
    iv = newcombe_paired(t)
    lo, hi = confint_proportions_2indep(
        t.both + t.better, t.n, t.both + t.worse, t.n, method="newcomb", compare="diff"
    )
    assert (iv.lo, iv.hi) == pytest.approx((lo, hi), abs=1e-12)


def test_newcombe_covers_the_true_difference_at_least_94_percent():
    rng = np.random.default_rng(7)
    probs = [0.70, 0.10, 0.05, 0.15]  # both, worse, better, neither: true Δ = −0.05
    hits = 0
    for _ in range(2000):
        cells = rng.multinomial(150, probs)
        hits += newcombe_paired(PairedTable(*map(int, cells))).contains(-0.05)
    assert hits / 2000 >= 0.94


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sign_flip_exact_matches_scipy_permutation_test(seed):
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(-0.05, 0.2, 12), 3)
    ours = sign_flip(d)
    ref = sps.permutation_test(
        (d,), np.sum, permutation_type="samples", alternative="less", n_resamples=np.inf
    ).pvalue
    assert "exact" in ours.method
    assert ours.p == pytest.approx(ref, rel=1e-9)


def test_sign_flip_monte_carlo_matches_scipy_and_uses_k_plus_1_over_m_plus_1():
    rng = np.random.default_rng(4)
    d = rng.normal(-0.03, 0.2, 300)
    ours = sign_flip(d)
    assert "Monte Carlo" in ours.method
    k = round(ours.p * 10000 - 1)  # p = (k + 1) / (m + 1) with m = 9999
    assert ours.p == pytest.approx((k + 1) / 10000, abs=1e-12)
    ref = sps.permutation_test(
        (d,), np.sum, permutation_type="samples", alternative="less", n_resamples=9999, rng=5
    ).pvalue
    assert ours.p == pytest.approx(ref, abs=0.01)
    assert sign_flip(d).p == ours.p  # a fixed seed: the same runs, the same p


def test_sign_flip_of_yes_no_differences_is_the_exact_mcnemar():
    a, b = paired(150, 9, 2, 39)
    d = b.astype(float) - a.astype(float)
    assert sign_flip(d).p == pytest.approx(mcnemar(9, 2, conservative=True).p, rel=1e-12)
    assert sign_flip(d, mid_p=True).p == pytest.approx(mcnemar(9, 2).p, rel=1e-12)


def test_clustered_sign_flip_flips_whole_clusters():
    """Four flips in one document are one piece of evidence, not four."""
    d = np.array([-1.0] * 4 + [0.0] * 196)
    one_doc = codes(["doc-a"] * 4 + [f"d{i}" for i in range(196)])
    assert sign_flip(d, one_doc, mid_p=True).p == pytest.approx(0.25)  # one cluster: ±4
    assert sign_flip(d, mid_p=True).p == pytest.approx(mcnemar(4, 0).p)


def test_clustered_exact_sign_flip_by_enumeration_for_scores():
    d = np.array([-0.5, -0.25, 0.1, -0.3, 0.0, -0.2])
    cl = np.array([0, 0, 1, 2, 2, 3])
    s = np.bincount(cl, weights=d)
    ref = sps.permutation_test(
        (s,), np.sum, permutation_type="samples", alternative="less", n_resamples=np.inf
    ).pvalue
    assert sign_flip(d, cl).p == pytest.approx(ref, rel=1e-12)


def test_paired_bootstrap_matches_scipy_bootstrap():
    rng = np.random.default_rng(11)
    d = rng.normal(-0.04, 0.25, 400).clip(-1, 1)
    ours = paired_bootstrap(d)
    ref = sps.bootstrap((d,), np.mean, method="percentile", n_resamples=20000, rng=3).confidence_interval
    assert ours.lo == pytest.approx(ref.low, abs=0.004)
    assert ours.hi == pytest.approx(ref.high, abs=0.004)
    assert paired_bootstrap(d) == ours  # deterministic


def test_cluster_bootstrap_is_wider_than_case_bootstrap_when_clusters_move_together():
    rng = np.random.default_rng(5)
    effects = rng.normal(0, 0.3, 50)
    d = np.repeat(effects, 10) + rng.normal(0, 0.05, 500)
    cl = np.repeat(np.arange(50), 10)
    plain = paired_bootstrap(d.clip(-1, 1))
    clustered = paired_bootstrap(d.clip(-1, 1), cl)
    assert (clustered.hi - clustered.lo) > 2.5 * (plain.hi - plain.lo)


def test_cluster_bootstrap_of_a_rate_against_a_manual_cluster_resample():
    rng = np.random.default_rng(8)
    cl = np.repeat(np.arange(40), 5)
    v = (rng.random(200) < np.repeat(rng.uniform(0.3, 0.95, 40), 5)).astype(float)
    ours = bootstrap_mean(v, cl, bounds=(0, 1))
    sums, sizes = np.bincount(cl, weights=v), np.bincount(cl)
    r = np.random.default_rng(99)
    draws = []
    for _ in range(20000):
        i = r.integers(0, 40, 40)
        draws.append(sums[i].sum() / sizes[i].sum())
    lo, hi = np.quantile(draws, [0.025, 0.975])
    assert (ours.lo, ours.hi) == pytest.approx((lo, hi), abs=0.01)


def test_holm_and_bh_against_statsmodels():
    ps = [0.01, 0.04, 0.03, 0.2, 0.005, 0.5]
    assert holm(ps) == pytest.approx(list(multipletests(ps, method="holm")[1]))
    assert benjamini_hochberg(ps) == pytest.approx(list(multipletests(ps, method="fdr_bh")[1]))


def test_kappa_against_sklearn_and_its_interval_against_scipy_bootstrap():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(3)
    h = rng.random(60) < 0.6
    j = np.where(rng.random(60) < 0.8, h, ~h)
    k = kappa(j, h)
    assert k.kappa == pytest.approx(cohen_kappa_score(j, h))

    def stat(jj, hh, axis=-1):  # κ from the confusion cells, for scipy's vectorised resamples
        yy = np.sum(jj & hh, axis=axis)
        nn = np.sum(~jj & ~hh, axis=axis)
        n = jj.shape[axis]
        pj, ph = np.sum(jj, axis=axis) / n, np.sum(hh, axis=axis) / n
        pe = pj * ph + (1 - pj) * (1 - ph)
        return ((yy + nn) / n - pe) / (1 - pe)

    assert stat(j, h) == pytest.approx(cohen_kappa_score(j, h))
    ref = sps.bootstrap(
        (j, h), stat, paired=True, method="percentile", n_resamples=20000, rng=1
    ).confidence_interval
    # the interval is the bootstrap's, widened to the κ of the Wilson interval of agreement
    agree = int(np.sum(j == h))
    wl, wh = proportion_confint(agree, 60, method="wilson")
    pe = j.mean() * h.mean() + (1 - j.mean()) * (1 - h.mean())
    want = (min(ref.low, (wl - pe) / (1 - pe)), max(ref.high, (wh - pe) / (1 - pe)))
    assert (k.interval.lo, k.interval.hi) == pytest.approx(want, abs=0.03)


def test_perfect_agreement_on_few_grades_is_not_a_certainty():
    k = kappa([1, 1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 0, 0, 0])
    assert k.kappa == 1.0
    assert k.interval.hi == 1.0 and k.interval.lo < 0.5


def test_kappa_undefined_when_both_raters_say_one_word():
    assert kappa([1, 1, 1], [1, 1, 1]).kappa is None


# ------------------------------------------------------------------ prediction-powered inference


def _judge_data(seed: int, n: int = 80, big_n: int = 2000, err: float = 0.05, bias: float = 0.3):
    rng = np.random.default_rng(seed)
    y_all = (rng.random(n + big_n) < 0.7).astype(float)
    flip = rng.random(n + big_n) < err
    f_all = np.where(flip, 1 - y_all, y_all)
    f_all = np.where((y_all == 0) & (rng.random(n + big_n) < bias), 1.0, f_all)  # says yes too often
    return y_all[:n], f_all[:n], f_all[n:], y_all


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppi_matches_ppi_py_tuned_and_plain(seed):
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    y, f, fu, _ = _judge_data(seed)
    ours = ppi_rate(y, f, fu)
    lo, hi = ppi_mean_ci(y, f, fu, alpha=0.05)
    assert ours.estimate == pytest.approx(float(ppi_mean_pointestimate(y, f, fu)[0]), abs=1e-9)
    assert (ours.interval.lo, ours.interval.hi) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
    plain = ppi_rate(y, f, fu, lam=1.0)
    lo, hi = ppi_mean_ci(y, f, fu, alpha=0.05, lam=1.0)
    assert (plain.interval.lo, plain.interval.hi) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)


def test_ppi_corrects_a_judge_that_says_yes_too_often_and_covers_the_truth():
    covered = 0
    runs = 300
    for seed in range(runs):
        y, f, fu, y_all = _judge_data(seed)
        est = ppi_rate(y, f, fu)
        truth = float(y_all.mean())
        covered += est.interval.contains(truth)
    assert covered / runs >= 0.93
    y, f, fu, y_all = _judge_data(0)
    est = ppi_rate(y, f, fu)
    assert est.judge_rate > y_all.mean() + 0.015  # the judge alone is biased upward
    assert abs(est.estimate - y_all.mean()) < abs(est.judge_rate - y_all.mean())


def test_ppi_with_no_disagreement_still_has_width():
    y = np.array([1.0] * 25 + [0.0] * 5)
    est = ppi_rate(y, y.copy(), np.array([1.0] * 900 + [0.0] * 100))
    assert est.interval.hi - est.interval.lo > 0.05


# ------------------------------------------------------------------ verdicts


def test_no_change_on_many_cases_is_no_regression_beyond_a_margin():
    a, b = paired(900, 5, 6, 89)
    g = decide([compare_binary("pass", a, b)], margin=0.02)
    assert g.verdict == NO_REGRESSION


def test_small_set_is_inconclusive_with_its_detectable_change():
    a, b = paired(20, 2, 1, 7)
    g = decide([compare_binary("pass", a, b)], margin=0.0)
    assert g.verdict == INCONCLUSIVE
    assert g.comparisons[0].detectable > 0.1


def test_margin_keeps_a_small_significant_drop_from_being_a_real_regression():
    a, b = paired(9000, 60, 20, 920)  # Δ −0.4 pp, p tiny
    c = compare_binary("pass", a, b)
    assert decide([c], margin=0.0).verdict == REGRESSION
    c = compare_binary("pass", a, b)
    assert decide([c], margin=0.01).verdict == NO_REGRESSION


def test_holm_across_gated_metrics_can_undo_a_lone_small_p():
    a, b = paired(150, 9, 2, 39)  # p 0.019 alone
    same = compare_binary("hit", *paired(150, 3, 3, 44))
    g = decide([compare_binary("pass", a, b), same, compare_binary("x", *paired(150, 3, 3, 44))])
    assert g.comparisons[0].p_adjusted == pytest.approx(3 * 0.019287109375)
    assert g.verdict != REGRESSION


def test_scores_compare_with_sign_flip_and_bootstrap():
    rng = np.random.default_rng(2)
    a = rng.random(300)
    b = (a - 0.06 + rng.normal(0, 0.05, 300)).clip(0, 1)
    g = decide([compare_scores("recall", a, b)])
    c = g.comparisons[0]
    assert c.verdict == REGRESSION and "sign-flip" in c.method and c.interval.hi < 0
    assert math.isclose(c.delta, float(b.mean() - a.mean()))


def test_clustered_binary_interval_is_never_narrower_than_newcombe():
    a, b = paired(150, 9, 2, 39)
    cl = codes([i // 10 for i in range(200)])
    c = compare_binary("pass", a, b, cl)
    nc = newcombe_paired(PairedTable(150, 9, 2, 39))
    assert c.interval.lo <= nc.lo and c.interval.hi >= nc.hi
    assert "sign-flip over clusters" in c.method


def test_eight_agreements_of_the_readme_judge_are_kappa_1_within_031_and_1():
    k = kappa([1] * 5 + [0] * 3, [1] * 5 + [0] * 3)
    assert k.kappa == 1.0 and (round(k.interval.lo, 2), k.interval.hi) == (0.31, 1.0)


def test_clustered_exact_convolution_at_size_matches_monte_carlo_and_the_normal_limit():
    """Thousands of clusters: the grouped convolution (FFT) is still exact."""
    rng = np.random.default_rng(12)
    sizes = rng.integers(-6, 7, 3000).astype(float)
    exact = sign_flip(sizes, np.arange(3000))
    assert "exact" in exact.method
    signs = rng.choice([-1.0, 1.0], size=(8000, 3000))
    mc = float(np.mean(signs @ np.abs(sizes) <= sizes.sum()))
    assert exact.p == pytest.approx(mc, abs=0.015)
    ref = sps.norm.cdf((sizes.sum() + 0.5) / np.sqrt(np.sum(sizes**2)))
    assert exact.p == pytest.approx(ref, abs=0.01)


def test_many_non_whole_differences_use_the_normal_limit():
    rng = np.random.default_rng(13)
    d = rng.normal(-0.003, 0.2, 8000)
    res = sign_flip(d)
    assert "normal limit" in res.method
    ref = sps.permutation_test(
        (d,), np.sum, permutation_type="samples", alternative="less", n_resamples=1999, rng=1
    ).pvalue
    assert res.p == pytest.approx(ref, abs=0.03)


def test_stratified_ppi_worked_numbers():
    from ragtriage.core.stats import Stratum, ppi_stratified

    # judge yes on 100 answers (4 graded: 3 agree, 1 not), judge no on 100 (2 graded: 1 each way)
    yes = Stratum((1.0, 1.0, 1.0, 0.0), (1.0,) * 4, (1.0,) * 96)
    no = Stratum((0.0, 1.0), (0.0, 0.0), (0.0,) * 98)
    est = ppi_stratified([yes, no])
    assert est is not None
    # ½·(1 − ¼) + ½·(0 + ½) = 0.625; var = ¼·(0.1875/4) + ¼·(0.25/2) = 0.04296875 within the
    # strata, + (½·(0.75 − 0.625)² + ½·(0.5 − 0.625)²)/200 = 0.000078125 for the shares
    assert est.estimate == pytest.approx(0.625)
    half = 1.959964 * math.sqrt(0.04296875 + 0.000078125)
    assert est.interval.lo == pytest.approx(0.625 - half, abs=1e-5)
    assert est.interval.hi == pytest.approx(1.0)
    assert est.graded == 6 and est.unlabelled == 194 and est.judge_rate == pytest.approx(0.5)
    # a stratum with one grade cannot measure the judge's error: the rate is unknown (not the
    # judge's word), and the interval takes its whole share open, the shares' term at its worst
    one = ppi_stratified([yes, Stratum((1.0,), (0.0,), (0.0,) * 99)])
    assert one is not None and one.estimate is None
    assert one.interval.lo == pytest.approx(
        0.375 - 1.959964 * math.sqrt(0.25 * 0.1875 / 4 + 0.5 / 200), abs=1e-5
    )
    assert one.interval.hi == pytest.approx(1.0) and "any rate there" in one.interval.method
    assert ppi_stratified([Stratum((1.0,), (1.0,), (1.0,) * 9)]) is None  # fewer than 2 grades in all


def test_stratified_ppi_is_plain_ppi_with_one_stratum_and_covers_under_oversampling():
    import numpy as np

    from ragtriage.core.stats import Stratum, ppi_rate, ppi_stratified

    y, f, fu = (1.0, 0.0, 1.0, 1.0, 0.0), (1.0, 1.0, 1.0, 0.0, 0.0), (1.0, 0.0) * 20
    one = ppi_stratified([Stratum(y, f, fu)])
    plain = ppi_rate(y, f, fu, lam=1.0)
    assert one is not None and plain is not None
    assert one.estimate == pytest.approx(plain.estimate)
    assert one.interval.lo == pytest.approx(plain.interval.lo) and one.interval.hi == pytest.approx(
        plain.interval.hi
    )
    # oversample the stratum where the judge errs: the stratified interval still covers the truth
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(300):
        yes_truth = rng.random(900) < 0.95  # judge said yes; right 95 %
        no_truth = rng.random(100) < 0.5  # judge said no; right half the time
        ys, ns = rng.choice(900, 20, replace=False), rng.choice(100, 20, replace=False)
        est = ppi_stratified(
            [
                Stratum(tuple(yes_truth[ys].astype(float)), (1.0,) * 20, (1.0,) * 880),
                Stratum(tuple(no_truth[ns].astype(float)), (0.0,) * 20, (0.0,) * 80),
            ]
        )
        truth = (yes_truth.sum() + no_truth.sum()) / 1000
        assert est is not None
        covered += est.interval.lo <= truth <= est.interval.hi
    assert covered >= 0.9 * 300


def _bootstrap_by_the_book(values, clusters, resamples=2000, seed=20260101, level=0.95):
    """The percentile cluster bootstrap written plainly: fresh draws, every weight summed."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    if clusters is None:
        s, m = v, np.ones(len(v))
    else:
        cl = np.asarray(clusters)
        s, m = np.bincount(cl, weights=v), np.bincount(cl).astype(float)
        s, m = s[m > 0], m[m > 0]
    idx = np.random.default_rng(seed).integers(0, len(s), size=(resamples, len(s)))
    stats = s[idx].sum(axis=1) / m[idx].sum(axis=1)
    return tuple(float(x) for x in np.quantile(stats, [(1 - level) / 2, (1 + level) / 2]))


def test_the_bootstrap_is_bit_for_bit_the_plain_one_whatever_was_drawn_before():
    """The draws of one call are reused by the next of the same size (recall, then mrr, of
    one set of cases): the intervals must be exactly those of fresh draws, in any order."""
    import random

    from ragtriage.core.stats.resample import SEED, bootstrap_mean

    r = random.Random(5)
    sets = []
    for n in (40, 40, 400, 40, 3000, 3000):  # repeated sizes reuse; 3000 × 2000 > 4M is drawn in blocks
        vals = [1 / r.randint(1, 6) for _ in range(n)]
        sets.append((vals, None))
        sets.append((vals, [r.randrange(n // 4) for _ in range(n)]))
    for vals, cl in sets + sets[::-1]:
        iv = bootstrap_mean(vals, cl, seed=SEED)
        lo, hi = _bootstrap_by_the_book(vals, cl, seed=SEED)
        assert (iv.lo, iv.hi) == (lo, hi)


def _bootstrap_before(values, clusters=None, *, level=0.95, resamples=2000, seed=None, bounds=(0.0, 1.0)):
    """bootstrap_mean's resampling as it was before it drew and gathered a block of rows at
    a time: one draw of every resample at once (or of 4 million indices at a time)."""
    from ragtriage.core.stats.paired_tests import SEED
    from ragtriage.core.stats.resample import _per_cluster

    seed = SEED if seed is None else seed
    s, m = _per_cluster(np.asarray(values, dtype=float), clusters)
    c = len(s)
    stats = np.empty(resamples)
    block = max(1, min(resamples, 4_000_000 // c))
    rng = np.random.default_rng(seed)
    done = 0
    while done < resamples:
        b = min(block, resamples - done)
        idx = rng.integers(0, c, size=(b, c))
        stats[done : done + b] = s[idx].sum(axis=1) / (c if clusters is None else m[idx].sum(axis=1))
        done += b
    lo, hi = np.quantile(stats, [(1 - level) / 2, 1 - (1 - level) / 2])
    return max(bounds[0], float(lo)), min(bounds[1], float(hi))


@pytest.mark.parametrize("n", [2, 3, 31, 64, 65, 777, 1501, 2001, 4999])
@pytest.mark.parametrize("clustered", [False, True])
def test_the_blocked_bootstrap_draws_and_sums_exactly_as_before(n, clustered):
    from ragtriage.core.stats import bootstrap_mean

    rng = np.random.default_rng(n)
    for values in (rng.random(n), (rng.random(n) < 0.6).astype(float), rng.choice([0, 1 / 3, 0.5, 1], n)):
        clusters = rng.integers(0, max(2, n // 3), n) if clustered else None
        if clustered:
            clusters = np.unique(clusters, return_inverse=True)[1]
        for _ in range(2):  # the second call reuses the kept draws
            iv = bootstrap_mean(values, clusters, bounds=(0.0, 1.0))
            assert (iv.lo, iv.hi) == _bootstrap_before(values, clusters), (n, clustered)


@pytest.mark.parametrize("c", [1, 2, 3, 7, 64, 777, 4999, 70_001])
def test_draws_cut_in_blocks_and_as_int32_are_the_one_int64_draw(c):
    from ragtriage.core.stats.resample import _blocks

    want = np.random.default_rng(7).integers(0, c, size=(300, c))
    got = np.vstack([part for _, part in _blocks(np.random.default_rng(7), c, 300)])
    assert got.shape == want.shape and (got == want).all()
