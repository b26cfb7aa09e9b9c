"""exampp validate: intake checks of submitted runs, each check on small inputs made by hand, the TREC RAG 2024
answers, and the checks autojudge_base's ReportVerification shares on the same reports."""
import gzip
import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from conftest import jsonl, shared_path
from exampp.api.validate import validate
from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.reports import read_reports
from exampp.formats.track_spec import TrackSpec
from exampp.intake import load_spec
from exampp.intake.checks import Findings, check_answer, check_coverage
from exampp.intake.submissions import read_submissions


def found(result) -> dict[str, list[tuple]]:
    return {run.run_id: [(f.severity, f.check, f.topic, f.message) for f in run.findings] for run in result.runs}


def test_ranked_runs(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "good.run").write_text("q1 Q0 d1 1 3.0 good\nq1 Q0 d2 2 2.0 good\nq2 Q0 d1 1 1.0 good\n")
    (runs / "bad.txt").write_text("q1 Q0 d1 1 1.0 other\nq1 Q0 d1 2 2.0 other\nq1 Q0 x9 3 0.5 other\n"
                                  "q1 Q0 d3 4 0.1 other\nq3 Q0 d2 1 1.0 other\n")
    (runs / "broken.run").write_text("q1 Q0 d1 x\n")
    (tmp_path / "topics.tsv").write_text("q1\tone\nq2\ttwo\n")
    (tmp_path / "corpus.tsv").write_text("d1\ta\nd2\tb\nd3\tc\n")
    spec = tmp_path / "spec.toml"
    spec.write_text("track = 'small'\ndocid_pattern = 'd\\d'\ndepth = 2\n")
    result = validate([runs], topics=str(tmp_path / "topics.tsv"), corpus=str(tmp_path / "corpus.tsv"),
                      spec=str(spec))
    assert found(result) == {
        "other": [("warning", "file_name", None, "the file 'bad.txt' is not named after the run tag"),
                  ("error", "duplicate_docs", "q1", "document 'd1' twice (line 1)"),
                  ("error", "depth", "q1", "3 documents ranked (at most 2)"),
                  ("error", "docid_pattern", None, "1 doc id(s) in 1 topic(s) do not match d\\d: 'x9'"),
                  ("warning", "rank_order", None, "1 topic(s) whose ranks do not rise by line or whose scores "
                                                  "rise with rank: 'q1'"),
                  ("error", "missing_topics", None, "1 of 2 topics not answered: 'q2'"),
                  ("error", "new_topics", None, "1 topic(s) not in the topics file: 'q3'"),
                  ("error", "unknown_docs", None, "1 of 4 doc ids not in the corpus: 'x9'")],
        "good": [],
        "broken": [("error", "format", None, "expected 6 columns 'qid Q0 docid rank score runid', found 4")]}
    assert [f.items for f in result.runs[0].findings] == [(), (), (), ("x9",), ("q1",), ("q2",), ("q3",), ("x9",)]
    assert [(r.run_id, r.kind, r.topics, r.errors, r.warnings) for r in result.runs] == [
        ("other", "ranked", 2, 6, 2), ("good", "ranked", 2, 0, 0), ("broken", "unreadable", 0, 1, 0)]
    assert result.runs[-1].findings[0].where == f"{runs / 'broken.run'}:1"


def report(run, topic, sentences, **extra):
    return {"metadata": {"team_id": "t", "run_id": run, "topic_id": topic}, **extra, "responses": sentences}


def test_reports_and_their_ranking(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "rag").write_text("q1 Q0 d1 1 2.0 rag\nq1 Q0 d2 2 1.0 rag\nq2 Q0 d3 1 1.0 rag\n")
    (runs / "rag.jsonl").write_text(jsonl(
        report("rag", "q1", [{"text": "Cited twice.", "citations": ["d1", "d2", "d3"]}, {"text": " "}]),
        report("rag", "q2", [{"text": "One two three four five six.", "citations": [0, 4]}], references=["d3", "d3"]),
        report("rag", "q2", [])))
    spec = TrackSpec(length_limit=5, max_citations_per_sentence=2, citation_top_k=1)
    result = validate([runs], spec=None)
    assert [r.kind for r in result.runs] == ["ranked+answers"]
    from exampp.intake import validate_runs
    from exampp.intake.submissions import read_submissions
    (run,) = validate_runs(read_submissions([runs]), spec)
    assert [(f.severity, f.check, f.topic, f.message) for f in run.findings] == [
        ("error", "citation_count", "q1", "sentence 0 has 3 citations (at most 2)"),
        ("warning", "blank_sentence", "q1", "sentence 1 has no text"),
        ("error", "citation_not_retrieved", "q1", "2 cited doc id(s) not in the top 1 of its ranking for the "
                                                  "topic: 'd2', 'd3'"),
        ("error", "reference_index", "q2", "sentence 0 cites reference 4, outside the 2 references"),
        ("warning", "references_duplicate", "q2", "the references list a document more than once"),
        ("error", "length", "q2", "the answer is 6 words long (at most 5)"),
        ("warning", "empty_answer", "q2", "the answer is empty"),
        ("error", "duplicate_topics", None, "1 topic(s) answered more than once: 'q2'")]


def test_same_answer_and_severity_from_the_spec(tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(jsonl(*[{"run_id": "r", "topic_id": f"q{i}", "answer_text": "Same  text."} for i in range(3)],
                             {"run_id": "r", "topic_id": "q9", "answer_text": "Other."}))
    spec = tmp_path / "spec.toml"
    spec.write_text("same_answer_topics = 3\n[severity]\nsame_answer = 'error'\nfile_name = 'off'\n")
    result = validate([answers], spec=str(spec))
    assert found(result) == {"r": [("error", "same_answer", None,
                                    "the same answer for 3 topics ('q0', 'q1', 'q2'): 'Same text.'")]}


@pytest.mark.parametrize("text, message", [
    ("depth = 0\n", "spec.toml:1: 'depth' must be a positive integer, found 0"),
    ("lenght_limit = 4\n", "spec.toml:1: 'lenght_limit' is not a track spec key; known keys: citation_top_k, "
                           "depth, docid_pattern, length_limit, length_limit_request_field, length_unit, "
                           "mandatory_metadata, max_citations_per_sentence, references_max, references_required, "
                           "same_answer_topics, severity, track"),
    ("length_unit = 'tokens'\n", "spec.toml:1: 'length_unit' must be one of 'words', 'chars', found 'tokens'"),
    ("length_limit = 4\nlength_limit_request_field = 'limit'\n", "spec.toml:2: 'length_limit_request_field' and "
     "'length_limit' exclude each other: one limit for all topics, or each topic's from its request"),
    ("\n[severity]\nsmell = 'warning'\n", "spec.toml: [severity] names unknown checks 'smell'; the checks are "),
])
def test_bad_specs(write, text, message):
    path = write("spec.toml", text)
    with pytest.raises(InputError) as err:
        load_spec(str(path))
    assert str(err.value).startswith(f"{path.parent}/{message}")


def test_the_rag24_spec():
    spec = load_spec("rag24")
    assert (spec.track, spec.length_unit, spec.length_limit, spec.depth, spec.severity) == (
        "rag24", "words", 400, 100, {"missing_topics": "warning"})


def test_the_command_exits_1_on_errors_only(tmp_path):
    (tmp_path / "ok.run").write_text("q1 Q0 d1 1 1.0 ok\n")
    (tmp_path / "twice.run").write_text("q1 Q0 d1 1 1.0 twice\nq1 Q0 d1 2 0.5 twice\n")
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "ok.run"), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"spec": "exampp", "errors": 0, "runs": [
        {"run_id": "ok", "kind": "ranked", "files": [str(tmp_path / "ok.run")], "topics": 1, "errors": 0,
         "warnings": 0, "findings": []}]}
    result = CliRunner().invoke(main, ["validate", str(tmp_path), "--format", "json"])
    assert result.exit_code == 1
    assert json.loads(result.output)["runs"][1]["findings"] == [
        {"check": "duplicate_docs", "severity": "error", "message": "document 'd1' twice (line 1)", "topic": "q1",
         "where": f"{tmp_path / 'twice.run'}:2", "items": []}]
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == f"run ok (ranked, 1 topics, {tmp_path / 'ok.run'}): accepted, 0 errors, " \
                                            "0 warnings"
    assert result.output.splitlines()[-1] == "2 runs checked against spec exampp: 1 refused"


@pytest.mark.shared
@pytest.mark.parametrize("name, same", [
    ("nugget-assignments.dev.jsonl.gz", ("qrant_bge_gemini", 3)),
    ("final.citation_judgments_Webassess.20241031.jsonl.gz", ("SGU.qrant_bge_gemini", 5)),
    ("final.citation_judgments_with_prediction.20241025.jsonl.gz", ("SGU.qrant_bge_gemini", 3)),
])
def test_the_trec_rag_2024_answers(tmp_path, name, same):
    """Every run was accepted by the track: no errors; the one that gave one answer to unrelated topics is found."""
    path = shared_path("data", "rag24", name)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        topics = sorted({(lambda r: r.get("qid") or r["topic_id"])(json.loads(line)) for line in fh})
    (tmp_path / "topics.tsv").write_text("".join(f"{t}\tt\n" for t in topics))
    result = validate([path], topics=str(tmp_path / "topics.tsv"), spec="rag24")
    assert len(result.runs) == 45 and result.errors == 0
    smells = [(r.run_id, f.message) for r in result.runs for f in r.findings if f.check == "same_answer"]
    assert [(run, message.split(" (")[0]) for run, message in smells] == [
        (same[0], f"the same answer for {same[1]} topics")]
    assert "Dame Van Winkle" in smells[0][1]
    assert {f.check for r in result.runs for f in r.findings} <= {"same_answer", "empty_answer", "blank_sentence",
                                                                  "missing_topics"}


# -- the checks autojudge_base's ReportVerification shares ----------------------------------------------------------

SHARED = {"empty_answer", "blank_sentence", "citation_count", "reference_index", "docid_pattern", "references_missing",
          "references_duplicate", "references_undeclared", "references_max", "metadata", "length"}

_ids = st.sampled_from(["d1", "d2", "d3", "x1", "bad id"])


@st.composite
def report_lines(draw):
    shape = draw(st.sampled_from(["rag24", "ragtime", "neuclir"]))
    refs = draw(st.one_of(st.none(), st.lists(_ids, max_size=4)))
    cites = {"rag24": st.lists(st.integers(-1, 4), max_size=4),
             "ragtime": st.dictionaries(_ids, st.floats(0, 1), max_size=3),
             "neuclir": st.lists(_ids, max_size=4)}[shape]
    sentences = draw(st.lists(st.fixed_dictionaries({"text": st.sampled_from(["", " ", "a b", "a b c d"]),
                                                     "citations": cites}), max_size=3))
    meta = {"team_id": draw(st.sampled_from(["t", " "])), "run_id": "r", "topic_id": "q1"}
    line = {"metadata": meta, "responses": sentences}
    if refs is not None:
        line["references"] = refs
    return line


@settings(max_examples=80, deadline=None)
@given(line=report_lines(), limit=st.integers(1, 5), maxc=st.integers(1, 3), maxr=st.integers(1, 3),
       unit=st.sampled_from(["words", "chars"]))
def test_the_shared_checks_find_what_autojudge_base_finds(tmp_path_factory, line, limit, maxc, maxr, unit):
    verification = pytest.importorskip("autojudge_base.report_spec_verification")
    from autojudge_base.report import load_report
    from autojudge_base.track_spec import TrackSpec as TheirSpec

    theirs = TheirSpec.from_dict({
        "track": "t", "task": "generation", "sentence_type": ["rag24", "ragtime", "neuclir"],
        "sentences_key": "responses", "topic_id_field": "topic_id", "mandatory_metadata": ["team_id", "run_id"],
        "docid_pattern": r"d\d", "references_kind": "retrieval_list", "references_max": maxr,
        "max_citations_per_sentence": maxc, "length_unit": unit, "length_limit": limit, "smells": []})
    path = tmp_path_factory.mktemp("aj") / "r.jsonl"
    path.write_text(jsonl(line))

    class Categories(verification.TrackSpecVerification):
        def _add(self, category, message):
            self.errors.append(category)

    (their_report,) = load_report(path)
    expected = set(Categories(their_report, theirs).run().errors) - {"references_uncited"}
    ours = TrackSpec(docid_pattern=r"d\d", mandatory_metadata=("team_id", "run_id"), references_max=maxr,
                     references_required=True, max_citations_per_sentence=maxc, length_unit=unit, length_limit=limit)
    (answer,) = read_submissions([path]).answers["r"]  # the checks' own reading of the file
    findings = Findings("r", ours)
    check_answer(findings, answer)
    assert {f.check for f in findings.found} & SHARED == expected


def test_length_limits_from_the_requests(tmp_path):
    """RAGTIME's limits: each topic's from its request, in characters; a topic without one is not checked."""
    requests = tmp_path / "requests.jsonl"
    requests.write_text(jsonl({"request_id": "q1", "title": "a", "limit": 10}, {"request_id": "q2", "title": "b"},
                              {"request_id": "q3", "title": "c", "limit": 12}))
    run = tmp_path / "r.jsonl"
    lines = [report("r", topic, [{"text": "Ten chars!"}, {"text": "x"}]) for topic in ("q1", "q2", "q3")]
    run.write_text(jsonl(*lines))
    spec = tmp_path / "spec.toml"
    spec.write_text("length_unit = 'chars'\nlength_limit_request_field = 'limit'\n[severity]\nsame_answer = 'off'\n")
    result = validate([run], topics=str(requests), spec=str(spec))
    assert found(result) == {"r": [("error", "length", "q1", "the answer is 12 chars long (at most 10)")]}
    verification = pytest.importorskip("autojudge_base.report_spec_verification")
    from autojudge_base.report import load_report
    from autojudge_base.request import load_requests_from_file
    from autojudge_base.track_spec import TrackSpec as TheirSpec

    theirs = TheirSpec.from_dict({"track": "t", "task": "repgen", "sentence_type": ["neuclir"],
                                  "sentences_key": "responses", "topic_id_field": "topic_id",
                                  "mandatory_metadata": [], "references_kind": "ignore", "length_unit": "chars",
                                  "length_limit_request_field": "limit", "smells": []})
    by_topic = {r.request_id: r for r in load_requests_from_file(requests)}
    assert [bool(verification.check(r, theirs, request=by_topic[r.metadata.topic_id])) for r in load_report(run)] \
        == [True, False, False]


def test_coverage_finds_what_report_verification_finds(write):
    rv = pytest.importorskip("autojudge_base.report_verification")
    from autojudge_base.report import load_report
    from autojudge_base.request import Request

    path = write("r.jsonl", jsonl(*[report("r", t, [{"text": "x"}]) for t in ("q1", "q1", "q3")]))
    requests = {t: Request(request_id=t, title=t) for t in ("q1", "q2")}
    theirs = rv.ReportVerification(load_report(path), None, requests=requests).coverage()
    findings = Findings("r", TrackSpec())
    check_coverage(findings, [r.topic_id for r in read_reports(path)], ["q1", "q2"])
    assert sorted(f.check for f in findings.found) == sorted(f.category for f in theirs.findings) == [
        "duplicate_topics", "missing_topics", "new_topics"]


def test_grade_validate_stops_on_errors(tmp_path):
    import shutil

    from conftest import EXAMPLES

    ws = tmp_path / "ws"
    # the collection's inputs only: the README's first command leaves a grade store in examples/
    for folder in ("runs", "corpus", "topics", "question_banks"):
        shutil.copytree(EXAMPLES / folder, ws / folder)
    shutil.copy(EXAMPLES / "exampp.toml", ws / "exampp.toml")
    result = CliRunner().invoke(main, ["grade", str(ws / "runs"), "-w", str(ws), "--validate",
                                       "--topics", str(ws / "topics" / "topics.jsonl")])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "weak: missing_topics: 1 of 6 topics not answered: 'Q4'",
        "Error: validate refused 1 runs; nothing graded (`exampp validate` shows every finding)"]
    assert not (ws / "grades.sqlite").exists()


def test_grade_validate_reads_what_grade_reads_and_then_grades(tmp_path):
    """grade --validate on TSV responses (query_id<TAB>text, which grade reads) lets them through to grading;
    an id grade would refuse is refused by the checks first; stdin, which the checks would use up, is refused."""
    ws = tmp_path / "ws"
    answers = tmp_path / "sys1.tsv"
    answers.write_text("q1\tRivers carry sediment to the sea and build deltas.\n", encoding="utf-8")
    bank = tmp_path / "bank.tsv"
    bank.write_text("q1\tWhat do rivers build?\n", encoding="utf-8")
    common = ["-w", str(ws), "--bank", str(bank), "--grader", "embedding", "--no-progress", "--format", "tsv"]
    checked = CliRunner().invoke(main, ["grade", "--responses", str(answers), "--validate", *common])
    plain = CliRunner().invoke(main, ["grade", "--responses", str(answers), *common])
    assert checked.exit_code == plain.exit_code == 0, checked.output + plain.output
    assert checked.stdout == plain.stdout and "sys1" in checked.stdout

    colon = tmp_path / "reports.jsonl"
    colon.write_text(json.dumps({"metadata": {"team_id": "t", "run_id": "team:a", "topic_id": "q1"},
                                 "responses": [{"text": "Deltas.", "citations": []}]}) + "\n", encoding="utf-8")
    refused = CliRunner().invoke(main, ["grade", "--responses", str(colon), "--validate", *common])
    assert refused.exit_code == 1
    assert "format: " in refused.stderr and "run_id 'team:a' contains ':'" in refused.stderr

    stdin = CliRunner().invoke(main, ["grade", "-", "--validate", *common], input="q1 Q0 d1 1 1.0 r\n")
    assert stdin.exit_code == 2 and "--validate reads the inputs before grading them" in stdin.output
