"""Prediction-powered inference (Angelopoulos et al., Science 2023; PPI++, 2023):
the rate of a judge-scored yes/no measure, corrected by the expert's grades.

The judge scores all N cases; the expert grades n of them (a random sample of the
judged cases, for the interval to be valid). With f the judge's verdict and y the
grade, and λ ∈ [0, 1] the power-tuning weight,

    θ̂ = mean_unlabelled(λ·f) + mean_graded(y − λ·f)
    se² = var_unlabelled(λ·f)/N + var_graded(y − λ·f)/n

and the interval is θ̂ ± z·se (clipped to [0, 1]). λ = 1 is plain PPI; λ = 0 ignores
the judge (the grades alone). λ is chosen from the data as PPI++ does
(cov(y, f)/((1 + n/N)·var(f)), clipped), so a poor judge costs nothing. The judge's
measured error on the graded cases is what corrects its rate on the others.

When the graded cases show no disagreement the rectifier's variance is 0 and the
interval would say the judge is never wrong; its variance is then taken as that of
one disagreement among the n graded, never less.

What ragtriage reports (``ragtriage judge``, the reports, ``check``, the app) is
:func:`ppi_stratified`, by the judge's verdict: the grading queue does not grade a
uniform random sample of all answers (narrowest first oversamples where the judge
errs), and :func:`ppi_rate` is only valid for one. :func:`ppi_rate` stays as the
reference it is cross-checked against (``ppi_py``) and the one-stratum case.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .intervals import Interval, z_of


@dataclass(frozen=True)
class PPIEstimate:
    estimate: float | None  # None: unknown (a stratum too thinly graded to measure the judge there)
    interval: Interval
    lam: float
    graded: int
    unlabelled: int
    judge_rate: float  # the judge's own rate over every judged case, uncorrected

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "interval": self.interval.to_dict(),
            "lambda": self.lam,
            "graded": self.graded,
            "unlabelled": self.unlabelled,
            "judge_rate": self.judge_rate,
        }


def tuned_lambda(y: np.ndarray, f: np.ndarray, f_unl: np.ndarray) -> float:
    """PPI++'s λ for a mean: cov(y, f) / ((1 + n/N)·var(f over every judged case)), in [0, 1]."""
    n, big_n = len(y), len(f_unl)
    if n < 2 or big_n < 1:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    var = float(np.var(np.concatenate([f, f_unl]), ddof=1))
    if var <= 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def ppi_rate(
    graded_human: ArrayLike,
    graded_judge: ArrayLike,
    unlabelled_judge: ArrayLike,
    *,
    level: float = 0.95,
    lam: float | None = None,
) -> PPIEstimate | None:
    """The PPI(++) estimate and interval of the true rate; None with fewer than 2 grades.
    ``lam``: fixed λ (1 = plain PPI); None tunes it."""
    y = np.asarray(graded_human, dtype=float)
    f = np.asarray(graded_judge, dtype=float)
    fu = np.asarray(unlabelled_judge, dtype=float)
    n, big_n = len(y), len(fu)
    if n < 2:
        return None
    judge_rate = float(np.concatenate([f, fu]).mean())
    if big_n == 0:
        lam_ = 0.0
    else:
        lam_ = tuned_lambda(y, f, fu) if lam is None else float(lam)
    rect = y - lam_ * f
    est = float((lam_ * fu).mean() if big_n else 0.0) + float(rect.mean())
    var_rect = float(np.var(rect))
    floor = (1.0 / n) * (1.0 - 1.0 / n)
    if not np.any(np.abs(y - f) > 0):  # no disagreement seen: never claim a perfect judge
        var_rect = max(var_rect, floor)
    var_imp = float(np.var(lam_ * fu)) / big_n if big_n else 0.0
    half = z_of(level) * math.sqrt(var_imp + var_rect / n)
    method = "PPI++" if lam is None else f"PPI (λ = {lam_:g})"
    iv = Interval(max(0.0, est - half), min(1.0, est + half), level, method)
    return PPIEstimate(est, iv, lam_, n, big_n, judge_rate)


@dataclass(frozen=True)
class Stratum:
    """One stratum of a stratified PPI estimate: the graded answers' grades ``y`` and the
    judge's verdicts on them ``f``, and the judge's verdicts on the answers not graded."""

    y: tuple[float, ...]
    f: tuple[float, ...]
    unlabelled: tuple[float, ...]

    @property
    def size(self) -> int:
        return len(self.y) + len(self.unlabelled)


MIN_STRATUM_GRADES = 2  # fewer graded answers in a stratum: the judge's error there is not measured


def ppi_stratified(strata: Sequence[Stratum], *, level: float = 0.95) -> PPIEstimate | None:
    """Stratified PPI (Fisch et al., NeurIPS 2024): plain PPI (λ = 1) in each stratum,
    weighted by the stratum's share w_h = N_h/N of the cases. Valid when the graded
    answers of each stratum are a random sample of it, however many each stratum got —
    the design that lets a grading queue give more grades where the judge errs more
    (and that PPI++, which needs the graded answers to be a random sample of all,
    is not valid under). None with fewer than 2 grades in all.

    With the strata the judge's verdicts (judge said yes / said no) the verdict is one
    value in each, so the estimate is the stratum means of the grades weighted by the
    judge's counts: the judge tells how many cases are in each stratum, the grades how
    often it is right there. The variance is that of two-phase sampling for
    stratification (Cochran 1977, §12.2): Σ w_h²·se_h² within the strata, plus
    Σ w_h·(θ_h − θ)²/N for the shares w_h being themselves measured on N answers. A
    stratum whose graded answers show no disagreement gets the variance of one
    disagreement among its n, never less (as :func:`ppi_rate`).

    A stratum with fewer than ``MIN_STRATUM_GRADES`` grades cannot measure the judge's
    error there, so the estimate is **unknown** (``estimate`` None, never the judge's
    uncorrected word passed off as corrected), and the interval is the worst case: the
    known strata's interval with any rate from 0 to 1 in the others — valid, but as wide
    as their share, until they are graded. A stratum of one answer, graded, is known
    (its grade), with the largest variance a yes/no has (¼)."""
    strata = [s for s in strata if s.size]
    big_n = sum(s.size for s in strata)
    if sum(len(s.y) for s in strata) < 2:
        return None
    known = var = unknown = 0.0
    means: list[tuple[float, float]] = []  # (w_h, θ̂_h) of the strata with enough grades
    every_f: list[float] = []
    n = unl = 0
    for s in strata:
        y, f, fu = (np.asarray(v, dtype=float) for v in (s.y, s.f, s.unlabelled))
        w = s.size / big_n
        every_f += [*s.f, *s.unlabelled]
        n, unl = n + len(y), unl + len(fu)
        alone = len(y) == 1 and not len(fu)  # its one answer, graded: nothing left to correct
        if len(y) < MIN_STRATUM_GRADES and not alone:
            unknown += w
            continue
        rect = y - f
        mean_f = float(fu.mean()) if len(fu) else float(f.mean())
        theta_h = mean_f + float(rect.mean())
        known += w * theta_h
        means.append((w, theta_h))
        v_rect = float(np.var(rect))
        if alone:  # one yes/no cannot show its spread: take the largest a yes/no has (¼)
            v_rect = 0.25
        elif not np.any(np.abs(rect) > 0):
            v_rect = max(v_rect, (1.0 / len(y)) * (1.0 - 1.0 / len(y)))
        v_imp = float(np.var(fu)) / len(fu) if len(fu) else 0.0
        var += w * w * (v_imp + v_rect / len(y))
    if unknown:
        var += unknown / big_n  # the shares' term, at its worst ((θ_h − θ)² ≤ 1) where θ_h is unknown
    else:
        var += sum(w * (t - known) ** 2 for w, t in means) / big_n
    half = z_of(level) * math.sqrt(var)
    method = "stratified PPI"
    if unknown:
        method += f"; {unknown:.0%} of the answers under a verdict with < {MIN_STRATUM_GRADES} grades: any rate there"
    iv = Interval(max(0.0, known - half), min(1.0, known + half + unknown), level, method)
    est = None if unknown else known
    return PPIEstimate(est, iv, 1.0, n, unl, float(np.mean(every_f)))
