"""Wall time of ``exampp meta-evaluate`` and ``exampp report`` on the DL19 workspace at their
defaults (1,000 bootstrap draws, IRT refitted on 50 of them at each of 5 τ), against the baseline
that computed every refit's standard errors (which nothing reads: a refit is wanted for θ alone).

Both paths give the same table (checked here); the figures are the README's.

Usage (from the repository root; build the workspace first, see scripts/reproduce_dl19.sh):
    python benchmarks/meta_evaluate.py --workspace out/dl19 [--report]
"""
from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections.abc import Iterator

import pandas as pd

import exampp.analysis.irt.models as models
from exampp.api.meta_evaluate import MetaEvaluateJob
from exampp.api.report import ReportJob

LATE = "UNH_exDL_bm25"  # submitted after the track: not on the official leaderboard


@contextlib.contextmanager
def refits_with_standard_errors() -> Iterator[None]:
    """The baseline: every IRT fit computes its standard errors."""
    plain = models.IRTModel

    class WithStandardErrors(plain):
        def __init__(self, *args, standard_errors: bool = True, **kwargs):
            super().__init__(*args, standard_errors=True, **kwargs)

    models.IRTModel = WithStandardErrors
    try:
        yield
    finally:
        models.IRTModel = plain


def timed(job) -> tuple[float, object]:
    start = time.perf_counter()
    result = job()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", default="out/dl19")
    parser.add_argument("--report", action="store_true", help="also time exampp report (at defaults)")
    args = parser.parse_args()

    def meta():
        return MetaEvaluateJob(args.workspace, exclude=[LATE], progress=False).run(warn=lambda line: None)

    now, result = timed(meta)
    with refits_with_standard_errors():
        before, baseline = timed(meta)
    pd.testing.assert_frame_equal(result.table, baseline.table)
    print(f"{'job':<14} {'now (s)':>8} {'baseline (s)':>13} {'ratio':>6}")
    print(f"{'meta-evaluate':<14} {now:8.1f} {before:13.1f} {before / now:6.2f}")
    if args.report:
        with tempfile.TemporaryDirectory() as out:
            def report():
                return ReportJob(args.workspace, out, exclude=[LATE], date="2026-01-01",
                                 progress=False).run(warn=lambda line: None)

            now, _ = timed(report)
            with refits_with_standard_errors():
                before, _ = timed(report)
        print(f"{'report':<14} {now:8.1f} {before:13.1f} {before / now:6.2f}")


if __name__ == "__main__":
    main()
