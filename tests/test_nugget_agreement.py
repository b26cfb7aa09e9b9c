"""The agreement of two nugget assignments (`nuggets agree`): κ, α and run-level correlations,
worked out by hand on a small table."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from exampp.analysis.label_agreement import cohen_kappa_counts
from exampp.analysis.nugget_agreement import NoCommonNuggets
from exampp.api.nugget_agreement import assignment_agreement
from exampp.cli import main
from exampp.errors import ExamppError
from exampp.formats.nugget_assignments import ASSIGNMENTS, Answer, AssignedNugget, write_assignments

NUGGETS = {"t1": (("a", "vital"), ("b", "vital"), ("c", "okay")), "t2": (("d", "vital"), ("e", "okay"))}
# (topic, run) -> grades of the topic's nuggets, ours and official.
OURS = {("t1", "r1"): (2, 1, 0), ("t1", "r2"): (2, 2, 0), ("t1", "r3"): (0, 2, 0), ("t1", "r4"): (2, 1, 0),
        ("t2", "r1"): (2, 2), ("t2", "r2"): (0, 0), ("t2", "r3"): (0, 2),
        ("t2", "r6"): (2, 2)}  # only ours: 2 nuggets
OFFICIAL = {("t1", "r1"): (2, 2, 0), ("t1", "r2"): (2, 0, 2), ("t1", "r3"): (0, 0, 0), ("t1", "r4"): (2, 1, 0),
            ("t2", "r1"): (2, 0), ("t2", "r2"): (0, 2), ("t2", "r3"): (2, 2),
            ("t1", "r5"): (2, 2, 2)}  # only official: 3 nuggets
# The 18 shared nuggets: ours (rows) x official (columns).
TABLE = [[5, 0, 3], [0, 1, 1], [3, 0, 5]]
KAPPA = 10 / 31  # p_o = 11/18, p_e = (8·8 + 2·1 + 8·9)/18²
KAPPA_BINARY = 2 / 9  # support vs rest: [[6, 4], [3, 5]], p_o = 11/18, p_e = 1/2
# Coincidences o = T + Tᵀ: n = (16, 3, 17); ordinal δ²: 01 = 9.5², 12 = 10², 02 = 19.5²;
# D_o = 2(6·380.25 + 1·100) = 4763, D_e = 2(16·3·90.25 + 16·17·380.25 + 3·17·100) = 225720.
ALPHA = 1 - 35 * 4763 / 225720
# V_strict over t1, t2 of r1, r2, r3 (r4 answered t1 only): official 1, .25, .5; ours .75, .5, .25:
# pairs r1>r2 and r1>r3 agree, r2/r3 do not: τ = 1/3; ranks (3, 1, 2) and (3, 2, 1): ρ = 1/2.


def _answers(grades: dict[tuple[str, str], tuple[int, ...]]) -> list[Answer]:
    return [Answer(topic, run, f"answer of {run}", tuple(AssignedNugget(text, importance, ASSIGNMENTS[g])
                                                         for (text, importance), g in zip(NUGGETS[topic], given)),
                   query=f"query {topic}")
            for (topic, run), given in grades.items()]


def test_kappa_of_tables_vectorised():
    tables = np.array([TABLE, [[3, 0, 0], [0, 0, 0], [0, 0, 3]], [[2, 0, 0], [0, 0, 0], [0, 0, 0]]])
    value = cohen_kappa_counts(tables)
    assert value[0] == pytest.approx(KAPPA) and value[1] == 1.0
    assert math.isnan(value[2])  # one label throughout: chance agreement is 1
    assert math.isnan(cohen_kappa_counts(np.zeros((3, 3))))


def test_hand_worked_agreement():
    result = assignment_agreement(_answers(OURS), _answers(OFFICIAL), bootstrap=0)
    assert (result.n_nuggets, result.only_ours, result.only_official) == (18, 2, 3)
    assert result.topics == ("t1", "t2")
    assert result.confusion.to_numpy().tolist() == TABLE
    assert list(result.confusion.index) == list(result.confusion.columns) == list(ASSIGNMENTS)
    nuggets = result.nuggets["value"]
    assert nuggets["kappa"] == pytest.approx(KAPPA)
    assert nuggets["kappa_binary"] == pytest.approx(KAPPA_BINARY)
    assert nuggets["alpha_ordinal"] == pytest.approx(ALPHA)
    assert (result.n_runs, result.runs_left_out) == (3, ("r4",))
    runs = result.runs.set_index("statistic")
    assert runs.at["kendall", "value"] == pytest.approx(1 / 3)
    assert runs.at["spearman", "value"] == pytest.approx(0.5)
    assert result.table()[["level", "measure", "statistic"]].values.tolist() == [
        ["nugget", "assignment", "kappa"], ["nugget", "assignment", "kappa_binary"],
        ["nugget", "assignment", "alpha_ordinal"], ["run", "V_strict", "kendall"], ["run", "V_strict", "spearman"],
        ["run", "V_strict", "tau_ap"]]
    assert result.table()[["low", "high"]].isna().all().all()  # no bootstrap, no intervals


def test_bootstrap_intervals_resample_topics():
    result = assignment_agreement(_answers(OURS), _answers(OFFICIAL), measures=("V_strict", "A"), bootstrap=200, seed=3)
    table = result.table()
    assert list(table["measure"].unique()) == ["assignment", "V_strict", "A"]
    nuggets = result.nuggets
    # Two topics: every replicate is t1 twice, t2 twice or both (the estimate), and with two topics
    # the expanded 95% level rounds to 1: the interval reaches from the estimate as far as the farther
    # single-topic value, on both sides, within κ's [-1, 1].
    only_t1, only_t2 = (assignment_agreement(_answers({k: v for k, v in OURS.items() if k[0] == t}),
                                             _answers({k: v for k, v in OFFICIAL.items() if k[0] == t}),
                                             bootstrap=0).nuggets["value"] for t in ("t1", "t2"))
    for statistic in ("kappa", "kappa_binary"):
        value = nuggets.at[statistic, "value"]
        reach = max(abs(only_t1[statistic] - value), abs(only_t2[statistic] - value))
        assert nuggets.at[statistic, "low"] == pytest.approx(max(value - reach, -1))
        assert nuggets.at[statistic, "high"] == pytest.approx(min(value + reach, 1))
    assert assignment_agreement(_answers(OURS), _answers(OFFICIAL), measures=("V_strict", "A"), bootstrap=200,
                                seed=3).table().equals(table)  # the seed fixes the draws


def test_nothing_in_common_and_unknown_measure():
    with pytest.raises(NoCommonNuggets, match=r"^no \(topic, run, nugget\) is assigned in both assignments$"):
        assignment_agreement(_answers({("t2", "r6"): (2, 2)}), _answers({("t1", "r5"): (2, 2, 2)}))
    with pytest.raises(ExamppError, match="^unknown nugget measure\\(s\\) nDCG; one of V_strict, A_strict, V, A, "
                                          "W_strict, W$"):
        assignment_agreement(_answers(OURS), _answers(OFFICIAL), measures=("nDCG",))


@pytest.fixture
def files(tmp_path):
    ours, official = tmp_path / "ours.jsonl", tmp_path / "official.jsonl.gz"
    write_assignments(_answers(OURS), ours)
    write_assignments(_answers(OFFICIAL), official)
    return str(ours), str(official)


def test_agree_cli_text_tsv_json(files):
    ours, official = files
    runner = CliRunner()
    text = runner.invoke(main, ["nuggets", "agree", ours, official])
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[:4] == [f"ours: {ours}", f"official: {official}",
                         "18 (topic, run, nugget) assigned in both, 2 topics (not compared: 2 only in ours, "
                         "3 only in official)",
                         "run leaderboards: 3 runs answering every topic (left out: r4)"]
    assert lines[6].split() == ["nugget", "assignment", "kappa", f"{KAPPA:.4f}", "-", "-"]
    assert lines[9].split() == ["run", "V_strict", "kendall", "0.3333", "-", "-"]
    assert lines[-3].split() == ["not_support", "5", "0", "3"]

    tsv = runner.invoke(main, ["nuggets", "agree", ours, official, "--format", "tsv", "-m", "W"])
    rows = [line.split("\t") for line in tsv.output.splitlines()]
    assert rows[0] == ["level", "measure", "statistic", "value", "low", "high"]
    assert [r[:3] for r in rows[4:]] == [["run", "W", "kendall"], ["run", "W", "spearman"], ["run", "W", "tau_ap"]]
    assert float(rows[3][3]) == pytest.approx(ALPHA)

    data = json.loads(runner.invoke(main, ["nuggets", "agree", ours, official, "--format", "json",
                                           "--bootstrap", "50"]).output)
    assert (data["n_nuggets"], data["only_in_ours"], data["only_in_official"]) == (18, 2, 3)
    assert data["runs_left_out"] == ["r4"] and data["bootstrap"] == {"n": 50, "seed": 0, "confidence": 0.95}
    assert {"ours": "partial_support", "official": "support", "count": 1} in data["confusion"]
    assert data["statistics"][1]["statistic"] == "kappa_binary"
    assert data["statistics"][1]["value"] == pytest.approx(KAPPA_BINARY)
    assert data["statistics"][1]["low"] is not None


def test_agree_cli_bad_file_is_one_line(files, tmp_path):
    ours, _ = files
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "t1", "run_id": "r1", "answer_text": "x", '
                   '"nuggets": [{"text": "a", "importance": "vital"}]}\n')
    result = CliRunner().invoke(main, ["nuggets", "agree", ours, str(bad)])
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()  # the reader's message, located; its wording is the reader's
    assert line.startswith(f"Error: {bad}:1: nuggets[0].assignment is ")
