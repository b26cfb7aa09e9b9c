"""Hypothesis profiles for the robustness suite, and the count of hostile inputs it tried.

``ci`` (the default where ``$CI`` is set, as ``.ci/run`` runs): derandomized, so one commit tries
the same inputs in every run, whichever part of the suite is run (about 12,000 of them, a minute
or so on two cores). ``explore`` (the default elsewhere): random inputs, as many, with failures
kept in hypothesis's example database and replayed first next time. ``thorough``: ten times as
many random ones, for a longer hunt (about ten minutes). ``HYPOTHESIS_PROFILE`` picks one.

Hypothesis mixes constants mined from the project's loaded modules into its inputs, so which
modules happen to be imported would change the derandomized inputs (a test run alone drew other
examples than in the whole suite). Every exampp module is imported here, before any test draws,
so the constants are always the whole package's.
"""
from __future__ import annotations

import importlib
import os
import pkgutil

import pytest
from hypothesis import HealthCheck, settings

import exampp

from .checks import TRIED

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
               print_blob=True, max_examples=250)
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("explore", **_COMMON)
settings.register_profile("thorough", **{**_COMMON, "max_examples": 2500})
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "explore")
settings.load_profile(PROFILE)


def _import_all() -> None:
    for module in pkgutil.walk_packages(exampp.__path__, "exampp."):
        try:
            importlib.import_module(module.name)
        except ImportError:  # an extra not installed (torch, imported by the llm modules): their constants stay out
            pass


_import_all()


@pytest.fixture
def quick_retries(monkeypatch):
    """A malformed answer asked again at once, not after the SDK's 0.5 s and more (the served-judge tests)."""
    from exampp.llm.openai import backend as served  # an extra: imported only by the tests that use it

    monkeypatch.setattr(served, "RETRY_DELAY", 0.001)


def pytest_terminal_summary(terminalreporter) -> None:
    if TRIED:
        terminalreporter.write_line(
            f"robustness: {sum(TRIED.values())} hostile inputs tried in {len(TRIED)} property tests "
            f"(hypothesis profile {PROFILE!r})")
