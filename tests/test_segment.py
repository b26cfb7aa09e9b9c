"""Segmentation of generated responses into passages: splitting, merging, ids, input formats."""
from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from exampp.collection.runs import trec_order
from exampp.errors import InputError
from exampp.formats.rag_responses import Response, read_responses
from exampp.formats.reports import CitedSentence
from exampp.segment import segment_id, segment_responses, segment_text


def words(prefix: str, n: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def test_blank_lines_split_and_whitespace_collapses():
    a, b = words("a", 25), words("b", 30)
    broken = a.replace(" a9 ", " a9  \n  ")  # a line break inside a paragraph
    text = f"  {broken}  \n \t\n\n{b}\r\n\r\n"
    assert segment_text(text) == [a, b]


def test_tiny_heading_joins_the_next_piece_and_tiny_tail_the_previous():
    body, tail = words("b", 40), words("t", 3)
    assert segment_text(f"Heading\n\n{body}\n\n{tail}") == [f"Heading {body} {tail}"]
    # heading and body do not fit together: the heading stays alone
    full = words("f", 119)
    assert segment_text(f"Two words\n\n{full}") == ["Two words", full]


def test_tiny_middle_piece_joins_previous_when_next_is_full():
    first, mid, full = words("a", 30), words("m", 5), words("f", 118)
    assert segment_text(f"{first}\n\n{mid}\n\n{full}") == [f"{first} {mid}", full]


def test_long_paragraph_is_cut_at_sentence_ends_into_even_pieces():
    # ten sentences of 25 words = 250 words -> 3 pieces of about 83 words: the 4th sentence (words
    # 75-100) would end 17 words past 83.3 and starts 8 before it: 3 sentences, then of the
    # remaining 175 words (target 87.5) 4 sentences, then 3.
    sentences = [words(f"s{i}_", 24) + f" end{i}." for i in range(10)]
    pieces = segment_text(" ".join(sentences))
    assert pieces == [" ".join(sentences[0:3]), " ".join(sentences[3:7]), " ".join(sentences[7:10])]
    assert all(len(p.split()) <= 120 for p in pieces)


def test_sentence_ends_after_quotes_and_brackets():
    s1, s2 = words("x", 70) + ' "done."', words("y", 70) + " (really!)"
    assert segment_text(f"{s1} {s2}") == [s1, s2]


def test_sentence_longer_than_limit_is_cut_into_equal_parts():
    text = words("w", 250)  # no sentence end: 3 parts of 84, 83, 83 words
    tokens = text.split()
    assert segment_text(text) == [" ".join(tokens[:83]), " ".join(tokens[83:167]), " ".join(tokens[167:])]


def test_empty_response_has_no_passages():
    assert segment_text(" \n\n \n") == []


def test_segment_id_scheme():
    text = "Coral bleaching is caused by heat."
    digest = hashlib.md5(text.encode("utf-8")).hexdigest()[:8]
    assert segment_id("rag1", "Q1", 2, text) == f"rag1:Q1:2:{digest}"


def test_ids_are_stable_across_other_responses_and_change_only_where_text_changes():
    p1, p2, p3 = words("a", 30), words("b", 30), words("c", 30)
    base = segment_responses([Response("r", "q1", f"{p1}\n\n{p2}\n\n{p3}")])
    more = segment_responses([Response("r", "q1", f"{p1}\n\n{p2}\n\n{p3}"), Response("r", "q2", p1),
                              Response("other", "q1", p1)])
    ids = [d.docid for d in base.runs["r"].rankings["q1"]]
    assert [d.docid for d in more.runs["r"].rankings["q1"]] == ids
    edited = segment_responses([Response("r", "q1", f"{p1}\n\n{p2} extra\n\n{p3}")])
    new_ids = [d.docid for d in edited.runs["r"].rankings["q1"]]
    assert new_ids[0] == ids[0] and new_ids[2] == ids[2] and new_ids[1] != ids[1]
    # the same text twice in one response: two passages
    twice = segment_responses([Response("r", "q1", f"{p1}\n\n{p1}")])
    assert len(twice.corpus) == 2


def test_runs_rank_passages_in_response_order():
    p = [words(c, 30) for c in "abcd"]
    seg = segment_responses([Response("r", "q1", "\n\n".join(p))])
    ranking = seg.runs["r"].rankings["q1"]
    assert [seg.corpus.texts[d.docid] for d in ranking] == p
    assert trec_order(ranking) == ranking and [d.score for d in ranking] == [4.0, 3.0, 2.0, 1.0]


def test_trec_rag_2024_jsonl_with_metadata_and_variants(write):
    lines = [
        {"metadata": {"team_id": "t", "run_id": "ragA", "narrative_id": "2024-1", "type": "automatic"},
         "references": ["doc1"], "answer": [{"text": "First sentence.", "citations": [0]},
                                            {"text": " Second one.", "citations": []}]},
        {"run_id": "ragB", "topic_id": "2024-1", "answer": "A plain answer."},
        {"query_id": 7, "response": "Response field."},
        {"qid": "9", "text": "Text field.", "run_id": "ragB"},
    ]
    path = write("answers.jsonl.gz", b"")
    path.write_bytes(gzip.compress("\n".join(json.dumps(x) for x in lines).encode()))
    assert read_responses(path) == [
        Response("ragA", "2024-1", "First sentence. Second one.", 1,
                 (CitedSentence("First sentence.", ("doc1",)), CitedSentence(" Second one."))),
        Response("ragB", "2024-1", "A plain answer.", 2),
        Response("answers", "7", "Response field.", 3),
        Response("ragB", "9", "Text field.", 4),
    ]


def test_tsv_responses_take_the_file_name_as_run_id(write):
    path = write("my-rag.tsv", "q1\tOne answer.\n\nq2\tAnother.\n")
    assert read_responses(path) == [Response("my-rag", "q1", "One answer.", 1), Response("my-rag", "q2", "Another.", 3)]


@pytest.mark.parametrize("content, message", [
    ('{"run_id": "r", "topic_id": "q", "answer": "x"}\n{"run_id": "r", "topic_id": "q", "answer": "y"}\n',
     "answers.jsonl:2: run 'r' already answered query 'q' (line 1)"),
    ('{"run_id": "r", "answer": "x"}\n',
     "answers.jsonl:1: missing query id: expected a string in one of topic_id, query_id, qid, narrative_id"),
    ('{"run_id": "r", "topic_id": "q", "answer": [{"citations": []}]}\n',
     "answers.jsonl:1: answer[0].text must be a string, found null"),
    ('{"run_id": "r", "topic_id": "q", "answer": {"text": "x"}}\n',
     "answers.jsonl:1: missing text: expected 'answer' (a list of {\"text\"} sentences or a string), "
     "'response', 'text' or 'answer_text'"),
    ('{"run_id": "my run", "topic_id": "q", "answer": "x"}\n',
     "answers.jsonl:1: run_id 'my run' contains whitespace (' '), which would break the line formats (runs, qrels) "
     "it is written to"),
    ('{"run_id": "r", "topic_id": "q:1", "answer": "x"}\n',
     "answers.jsonl:1: query id 'q:1' contains ':', which separates the parts of a response passage id"),
    ('{"run_id": "r", "topic_id": "#1", "answer": "x"}\n',
     "answers.jsonl:1: query id '#1' starts with '#': run and qrels files read such a line as a comment"),
])
def test_bad_responses_name_file_and_line(write, content, message):
    path = write("answers.jsonl", content)
    with pytest.raises(InputError) as err:
        read_responses(path)
    assert str(err.value) == f"{path.parent}/{message}"
