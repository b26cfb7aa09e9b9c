"""Hypothesis profiles for the robustness suite, and the count of hostile inputs it tried.

``ci`` (the default): derandomized, so the same command tries the same inputs every time (about
12,000 of them, a minute or so on two cores; hypothesis also mixes in constants from the modules
loaded, so running a part of the suite may try other ones). ``HYPOTHESIS_PROFILE=thorough``: ten times as many, random ones,
for a longer hunt (about ten minutes).
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from .checks import TRIED

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
               print_blob=True)
settings.register_profile("ci", max_examples=250, derandomize=True, database=None, **_COMMON)
settings.register_profile("thorough", max_examples=2500, **_COMMON)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def pytest_terminal_summary(terminalreporter) -> None:
    if TRIED:
        terminalreporter.write_line(
            f"robustness: {sum(TRIED.values())} hostile inputs tried in {len(TRIED)} property tests "
            f"(hypothesis profile {PROFILE!r})")
