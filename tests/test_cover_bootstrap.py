"""`exampp cover --bootstrap`: each run's EXAM-Cover with a bootstrap interval over resampled
queries, checked against a plain loop over the same draws."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from exampp.analysis.statistics import bootstrap_samples
from exampp.api.scores import CoverJob
from exampp.cli import main
from irt_workspace import COVER, PASSAGES, QUESTIONS, graded_workspace


def test_cover_intervals_equal_a_plain_loop_over_the_same_draws(tmp_path):
    ws = graded_workspace(tmp_path / "ws", "qa|m|p", 1.0)
    result = CoverJob(ws, bootstrap=500, seed=4, confidence=0.9).run()
    board = result.leaderboard.set_index("run")
    assert list(result.leaderboard.columns) == ["run", "mean", "low", "high", "stderr", "n_queries"]
    assert board["mean"].to_dict() == pytest.approx(COVER)
    queries = sorted(PASSAGES)
    per_query = result.per_query.pivot(index="run", columns="query_id", values="cover")[queries]
    assert len(QUESTIONS) == 6
    for run in per_query.index:
        scores = per_query.loc[run].to_numpy()
        means = np.array([scores[draw].mean() for draw in bootstrap_samples(len(queries), 500, 4)])
        # two queries: the expanded 90% level is within 1e-18 of 1: the farthest resampled mean
        reach = np.abs(means - scores.mean()).max()
        expected = (max(scores.mean() - reach, scores.min()), min(scores.mean() + reach, scores.max()))
        assert (board.loc[run, "low"], board.loc[run, "high"]) == pytest.approx(expected, abs=1e-12)


def test_cover_bootstrap_on_the_command_line(tmp_path):
    ws = graded_workspace(tmp_path / "ws", "qa|m|p", 1.0)
    runner = CliRunner()
    shown = runner.invoke(main, ["cover", "-w", str(ws), "--bootstrap", "500", "--seed", "4", "--confidence", "0.9",
                                 "--format", "tsv"])
    assert shown.exit_code == 0, shown.output
    header, *rows = shown.stdout.splitlines()
    assert header.split("\t") == ["run", "mean", "low", "high", "stderr", "n_queries"] and len(rows) == 6
    refused = runner.invoke(main, ["cover", "-w", str(ws), "--bootstrap", "5", "--per-query"])
    assert refused.exit_code == 2 and "--bootstrap gives intervals of the means" in refused.output
