"""Analysis of scores and labels: leaderboard correlation, label agreement."""
from exampp.analysis.correlation import Correlation, correlate, per_query_correlation, round_scores, tau_ap
from exampp.analysis.label_agreement import Confusion, cohen_kappa, graded_confusion, kappa_table

__all__ = [
    "Confusion",
    "Correlation",
    "cohen_kappa",
    "correlate",
    "graded_confusion",
    "kappa_table",
    "per_query_correlation",
    "round_scores",
    "tau_ap",
]
