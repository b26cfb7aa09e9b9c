"""AutoJudge reports and requests (exampp.formats.reports), as read_responses and read_topics read them; and
their equality with autojudge_base's own models on the same files."""
import json

import pytest
from hypothesis import given, settings, strategies as st

from conftest import jsonl
from exampp.errors import InputError
from exampp.formats.rag_responses import Response, read_responses
from exampp.formats.reports import CitedSentence, RagReport, Request, read_reports, read_requests
from exampp.formats.topic_files import read_topics

RAG24 = {"metadata": {"team_id": "t", "run_id": "r24", "narrative_id": 7, "narrative": "solar", "type": "automatic"},
         "references": ["d1", "d2", "d3"],
         "answer": [{"text": "One.", "citations": [1, 0, 5]}, {"text": "Two.", "citations": []}]}
RAGTIME = {"metadata": {"team_id": "t", "run_id": "rt", "topic_id": "q1", "task": "english"}, "references": ["a", "b"],
           "responses": [{"text": "Uno.", "citations": {"a": 0.5, "b": 0.9, "c": 0.5}}, {"text": "Dos."}]}
NEUCLIR = {"metadata": {"team_id": "t", "run_id": "nc", "topic_id": "q2"},
           "responses": [{"text": "Eins.", "citations": ["x", "y"]}, {"text": "Zwei.", "citations": None}]}


def test_the_three_shapes(write):
    path = write("reports.jsonl", jsonl(RAG24, RAGTIME, NEUCLIR))
    assert read_reports(path) == [
        RagReport("r24", "7", (CitedSentence("One.", ("d2", "d1"), (5,)), CitedSentence("Two.")), "rag24", "t",
                  ("d1", "d2", "d3"), RAG24["metadata"], "answer", 1),
        RagReport("rt", "q1", (CitedSentence("Uno.", ("b", "a", "c")), CitedSentence("Dos.")), "ragtime", "t",
                  ("a", "b"), RAGTIME["metadata"], "responses", 2),
        RagReport("nc", "q2", (CitedSentence("Eins.", ("x", "y")), CitedSentence("Zwei.")), "neuclir", "t",
                  None, NEUCLIR["metadata"], "responses", 3)]


def test_read_responses_reads_reports_with_their_citations_and_folders(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "b.jsonl").write_text(jsonl(RAGTIME, NEUCLIR))
    (tmp_path / "runs" / "a.jsonl").write_text(jsonl(RAG24))
    (tmp_path / "runs" / ".hidden").write_text("not read")
    assert read_responses(tmp_path / "runs") == [
        Response("r24", "7", "One. Two.", 1, (CitedSentence("One.", ("d2", "d1"), (5,)), CitedSentence("Two."))),
        Response("rt", "q1", "Uno. Dos.", 1, (CitedSentence("Uno.", ("b", "a", "c")), CitedSentence("Dos."))),
        Response("nc", "q2", "Eins. Zwei.", 2, (CitedSentence("Eins.", ("x", "y")), CitedSentence("Zwei.")))]


def test_a_run_answering_twice_across_files_names_both(tmp_path):
    (tmp_path / "a.jsonl").write_text(jsonl(NEUCLIR))
    (tmp_path / "b.jsonl").write_text(jsonl(RAG24, NEUCLIR))
    with pytest.raises(InputError) as err:
        read_responses(tmp_path)
    assert str(err.value) == f"{tmp_path}/b.jsonl:2: run 'nc' already answered query 'q2' ({tmp_path}/a.jsonl:1)"


@pytest.mark.parametrize("record, message", [
    ({"metadata": {"run_id": "r", "topic_id": "q"}, "responses": [{"text": "a", "citations": [0]},
                                                                  {"text": "b", "citations": ["d"]}]},
     "responses[0] cites as rag24 and responses[1] as neuclir: a report writes its citations one way (indices, "
     "{doc: confidence} or doc ids)"),
    ({"metadata": {"run_id": "r", "topic_id": "q"}, "references": ["d"],
      "answer": [{"text": "a", "citations": [0, True]}]},
     "answer[0].citations[1] must be an integer (an index into references), found bool"),
    ({"metadata": {"run_id": "r", "topic_id": "q"}, "responses": [{"text": "a", "citations": {"d": "0.5"}}]},
     "responses[0].citations['d'] must be a number (a confidence), found str"),
    ({"metadata": {"run_id": "r", "topic_id": "q"}, "responses": [{"citations": ["d"]}]},
     "responses[0].text must be a string, found null"),
    ({"metadata": {"run_id": "r", "topic_id": "q", "narrative_id": "p"}, "responses": []},
     "metadata topic_id 'q' and narrative_id 'p' differ"),
    ({"metadata": {"run_id": "r"}, "responses": []},
     "missing topic id: expected a string in metadata or the line, one of topic_id, query_id, qid, narrative_id"),
    ({"metadata": {"run_id": "r", "topic_id": "q"}, "references": "d", "responses": []},
     "'references' must be a list of doc ids (strings)"),
])
def test_bad_reports_name_file_and_line(write, record, message):
    path = write("run.jsonl", jsonl(record))
    with pytest.raises(InputError) as err:
        read_reports(path)
    assert str(err.value) == f"{path}:1: {message}"


REQUESTS = [{"request_id": "q1", "title": "solar power", "problem_statement": "Costs of solar.",
             "background": "I am a student.", "limit": 2000, "collection_ids": ["neuclir/1"]},
            {"request_id": 2, "title": "wind", "word_limit": 250}]


def test_requests_as_requests_and_as_topics(write):
    path = write("requests.jsonl", jsonl(*REQUESTS))
    assert read_requests(path) == {
        "q1": Request("q1", "solar power", "Costs of solar.", "I am a student.", limit=2000,
                      collection_ids=("neuclir/1",), line=1),
        "2": Request("2", "wind", word_limit=250, line=2)}
    topics = read_topics(path)
    assert [(t.query_id, t.text, t.description, t.narrative) for t in topics.values()] == [
        ("q1", "solar power", "Costs of solar.", "I am a student."), ("2", "wind", None, None)]


# -- equality with autojudge_base on the same files --------------------------------------------------------------

_ids = st.text("abcdxyz0123#_.", min_size=1, max_size=6)
_texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)


@st.composite
def reports(draw):
    shape = draw(st.sampled_from(["rag24", "ragtime", "neuclir", "none"]))
    references = draw(st.one_of(st.none(), st.lists(_ids, max_size=4)))
    n = len(references or ())

    def citations():
        if shape == "rag24":
            return st.lists(st.integers(-2, n + 1), max_size=4)
        if shape == "ragtime":
            return st.dictionaries(_ids, st.one_of(st.integers(0, 3), st.floats(0, 100)), max_size=4)
        if shape == "neuclir":
            return st.lists(_ids, max_size=4)
        return st.just([])

    sentences = draw(st.lists(st.fixed_dictionaries({"text": _texts}, optional={"citations": citations()}),
                              max_size=4))
    key = draw(st.sampled_from(["answer", "responses"]))
    topic = draw(st.sampled_from(["topic_id", "narrative_id"]))  # autojudge_base takes a number in narrative_id only
    meta = {"team_id": draw(_ids), "run_id": draw(_ids),
            topic: draw(_ids if topic == "topic_id" else st.one_of(_ids, st.integers(0, 99)))}
    record = {"metadata": meta, key: sentences}
    if references is not None:
        record["references"] = references
    return record


@settings(max_examples=60, deadline=None)
@given(records=st.lists(reports(), min_size=1, max_size=4))
def test_reports_equal_autojudge_base(tmp_path_factory, records):
    report = pytest.importorskip("autojudge_base.report")
    path = tmp_path_factory.mktemp("aj") / "run.jsonl"
    path.write_text(jsonl(*records), encoding="utf-8")
    theirs = report.load_report(path)
    ours = read_reports(path)
    assert [(r.run_id, r.team_id, r.topic_id, list(r.references) if r.references is not None else None)
            for r in ours] == [(t.metadata.run_id, t.metadata.team_id, t.metadata.topic_id, t.references)
                               for t in theirs]
    assert [[(s.text, list(s.citations)) for s in r.sentences] for r in ours] == [
        [(s.text, list(s.citations or [])) for s in t.get_sentences_with_citations()] for t in theirs]
    tags = {"Rag24ReportSentence": "rag24", "RagtimeReportSentence": "ragtime", "NeuclirReportSentence": "neuclir"}
    assert [r.shape for r in ours if r.sentences] == [tags[type(t.responses[0]).__name__]
                                                      for t in theirs if t.responses]


_requests = st.lists(st.fixed_dictionaries(
    {"request_id": _ids, "title": _texts},
    optional={key: st.none() | _texts for key in ("problem_statement", "background", "original_background")}
    | {key: st.none() | st.integers(0, 5000) for key in ("limit", "word_limit")}
    | {"collection_ids": st.none() | st.lists(_ids, max_size=2)}), min_size=1, max_size=4,
    unique_by=lambda r: r["request_id"])


@settings(max_examples=40, deadline=None)
@given(records=_requests)
def test_requests_equal_autojudge_base(tmp_path_factory, records):
    request = pytest.importorskip("autojudge_base.request")
    path = tmp_path_factory.mktemp("aj") / "requests.jsonl"
    path.write_text(jsonl(*records), encoding="utf-8")
    fields = ("request_id", "title", "problem_statement", "background", "original_background", "limit", "word_limit")
    assert [tuple(getattr(r, f) for f in fields) + (r.collection_ids,) for r in read_requests(path).values()] == [
        tuple(getattr(r, f) for f in fields) + (None if r.collection_ids is None else tuple(r.collection_ids),)
        for r in request.load_requests_from_file(path)]


def test_example_report_lines_of_the_memo_read_alike(write):
    """The memo's one-line example of each shape, through both readers."""
    report = pytest.importorskip("autojudge_base.report")
    path = write("memo.jsonl", "\n".join(json.dumps(r) for r in (RAG24, RAGTIME, NEUCLIR)))
    theirs = [[list(s.citations or []) for s in t.get_sentences_with_citations()] for t in report.load_report(path)]
    assert [[list(s.citations) for s in r.sentences] for r in read_reports(path)] == theirs == [
        [["d2", "d1"], []], [["b", "a", "c"], []], [["x", "y"], []]]
