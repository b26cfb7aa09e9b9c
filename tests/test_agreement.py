"""Cohen's κ of EXAM labels against official judgments: hand-worked and published examples, CLI."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from exampp.analysis.label_agreement import (
    Confusion,
    cohen_kappa,
    cohen_kappa_counts,
    confusion,
    graded_confusion,
    kappa_table,
    overlap,
)
from exampp.cli import main

EXAM = {"q1": {"d1": 5, "d2": 3, "d3": 0, "d4": 4}, "q2": {"d5": 1, "d6": 2, "d7": 5}}
OFFICIAL = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 1, "d9": 1}, "q2": {"d5": 0, "d6": 1}, "q3": {"x": 1}}
# Judged in both (exam, official): d1 (5,2) d2 (3,0) d3 (0,1) d4 (4,1) d5 (1,0) d6 (2,1);
# d7 only in EXAM, d9 and q3/x only official. Officially relevant (rel >= 1): d1 d3 d4 d6.


@pytest.mark.parametrize(
    "table, kappa",
    [
        # Wikipedia "Cohen's kappa", simple example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no
        #   p_o = 35/50 = .7; p_e = .5·.6 + .5·.4 = .5; κ = .2/.5 = .4
        (Confusion(tp=20, fp=5, fn=10, tn=15), 0.4),
        # Wikipedia, "same agreement, different kappa": 45/15/25/15 -> 0.1304, 25/35/5/35 -> 0.2593
        (Confusion(tp=45, fp=15, fn=25, tn=15), 0.1304),
        (Confusion(tp=25, fp=35, fn=5, tn=35), 0.2593),
    ],
)
def test_published_examples(table, kappa):
    assert cohen_kappa(table) == pytest.approx(kappa, abs=5e-5)


@pytest.mark.parametrize("tp, fp, fn, tn", [(1, 2, 3, 4), (10, 0, 3, 7), (0, 5, 5, 0), (8, 1, 1, 8), (3, 9, 2, 40)])
def test_kappa_matches_closed_form(tp, fp, fn, tn):
    # An independent route for 2x2 tables: κ = 2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d))
    a, b, c, d = tp, fp, fn, tn
    expected = 2 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d))
    assert cohen_kappa(Confusion(tp, fp, fn, tn)) == pytest.approx(expected)


@pytest.mark.parametrize("tp, fp, fn, tn", [(20, 5, 10, 15), (45, 15, 25, 15), (1, 2, 3, 4), (5, 0, 0, 0)])
def test_kappa_of_count_tables_is_kappa_of_a_confusion_on_two_levels(tp, fp, fn, tn):
    # rows the EXAM label, columns the official one: [[tn, fp], [fn, tp]] (0 first)
    value = cohen_kappa_counts(np.array([[tn, fp], [fn, tp]]))
    expected = cohen_kappa(Confusion(tp, fp, fn, tn))
    assert math.isnan(value) if math.isnan(expected) else value == pytest.approx(expected)


def test_undefined_kappa_is_nan():
    assert math.isnan(cohen_kappa(Confusion(5, 0, 0, 0)))  # everyone says relevant: p_e = 1
    assert math.isnan(cohen_kappa(Confusion(0, 0, 0, 0)))
    assert cohen_kappa(Confusion(3, 0, 0, 3)) == 1.0


def test_kappa_table_hand_worked():
    table = kappa_table(EXAM, OFFICIAL)
    assert list(table.index) == [1, 2, 3, 4, 5]
    assert (table["n"] == 6).all()
    counts = {tau: tuple(table.loc[tau, ["tp", "fp", "fn", "tn"]]) for tau in table.index}
    # tau 1: EXAM relevant d1 d2 d4 d5 d6 -> tp d1 d4 d6, fp d2 d5, fn d3
    assert counts[1] == (3, 2, 1, 0)
    assert counts[3] == (2, 1, 2, 1)  # EXAM relevant d1 d2 d4
    assert counts[4] == (2, 0, 2, 2)  # EXAM relevant d1 d4
    # tau 1: p_o = 3/6, p_e = 5/6·4/6 + 1/6·2/6 = 22/36 -> κ = (18 - 22) / (36 - 22) = -2/7
    assert table.loc[1, "kappa"] == pytest.approx(-2 / 7)
    # tau 2: p_o = 4/6, p_e = 4/6·4/6 + 2/6·2/6 = 20/36 -> κ = 4/16
    assert table.loc[2, "kappa"] == pytest.approx(0.25)
    # tau 3: p_o = 3/6, p_e = 3/6·4/6 + 3/6·2/6 = 1/2 -> κ = 0
    assert table.loc[3, "kappa"] == pytest.approx(0.0)
    # tau 4: p_o = 4/6, p_e = 2/6·4/6 + 4/6·2/6 = 16/36 -> κ = 8/20
    assert table.loc[4, "kappa"] == pytest.approx(0.4)
    # tau 5: p_o = 3/6, p_e = 1/6·4/6 + 5/6·2/6 = 14/36 -> κ = 4/22
    assert table.loc[5, "kappa"] == pytest.approx(2 / 11)


def test_rel_level_and_thresholds():
    # official relevant at rel >= 2: only d1. tau 4: tp d1, fp d4, tn d2 d3 d5 d6
    #   p_o = 5/6, p_e = 2/6·1/6 + 4/6·5/6 = 22/36 -> κ = 8/14
    table = kappa_table(EXAM, OFFICIAL, rel_level=2, thresholds=[4])
    assert list(table.index) == [4]
    assert tuple(table.loc[4, ["tp", "fp", "fn", "tn"]]) == (1, 1, 0, 4)
    assert table.loc[4, "kappa"] == pytest.approx(4 / 7)
    pairs = [(5, 2), (3, 0), (0, 1)]
    assert confusion(pairs, threshold=3, rel_level=1) == Confusion(tp=1, fp=1, fn=1, tn=0)


def test_graded_confusion_and_overlap():
    graded = graded_confusion(EXAM, OFFICIAL)
    assert list(graded.index) == [0, 1, 2, 3, 4, 5] and list(graded.columns) == [0, 1, 2]
    assert graded.to_numpy().sum() == 6
    assert graded.at[5, 2] == 1 and graded.at[3, 0] == 1 and graded.at[0, 1] == 1 and graded.at[5, 0] == 0
    assert overlap(EXAM, OFFICIAL) == (6, 1, 2)


def _qrels(write, name, labels):
    return str(write(name, "".join(f"{q} 0 {d} {g}\n" for q, docs in labels.items() for d, g in docs.items())))


def test_cli_json_tsv_text(write):
    exam, official = _qrels(write, "exam.qrels", EXAM), _qrels(write, "official.qrels", OFFICIAL)
    runner = CliRunner()
    result = runner.invoke(main, ["agree", "--exam", exam, "--official", official, "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["n_pairs"], report["only_in_exam"], report["only_in_official"]) == (6, 1, 2)
    by_tau = {row["tau"]: row for row in report["thresholds"]}
    assert by_tau[4]["kappa"] == pytest.approx(0.4) and (by_tau[4]["tp"], by_tau[4]["tn"]) == (2, 2)
    assert {"exam": 5, "official": 2, "count": 1} in report["graded"]

    tsv = runner.invoke(main, ["agree", "--exam", exam, "--official", official, "--rel-level", "2", "--format", "tsv"])
    lines = tsv.output.splitlines()
    assert lines[0] == "tau\tkappa\talpha\ttp\tfp\tfn\ttn\tn"
    assert lines[4].split("\t")[0] == "4" and float(lines[4].split("\t")[1]) == pytest.approx(4 / 7)

    text = runner.invoke(main, ["agree", "--exam", exam, "--official", official])
    assert "6 passages judged in both" in text.output and "EXAM grade (rows) x official grade (columns)" in text.output
    # alpha (nominal) at tau 4: units (1,1) x2, (0,0) x2, (0,1) x2 -> o11 = o00 = 4, o01 = o10 = 2,
    # n0 = n1 = 6, n = 12: alpha = 1 - 11 * 4 / (2 * 6 * 6) = 7/18
    assert any(line.split() == ["4", "0.4000", "0.3889", "2", "0", "2", "2", "6"] for line in text.output.splitlines())


def test_cli_no_common_pairs(write):
    exam = _qrels(write, "exam.qrels", {"q1": {"a": 1}})
    official = _qrels(write, "official.qrels", {"q1": {"b": 1}})
    result = CliRunner().invoke(main, ["agree", "--exam", exam, "--official", official])
    assert result.exit_code == 1 and "no (query, docid) pair is judged in both" in result.output
