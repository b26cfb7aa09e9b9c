"""Analysis of scores and labels: leaderboard correlation, label agreement."""
from exampp.analysis.agreement import Confusion, cohen_kappa, graded_confusion, kappa_table
from exampp.analysis.correlation import Correlation, correlate, per_query_correlation, round_scores, tau_ap

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
