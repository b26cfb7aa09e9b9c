"""Citation-support judgments (TREC 2024 RAG): the reader and writer of both spellings, the support
measures worked by hand, the agreement of two files (κ and α worked by hand) and the commands."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import shared_path
from exampp.analysis.support_scores import answer_scores, per_answer, run_scores
from exampp.api.support import support_agreement
from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.citations import Citation, CitedAnswer, Sentence, read_citations, write_citations


def cite(reference: str, support: str, cid: int = 0, spelling: str = "ID") -> dict:
    return {f"citation{spelling}": cid, "reference": reference, "support": support}


def sentence(sid: int, text: str, *citations: dict, spelling: str = "ID") -> dict:
    return {f"sentence{spelling}": sid, "text": text, "citations": list(citations)}


def answer(topic: str, run: str, *sentences: dict) -> dict:
    return {"topic_id": topic, "run_id": run, "sentences": list(sentences)}


def write(path: Path, *records: object) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


# --- reading and writing ---------------------------------------------------------------------------

ASSESSORS_LINE = {  # the assessors' spelling, with the fields the reader leaves out
    "topic_id": "2024-1", "run_id": "team.run",
    "sentences": [{"sentenceId": 0, "verification_worthy": "1", "citationsCombibed": "-1", "text": "Corals bleach.",
                   "citations": [{"citationId": 3, "reference": "seg#1", "support": "2"},
                                 {"citationId": 4, "reference": "seg#2", "support": "-1"}]},
                  {"sentenceId": 1, "verification_worthy": "0", "citationsCombibed": "-1", "text": "",
                   "citations": []}],
}
PARSED = CitedAnswer("2024-1", "team.run", (
    Sentence(0, "Corals bleach.", (Citation(3, "seg#1", 2), Citation(4, "seg#2", None))),
    Sentence(1, "", ())), line=1)


def test_both_spellings_read_alike_and_the_writer_writes_the_predictions_spelling(tmp_path):
    assessors = read_citations(write(tmp_path / "a.jsonl", ASSESSORS_LINE))
    predictions = read_citations(write(tmp_path / "p.jsonl", answer(
        "2024-1", "team.run", sentence(0, "Corals bleach.", cite("seg#1", "2", 3), cite("seg#2", "-1", 4)),
        {"sentenceID": 1, "text": float("nan"), "citations": []})))  # NaN: the predictions file's empty text
    assert assessors == predictions == [PARSED]
    out = tmp_path / "out.jsonl.gz"
    assert write_citations(assessors, out) == 1
    with gzip.open(out, "rt", encoding="utf-8") as fh:
        assert json.loads(fh.read()) == answer(
            "2024-1", "team.run", sentence(0, "Corals bleach.", cite("seg#1", "2", 3), cite("seg#2", "-1", 4)),
            sentence(1, ""))
    assert read_citations(out) == [PARSED]  # a round trip


def test_integer_support_and_topic_ids_are_read(tmp_path):
    [read] = read_citations(write(tmp_path / "j.jsonl", {"topic_id": 7, "run_id": "r", "sentences": [
        sentence(0, "x", {"citationID": 0, "reference": "s", "support": 1})]}))
    assert read.topic_id == "7" and read.sentences[0].citations[0].support == 1


@pytest.mark.parametrize(("line", "message"), [
    ('{"topic_id": "t", "run_id": ', "invalid JSON: Expecting value at column 29"),
    ([], "expected an answer object, found list"),
    ({"run_id": "r", "sentences": []}, "'topic_id' must be a string, found null"),
    ({"topic_id": "t", "sentences": []}, "'run_id' must be a string, found null"),
    ({"topic_id": "t", "run_id": "r"}, "'sentences' must be a list, found null"),
    (answer("t", "r", {"text": "x", "citations": []}),
     "sentences[0] needs one of 'sentenceID' or 'sentenceId', found neither"),
    (answer("t", "r", {"sentenceID": 0, "sentenceId": 0, "text": "x", "citations": []}),
     "sentences[0] needs one of 'sentenceID' or 'sentenceId', found both"),
    (answer("t", "r", {"sentenceID": "0", "text": "x", "citations": []}),
     "sentences[0].sentenceID must be a non-negative integer, found '\"0\"'"),
    (answer("t", "r", {"sentenceID": 0, "citations": []}), "sentences[0].text must be a string, found null"),
    (answer("t", "r", {"sentenceID": 0, "text": "x"}), "sentences[0].citations must be a list, found null"),
    (answer("t", "r", sentence(0, "x", {"citationID": 0, "reference": "s"})),
     "sentences[0].citations[0] has no 'support'"),
    (answer("t", "r", sentence(0, "x", {"citationID": 0, "support": "1"})),
     "sentences[0].citations[0].reference must be a string, found null"),
    (answer("t", "r", sentence(0, "x", {"reference": "s", "support": "1"})),
     "sentences[0].citations[0] needs one of 'citationID' or 'citationId', found neither"),
    (answer("t", "r", sentence(0, "x", cite("s", "3"))),
     'sentences[0].citations[0].support is \'3\', not one of "2" (full), "1" (partial), "0" (none), '
     '"-1" (not judged)'),
    (answer("t", "r", sentence(0, "x", cite("s", "x"))),
     'sentences[0].citations[0].support is \'x\', not one of "2" (full), "1" (partial), "0" (none), '
     '"-1" (not judged)'),
    (answer("t", "r", sentence(0, "x", cite("s", "1"), cite("s", "2", 1))), "sentences[0] cites 's' twice"),
    (answer("t", "r", sentence(0, "x"), sentence(0, "y")), "sentence id 0 is used twice"),
])
def test_bad_lines_are_located_one_line_errors(tmp_path, line, message):
    path = write(tmp_path / "j.jsonl", answer("t0", "r", sentence(0, "ok")), line)
    with pytest.raises(InputError) as caught:
        read_citations(path)
    assert str(caught.value) == f"{path}:2: {message}"


def test_an_answer_twice_and_an_empty_file_are_errors(tmp_path):
    path = write(tmp_path / "j.jsonl", answer("t", "r", sentence(0, "a")), answer("t", "r", sentence(0, "b")))
    with pytest.raises(InputError, match=r"j\.jsonl:2: run 'r' already answered topic 't' \(line 1\)$"):
        read_citations(path)
    with pytest.raises(InputError, match=r"e\.jsonl: no answers: the file is empty$"):
        read_citations(write(tmp_path / "e.jsonl"))


# --- measures, worked by hand ----------------------------------------------------------------------

WORKED = [
    answer("t1", "r.a",
           sentence(0, "s0", cite("X", "2"), cite("Y", "1", 1)),  # best 1
           sentence(1, "s1", cite("Z", "0")),  # best 0
           sentence(2, "s2"),  # no citation: 0, and uncited
           sentence(3, "s3", cite("W", "-1"))),  # unjudged only: out of recall, W out of precision
    answer("t2", "r.a", sentence(0, "s0", cite("X", "1"))),
    answer("t1", "r.b", sentence(0, "s0")),
]


def test_measures_worked_by_hand(tmp_path):
    answers = read_citations(write(tmp_path / "j.jsonl", *WORKED))
    assert answer_scores(answers[0]) == {"weighted_precision": 1.5 / 3, "weighted_recall": 1 / 3, "uncited": 0.25}
    assert answer_scores(answers[1]) == {"weighted_precision": 0.5, "weighted_recall": 0.5, "uncited": 0.0}
    assert answer_scores(answers[2]) == {"weighted_precision": 0.0, "weighted_recall": 0.0, "uncited": 1.0}
    board = run_scores(per_answer(answers))
    assert board.to_dict(orient="records") == [
        {"run": "r.a", "weighted_precision": 0.5, "weighted_recall": pytest.approx(5 / 12), "uncited": 0.125,
         "n_topics": 2},
        {"run": "r.b", "weighted_precision": 0.0, "weighted_recall": 0.0, "uncited": 1.0, "n_topics": 1}]


def test_measures_command_json_and_per_query(tmp_path):
    path = write(tmp_path / "j.jsonl", *WORKED)
    result = CliRunner().invoke(main, ["support", "measures", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "r.a": {"weighted_precision": 0.5, "weighted_recall": pytest.approx(5 / 12), "uncited": 0.125, "n_topics": 2},
        "r.b": {"weighted_precision": 0.0, "weighted_recall": 0.0, "uncited": 1.0, "n_topics": 1}}
    result = CliRunner().invoke(main, ["support", "measures", str(path), "--per-query", "--format", "tsv"])
    assert result.output.splitlines() == [
        "run\tquery_id\tweighted_precision\tweighted_recall\tuncited",
        "r.a\tt1\t0.5\t0.333333333333\t0.25", "r.a\tt2\t0.5\t0.5\t0.0", "r.b\tt1\t0.0\t0.0\t1.0"]


def test_measures_command_reports_a_bad_file_in_one_line(tmp_path):
    path = write(tmp_path / "j.jsonl", answer("t", "r", sentence(0, "x", cite("s", "3"))))
    result = CliRunner().invoke(main, ["support", "measures", str(path)])
    assert result.exit_code == 1
    assert result.output == (f'Error: {path}:1: sentences[0].citations[0].support is \'3\', not one of "2" (full), '
                             '"1" (partial), "0" (none), "-1" (not judged)\n')


# --- agreement, worked by hand ---------------------------------------------------------------------

def _pair_files(tmp_path: Path) -> tuple[Path, Path]:
    """Six citations judged in both: (2,2) (2,1) (1,1) (0,0) (0,1) (2,2); W judged only in the second,
    run r3 only in the first."""
    first = write(tmp_path / "first.jsonl",
                  answer("t1", "r1", sentence(0, "a", cite("X", "2"), cite("Y", "2", 1)),
                         sentence(1, "b", cite("X", "1"))),
                  answer("t1", "r2", sentence(0, "c", cite("X", "0"), cite("Z", "0", 1)),
                         sentence(1, "d", cite("Y", "2")), sentence(2, "e", cite("W", "-1"))),
                  answer("t1", "r3", sentence(0, "f", cite("X", "2"))))
    second = write(tmp_path / "second.jsonl",
                   answer("t1", "r1", sentence(0, "a", cite("X", "2"), cite("Y", "1", 1)),
                          sentence(1, "b", cite("X", "1"))),
                   answer("t1", "r2", sentence(0, "c", cite("X", "0"), cite("Z", "1", 1)),
                          sentence(1, "d", cite("Y", "2")), sentence(2, "e", cite("W", "2"))))
    return first, second


def test_agreement_worked_by_hand(tmp_path):
    result = support_agreement(*_pair_files(tmp_path))
    assert result.n == 6
    # p_o = 4/6; marginals first 0:2 1:1 2:3, second 0:1 1:3 2:2; p_e = (2 + 3 + 6) / 36 = 11/36
    assert result.kappa == pytest.approx((4 / 6 - 11 / 36) / (1 - 11 / 36))  # 13/25
    # full or not: tp 2, fp 1, fn 0, tn 3; p_o = 5/6, p_e = 1/2 * 1/3 + 1/2 * 2/3 = 1/2
    assert result.kappa_full == pytest.approx(2 / 3)
    # coincidences: n_0 = 3, n_1 = 4, n_2 = 5, o_01 = o_12 = 1; ordinal δ²_01 = 3.5², δ²_12 = 4.5², δ²_02 = 8²
    # α = 1 - 11 * 2 * (12.25 + 20.25) / (2 * (3*4*12.25 + 4*5*20.25 + 3*5*64)) = 1 - 715/3024
    assert result.alpha == pytest.approx(1 - 715 / 3024)
    assert result.confusion.values.tolist() == [[1, 1, 0], [0, 1, 0], [0, 1, 2]]
    assert result.shared_topics == ("t1",)
    # runs both have: r1, r2. precision: first 0.833 > 0.333, second 0.667 > 0.625; recall: first 0.75 > 0.5,
    # second 0.75 < 0.833
    precision, recall = result.correlations["weighted_precision"], result.correlations["weighted_recall"]
    assert (precision.n_systems, precision.kendall, precision.spearman) == (2, 1.0, pytest.approx(1.0))
    assert (recall.kendall, recall.spearman) == (-1.0, pytest.approx(-1.0))


def test_agree_command_text(tmp_path):
    first, second = _pair_files(tmp_path)
    result = CliRunner().invoke(main, ["support", "agree", str(first), str(second)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "6 citations judged in both",
        "Cohen's kappa (none/partial/full): 0.5200",
        "Cohen's kappa (full support or not): 0.6667",
        "Krippendorff's alpha (ordinal): 0.7636",
        "",
        "support in the first file (rows) x in the second (columns):",
        "second  0  1  2",
        "first          ",
        "0       1  1  0",
        "1       0  1  0",
        "2       0  1  2",
        "",
        "run leaderboards, over the 1 topics both files cover:",
        "  weighted_precision: Kendall tau 1.0000, Spearman rho 1.0000 (2 runs)",
        "  weighted_recall: Kendall tau -1.0000, Spearman rho -1.0000 (2 runs)"]


def test_agree_without_shared_topics_says_so_and_correlates_over_different_topics(tmp_path):
    # precision: first r1 1.0, r2 0.5, r3 0; second r1 0.5, r2 1.0, r3 0: τ = (2 - 1)/3, ρ = 1 - 6*2/(3*8)
    first = write(tmp_path / "a.jsonl", *(answer("t1", run, sentence(0, "x", cite("S", support)))
                                          for run, support in (("r1", "2"), ("r2", "1"), ("r3", "0"))))
    second = write(tmp_path / "b.jsonl", *(answer("t2", run, sentence(0, "x", cite("S", support)))
                                           for run, support in (("r1", "1"), ("r2", "2"), ("r3", "0"))))
    result = CliRunner().invoke(main, ["support", "agree", str(first), str(second)])
    assert result.output.splitlines() == [
        "no citation is judged in both files: no kappa or alpha",
        "",
        "run leaderboards, over different topics: the files share none (1 and 1 topics); each run's measures "
        "are means over its own file's topics:",
        "  weighted_precision: Kendall tau 0.3333, Spearman rho 0.5000 (3 runs)",
        "  weighted_recall: Kendall tau 0.3333, Spearman rho 0.5000 (3 runs)"]
    result = CliRunner().invoke(main, ["support", "agree", str(first), str(second), "--format", "json"])
    data = json.loads(result.output)
    assert (data["n_citations"], data["kappa"], data["alpha_ordinal"]) == (0, None, None)
    assert data["leaderboards"]["weighted_precision"]["kendall"] == pytest.approx(1 / 3)


# --- the track's files -----------------------------------------------------------------------------

@pytest.mark.slow
def test_the_track_files_read_and_share_no_topic():
    assessors = read_citations(shared_path("data", "rag24", "final.citation_judgments_Webassess.20241031.jsonl.gz"))
    predictions = read_citations(shared_path("data", "rag24",
                                             "final.citation_judgments_with_prediction.20241025.jsonl.gz"))
    assert (len(assessors), len(predictions)) == (549, 585)
    assert ({a.topic_id for a in assessors} & {a.topic_id for a in predictions}) == set()
    board = run_scores(per_answer(assessors))
    assert len(board) == 45
    result = support_agreement(
        shared_path("data", "rag24", "final.citation_judgments_Webassess.20241031.jsonl.gz"),
        shared_path("data", "rag24", "final.citation_judgments_with_prediction.20241025.jsonl.gz"))
    assert result.n == 0 and result.correlations["weighted_precision"].n_systems == 45
