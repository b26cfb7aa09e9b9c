"""A generating model's text is untrusted: whatever it answers, the bank's reader finds plain
questions (one line, no control character, no lone surrogate, at most MAX_CHARS long, at most
MAX_ITEMS of them) or none, the questions found make a bank that writes and reads back as it
was, and near-duplicate removal is the pairwise Jaccard rule however it is computed."""
from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import example, strategies as st

from exampp.collection.questions import Question, QuestionBank, question_id_for
from exampp.formats.question_bank import read_question_bank, write_question_bank
from exampp.generation import question_requests
from exampp.generation.answer_parsing import parse_questions, remove_near_duplicates
from exampp.generation.asking import Noted, Unusable
from exampp.generation.bank_prompts import choose_prompts

from .checks import encodable, scratch, tries
from .strategies import SPECIAL_CHARS, any_char

line_text = st.text(any_char, max_size=40)
answers = st.one_of(
    st.text(any_char, max_size=200),
    # the prompt's JSON: every character escaped as JSON escapes it (a lone surrogate as \ud800), or raw
    st.tuples(st.lists(line_text, max_size=8), st.booleans()).map(
        lambda t: json.dumps({"questions": t[0]}, ensure_ascii=t[1])),
    st.lists(line_text, max_size=8).map(lambda qs: "".join(f"{i}. {q}\n" for i, q in enumerate(qs, 1))),
)


def read(answer: str, prompt: str = "query") -> list[dict[str, str]]:
    """The questions the bank's reader takes from ``answer``; [] when it holds none."""
    try:
        value = question_requests.reader(choose_prompts(prompt))(answer)
    except Unusable:
        return []
    return value.value if isinstance(value, Noted) else value


@pytest.mark.slow
@tries(100, answer=answers, prompt=st.sampled_from(["query", "nuggets"]))
@example(answer='{"questions": ["a\\u0000b\\nc", "\\ud800?", "' + "x" * 1001 + '"]}', prompt="query")
@example(answer="[" * 50_000, prompt="query")
@example(answer=json.dumps({"questions": [f"Question {i}?" for i in range(1005)]}), prompt="query")
def test_questions_read_from_any_answer_are_plain_and_a_bank_of_them_reads_back(answer, prompt):
    found = read(answer, prompt)
    assert len(found) <= question_requests.MAX_ITEMS
    for entry in found:
        text = entry["text"]
        assert text and text == text.strip() and len(text) <= question_requests.MAX_CHARS, repr(text)
        assert encodable(text) and not any(unicodedata.category(c) == "Cc" for c in text), repr(text)
        assert "  " not in text and text == " ".join(text.split()), repr(text)
    bank = QuestionBank(Question("Q1", question_id_for("Q1", text), text, info=info)
                        for text, info in {e["text"]: e.get("importance") and {"importance": e["importance"]}
                                           for e in found}.items())
    if len(bank):
        with scratch() as folder:
            write_question_bank(bank, folder / "bank.jsonl")
            assert read_question_bank(folder / "bank.jsonl") == bank


@pytest.mark.parametrize("shape", ["[{}]", '{{"questions": {}}}', '```json\n{{"questions": {}}}\n```',
                                   '{{"nuggets": {{"vital": {}}}}}'])
def test_json_nested_50000_deep_holds_no_question(shape):
    assert parse_questions(shape.format("[" * 50_000 + "]" * 50_000)) == []
    assert parse_questions(shape.format("{\"a\": " * 50_000 + "1" + "}" * 50_000)) == []


def pairwise(texts: list[str], threshold: float, kept_before: list[str]) -> list[str]:
    """Near-duplicate removal by its definition: every question compared with every one kept before it."""
    def words(text: str) -> frozenset[str]:
        return frozenset(w for w in "".join(c if c.isalnum() or c == "_" else " " for c in text.lower()).split())

    seen = [w for w in map(words, kept_before) if w]
    kept = []
    for text in texts:
        w = words(text)
        if w and not any(len(w & o) >= threshold * len(w | o) for o in seen):
            kept.append(text)
            seen.append(w)
    return kept


# a few words, so that questions share many of them; now and then a hostile character
small_texts = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "A", "b?", "c,"]) | st.sampled_from(
    SPECIAL_CHARS), max_size=9).map(" ".join)


@pytest.mark.slow
@tries(100, texts=st.lists(small_texts, max_size=25), before=st.lists(small_texts, max_size=5),
       threshold=st.one_of(st.sampled_from([0.5, 0.6, 2 / 3, 0.75, 0.8, 0.9, 1.0]),
                           st.floats(min_value=0.01, max_value=1.0)))
def test_near_duplicate_removal_is_the_pairwise_rule(texts, before, threshold):
    assert remove_near_duplicates(texts, threshold, kept_before=before) == pairwise(texts, threshold, before)
