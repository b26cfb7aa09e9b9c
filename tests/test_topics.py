"""Topics: JSON map, JSON list, JSONL, TSV and ir_datasets readers; the JSONL writer."""
from __future__ import annotations

import gzip
import json

import pytest

from conftest import register_local_dataset, shared_path
from exampp.collection.topics import Subtopic, Topic
from exampp.errors import InputError
from exampp.formats.topic_files import read_topics, write_topics


def test_json_map_like_the_reference_queries_file(write):
    topics = read_topics(write("q.json", '{\n  "19335": "anthropological definition of environment",\n'
                                         '  "47923": " axon terminals "\n}\n'))
    assert topics == {"19335": Topic("19335", "anthropological definition of environment"),
                      "47923": Topic("47923", "axon terminals")}


def test_json_list_and_jsonl_with_aliases_and_subtopics(write):
    objects = [{"query_id": "c1", "text": "Earth", "subtopics": [{"facet_id": "f1", "text": "Geology"},
                                                                 {"facet_id": "f2", "facet_text": "Dating"}]},
               {"qid": 42, "title": "int id and title"},
               {"query_id": "q3", "query_text": "query_text alias"}]
    expected = {"c1": Topic("c1", "Earth", (Subtopic("f1", "Geology"), Subtopic("f2", "Dating"))),
                "42": Topic("42", "int id and title"), "q3": Topic("q3", "query_text alias")}
    assert read_topics(write("t.json", json.dumps(objects, indent=2))) == expected
    jsonl = "".join(json.dumps(o) + "\n" for o in objects)
    assert read_topics(write("t.jsonl", jsonl)) == expected
    assert list(read_topics(write("t.jsonl", jsonl))) == ["c1", "42", "q3"]  # file order
    assert read_topics(write("one.jsonl", json.dumps(objects[2]) + "\n")) == {"q3": expected["q3"]}


def test_tsv_plain_and_gzipped(tmp_path, write):
    text = "q1\thow do goldfish grow\n\nq2\ttext\twith a tab\n"
    expected = {"q1": Topic("q1", "how do goldfish grow"), "q2": Topic("q2", "text\twith a tab")}
    assert read_topics(write("q.tsv", text)) == expected
    with gzip.open(tmp_path / "q.tsv.gz", "wt") as fh:
        fh.write(text)
    assert read_topics(tmp_path / "q.tsv.gz") == expected


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz"])
def test_write_read_round_trip(tmp_path, name):
    topics = [Topic("c1", "Érosion / «quotes»", (Subtopic("f1", "Geology"), Subtopic("f2", "Dating"))),
              Topic("q2", "plain")]
    write_topics(topics, tmp_path / name)
    assert read_topics(tmp_path / name) == {t.query_id: t for t in topics}
    write_topics({t.query_id: t for t in topics}, tmp_path / "from_dict.jsonl")  # a read_topics() result works too
    lines = (tmp_path / "from_dict.jsonl").read_text("utf-8").splitlines()
    assert lines[1] == '{"query_id": "q2", "text": "plain"}'
    assert json.loads(lines[0])["subtopics"] == [{"facet_id": "f1", "text": "Geology"},
                                                 {"facet_id": "f2", "text": "Dating"}]


def test_description_and_narrative_as_trec_topics_give_them(write, tmp_path):
    """What a track's assessors read besides the query (shown on `exampp assess serve`'s page)."""
    topics = read_topics(write("t.jsonl", '{"query_id": "1", "title": "coral", '
                                          '"description": " Why do reefs bleach? ", '
                                          '"narrative": "Causes count, cures do not."}\n'
                                          '{"query_id": "2", "title": "press", "description": "", '
                                          '"narrative": null}\n'))
    assert topics == {"1": Topic("1", "coral", description="Why do reefs bleach?",
                                 narrative="Causes count, cures do not."),
                      "2": Topic("2", "press")}  # blank or null: none
    write_topics(topics, tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_text("utf-8").splitlines() == [
        '{"query_id": "1", "text": "coral", "description": "Why do reefs bleach?", '
        '"narrative": "Causes count, cures do not."}', '{"query_id": "2", "text": "press"}']
    assert read_topics(tmp_path / "out.jsonl") == topics


@pytest.mark.parametrize("name, text, line, message", [
    ("t.jsonl", '{"query_id": "a", "text": "x", "narrative": 3}\n', 1, "'narrative' must be a string"),
    ("d.tsv", "q1\ta\nq2\tb\nq1\tc\n", 3, "duplicate query id 'q1'"),
    ("t.tsv", "q1\ta\nq2 no tab\n", 2, "expected 'query_id<TAB>text'"),
    ("t.tsv", "q1\t  \n", 1, "expected 'query_id<TAB>text'"),
    ("t.jsonl", '{"query_id": "a", "text": "x"}\n{"query_id": "b"}\n', 2, "missing text: expected one of"),
    ("t.jsonl", '{"query_id": "a", "text": "x"}\n{"text": "y"}\n', 2, "missing query id"),
    ("t.jsonl", '{"query_id": "a", "text": "x"}\n{"query_id": "a", "text": "y"}\n', 2, "duplicate query id 'a'"),
    ("t.jsonl", '{"query_id": "a", "text": "x"}\n{"query_id": "b", "text": "y"\n', 2, "invalid JSON"),
    ("t.jsonl", '{"query_id": "a", "text": "x", "subtopics": "f"}\n', 1, "'subtopics' must be a list"),
    ("t.jsonl", '{"query_id": "a", "text": "x", "subtopics": [{"facet_id": "f", "text": ""}]}\n', 1,
     "'facet text' must be a non-empty string"),
    ("t.jsonl", '{"query_id": "a", "text": "x", "subtopics": [{"facet_id": "f", "text": "1"}, '
                '{"facet_id": "f", "text": "2"}]}\n', 1, "duplicate facet id 'f' in query 'a'"),
    ("t.json", '[{"query_id": "a", "text": "x"},\n 3]', None, "expected a topic object, found int"),
    ("t.json", '{"a": "x", "b": 1}', None, "query 'b': text must be a non-empty string"),
])
def test_bad_input_names_file_line_and_problem(write, name, text, line, message):
    path = write(name, text)
    with pytest.raises(InputError) as info:
        read_topics(path)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(info.value).startswith(where)
    assert message in str(info.value)


def test_empty_and_missing_files(tmp_path, write):
    with pytest.raises(InputError, match="empty topics file"):
        read_topics(write("e.tsv", "\n\n"))
    with pytest.raises(InputError, match="no such file"):
        read_topics(tmp_path / "absent.tsv")


@pytest.mark.shared
def test_reference_dl19_queries():
    topics = read_topics(shared_path("data", "dl19", "dl19-queries.json"))
    assert len(topics) == 43
    assert topics["1115776"] == Topic("1115776", "what is an aml surveillance analyst")


def test_ir_datasets_queries(tmp_path):
    name = register_local_dataset(tmp_path, "d1\tdoc\n", "q1\tfirst query\nq2\tsecond\n")
    assert read_topics(f"irds:{name}") == {"q1": Topic("q1", "first query"), "q2": Topic("q2", "second")}
    with pytest.raises(InputError, match="irds:no-such/dataset: unknown ir_datasets dataset 'no-such/dataset'"):
        read_topics("irds:no-such/dataset")
