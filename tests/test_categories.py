"""Question categories: Bloom levels by keyword (whole words, stemmed) and the question word."""
import re
from collections import Counter

import pandas as pd
import pytest

from conftest import shared_path
from exampp.analysis.categories import BLOOM_KEYWORDS, bloom_levels, categorize, question_word
from exampp.collection.questions import Question
from exampp.formats.question_bank import read_question_bank


def test_keyword_lists_are_those_of_the_design():
    assert list(BLOOM_KEYWORDS) == ["Remembering", "Understanding", "Applying", "Analyzing", "Evaluating", "Creating"]
    assert [len(k) for k in BLOOM_KEYWORDS.values()] == [10, 20, 23, 14, 13, 14]
    assert BLOOM_KEYWORDS["Remembering"][:3] == ("list", "identify", "name")
    assert BLOOM_KEYWORDS["Creating"][-1] == "customize"
    assert "illustrate" in BLOOM_KEYWORDS["Understanding"] and "illustrate" in BLOOM_KEYWORDS["Applying"]


@pytest.mark.parametrize("text, levels", [
    ("Name three rivers of France.", {"Remembering"}),
    ("Can you explain why the sky is blue?", {"Understanding"}),
    ("How do you solve a quadratic equation?", {"Applying"}),
    ("Compare TCP with UDP.", {"Analyzing"}),
    ("How would you justify the cost of the project?", {"Evaluating"}),
    ("Design a bridge for heavy trucks.", {"Creating"}),
    ("How can one illustrate recursion?", {"Understanding", "Applying"}),  # listed in both levels
    ("Identify the main causes and evaluate how to build a cure.", {"Remembering", "Evaluating", "Creating"}),
    ("Why is the sky blue?", set()),
])
def test_each_level_and_several_levels(text, levels):
    assert bloom_levels(text) == frozenset(levels)


@pytest.mark.parametrize("word, level", [
    ("explains", "Understanding"), ("explained", "Understanding"), ("explaining", "Understanding"),
    ("EXPLAIN", "Understanding"), ("identified", "Remembering"), ("identifies", "Remembering"),
    ("applied", "Applying"), ("tries", "Applying"), ("running", "Applying"), ("analyzing", "Analyzing"),
    ("compared", "Analyzing"), ("recommended", "Evaluating"), ("rates", "Evaluating"), ("generated", "Creating"),
    ("customized", "Creating"), ("listing", "Remembering"),
])
def test_inflections_match(word, level):
    assert level in bloom_levels(f"Was it {word}?")


@pytest.mark.parametrize("text", [
    "Did you listen?",           # contains "list"
    "Who was the statesman?",    # contains "state"
    "Is it a rattlesnake?",      # contains "rate"
    "Was the runway wet?",       # contains "run"
    "Is it a general rule?",     # Porter stems general and generate alike; the prefix rule rejects it
    "What was the original?",    # originate
    "What is its validity?",     # validate
    "Describe-free experiment",  # "experiment" stems like experience; "describe" still counts (hyphen splits)
])
def test_words_merely_containing_or_stemming_like_a_keyword_do_not_match(text):
    expected = {"Understanding"} if "Describe" in text else set()
    assert bloom_levels(text) == frozenset(expected)


@pytest.mark.parametrize("text, level", [
    ("Is it useful?", "Applying"),              # use + ful keeps the spelling: matches (pinned)
    ("Which measures helped?", "Evaluating"),   # noun "measures": matches
    ("What is the development?", "Creating"),
    ("In the United States?", "Remembering"),
    ("Check the settings", "Applying"),         # also Understanding via "check"
])
def test_known_false_friends_that_keep_the_keyword_spelling(text, level):
    assert level in bloom_levels(text)


@pytest.mark.parametrize("text, word", [
    ("How does it work?", "how"),
    ("however, it failed", None),
    ("Somehow it worked. What now?", "what"),
    ("In which year and why?", "which"),
    ("Tell me WHY and when", "why"),
    ("Whose book is it? Whom did you call?", None),
    ("Is it raining?", None),
    ("It-was-who?", "who"),
])
def test_question_word_is_the_earliest_whole_word(text, word):
    assert question_word(text) == word


def test_categorize_columns_and_rows():
    questions = [Question("q1", "q1/a", "How would you compare and rank them?"),
                 Question("q2", "q2/b", "Tell me a story.")]
    table = categorize(questions)
    assert list(table.columns) == ["question_id", "query_id", "text", "bloom", "question_word"]
    assert table.drop(columns="question_word").to_dict("records") == [
        {"question_id": "q1/a", "query_id": "q1", "text": "How would you compare and rank them?",
         "bloom": ("Analyzing", "Evaluating")},
        {"question_id": "q2/b", "query_id": "q2", "text": "Tell me a story.", "bloom": ()},
    ]
    assert table["question_word"].iloc[0] == "how" and pd.isna(table["question_word"].iloc[1])  # None → missing


# Independent counts: hand-written regexes listing the inflected (and spelling-preserving derived)
# forms of each keyword, checked by reading the matching DL19 questions.
INDEPENDENT = {
    "Remembering": r"\b(list(s|ed|ing)?|identif(y|ies|ied|ying|ication)|nam(e|es|ed|ing)|defin(e|es|ed|ing)"
                   r"|stat(e|es|ed|ing)|mention(s|ed|ing)?|recall(s|ed|ing)?|label(s|ed|led|ing|ling)?"
                   r"|repeat(s|ed|ing)?|recogniz(e|es|ed|ing))\b",
    "Analyzing": r"\b(analyz(e|es|ed|ing)|distinguish(es|ed|ing)?|compar(e|es|ed|ing)|differentiat(e|es|ed|ing)"
                 r"|examin(e|es|ed|ing)|test(s|ed|ing)?|question(s|ed|ing)?|inspect(s|ed|ing)?|debat(e|es|ed|ing)"
                 r"|investigat(e|es|ed|ing)|manag(e|es|ed|ing|ement)|optimiz(e|es|ed|ing)|troubleshoot(s|ed|ing)?"
                 r"|resolv(e|es|ed|ing))\b",
    "Evaluating": r"\b(evaluat(e|es|ed|ing)|rat(e|es|ed|ing)|justif(y|ies|ied|ying)|critiqu(e|es|ed|ing)"
                  r"|decid(e|es|ed|ing)|rank(s|ed|ing)?|measur(e|es|ed|ing|ement|ements)|validat(e|es|ed|ing)"
                  r"|assess(es|ed|ing|ment)?|choos(e|es|ing)|verif(y|ies|ied|ying)|monitor(s|ed|ing)?"
                  r"|recommend(s|ed|ing)?)\b",
    "Creating": r"\b(design(s|ed|ing)?|construct(s|ed|ing|ion)?|produc(e|es|ed|ing)|invent(s|ed|ing|ion)?"
                r"|devis(e|es|ed|ing)|formulat(e|es|ed|ing)|originat(e|es|ed|ing)|assembl(e|es|ed|ing)"
                r"|generat(e|es|ed|ing|ion)|creat(e|es|ed|ing)|develop(s|ed|ing|ment|ments)?|compos(e|es|ed|ing)"
                r"|build(s|ing)?|customiz(e|es|ed|ing))\b",
}


def test_categories_of_the_dl19_bank():
    bank = read_question_bank(shared_path("data", "dl19", "dl19-genq.jsonl.gz"))
    table = categorize(bank)
    assert len(table) == 430
    counts = Counter(level for levels in table["bloom"] for level in levels)
    print("Bloom levels on DL19:", dict(counts), "none:", sum(not b for b in table["bloom"]))
    assert counts == {"Applying": 49, "Remembering": 29, "Evaluating": 24, "Understanding": 19, "Creating": 17,
                      "Analyzing": 17}
    for level, pattern in INDEPENDENT.items():
        regex = re.compile(pattern, re.IGNORECASE)
        assert counts[level] == sum(bool(regex.search(text)) for text in table["text"]), level
    assert sum(len(b) > 1 for b in table["bloom"]) == 15
    assert table["question_word"].value_counts().to_dict() == {"what": 146, "how": 130, "when": 10, "who": 7,
                                                               "which": 3, "where": 2}
    assert table["question_word"].isna().sum() == 132  # "Are there…", "Can…", "Is…" questions
    # every question starting with "How " gets "how" (independent of the earliest-match logic)
    starts_how = table["text"].str.lower().str.startswith("how ")
    assert starts_how.sum() == 123 and (table.loc[starts_how, "question_word"] == "how").all()
