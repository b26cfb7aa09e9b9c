"""Answer verification by normalised string matching: the DESIGN.md examples and hand-worked cases."""
from __future__ import annotations

import pytest

from exampp.grading.verify import STOPWORDS, edit_distance, is_correct, is_ill_formed, matches, normalize

# --- the DESIGN.md examples (gold "rise") -----------------------------------------------------

def test_synonym_is_wrong_by_string_matching():
    # "rise" vs "increas": string matching cannot know synonyms; the LLM verifier can.
    assert normalize("increase") == "increas"
    assert not matches("increase", "rise")


def test_inflection_is_correct_after_stemming():
    assert normalize("rising") == normalize("rise") == "rise"
    assert matches("rising", "rise")


def test_different_phrase_is_wrong():
    # "be" is a stopword: "higher" vs "rise" is far apart.
    assert normalize("be higher") == "higher"
    assert not matches("be higher", "rise")


# --- normalisation ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("The Rising Tides!", "rise tide"),
    ("  running,   CATS  ", "run cat"),
    ("It's not the cats'", "cat"),  # contraction and possessive: punctuation deleted, stopwords dropped
    ("«Cats» — and dogs…", "cat dog"),  # unicode punctuation
    ("U.S.A.", "usa"),  # punctuation is deleted, not turned into a space ...
    ("Eiffel-Tower / Paris", "eiffel tower pari"),  # ... except dashes and slashes, which part words
    ("the of and", ""),
])
def test_normalize(text, expected):
    assert normalize(text) == expected


def test_stopword_list_is_the_standard_english_one():
    assert len({w for w in STOPWORDS if "'" in w}) == 26  # NLTK's 26 contractions ...
    assert {"dont", "don't", "the", "not", "be"} <= STOPWORDS  # ... also spelt without apostrophe
    assert "rise" not in STOPWORDS


def test_case_punctuation_and_stopwords_do_not_matter():
    assert matches("THE Eiffel-Tower!", "eiffel tower")
    assert matches("e-mail", "email")  # "e mail" vs "email": distance 1 of 6
    assert matches("Paris, France.", "paris france")
    assert matches("in the year 1889", "year 1889")


# --- edit distance -----------------------------------------------------------------------------

@pytest.mark.parametrize("a, b, distance", [
    ("kitten", "sitting", 3),  # k->s, e->i, +g
    ("flaw", "lawn", 2),  # -f, +n
    ("", "abc", 3),
    ("abc", "abc", 0),
    ("abc", "acb", 2),  # Levenshtein has no transposition
])
def test_edit_distance(a, b, distance):
    assert edit_distance(a, b) == distance == edit_distance(b, a)


@pytest.mark.parametrize("extracted, gold, expected", [
    # digits pass normalisation unchanged, so the lengths below are exact
    ("12346", "12345", False),  # distance 1, longer 5: exactly 20% is not below
    ("123457", "123456", True),  # 1 < 0.2 * 6
    ("1234567809", "1234567890", False),  # last two swapped: 2 = 0.2 * 10
    ("1234567891", "1234567890", True),  # 1 < 2
    ("1234", "12345", False),  # one deletion, longer 5: 20%
    ("123456", "12345", True),  # one insertion, longer 6
    ("12345", "12345", True),
])
def test_twenty_percent_boundary(extracted, gold, expected):
    assert matches(extracted, gold) is expected


# --- ill-formed and unanswerable ---------------------------------------------------------------

@pytest.mark.parametrize("answer", ["a.", "(iii)", "iv.", "B", "(c)", "xi", "(3)", "3)", "", "   ", "?!", "the of and"])
def test_ill_formed(answer):
    assert is_ill_formed(answer)
    assert not matches(answer, answer)  # wrong even against a gold answer spelt the same


@pytest.mark.parametrize("answer", ["20", "mix", "vivid", "C++ language", "x-ray"])
def test_not_ill_formed(answer):
    assert not is_ill_formed(answer)


@pytest.mark.parametrize("answer", ["unanswerable", "No answer", "not enough information", "unknown",
                                    "It does not say"])
def test_unanswerable_is_wrong_even_when_the_key_says_the_same(answer):
    assert not matches(answer, answer)


def test_gold_without_content_matches_nothing():
    assert not matches("the", "the")
    assert not matches("rise", "")


def test_is_correct_against_any_gold_answer():
    assert is_correct("rising", ["increase", "rise"])
    assert not is_correct("rising", ["increase", "go up"])
    assert not is_correct("rising", [])
