"""The statistics behind every interval, comparison and judge bar (evaluation.md,
"Intervals and comparisons"). Pure functions over numbers and numpy arrays: no
Textual, no run files, no I/O; every resampling starts from one fixed seed.

- :mod:`.intervals` — Wilson, Newcombe's paired hybrid score interval
- :mod:`.paired_tests` — one-sided mid-p / exact McNemar, the paired sign-flip test
- :mod:`.resample` — paired and cluster bootstrap
- :mod:`.multiple` — Holm, Benjamini–Hochberg
- :mod:`.agreement` — Cohen's κ with its bootstrap interval
- :mod:`.ppi` — prediction-powered inference for judge-scored rates
- :mod:`.power` — the smallest detectable change
- :mod:`.compare` — the verdict of a paired comparison
"""

from .agreement import Kappa, kappa
from .compare import (
    INCONCLUSIVE,
    NO_REGRESSION,
    REGRESSION,
    Comparison,
    GateVerdict,
    compare_binary,
    compare_scores,
    decide,
)
from .intervals import Interval, PairedTable, newcombe_paired, wilson
from .multiple import benjamini_hochberg, holm
from .paired_tests import SEED, TestResult, mcnemar, sign_flip
from .power import detectable_change
from .ppi import PPIEstimate, Stratum, ppi_rate, ppi_stratified
from .resample import bootstrap_mean, codes, paired_bootstrap, robust_se

__all__ = [
    "INCONCLUSIVE",
    "NO_REGRESSION",
    "REGRESSION",
    "SEED",
    "Comparison",
    "GateVerdict",
    "Interval",
    "Kappa",
    "PPIEstimate",
    "PairedTable",
    "Stratum",
    "TestResult",
    "benjamini_hochberg",
    "bootstrap_mean",
    "codes",
    "compare_binary",
    "compare_scores",
    "decide",
    "detectable_change",
    "holm",
    "kappa",
    "mcnemar",
    "newcombe_paired",
    "paired_bootstrap",
    "ppi_rate",
    "ppi_stratified",
    "robust_se",
    "sign_flip",
    "wilson",
]
