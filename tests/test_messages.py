"""Messages that say what is wrong in the user's terms: a run given as qrels (or the reverse) named as such,
query ids that do not match shown from both sides, a relevance level no grade reaches, the grade table's
measure and tau."""
from __future__ import annotations

from click.testing import CliRunner

import fake_grader
from conftest import EXAMPLES
from exampp.cli import main

RUN, QRELS = EXAMPLES / "runs" / "bm25.run", EXAMPLES / "qrels" / "official.qrels"


def exampp(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_a_run_given_as_qrels_and_qrels_given_as_a_run_are_named_as_such():
    swapped = exampp("eval", RUN, QRELS)
    assert swapped.exit_code == 1
    assert "found 6: this looks like a run ('qid Q0 docid rank score runid'), not qrels" in swapped.output
    as_run = exampp("leaderboard", QRELS, "--qrels", QRELS, "-m", "P@5")
    assert "found 4: this looks like qrels ('qid iter docid rel'), not a run" in as_run.output


def test_query_ids_that_do_not_match_are_shown_from_both_sides(tmp_path):
    other = tmp_path / "other.qrels"
    other.write_text("".join(f"topic-{line}" for line in QRELS.read_text().splitlines(keepends=True)))
    result = exampp("eval", other, RUN)
    assert result.exit_code == 1
    assert ("no queries with both results and relevance judgments (the run's: 'Q1', 'Q2', 'Q3' and 3 more; the "
            "qrels': 'topic-Q1', 'topic-Q2', 'topic-Q3' and 3 more)") in result.output
    board = exampp("leaderboard", RUN, "--qrels", other, "-m", "P@5")
    assert (f"{RUN}:1: warning: none of its queries ('Q1', 'Q2', 'Q3' and 3 more) is in {other}, whose queries are "
            "'topic-Q1', 'topic-Q2', 'topic-Q3' and 3 more: all left out") in board.stderr


def test_a_relevance_level_above_every_grade_is_warned_of():
    top = max(int(line.split()[3]) for line in QRELS.read_text().splitlines())
    above = exampp("eval", "-l", top + 1, "-m", "P.5", QRELS, RUN)
    assert above.exit_code == 0
    assert (f"warning: -l {top + 1}, but the qrels' grades stop at {top}: no document counts as relevant"
            in above.stderr)
    assert "warning" not in exampp("eval", "-l", top, "-m", "P.5", QRELS, RUN).stderr


def test_the_grade_table_names_its_measure_and_tau(tmp_path, monkeypatch):
    fake_grader.use_method(monkeypatch)
    result = exampp("grade", EXAMPLES / "runs", "--config", EXAMPLES / "exampp.toml", "--grader", "fake",
                    "-w", tmp_path, "--depth", 10, "--tau", 3, "--no-progress")
    assert result.exit_code == 0, result.output
    assert ("EXAM-Cover@10, tau 3: per run, the mean over queries of the share of the query's questions a top-10 "
            "passage answers at grade >= 3\n") in result.stderr


def test_labels_of_answers_name_what_they_leave_out_and_speak_of_no_runs_where_there_are_none(tmp_path):
    import pandas as pd

    from exampp.api.workspace import StoredGrades, labelled_grades
    from exampp.collection.runs import ranked_pairs
    from exampp.segment import load_responses

    answers = EXAMPLES / "responses" / "rag-answers.jsonl"
    ours = sorted(ranked_pairs(load_responses(answers).runs))[:3]
    other_answer = ("Q1", "other-rag:Q1:1:0123abcd")  # another answers file's passage, graded in the same store
    runs_passage = ("Q1", "d-Q1-023")

    def said(*pairs) -> list[str]:
        grades = pd.DataFrame([(q, p, "x", 1.0) for q, p in pairs],
                              columns=["query_id", "passage_id", "question_id", "grade"])
        lines: list[str] = []
        labelled_grades(tmp_path, StoredGrades("m", grades), responses=answers, warn=lines.append)
        return lines

    assert said(*ours, other_answer) == [(f"EXAM labels of the answers of {answers}: 1 graded passage left out "
                                          "(other answers' passages)")]  # a RAG workspace: no runs to speak of
    assert said(*ours, other_answer, runs_passage)[0].endswith("left out (the runs' passages and other answers' "
                                                                "passages)")
