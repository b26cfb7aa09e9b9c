"""Intent-aware (per-question) qrels: every exam question a subtopic. alpha-nDCG@k and ERR-IA@k of a
tiny hand-made case worked out from the definitions (ndeval's, which ir_measures' pyndeval provider
runs), the qrels file format, and the commands end to end on the example collection."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import fake_grader
from conftest import EXAMPLES
from exampp.cli import main
from exampp.collection.qrels import flatten_intent_qrels
from exampp.collection.runs import from_scores
from exampp.errors import InputError
from exampp.formats.trec_qrels import read_intent_qrels, read_qrels, write_intent_qrels
from exampp.labels import exam_labels, question_qrels
from exampp.scoring import MeasureError, leaderboard, per_query_measures
from exampp.trec_eval.irm import IntentQrelsNeeded

# q1's exam: u1, u2, u3 (subtopics 1, 2, 3); grades at tau 4 make
#   subtopic 1 (u1): a, c relevant; subtopic 2 (u2): b; subtopic 3 (u3): c; d answers nothing.
GRADE_ROWS = [("a", "u1", 5), ("a", "u2", 0), ("a", "u3", 1),
              ("b", "u1", 3), ("b", "u2", 4), ("b", "u3", 0),
              ("c", "u1", 4), ("c", "u2", 2), ("c", "u3", 5),
              ("d", "u1", 3), ("d", "u2", 3), ("d", "u3", 3)]
GRADES = pd.DataFrame([("q1", d, u, "m", float(g)) for d, u, g in GRADE_ROWS],
                      columns=["query_id", "passage_id", "question_id", "method_id", "grade"])
INTENT = {"q1": {"1": {"a": 1, "b": 0, "c": 1, "d": 0},
                 "2": {"a": 0, "b": 1, "c": 0, "d": 0},
                 "3": {"a": 0, "b": 0, "c": 1, "d": 0}}}
# The run ranks a, d, c, b for q1 and nothing for q2 (which has a subtopic: it scores 0).
RUN = from_scores("R", {"q1": {"a": 4, "d": 3, "c": 2, "b": 1}})

# alpha = 0.5: a subtopic's gain halves each time a ranked document covers it again.
# Run gains: a 1 (s1 new); d 0; c 0.5 (s1 seen once) + 1 (s3 new) = 1.5; b 1 (s2 new).
# ndeval's ideal ranking is greedy on the judged documents: c (2), then b (1; a would give 0.5),
# then a (0.5), then d (0).
DCG_RUN_4 = 1 / math.log2(2) + 0 + 1.5 / math.log2(4) + 1 / math.log2(5)       # 2.180677
DCG_IDEAL_4 = 2 / math.log2(2) + 1 / math.log2(3) + 0.5 / math.log2(4) + 0      # 2.880930
ALPHA_NDCG_4 = DCG_RUN_4 / DCG_IDEAL_4                                           # 0.756935
ALPHA_NDCG_2 = (1 + 0) / (2 + 1 / math.log2(3))                                   # 0.380096
# ERR-IA in ndeval: sum over ranks r of (gain at r) / r, normalised by the "ideal ideal" ranking
# where every one of the 3 subtopics is covered at every rank: sum_r 3 * 0.5^(r-1) / r.
# (It is Chapelle's ERR-IA with stopping probability 0.5, up to that normalising constant.)
ERR_IA_4 = (1 / 1 + 0 / 2 + 1.5 / 3 + 1 / 4) / (3 * (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4))  # 1.75 / 4.09375
# nDCG@4 of the same file with each document at its best label: a 1, d 0, c 1, b 1
NDCG_4 = (1 + 0 + 1 / 2 + 1 / math.log2(5)) / (1 + 1 / math.log2(3) + 1 / 2)


def test_question_qrels_number_the_exam_questions():
    assert question_qrels(GRADES, {"q1": ["u1", "u2", "u3"]}, tau=4) == INTENT
    assert question_qrels(GRADES, tau=4) == INTENT  # no exam given: sorted question ids
    # the exam's order decides the numbering; questions outside it are left out
    assert question_qrels(GRADES, {"q1": ["u3", "u1"]}, tau=4) == {
        "q1": {"1": INTENT["q1"]["3"], "2": INTENT["q1"]["1"]}}


def test_alpha_ndcg_and_err_ia_by_hand():
    assert round(ALPHA_NDCG_4, 6) == 0.756935 and round(ERR_IA_4, 6) == 0.427481  # the arithmetic, evaluated
    qrels = dict(INTENT, q2={"1": {"x": 1}})
    values = per_query_measures({"R": RUN}, qrels, ["alpha_nDCG@4", "alpha_nDCG@2", "ERR_IA@4", "nDCG@4"])
    got = {(m, q): v for m, q, v in zip(values["measure"], values["query_id"], values["value"])}
    assert got == pytest.approx({("alpha_nDCG@4", "q1"): ALPHA_NDCG_4, ("alpha_nDCG@2", "q1"): ALPHA_NDCG_2,
                                 ("ERR_IA@4", "q1"): ERR_IA_4, ("nDCG@4", "q1"): NDCG_4,
                                 ("alpha_nDCG@4", "q2"): 0.0, ("alpha_nDCG@2", "q2"): 0.0,
                                 ("ERR_IA@4", "q2"): 0.0, ("nDCG@4", "q2"): 0.0}, abs=1e-6)
    board = leaderboard({"R": RUN}, qrels, ["alpha_nDCG@4", "nDCG@4"])
    assert board.loc["R"].tolist() == pytest.approx([ALPHA_NDCG_4 / 2, NDCG_4 / 2], abs=1e-6)


def test_other_measures_see_the_best_label_over_subtopics():
    flat = flatten_intent_qrels(INTENT)
    assert flat == {"q1": {"a": 1, "b": 1, "c": 1, "d": 0}}
    for measure in ("nDCG@4", "P@2", "AP"):
        mixed = leaderboard({"R": RUN}, INTENT, ["alpha_nDCG@4", measure])[measure]
        assert mixed.tolist() == leaderboard({"R": RUN}, flat, [measure])[measure].tolist()


def test_tied_scores_are_ranked_as_trec_eval_ranks_them():
    # trec_eval breaks score ties by docid descending: d, c, b, a (pyndeval alone would go a, b, c, d)
    tied = from_scores("T", {"q1": {"a": 1, "b": 1, "c": 1, "d": 1}})
    ordered = from_scores("O", {"q1": {"d": 4, "c": 3, "b": 2, "a": 1}})
    values = leaderboard({"T": tied, "O": ordered}, INTENT, ["alpha_nDCG@2", "ERR_IA@3"])
    assert values.loc["T"].tolist() == values.loc["O"].tolist()
    # d, c: gains 0 then 2 -> (2 / log2 3) / (2 + 1 / log2 3)
    assert values.loc["T", "alpha_nDCG@2"] == pytest.approx((2 / math.log2(3)) / (2 + 1 / math.log2(3)))


def test_runs_scored_together_equal_each_run_alone_and_the_qrels_are_read_once(monkeypatch):
    import ir_measures

    qrels = dict(INTENT, q2={"1": {"x": 1, "y": 0}, "2": {"y": 1}})
    runs = {"R": RUN, "T": from_scores("T", {"q1": {"a": 1, "b": 1, "c": 1, "d": 1}, "q2": {"y": 2, "x": 1}}),
            "O": from_scores("O", {"q1": {"d": 4, "c": 3, "b": 2, "a": 1}, "q2": {"x": 3}}),
            "S": from_scores("S", {"q2": {"y": 1, "z": 2}})}  # S answers q2 only: evaluators of its own queries
    measures = ["alpha_nDCG@4", "ERR_IA@3", "nDCG@4", "P@2"]
    alone = pd.concat([per_query_measures({name: run}, qrels, measures) for name, run in runs.items()])
    made = []
    real = ir_measures.evaluator
    # (measures, qrels entries: queries for trec_eval's, relevant subtopic judgments for ndeval's)
    monkeypatch.setattr(ir_measures, "evaluator", lambda m, q: made.append((frozenset(m), len(q))) or real(m, q))
    together = per_query_measures(runs, qrels, measures)
    key = ["run", "query_id", "measure"]
    assert together.sort_values(key).reset_index(drop=True).equals(alone.sort_values(key).reset_index(drop=True))
    # an evaluator per kind of measure (trec_eval's, ndeval's) and set of queries ranked, not per run:
    # R ranks q1, T and O both queries, S q2: 3 sets x 2 kinds (each run alone: 4 x 2)
    assert sorted((sorted(map(str, m)), n) for m, n in made) == [
        (["ERR_IA@3", "alpha_nDCG@4"], 2), (["ERR_IA@3", "alpha_nDCG@4"], 4), (["ERR_IA@3", "alpha_nDCG@4"], 6),
        (["P@2", "nDCG@4"], 1), (["P@2", "nDCG@4"], 1), (["P@2", "nDCG@4"], 2)]


def test_intent_measures_need_intent_qrels_and_a_cutoff_ndeval_has():
    with pytest.raises(IntentQrelsNeeded, match="alpha_nDCG@10 is intent-aware: it needs intent qrels"):
        leaderboard({"R": RUN}, {"q1": {"a": 1}}, ["nDCG@10", "alpha_nDCG@10"])
    for name in ("alpha_nDCG@30", "ERR_IA"):
        with pytest.raises(MeasureError, match="ndeval computes intent-aware measures at a cutoff of 20 at most"):
            leaderboard({"R": RUN}, INTENT, [name])


# --- the file format -----------------------------------------------------------------------------

def test_intent_qrels_round_trip(tmp_path):
    qrels = {"q2": {"10": {"x": 1}, "2": {"y": 0, "x": 2}}, "q1": INTENT["q1"]}
    write_intent_qrels(qrels, tmp_path / "i.qrels")
    lines = (tmp_path / "i.qrels").read_text().splitlines()
    assert lines[:3] == ["q1 1 a 1", "q1 1 b 0", "q1 1 c 1"]
    assert lines[-3:] == ["q2 2 x 2", "q2 2 y 0", "q2 10 x 1"]  # subtopics in numeric order
    assert read_intent_qrels(tmp_path / "i.qrels") == qrels


@pytest.mark.parametrize("text, line, message", [
    ("q1 1 a 1\nq1 1 b\n", 2, "expected 4 columns 'qid subtopic docid label', found 3"),
    ("q1 1 a 1\n\nq1 2 a 0.5\n", 3, "label '0.5' is not an integer"),
    ("q1 1 a 1\nq1 2 a 1\nq1 1 a 0\n", 3, "duplicate docid 'a' in query 'q1' subtopic '1'"),
    ("q1 1 a 99999\n", 1, "label '99999' is out of range (-10000 to 10000)"),
])
def test_intent_qrels_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.qrels"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_intent_qrels(path)
    assert str(err.value) == f"{path}:{line}: {message}"


def test_ir_measures_on_the_qrels_exampp_writes(tmp_path):
    write_intent_qrels(question_qrels(GRADES, tau=4), tmp_path / "i.qrels")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 4 R\nq1 Q0 d 2 3 R\nq1 Q0 c 3 2 R\nq1 Q0 b 4 1 R\n")
    result = CliRunner().invoke(main, ["leaderboard", str(tmp_path / "r.run"), "--qrels", str(tmp_path / "i.qrels"),
                                       "-m", "alpha_nDCG@4", "-m", "ERR_IA@4", "-m", "nDCG@4", "--format", "json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert [row["alpha_nDCG@4"], row["ERR_IA@4"], row["nDCG@4"]] == pytest.approx([ALPHA_NDCG_4, ERR_IA_4, NDCG_4],
                                                                                  abs=1e-6)
    # plain qrels files still read as plain: a qrels file with one line per docid
    plain = CliRunner().invoke(main, ["leaderboard", str(tmp_path / "r.run"), "--qrels", str(tmp_path / "i.qrels"),
                                      "-m", "nDCG@4"])
    assert plain.exit_code == 1 and "i.qrels:5: duplicate docid 'a' in query 'q1'" in plain.stderr


# --- end to end on the example collection (fake grader: md5 of the texts mod 6) -----------------

@pytest.fixture
def graded(tmp_path, monkeypatch):
    fake_grader.use_method(monkeypatch)
    ws = tmp_path / "ws"
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(EXAMPLES / "exampp.toml"),
                                       "--grader", "fake", "-w", str(ws), "--depth", "5", "--label", "count",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    return ws


def bank_order() -> dict[str, list[tuple[str, str]]]:
    order: dict[str, list[tuple[str, str]]] = {}
    for record in map(json.loads, (EXAMPLES / "question_banks/questions.jsonl").read_text().splitlines()):
        order.setdefault(record["query_id"], []).append((record["question_id"], record["text"]))
    return order


def test_commands_end_to_end(graded, tmp_path):
    from exampp.api.workspace import exam_questions, stored_grades

    stored = stored_grades(graded)
    exam = exam_questions(graded, stored, EXAMPLES / "question_banks/questions.jsonl")
    # grade --label count: at the config's tau 4, a passage's label is how many questions it answers
    assert read_qrels(graded / "qrels/exam.qrels") == exam_labels(stored.grades, exam, label="count", tau=4)
    counts = {(q, d): sum(g >= 4 for g in group) for (q, d), group in
              stored.grades.groupby(["query_id", "passage_id"])["grade"]}
    assert read_qrels(graded / "qrels/exam.qrels") == {
        q: {d: c for (qq, d), c in counts.items() if qq == q} for q in sorted({q for q, _ in counts})}

    out = tmp_path / "questions.qrels"
    result = CliRunner().invoke(main, ["qrels", "-w", str(graded), "--per-question", "--tau", "4",
                                       "--bank", str(EXAMPLES / "question_banks/questions.jsonl"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"questions of 6 queries to {out} (key: {out}.questions.tsv)" in result.stderr
    intent = read_intent_qrels(out)
    order = bank_order()
    key = (Path(f"{out}.questions.tsv")).read_text().splitlines()
    assert key[0] == "query_id\tsubtopic\tquestion_id\ttext"
    assert key[1:] == [f"{q}\t{i}\t{qid}\t{text}" for q in sorted(order) for i, (qid, text) in enumerate(order[q], 1)]
    grade_of = {(r.query_id, r.passage_id, r.question_id): r.grade for r in stored.grades.itertuples()}
    for q, subtopics in intent.items():
        for s, docs in subtopics.items():
            question = order[q][int(s) - 1][0]
            assert docs == {d: int(grade_of[q, d, question] >= 4)
                            for (qq, d, u) in grade_of if qq == q and u == question}

    board = CliRunner().invoke(main, ["leaderboard", str(EXAMPLES / "runs"), "--qrels", str(out), "-m", "alpha_nDCG@10",
                                      "-m", "ERR_IA@10", "-m", "P@5", "--format", "json"])
    assert board.exit_code == 0, board.output
    rows = {r["run"]: r for r in json.loads(board.stdout)}
    expected = leaderboard({}, intent, ["alpha_nDCG@10"])  # an empty table: the columns only
    assert list(expected.columns) == ["alpha_nDCG@10"]
    from exampp.formats.trec_run import read_runs

    runs = read_runs([EXAMPLES / "runs"])
    direct = leaderboard(runs, intent, ["alpha_nDCG@10", "ERR_IA@10", "P@5"])
    assert {name: [rows[name][m] for m in direct.columns] for name in rows} == \
        {name: pytest.approx(direct.loc[name].tolist()) for name in direct.index}
    # P@5 on the per-question file is P@5 on its passages' best labels: 1 when a passage answers a question
    flat = flatten_intent_qrels(intent)
    assert [rows[n]["P@5"] for n in sorted(rows)] == pytest.approx(
        leaderboard(runs, flat, ["P@5"]).loc[sorted(rows), "P@5"].tolist())
    assert len({round(r["alpha_nDCG@10"], 6) for r in rows.values()}) > 1  # the runs differ
