"""`exampp bank review`: too-broad and unanswered questions, gaps and grouped answers, worked out
by hand on tiny workspaces; the HTML page; the command; and the DL19 reference data recounted."""
from __future__ import annotations

import gzip
import json
import math
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import shared_path
from exampp.api.bank_review import review_bank, write_bank_review
from exampp.api.workspace import WorkspaceError
from exampp.cli import main
from exampp.collection.corpus import Passage
from exampp.collection.grades import Grade
from exampp.collection.questions import Question, QuestionBank
from exampp.formats.corpus_sources import write_corpus
from exampp.formats.question_bank import write_question_bank
from exampp.formats.trec_qrels import write_qrels
from exampp.report.bank_review_page import review_html
from exampp.report.bank_tables import ANSWER_COLUMNS, NO_ANSWER
from exampp.stores.grade_store import GradeStore
from exampp.stores.layout import Workspace

RATING = "self-rating|judge|prompt-v1"
QA = "qa|judge|prompt-v1"
SCRIPT = "<script>alert('x')</script>"


def make_workspace(root: Path, method: str, questions: dict[str, dict[str, str]],
                   grades: dict[tuple[str, str], dict[str, float | tuple[float, str]]],
                   official: dict[str, dict[str, int]] | None = None, texts: dict[str, str] | None = None,
                   query_texts: dict[str, str] | None = None) -> Path:
    """A workspace: the bank ``questions`` ({query: {question_id: text}}, ``query_texts``), the grades
    ``{(query, question): {passage: grade or (grade, answer)}}`` in the store, official qrels, corpus."""
    ws = Workspace.at(root)
    write_question_bank(QuestionBank((Question(q, qid, text) for q, asked in questions.items()
                                      for qid, text in asked.items()), query_texts=query_texts), ws.question_bank)
    passages = sorted({(q, pid) for (q, _), graded in grades.items() for pid in graded})
    texts = texts or {}
    with GradeStore(ws.store) as store:
        hashes = {q: store.register_passages(q, {pid: texts.get(pid, f"text of {pid}") for qq, pid in passages
                                                 if qq == q}) for q in {q for q, _ in passages}}
        # A graded question's text: the bank's, or (a question since removed from the bank) its id.
        qhashes = store.register_questions((q, question, questions[q].get(question, question))
                                           for q, question in grades)
        rows = []
        for (q, question), graded in grades.items():
            for pid, value in graded.items():
                grade, answer = value if isinstance(value, tuple) else (value, str(value))
                rows.append((Grade(q, pid, question, float(grade), method, answer), hashes[q][pid],
                             qhashes[q, question]))
        store.put_many(rows)
    if official is not None:
        write_qrels(official, ws.official_qrels)
    write_corpus([Passage(pid, texts.get(pid, f"text of {pid}")) for pid in sorted({p for _, p in passages})],
                 ws.corpus)
    return root


# Query A: questions a1-a3; query B: b1, b2 (b2 never graded). Official grades 0-3, relevant from 2.
# "old" was graded but is no longer in the bank: its grade 5 for p5 must not count.
RATED = {
    ("A", "a1"): {"p1": 5, "p2": 4, "p3": 0, "p4": 4, "p5": 2},  # answered p1 (rel), p2 (non-rel), p4 (unjudged)
    ("A", "a2"): {"p1": 0, "p2": 5, "p3": 4, "p4": 0, "p5": 0},  # answered p2 (0), p3 (1): both non-relevant
    ("A", "a3"): {"p1": 3, "p2": 0, "p3": 1, "p4": 0, "p5": 3},  # answered by none
    ("A", "old"): {"p5": 5},
    ("B", "b1"): {"r1": 4, "r2": 5, "r3": 4, "r4": 1, "r5": 0},  # answered r1 (rel), r2, r3 (non-rel)
}
OFFICIAL = {"A": {"p1": 2, "p2": 0, "p3": 1, "p5": 3},
            "B": {"r1": 2, "r2": 0, "r3": 0, "r4": 2, "r5": 1, "r6": 2}}  # r6: relevant, never graded
BANK = {"A": {"a1": "What is A?", "a2": f"What does {SCRIPT} do?", "a3": "When was A?"},
        "B": {"b1": "Who made B?", "b2": "Where is B?"}}


@pytest.fixture
def rated(tmp_path) -> Path:
    return make_workspace(tmp_path / "ws", RATING, BANK, RATED, OFFICIAL,
                          texts={"p5": f"P five {SCRIPT} " + "long " * 40, "r4": "R four."},
                          query_texts={"A": "all about <A>"})


def test_per_question_counts_and_flags(rated):
    review = review_bank(rated, rel_level=2)
    assert review.tau == 4 and review.judged and review.method_id == RATING
    q = review.questions.set_index("question_id")
    assert list(q.index) == ["a1", "a2", "a3", "b1", "b2"]  # bank order; "old" is not in the exam
    assert q["graded"].tolist() == [5, 5, 5, 5, 0]
    assert q["answered"].tolist() == [3, 2, 0, 3, 0]
    assert q["best_grade"].tolist()[:4] == [5.0, 5.0, 3.0, 5.0] and math.isnan(q.at["b2", "best_grade"])
    assert q["relevant"].tolist() == [1, 0, 0, 1, 0]
    assert q["non_relevant"].tolist() == [1, 2, 0, 2, 0]
    assert q["unjudged"].tolist() == [1, 0, 0, 0, 0]
    assert q["precision"].tolist()[:2] == [0.5, 0.0] and q.at["b1", "precision"] == pytest.approx(1 / 3)
    assert math.isnan(q.at["a3", "precision"])
    assert q["flags"].tolist() == ["", "too-broad", "unanswered", "too-broad", "unanswered"]


def test_too_broad_ranked_by_non_relevant_answers_then_precision(rated):
    broad = review_bank(rated, rel_level=2).too_broad
    assert broad.to_dict("records") == [
        {"query_id": "A", "question_id": "a2", "text": BANK["A"]["a2"], "non_relevant": 2, "relevant": 0,
         "precision": 0.0, "answered": 2, "graded": 5, "non_relevant_examples": "p2 p3"},
        {"query_id": "B", "question_id": "b1", "text": "Who made B?", "non_relevant": 2, "relevant": 1,
         "precision": pytest.approx(1 / 3), "answered": 3, "graded": 5, "non_relevant_examples": "r2 r3"},
    ]
    # At relevance level 1, p3 (official 1) is relevant: a2 is then 1 vs 1, no longer too broad.
    assert review_bank(rated, rel_level=1).too_broad["question_id"].tolist() == ["b1"]


def test_unanswered_and_gaps(rated):
    review = review_bank(rated, rel_level=2)
    unanswered = review.unanswered
    assert unanswered[["question_id", "graded"]].values.tolist() == [["a3", 5], ["b2", 0]]
    assert unanswered["best_grade"].iloc[0] == 3.0 and math.isnan(unanswered["best_grade"].iloc[1])
    # p5 (official 3) reaches only 3 (a3 before a1's 2; "old"'s 5 is not in the exam); r4 (official 2) reaches 1.
    assert review.gaps.drop(columns="text").to_dict("records") == [
        {"query_id": "A", "passage_id": "p5", "official": 3, "best_grade": 3, "best_question": "a3",
         "best_question_text": "When was A?"},
        {"query_id": "B", "passage_id": "r4", "official": 2, "best_grade": 1, "best_question": "b1",
         "best_question_text": "Who made B?"},
    ]
    assert review.gaps["text"].tolist() == [f"P five {SCRIPT} " + "long " * 40, "R four."]
    assert review.relevant_ungraded == 1  # r6
    assert review.counts == {"questions": 5, "queries": 2, "answered questions": 3, "unanswered": 2,
                             "too broad": 2, "gaps": 2, "relevant passages not graded": 1}
    # A lower tau answers a3 (p1 and p5 at 3) and closes the gap at p5.
    lower = review_bank(rated, rel_level=2, tau=3)
    assert lower.unanswered["question_id"].tolist() == ["b2"]
    assert lower.gaps["passage_id"].tolist() == ["r4"]


def test_without_official_judgments_only_unanswered(rated):
    (rated / "qrels" / "official.qrels").unlink()
    review = review_bank(rated)
    assert not review.judged and review.too_broad.empty and review.gaps.empty
    assert "precision" not in review.questions and review.questions["flags"].tolist()[2] == "unanswered"
    assert review.counts == {"questions": 5, "queries": 2, "answered questions": 3, "unanswered": 2}
    # The qrels given explicitly bring them back.
    other = rated.parent / "official.qrels"
    write_qrels(OFFICIAL, other)
    assert review_bank(rated, official=other, rel_level=2).too_broad["question_id"].tolist() == ["a2", "b1"]


def test_a_self_rating_keeps_no_answers_to_group(rated):
    review = review_bank(rated)
    assert review.answers.empty
    assert review.answers_note.startswith(f"{RATING} (self-rating) keeps no extracted answers")
    assert "qa" in review.answers_note and "qa-extractive" in review.answers_note


def test_extracted_answers_grouped_after_normalisation(tmp_path):
    answers = {"x1": (1, "The Eiffel Tower"), "x2": (1, "eiffel tower!"), "x3": (1, "The Eiffel Tower"),
               "x4": (0, "Paris"), "x5": (0, "unanswerable"), "x6": (0, ""), "x7": (0, "paris.")}
    ws = make_workspace(tmp_path / "ws", QA, {"Q": {"q1": "What is in Paris?", "q2": "Why?"}},
                        {("Q", "q1"): answers, ("Q", "q2"): {"x1": (1, "Because")}})
    (ws / "topics").mkdir()
    (ws / "topics" / "topics.jsonl").write_text('{"query_id": "Q", "text": "sights of paris"}\n')
    review = review_bank(ws)
    assert review.tau == 1 and review.answers_note is None
    assert review.query_texts == {"Q": "sights of paris"}  # from the workspace's topics
    assert review.answers.drop(columns="question").to_dict("records") == [
        {"query_id": "Q", "question_id": "q1", "answer": "The Eiffel Tower", "normalized": "eiffel tower",
         "count": 3, "answered": 3, "passages": "x1 x2 x3"},
        {"query_id": "Q", "question_id": "q1", "answer": NO_ANSWER, "normalized": "", "count": 2, "answered": 0,
         "passages": "x5 x6"},
        {"query_id": "Q", "question_id": "q1", "answer": "Paris", "normalized": "pari", "count": 2, "answered": 0,
         "passages": "x4 x7"},
        {"query_id": "Q", "question_id": "q2", "answer": "Because", "normalized": "because", "count": 1,
         "answered": 1, "passages": "x1"},
    ]
    assert review.answers["question"].tolist() == ["What is in Paris?"] * 3 + ["Why?"]
    page = _section(review_html(review), "answers")
    assert page.count("<h3>") == 2 and page.count("<tr>") == 4 + 2  # a table per question: header and groups
    assert "<td>The Eiffel Tower</td>" in page and "<td>(no answer)</td>" in page


def test_workspace_without_grades_or_with_direct_grades_is_an_error(tmp_path):
    with pytest.raises(WorkspaceError, match="no grade store"):
        review_bank(tmp_path / "empty")
    ws = make_workspace(tmp_path / "direct", "direct:thomas|judge|prompt-v1", {"Q": {"q1": "Q?"}},
                        {("Q", "q1"): {"x1": 1}})
    with pytest.raises(WorkspaceError, match="direct grades judge passages against the query"):
        review_bank(ws)


def _section(page: str, anchor: str) -> str:
    start = page.index(f'<h2 id="{anchor}">')
    end = page.find("<h2 ", start + 1)
    return page[start:end if end > 0 else len(page)]


def test_html_page_escapes_text_and_holds_every_row(rated):
    review = review_bank(rated, rel_level=2)
    page = review_html(review, title="Review <of> A")
    assert "<script" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "<title>Review &lt;of&gt; A</title>" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # self-contained
    assert '<h2 id="too-broad">Too broad questions (2)</h2>' in page
    broad, unanswered, gaps = _section(page, "too-broad"), _section(page, "unanswered"), _section(page, "gaps")
    assert broad.count("<tr>") == 3 and ">a2<" in broad and ">b1<" in broad and ">p2<" in broad
    assert unanswered.count("<tr>") == 3 and ">a3<" in unanswered and ">b2<" in unanswered
    assert gaps.count("<tr>") == 3 and ">p5<" in gaps and ">r4<" in gaps
    assert "<details><summary>P five &lt;script&gt;" in gaps  # the long text is folded, short r4 is not
    assert "<td>R four.</td>" in gaps
    assert '<td>A<br><span class="muted">all about &lt;A&gt;</span></td>' in gaps  # the query's title
    assert _section(page, "questions").count("<tr>") == 6
    assert "keeps no extracted answers" in _section(page, "answers")


def test_cli_writes_the_tables_and_the_page(rated, tmp_path):
    out = tmp_path / "review"
    result = CliRunner().invoke(main, ["bank", "review", "-w", str(rated), "--rel-level", "2", "--top", "1",
                                       "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    review = review_bank(rated, rel_level=2)
    for name, table in [("too-broad.tsv", review.too_broad), ("unanswered.tsv", review.unanswered),
                        ("gaps.tsv", review.gaps), ("questions.tsv", review.questions)]:
        read = pd.read_csv(out / name, sep="\t", dtype={"query_id": str, "passage_id": str}, keep_default_na=False,
                           na_values=[""])
        assert len(read) == len(table) and read.columns.tolist() == table.columns.tolist(), name
        assert read["query_id"].tolist() == table["query_id"].tolist(), name
    assert (out / "answers.tsv").read_text() == "\t".join(ANSWER_COLUMNS) + "\n"  # a self-rating keeps no answers
    assert (out / "review.html").read_text() == review_html(review)
    lines = result.stdout.splitlines()
    assert lines[0] == f"{RATING}: answered at grade >= 4, relevant at official grade >= 2"
    assert lines[1] == ("5 questions, 2 queries, 3 answered questions, 2 unanswered, 2 too broad, 2 gaps, "
                        "1 relevant passages not graded")
    broad = lines[lines.index("Too broad (most non-relevant answers first; top 1 of 2):") + 2]
    assert broad.split()[:5] == ["A", "2", "0", "0.0000", "2"]
    gap = lines[lines.index("Gaps (relevant passages answering no question; top 1 of 2):") + 2]
    assert gap.split()[:6] == ["A", "p5", "3", "3", "P", "five"]
    assert "keeps no extracted answers" in result.stderr


def test_write_bank_review_replaces_files(rated, tmp_path):
    out = tmp_path / "again"
    review = review_bank(rated, rel_level=2)
    names = write_bank_review(review, out)
    assert names == ["too-broad.tsv", "unanswered.tsv", "gaps.tsv", "answers.tsv", "questions.tsv", "review.html"]
    written = {name: (out / name).read_text() for name in names}
    for name in names:  # a stale copy of every file is replaced
        (out / name).write_text("stale\n")
    assert write_bank_review(review, out) == names
    assert {name: (out / name).read_text() for name in names} == written
    assert sorted(p.name for p in out.iterdir()) == sorted(names)  # no temporary file left behind


@pytest.mark.slow
@pytest.mark.shared
def test_dl19_review_matches_a_recount_from_the_raw_file(tmp_path):
    data = shared_path("data", "dl19")
    raw_file = data / "DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz"
    runner = CliRunner()
    imported = runner.invoke(main, ["import", str(raw_file), "--workspace", str(tmp_path / "ws"),
                                    "--questions", str(data / "dl19-genq.jsonl.gz")], catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    review = review_bank(tmp_path / "ws", tau=4, rel_level=2)

    non_relevant, relevant, best, official = Counter(), Counter(), {}, {}
    with gzip.open(raw_file, "rt", encoding="utf-8") as fh:
        for line in fh:
            qid, paragraphs = json.loads(line)
            for p in paragraphs:
                label = p["paragraph_data"]["judgments"][0]["relevance"]
                ratings = p["exam_grades"][0]["self_ratings"]
                official[qid, p["paragraph_id"]] = label
                best[qid, p["paragraph_id"]] = max(r["self_rating"] for r in ratings)
                for r in ratings:
                    if r["self_rating"] >= 4:
                        (relevant if label >= 2 else non_relevant)[r["question_id"]] += 1
    broad = [q for q in non_relevant if non_relevant[q] > relevant[q]]
    assert len(review.too_broad) == len(broad) == 209
    top = sorted(broad, key=lambda q: (-non_relevant[q], relevant[q] / (relevant[q] + non_relevant[q])))[:3]
    assert review.too_broad["question_id"].tolist()[:3] == top
    assert [(non_relevant[q], relevant[q]) for q in top] == [(147, 144), (133, 81), (129, 106)]
    gaps = {key for key, label in official.items() if label >= 2 and best[key] < 4}
    assert set(zip(review.gaps["query_id"], review.gaps["passage_id"])) == gaps and len(gaps) == 609
    assert review.gaps[["query_id", "passage_id"]].values.tolist()[:3] == [
        ["1103812", "3843267"], ["1110199", "8160524"], ["1112341", "1035060"]]


def test_html_escapes_the_method_id_in_every_note(tmp_path):
    ws = make_workspace(tmp_path / "ws", "self-rating|<judge>|p&1", {"Q": {"q1": "Q?"}}, {("Q", "q1"): {"x1": 5}})
    page = review_html(review_bank(ws))
    assert "<judge>" not in page and page.count("&lt;judge&gt;|p&amp;1") == 2  # the summary and the answers note
