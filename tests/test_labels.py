"""Relevance labels keep their type: integer grades stay ints, fractional ones (2.5) stay floats,
from grades to EXAM labels to qrels files and back; measures that count integer grades say so."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from exampp.analysis.label_agreement import kappa_table
from exampp.cli import main
from exampp.collection.grades import Grade, Method
from exampp.collection.qrels import FractionalLabelError
from exampp.collection.runs import from_scores
from exampp.errors import InputError
from exampp.formats.reference_grades import reference_queries
from exampp.formats.trec_qrels import read_qrels, write_qrels
from exampp.labels import exam_labels
from exampp.scoring import exam_qrels, leaderboard
from exampp.trec_eval import evaluate


def _types(qrels):
    return {q: {d: type(label) for d, label in docs.items()} for q, docs in qrels.items()}


def test_float_labels_round_trip(tmp_path, write):
    qrels = read_qrels(write("in.qrels", "q1 0 a 2.5\nq1 0 b 2\nq1 0 c 2.0\nq2 0 d -1\nq2 0 e 0.1\n"))
    assert qrels == {"q1": {"a": 2.5, "b": 2, "c": 2}, "q2": {"d": -1, "e": 0.1}}
    # 2.0 is an integer grade written with a decimal point: read as the int 2
    assert _types(qrels) == {"q1": {"a": float, "b": int, "c": int}, "q2": {"d": int, "e": float}}
    write_qrels(qrels, tmp_path / "out.qrels")
    assert (tmp_path / "out.qrels").read_text() == "q1 0 a 2.5\nq1 0 b 2\nq1 0 c 2\nq2 0 d -1\nq2 0 e 0.1\n"
    back = read_qrels(tmp_path / "out.qrels")
    assert back == qrels and _types(back) == _types(qrels)


def test_a_written_float_reads_back_as_the_same_float(tmp_path):
    write_qrels({"q": {"d": 0.1 + 0.2, "e": 4.0}}, tmp_path / "out.qrels")
    assert (tmp_path / "out.qrels").read_text() == "q 0 d 0.30000000000000004\nq 0 e 4\n"
    assert read_qrels(tmp_path / "out.qrels") == {"q": {"d": 0.1 + 0.2, "e": 4}}


@pytest.mark.parametrize("label, message", [
    ("nan", "relevance 'nan' is not a finite number"),
    ("-inf", "relevance '-inf' is not a finite number"),
    ("1e5", "relevance '1e5' is out of range (-10000 to 10000)"),
    ("10000.5", "relevance '10000.5' is out of range (-10000 to 10000)"),
    ("1" + "0" * 400, "relevance '" + "1" + "0" * 39 + "' is out of range (-10000 to 10000)"),
    ("2,5", "relevance '2,5' is not a number"),
])
def test_labels_that_are_no_grade_are_refused(write, label, message):
    path = write("bad.qrels", f"q1 0 a 1\nq1 0 b {label}\n")
    with pytest.raises(InputError) as err:
        read_qrels(path)
    assert str(err.value) == f"{path}:2: {message}"


def test_writing_a_label_that_is_no_grade_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"relevance nan of docid 'd' in query 'q' is not a finite number"):
        write_qrels({"q": {"d": float("nan")}}, tmp_path / "out.qrels")
    assert not (tmp_path / "out.qrels").exists()


GRADES = pd.DataFrame(
    [("q1", "p1", "u1", 2.5), ("q1", "p1", "u2", 1.0), ("q1", "p2", "u1", 4.0), ("q1", "p3", "u1", 0.5)],
    columns=["query_id", "passage_id", "question_id", "grade"],
)


def test_exam_labels_of_fractional_grades(tmp_path):
    labels = exam_labels(GRADES)  # the best grade of each passage
    assert labels == {"q1": {"p1": 2.5, "p2": 4, "p3": 0.5}}
    assert _types(labels) == {"q1": {"p1": float, "p2": int, "p3": float}}
    assert exam_qrels(labels, 2.5) == {"q1": {"p1": 1, "p2": 1, "p3": 0}}
    write_qrels(labels, tmp_path / "exam.qrels")
    assert (tmp_path / "exam.qrels").read_text() == "q1 0 p1 2.5\nq1 0 p2 4\nq1 0 p3 0.5\n"
    assert read_qrels(tmp_path / "exam.qrels") == labels


def test_agreement_thresholds_reach_the_highest_fractional_label():
    exam = {"q": {"a": 2.5, "b": 1, "c": 0.5}}
    official = {"q": {"a": 1, "b": 0, "c": 1}}
    table = kappa_table(exam, official)
    # thresholds 1 .. ceil(2.5) = 3; tau 1: a b EXAM relevant -> tp a, fp b, fn c;
    # tau 2: a -> tp a, fn c, tn b; tau 3: none -> fn a c, tn b
    assert list(table.index) == [1, 2, 3]
    assert [tuple(table.loc[t, ["tp", "fp", "fn", "tn"]]) for t in table.index] == [(1, 1, 1, 0), (1, 0, 1, 1),
                                                                                      (0, 0, 2, 1)]


def test_agree_cli_prints_fractional_grades_as_they_are(write):
    exam = write("exam.qrels", "q 0 a 2.5\nq 0 b 1\nq 0 c 0.5\n")
    official = write("official.qrels", "q 0 a 1\nq 0 b 0\nq 0 c 1\n")
    result = CliRunner().invoke(main, ["agree", "--exam", str(exam), "--official", str(official), "--format", "json"])
    assert result.exit_code == 0, result.output
    graded = json.loads(result.output)["graded"]
    assert {(g["exam"], g["official"]): g["count"] for g in graded if g["count"]} == {(2.5, 1): 1, (1, 0): 1,
                                                                                        (0.5, 1): 1}


RUN = from_scores("r", {"q": {"a": 2.0, "b": 1.0}})
FRACTIONAL = {"q": {"a": 2.5, "b": 1}}
MESSAGE = "take integer relevance labels; query 'q' docid 'a' has 2.5 (binary labels: `exampp qrels --min-grade TAU`)"


def test_measures_over_integer_grades_refuse_a_fractional_label():
    with pytest.raises(FractionalLabelError) as err:
        evaluate(FRACTIONAL, RUN, ["map"])
    assert str(err.value) == f"trec_eval measures {MESSAGE}"
    for measures in (["nDCG@10"], ["P@1"]):
        with pytest.raises(FractionalLabelError) as err:
            leaderboard({"r": RUN}, FRACTIONAL, measures)
        assert str(err.value) == f"ir_measures' measures (pytrec_eval) {MESSAGE}"
    # binary labels at tau 2.5 are integers again
    assert leaderboard({"r": RUN}, exam_qrels(FRACTIONAL, 2.5), ["P@1"]).loc["r", "P@1"] == 1.0


def test_eval_cli_names_the_fractional_label_in_one_line(write):
    qrels, run = write("exam.qrels", "q 0 a 2.5\nq 0 b 1\n"), write("r.run", "q Q0 a 1 2 r\nq Q0 b 2 1 r\n")
    result = CliRunner().invoke(main, ["eval", str(qrels), str(run)])
    assert result.exit_code == 1 and result.output == f"Error: trec_eval measures {MESSAGE}\n"


def test_the_reference_format_refuses_a_fractional_grade():
    method = Method("self-rating", "m", "p").method_id
    grades = [Grade("q", "p1", "u1", 2.5, method)]
    with pytest.raises(ValueError, match=r"the grade of passage 'p1' for question 'u1' is 2.5: the reference "
                                         r"tool's format holds integers only"):
        reference_queries({"q": {"p1": "text"}}, grades)
    with pytest.raises(ValueError, match=r"the relevance of 'p1' in query 'q' is 0.5"):
        reference_queries({"q": {"p1": "text"}}, [], qrels={"q": {"p1": 0.5}})
    exported = reference_queries({"q": {"p1": "text"}}, [Grade("q", "p1", "u1", 4.0, method)], qrels={"q": {"p1": 2}})
    paragraph = exported[0].paragraphs[0]
    assert paragraph.exam_grades[0].self_ratings[0].self_rating == 4 and paragraph.judgments[0].relevance == 2
