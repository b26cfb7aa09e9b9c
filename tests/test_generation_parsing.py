"""Questions out of generating LLMs' answers in every shape they come in, and near-duplicates."""
from __future__ import annotations

import pytest

from exampp.generation.answer_parsing import parse_questions, remove_near_duplicates

Q = ["What causes coral bleaching?", "How do rising sea temperatures affect algae?", "Can reefs recover?"]


@pytest.mark.parametrize("answer", [
    # the prompt's own format, fenced
    '```json\n{"questions": ["What causes coral bleaching?", "How do rising sea temperatures affect algae?", '
    '"Can reefs recover?"]}\n```',
    # fenced, with prose before and after
    'Sure! Here are the questions:\n```json\n{"questions":["What causes coral bleaching?",'
    '"How do rising sea temperatures affect algae?","Can reefs recover?"]}\n```\nLet me know if you need more.',
    # bare JSON, trailing prose
    '{"questions": ["What causes coral bleaching?", "How do rising sea temperatures affect algae?", '
    '"Can reefs recover?"]} I hope these help.',
    # a JSON list, and a list of objects
    '["What causes coral bleaching?", "How do rising sea temperatures affect algae?", "Can reefs recover?"]',
    '[{"question": "What causes coral bleaching?"}, {"question": "How do rising sea temperatures affect algae?"}, '
    '{"text": "Can reefs recover?"}]',
    # another key, and a key in another case
    '{"Questions": ["What causes coral bleaching?", "How do rising sea temperatures affect algae?", '
    '"Can reefs recover?"]}',
    # numbered and bulleted lines
    "1. What causes coral bleaching?\n2) How do rising sea temperatures affect algae?\n3: Can reefs recover?",
    "Questions:\n- What causes coral bleaching?\n* How do rising sea temperatures affect algae?\n• Can reefs recover?",
    # plain lines ending with a question mark, among prose
    "Here you go.\nWhat causes coral bleaching?\nHow do rising sea temperatures affect algae?\nCan reefs recover?\n",
    # an unclosed fence (cut off by the token limit after the JSON)
    '```json\n{"questions": ["What causes coral bleaching?", "How do rising sea temperatures affect algae?", '
    '"Can reefs recover?"]}',
])
def test_every_shape_gives_the_same_questions(answer):
    assert parse_questions(answer) == Q


def test_truncated_json_keeps_the_complete_questions():
    cut = '{"questions": ["What causes coral bleaching?", "How do rising sea temperatures affect algae?", ' \
          '"Can reefs recover?", "Which species are most at ri'
    assert parse_questions(cut) == Q
    assert parse_questions('```json\n{"questions": ["What causes coral bleaching?", "How') == Q[:1]
    objects = '{"questions": [{"question": "What is A?"}, {"question": "What is B?"}, {"questi'
    assert parse_questions(objects) == ["What is A?", "What is B?"]  # the objects' questions, not their keys


def test_escapes_and_spacing_are_read_as_json_reads_them():
    assert parse_questions('{"questions": ["What is a \\"reef\\"?", "  Why\\n do   corals bleach? "]}') == [
        'What is a "reef"?', "Why do corals bleach?"]


@pytest.mark.parametrize("answer", ["", "   ", "I cannot help with that.", '{"questions": []}', "```json\n```",
                                    '{"answer": 42}'])
def test_an_answer_without_questions_gives_none(answer):
    assert parse_questions(answer) == []


@pytest.mark.parametrize("answer", ['{"questions": [1, null, {"a": 1}, ["x"], true]}', '[1, ["x"], {"q": 2}]',
                                    '```json\n{"questions": [null, ["What is x?"]]}\n```'])
def test_a_list_nested_among_values_that_are_no_questions_gives_none(answer):
    assert parse_questions(answer) == []


def test_an_object_of_another_kind_may_wrap_the_questions():
    assert parse_questions('{"response": {"questions": ["What is A?"]}}') == ["What is A?"]
    assert parse_questions('{"note": "none"} then {"questions": ["What is A?"]}') == ["What is A?"]


def test_near_duplicates_are_dropped_keeping_the_first():
    questions = ["What causes coral bleaching?", "what causes coral bleaching", "What causes Coral-Bleaching??",
                 "What causes coral bleaching in reefs?", "How do reefs recover?", "", "?!"]
    # word sets: {what, causes, coral, bleaching} thrice; with "in reefs" the Jaccard is 4/6 < 0.9: kept
    assert remove_near_duplicates(questions) == ["What causes coral bleaching?",
                                                 "What causes coral bleaching in reefs?", "How do reefs recover?"]
    assert remove_near_duplicates(questions, threshold=0.6) == ["What causes coral bleaching?", "How do reefs recover?"]


VITAL, OKAY = ("Heat stress expels algae", "vital"), ("Bleached corals can recover", "okay")


@pytest.mark.parametrize("answer, expected", [
    # objects with their importance, as the nugget prompt asks (the label in any case; none given: None)
    ('```json\n{"nuggets": [{"text": "Heat stress expels algae", "importance": "vital"}, '
     '{"text": "Bleached corals can recover", "importance": "Okay"}, {"text": "Reefs are old"}]}\n```',
     [VITAL, OKAY, ("Reefs are old", None)]),
    # lists by importance, also under the nuggets key
    ('{"vital": ["Heat stress expels algae"], "okay": ["Bleached corals can recover"]}', [VITAL, OKAY]),
    ('{"nuggets": {"vital": ["Heat stress expels algae"], "okay": ["Bleached corals can recover"]}}', [VITAL, OKAY]),
    # marks before or after a line's text
    ("1. [vital] Heat stress expels algae\n2. Bleached corals can recover (okay)\n3. (VITAL) Reefs are old",
     [VITAL, OKAY, ("Reefs are old", "vital")]),
])
def test_nuggets_keep_their_importance(answer, expected):
    from exampp.generation.answer_parsing import parse_nuggets

    assert parse_nuggets(answer) == expected
    assert parse_questions(answer) == [text for text, _ in expected]


def test_an_importance_outside_the_labels_is_none():
    from exampp.generation.answer_parsing import parse_nuggets

    assert parse_nuggets('[{"nugget_text": "A fact", "importance": "high"}, '
                         '{"question_text": "Why?", "label": "vital"}]') == [("A fact", None), ("Why?", "vital")]


def test_near_duplicates_of_questions_kept_before_are_dropped():
    kept = ["What causes coral bleaching?"]
    assert remove_near_duplicates(["what causes coral bleaching", "How do reefs recover?"], kept_before=kept) == [
        "How do reefs recover?"]


def test_a_question_is_one_plain_line_whatever_the_model_wrote():
    # JSON escapes of NUL, a bell, a line break, an escape sequence, a line separator, a lone surrogate
    answer = ('{"questions": ["What\\u0000 is\\u0007 a\\nreef?", "Why\\u001b[31m do\\u2028corals\\t\\tbleach?", '
              '"Is \\ud800 a letter?", "\\u0000\\u0001"]}')
    assert parse_questions(answer) == ["What is a reef?", "Why[31m do corals bleach?", "Is \ufffd a letter?"]
    # the same characters raw, in numbered lines
    assert parse_questions("1. What\x00 is\x1b a reef?\n2. Is \ud800 a\x7f letter?") == [
        "What is a reef?", "Is \ufffd a letter?"]


@pytest.mark.parametrize("answer, expected", [
    ("[" * 50_000 + "]" * 50_000, []),
    ('{"questions": ' + "[" * 50_000 + "]" * 50_000 + "}", []),
    ('```json\n{"questions": ' + "[" * 50_000 + "\n```", []),
    # cut off, the complete questions before the deep part are read
    ('{"questions": ["What causes coral bleaching?", ' + "[" * 50_000, ["What causes coral bleaching?"]),
])
def test_json_nested_deeper_than_python_parses_is_no_json(answer, expected):
    assert parse_questions(answer) == expected


@pytest.mark.parametrize("threshold", [0, -0.5, 1.5, float("nan")])
def test_a_threshold_outside_0_to_1_is_refused(threshold):
    with pytest.raises(ValueError, match=r"^threshold must be above 0 and at most 1, not "):
        remove_near_duplicates(Q, threshold)
