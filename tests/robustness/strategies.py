"""Hypothesis strategies for hostile inputs: ids from the whole of Unicode, and files in every
format exampp reads, valid, near-valid (one field or byte wrong) and broken (random bytes,
invalid UTF-8, truncated or corrupt gzip).

Near-valid files find far more than random bytes: a reader's checks are reached only by input
that gets past its first line. Each format's generator builds mostly-right records whose
fields are now and then replaced by a hostile value; :func:`hostile` then mutates the bytes
(a cut, an inserted snippet, a deleted range) and compresses them now and then.
"""
from __future__ import annotations

import gzip
import json

from hypothesis import strategies as st

from exampp.collection.ids import id_problem

# Characters that break line formats, JSON, encodings or file names, or that mean something
# to one of the formats (comment, separators of segment ids and method ids, facet separator).
SPECIAL_CHARS = (" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x1c", "\x1f", "\x7f", "\x85", "\xa0",
                 "\u1680", "\u2028", "\u2029", "\u3000", "\ufeff", "\ud800", "\udfff", "#", ":", "|", "/",
                 "\\", '"', "'", ",", "{", "[", ".", "-", "~", "=", "\u0130")
# Byte snippets inserted into files: invalid UTF-8 (a lone continuation byte, an encoded
# surrogate, an overlong NUL), a BOM, gzip's magic, JSON's non-standard numbers, a lone
# surrogate escape, deep nesting, an integer too long for Python to convert.
SPECIAL_BYTES = (b"\xff", b"\x80", b"\xed\xa0\x80", b"\xc0\x80", b"\xef\xbb\xbf", b"\x1f\x8b", b"\x00",
                 b"\r", b"\n", b"\r\n", b"\t", b" ", b"#", b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":",
                 b"NaN", b"Infinity", b"-Infinity", b"1e999", b'"\\ud800"', b"\\ud800", b"\\u0000",
                 b"[" * 3000, b"9" * 5000, "\u2028".encode(), "\x85".encode(), "\xa0".encode())
SCORE_TOKENS = ("nan", "NaN", "inf", "-inf", "Infinity", "1e999", "-1e999", "1_0", "0x10", "\u0661\u0662",
                "", "--1", "1e", "+.5", "5.", "1,5", "1" * 400)
SEPARATORS = (" ", " ", " ", "\t", "\t", "  ", " \t ", "\r", "\x0b", "\xa0", "\u2028", "\x1c", ",")

valid_char = st.characters(codec="utf-8", exclude_categories=("Z", "Cc", "Cs"))
any_char = st.one_of(st.characters(codec=None, exclude_categories=()), st.sampled_from(SPECIAL_CHARS))


def valid_ids(*, first_column: bool = False, max_size: int = 12) -> st.SearchStrategy[str]:
    """Ids every line format can hold: no whitespace or control characters, UTF-8 encodable."""
    return st.text(valid_char, min_size=1, max_size=max_size).filter(
        lambda s: id_problem(s, first_column=first_column) is None)


def hostile_ids(*, first_column: bool = False) -> st.SearchStrategy[str]:
    """Ids from the whole of Unicode: whitespace of every kind, NUL, U+2028, U+0085, lone
    surrogates, '#', the separators formats use, and very long ids."""
    long = st.tuples(valid_ids(), st.integers(100, 5000)).map(lambda t: (t[0] * t[1])[:t[1]])
    return st.one_of(
        valid_ids(first_column=first_column),
        st.text(any_char, max_size=12),
        st.tuples(valid_ids(), st.sampled_from(SPECIAL_CHARS), valid_ids()).map("".join),
        st.sampled_from(SPECIAL_CHARS).map(lambda c: f"{c}x"),
        long,
    )


def mostly(valid: st.SearchStrategy, odd: st.SearchStrategy, one_in: int = 12) -> st.SearchStrategy:
    """``valid`` most of the time (and as what examples shrink to), ``odd`` one time in ``one_in``."""
    return st.integers(1, one_in).flatmap(lambda i: odd if i == one_in else valid)


def pool_ids(pool: tuple[str, ...], *, first_column: bool = False) -> st.SearchStrategy[str]:
    """Ids from a small pool (so that repeats happen) or new ones, now and then a hostile one."""
    return mostly(st.sampled_from(pool) | valid_ids(first_column=first_column), hostile_ids(first_column=first_column))


QUERIES = ("q1", "q2", "1000", "tqa2:L_0002")
DOCS = ("d1", "d2", "d3", "msmarco_passage_00_1234", "p/1")
RUNS = ("sysA", "sysB", "run-1")
QUESTIONS = ("q1/a", "q1/b", "q2/c")

# -- text values ------------------------------------------------------------------------------

texts = st.one_of(st.text(max_size=30), st.text(any_char, max_size=30))
scores = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**6, 10**6).map(str),
    st.sampled_from(SCORE_TOKENS),
)
numbers = st.one_of(st.integers(-3, 5).map(str), scores)


def json_junk() -> st.SearchStrategy:
    """Values of every JSON type (and of none: NaN, Infinity), for a field that expects another."""
    leaves = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30),
                       st.floats(allow_nan=True, allow_infinity=True), texts, hostile_ids())
    return st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(texts, inner, max_size=3)), max_leaves=6)


def field(valid: st.SearchStrategy) -> st.SearchStrategy:
    """A JSON field value: right most of the time, any JSON value now and then."""
    return mostly(valid, json_junk())


@st.composite
def records(draw, fields: dict[str, st.SearchStrategy]) -> dict:
    """A JSON object with the given fields, now and then one left out or an unknown one added."""
    record = {name: draw(value) for name, value in fields.items()}
    if record and draw(st.integers(0, 19)) == 19:
        del record[draw(st.sampled_from(sorted(record)))]
    if draw(st.integers(0, 19)) == 19:
        record[draw(texts)] = draw(json_junk())
    return record


@st.composite
def jsonl(draw, record: st.SearchStrategy, max_lines: int = 5) -> str:
    """JSONL: one value per line, blank lines now and then; a lone surrogate is a ``\\ud800``
    escape (ASCII only) or a raw character (its invalid UTF-8 encoding in the file)."""
    ascii_only = draw(st.booleans())
    lines = [json.dumps(r, ensure_ascii=ascii_only) for r in draw(st.lists(record, min_size=1, max_size=max_lines))]
    if draw(st.integers(0, 5)) == 5:
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "  ", "\t"])))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n", "\r\n"]))


def json_document(value: st.SearchStrategy) -> st.SearchStrategy[str]:
    """One JSON document, compact or indented."""
    return st.tuples(value, st.booleans(), st.sampled_from([None, 1])).map(
        lambda t: json.dumps(t[0], ensure_ascii=t[1], indent=t[2]) + "\n")


@st.composite
def table(draw, row: st.SearchStrategy[list[str]], *, separators=SEPARATORS, comments: bool = True,
          header: list[str] | None = None, max_lines: int = 8) -> str:
    """A line format: rows of columns joined by a separator (a space or tab mostly), with
    comment and blank lines now and then and one line ending for the file."""
    sep = draw(mostly(st.sampled_from(separators[:5]), st.sampled_from(separators), one_in=6))
    lines = [sep.join(cols) for cols in draw(st.lists(row, min_size=draw(st.sampled_from([0, 1, 1, 2])),
                                                      max_size=max_lines))]
    if header is not None:
        lines.insert(0, sep.join(header))
    extra = ["", "   "] + (["# a comment", "#"] if comments else [])
    if draw(st.integers(0, 4)) == 4:
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(extra)))
    end = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    return end.join(lines) + draw(st.sampled_from([end, ""]))


@st.composite
def columns(draw, normal: list[st.SearchStrategy[str]]) -> list[str]:
    """The columns of a line: the expected ones mostly, now and then one too many or too few."""
    cols = [draw(c) for c in normal]
    shape = draw(st.integers(0, 29))
    if shape == 29 and cols:
        cols.pop()
    elif shape == 28:
        cols.append(draw(st.sampled_from(["extra", "#", "0"])))
    return cols


# -- file formats -----------------------------------------------------------------------------

run_text = table(columns([pool_ids(QUERIES, first_column=True), mostly(st.just("Q0"), texts),
                          pool_ids(DOCS), st.integers(0, 50).map(str), scores, pool_ids(RUNS)]))
qrels_text = table(columns([pool_ids(QUERIES, first_column=True), st.sampled_from(["0", "Q0", "1"]),
                            pool_ids(DOCS), mostly(st.integers(-1, 3).map(str), scores)]))

_topic_text = mostly(st.sampled_from(["what is a cat", "t", " spaced "]), texts)
_subtopic = records({"facet_id": field(pool_ids(("f1", "f2"))), "text": field(_topic_text)})
_topic = records({"query_id": field(pool_ids(QUERIES, first_column=True)), "text": field(_topic_text),
                  "subtopics": field(st.lists(_subtopic, max_size=2))})
_request = records({  # an AutoJudge request, which read_topics reads too
    "request_id": field(pool_ids(QUERIES, first_column=True)), "title": field(_topic_text),
    "problem_statement": field(st.none() | _topic_text), "background": field(st.none() | _topic_text),
    "limit": field(st.none() | st.integers(0, 2000))})
requests_text = jsonl(_request)
topics_text = st.one_of(
    requests_text,
    json_document(st.dictionaries(pool_ids(QUERIES, first_column=True), field(_topic_text), max_size=4)),
    json_document(st.lists(_topic, max_size=4)),
    jsonl(_topic),
    table(columns([pool_ids(QUERIES, first_column=True), _topic_text]), separators=("\t",), comments=False),
)

_question_text = mostly(st.sampled_from(["What is X?", "Why?", " padded "]), texts)
_answers = st.lists(st.sampled_from(["a", "b", "yes"]), max_size=2)
bank_exampp_text = jsonl(records({
    "query_id": field(pool_ids(QUERIES, first_column=True)), "question_id": field(pool_ids(QUESTIONS)),
    "text": field(_question_text), "facet_id": field(st.none() | pool_ids(("f1", "f2"))),
    "facet_text": field(st.none() | _topic_text), "query_text": field(st.none() | _topic_text),
    "answers": field(_answers), "choices": field(_answers), "correct_choice": field(st.none() | st.integers(-1, 2)),
    "source": field(st.none() | st.sampled_from(["manual", "generated:t5"])),
}))
_item = records({"question_id": field(pool_ids(QUESTIONS)), "question_text": field(_question_text),
                 "query_id": field(pool_ids(QUERIES)), "facet_id": field(st.none() | pool_ids(("f1",))),
                 "info": field(st.none() | records({"source": field(st.just("manual")),
                                                    "choices": field(_answers),
                                                    "correct_choice": field(st.integers(0, 1))})),
                 "gold_answers": field(st.none() | _answers)})
_nugget = records({"nugget_id": field(pool_ids(QUESTIONS)), "nugget_text": field(_question_text),
                   "query_id": field(pool_ids(QUERIES))})
bank_reference_text = jsonl(records({
    "query_id": field(pool_ids(QUERIES, first_column=True)), "facet_id": field(st.none() | pool_ids(("f1",))),
    "facet_text": field(st.none() | _topic_text), "test_collection": st.just("dl19"),
    "query_text": field(_topic_text), "info": field(st.none() | records({"gpt_model": field(st.just("gpt-4"))})),
    "items": field(st.lists(_item | _nugget, max_size=3)),
}))
_choices = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["red", "blue"]), max_size=3)
bank_car_text = jsonl(records({
    "query_id": field(pool_ids(QUERIES, first_column=True)), "query_text": field(_topic_text),
    "qid": field(pool_ids(QUESTIONS)), "question": field(_question_text), "choices": field(st.none() | _choices),
    "correctKey": field(st.none() | st.sampled_from(["a", "b", "z"])),
    "correct": field(st.none() | st.sampled_from(["red", "blue", "green"])),
    "facet_id": field(st.none() | pool_ids(("f1",))),
}))
bank_text = st.one_of(bank_exampp_text, bank_reference_text, bank_car_text)

_passage_text = mostly(st.sampled_from(["The cat sat.", "x"]), texts)
corpus_text = st.one_of(
    jsonl(records({"docid": field(pool_ids(DOCS)), "text": field(_passage_text),
                   "title": field(st.none() | _passage_text)})),
    jsonl(records({"id": field(pool_ids(DOCS)), "contents": field(_passage_text)})),
    table(columns([pool_ids(DOCS), _passage_text]), separators=("\t",), comments=False),
)

_rating = records({"question_id": field(pool_ids(QUESTIONS)), "self_rating": field(st.integers(0, 5))})
_exam_grades = records({
    "correctAnswered": field(st.lists(pool_ids(QUESTIONS), max_size=2)),
    "wrongAnswered": field(st.lists(pool_ids(QUESTIONS), max_size=2)),
    "answers": field(st.lists(st.tuples(pool_ids(QUESTIONS), _passage_text).map(list), max_size=2)),
    "llm": field(mostly(st.just("google/flan-t5-large"), hostile_ids())),
    "prompt_info": field(st.none() | records({"prompt_class": field(mostly(st.just("P"), hostile_ids())),
                                              "is_self_rated": field(st.booleans())})),
    "self_ratings": field(st.none() | st.lists(_rating, max_size=2)),
    "exam_ratio": field(st.floats(0, 1)),
})
_direct = records({"correctAnswered": field(st.booleans()), "answer": field(_passage_text),
                   "llm": field(mostly(st.just("t5"), hostile_ids())),
                   "self_ratings": field(st.none() | st.integers(0, 2)),
                   "prompt_info": field(st.none() | records({"prompt_class": field(st.just("FagB"))}))})
_judgment = records({"paragraphId": field(pool_ids(DOCS)), "query": field(pool_ids(QUERIES, first_column=True)),
                     "relevance": field(st.integers(0, 3)), "titleQuery": field(_topic_text)})
_ranking = records({"method": field(pool_ids(RUNS)), "paragraphId": field(pool_ids(DOCS)),
                    "queryId": field(pool_ids(QUERIES, first_column=True)), "rank": field(st.integers(0, 20)),
                    "score": field(st.floats(allow_nan=True, allow_infinity=True))})
_paragraph = records({
    "paragraph_id": field(pool_ids(DOCS)), "text": field(_passage_text),
    "paragraph_data": field(records({"judgments": field(st.lists(_judgment, max_size=2)),
                                     "rankings": field(st.lists(_ranking, max_size=2))})),
    "exam_grades": field(st.lists(_exam_grades, max_size=2)),
    "grades": field(st.none() | st.lists(_direct, max_size=1)),
})
graded_text = jsonl(st.tuples(field(pool_ids(QUERIES, first_column=True)),
                              field(st.lists(_paragraph, max_size=3))).map(list), max_lines=3)

_response_text = mostly(st.sampled_from(["An answer. Another sentence.", "x"]), texts)
# AutoJudge reports: citations as indices into references (rag24), {doc: confidence} (ragtime) or doc ids (neuclir)
_citations = st.one_of(st.none(), st.lists(st.integers(-1, 3), max_size=3), st.lists(pool_ids(DOCS), max_size=3),
                       st.dictionaries(pool_ids(DOCS), st.floats(0, 100), max_size=2))
_report_meta = records({"team_id": field(st.just("t")), "run_id": field(pool_ids(RUNS)),
                        "topic_id": field(pool_ids(QUERIES, first_column=True))})
reports_text = jsonl(records({
    "metadata": field(_report_meta), "references": field(st.none() | st.lists(pool_ids(DOCS), max_size=3)),
    "responses": field(st.lists(records({"text": field(_response_text), "citations": field(_citations)}),
                                max_size=3))}))
responses_text = st.one_of(
    jsonl(records({"topic_id": field(pool_ids(QUERIES, first_column=True)), "run_id": field(pool_ids(RUNS)),
                   "answer": field(st.lists(records({"text": field(_response_text)}), max_size=3))})),
    reports_text,
    jsonl(records({"metadata": field(records({"query_id": field(pool_ids(QUERIES, first_column=True)),
                                              "run_id": field(pool_ids(RUNS))})),
                   "response": field(_response_text)})),
    table(columns([pool_ids(QUERIES, first_column=True), _response_text]), separators=("\t",), comments=False),
)

_cell = mostly(st.sampled_from(["0", "1", "1", "0", "", "NA", "nan", "."]), numbers | texts)


@st.composite
def _matrix(draw) -> str:
    """A 0/1 matrix: respondent ids, then one cell per item; a header naming the items now and then."""
    n = draw(st.integers(1, 4))
    items = draw(st.lists(pool_ids(QUESTIONS + ("i4", "i5")), min_size=n, max_size=n, unique=True))
    row = columns([mostly(st.sampled_from(["sysA", "sysB", "3"]), hostile_ids())] + [_cell] * n)
    return draw(table(row, separators=(",", "\t", ",", "\t", ",", ";", " "), comments=False,
                      header=["system", *items] if draw(st.booleans()) else None))


matrix_text = _matrix()
systems_text = table(columns([pool_ids(RUNS), st.sampled_from(["bm25", "dense"]), st.sampled_from(["t5", "none"])]),
                     separators=("\t",), comments=False, header=["system", "retriever", "reranker"])

leaderboard_text = st.one_of(
    table(columns([pool_ids(RUNS), scores]), comments=True),
    table(columns([pool_ids(RUNS), scores, scores]), header=["run", "nDCG@10", "P@20"]),
    json_document(st.dictionaries(pool_ids(RUNS), field(st.floats(allow_nan=True, allow_infinity=True) | scores),
                                  max_size=4)),
    json_document(st.lists(records({"run": field(pool_ids(RUNS)),
                                    "score": field(st.floats(allow_nan=True, allow_infinity=True))}), max_size=4)),
)

_toml_values = st.one_of(st.sampled_from(['"topics.jsonl"', "20", "4.5", "true", '"~nosuchuser/x"', '"a\\u0000b"',
                                          "[1, 2]", "{a = 1}", "1979-05-27", '"""multi\nline"""', "nan", "inf",
                                          "'literal'", '"irds:msmarco"', '"pyserini:~/idx"']),
                         texts.map(json.dumps))
_toml_keys = st.sampled_from(["topics", "bank", "corpus", "depth", "tau", "grader", "model", "workspace",
                              "batch_size", "min_grade", "unknown", '"quoted key"', "a.b", "[table]"])
config_text = table(st.tuples(_toml_keys, _toml_values).map(lambda kv: [kv[0], "=", kv[1]]),
                    separators=(" ", ""), comments=True)


# -- bytes ------------------------------------------------------------------------------------

@st.composite
def mutated(draw, text: st.SearchStrategy[str]) -> bytes:
    """The text as UTF-8 (lone surrogates kept as their invalid encoding), then now and then cut,
    or given a snippet, or a range deleted."""
    data = draw(text).encode("utf-8", "surrogatepass")
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["cut", "insert", "insert", "delete"]))
        if kind == "cut":
            data = data[:at]
        elif kind == "insert":
            data = data[:at] + draw(st.sampled_from(SPECIAL_BYTES)) + data[at:]
        else:
            data = data[:at] + data[at + draw(st.integers(1, 8)):]
    return data


@st.composite
def compressed(draw, data: st.SearchStrategy[bytes]) -> bytes:
    """Plain mostly; else gzipped, gzipped and cut short, gzipped with trailing garbage, or twice."""
    raw = draw(data)
    kind = draw(st.sampled_from(["plain"] * 6 + ["gzip", "gzip", "truncated", "garbage", "twice"]))
    if kind == "plain":
        return raw
    packed = gzip.compress(raw, mtime=0)
    if kind == "truncated":
        return packed[:draw(st.integers(2, max(2, len(packed) - 1)))]
    if kind == "garbage":
        return packed + draw(st.sampled_from([b"x", b"\x1f\x8b", b"\x00" * 9]))
    if kind == "twice":
        return gzip.compress(packed, mtime=0)
    return packed


def hostile(text: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """File contents for a reader of ``text``'s format: near-valid mostly, random bytes now and
    then, each maybe gzipped (whole, truncated or corrupt)."""
    return compressed(mostly(mutated(text), st.binary(max_size=64), one_in=6))
