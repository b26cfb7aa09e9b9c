"""Multiple-choice grading: the grader's pick equals a slow computation by hand from the logits."""
from __future__ import annotations

import math

import pytest
import torch

from exampp.collection.questions import Question
from exampp.grading.base import Pair
from exampp.grading.method_prompts import MULTIPLE_CHOICE
from exampp.grading.methods.multiple_choice import MultipleChoice, choose
from exampp.llm.backend import Backend, Capability, Usage
from exampp.llm.backends.hf import HFBackend

LONG = "Volcanoes form where tectonic plates meet and magma rises to the surface. " * 80

PAIRS = [
    Pair("q", "p1", "The capital of France is Paris.",
         Question("q", "q/1", "What is the capital of France?", choices=("Paris", "Lyon", "the city of Marseille"),
                  correct_choice=0)),
    Pair("q", "p2", LONG,  # cut to fit the model: batched apart from the short ones
         Question("q", "q/2", "Where do volcanoes form?",
                  choices=("where plates meet", "in the middle of every ocean basin", "nowhere", "on the moon"),
                  correct_choice=0)),
    Pair("q", "p3", "Water boils at 100 degrees Celsius at sea level.",
         Question("q", "q/3", "At what temperature does water boil?", choices=("100 degrees", "50"),
                  correct_choice=1)),
]


def slow_scores(model: HFBackend, prompt: str, choices) -> list[float]:
    """Mean log-probability of each choice's tokens: one unbatched forward pass per choice, by hand."""
    tokenizer, net = model.tokenizer, model.model
    prompt_ids = tokenizer(prompt)["input_ids"]
    scores = []
    for choice in choices:
        text = choice if model.is_encoder_decoder else " " + choice
        target = tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            if model.is_encoder_decoder:
                start = net.generation_config.decoder_start_token_id
                logits = net(input_ids=torch.tensor([prompt_ids]),
                             decoder_input_ids=torch.tensor([[start] + target[:-1]])).logits[0]
            else:
                logits = net(input_ids=torch.tensor([prompt_ids + target])).logits[0, len(prompt_ids) - 1:-1]
        total = 0.0
        for step, token in enumerate(target):
            row = logits[step].double()
            total += float(row[token]) - math.log(float(row.exp().sum()))
        scores.append(total / len(target))
    return scores


@pytest.mark.slow
@pytest.mark.parametrize("model_dir", ["tiny_t5_dir", "tiny_causal_dir"])
def test_pick_equals_slow_computation(model_dir, request):
    model = HFBackend.load(str(request.getfixturevalue(model_dir)), device="cpu", batch_size=3)
    judgments = MultipleChoice().bind(model).grade(PAIRS)
    for pair, judgment in zip(PAIRS, judgments):  # input order
        prompt = model.fit(MULTIPLE_CHOICE, context=pair.passage, question=pair.question.text)
        scores = slow_scores(model, prompt, pair.question.choices)
        picked = max(range(len(scores)), key=scores.__getitem__)
        assert judgment.answer == pair.question.choices[picked]
        assert judgment.grade == float(picked == pair.question.correct_choice)
        right = math.exp(scores[pair.question.correct_choice]) / sum(math.exp(s) for s in scores)
        assert judgment.probabilities == pytest.approx((1 - right, right), abs=1e-4)
    assert model.count_tokens(model.fit(MULTIPLE_CHOICE, context=LONG, question="q")) <= model.max_input_tokens


def test_length_normalisation_changes_the_winner():
    # choice 0: one token at log-prob -2 (sum -2, mean -2); choice 1: four tokens at -1 (sum -4, mean -1)
    scores = [(-2.0, 1), (-4.0, 4)]
    assert max(range(2), key=lambda i: scores[i][0]) == 0  # unnormalised, the short choice wins
    picked, probabilities = choose(scores)
    assert picked == 1
    assert probabilities == pytest.approx([1 / (1 + math.e), math.e / (1 + math.e)])


class _Scores(Backend):
    """A backend that returns fixed (sum log-prob, n tokens) per continuation."""

    name = "stub"
    capabilities = frozenset({Capability.CONTINUATION})

    def __init__(self, table: dict[str, tuple[float, int]]) -> None:
        self.table, self.asked, self.usage = table, [], Usage()

    def continuation_logprobs(self, prompts, continuations):
        self.asked += list(zip(prompts, continuations))
        return [self.table[c] for c in continuations]


def test_grader_uses_normalised_scores_and_the_answer_key():
    stub = _Scores({"yes": (-2.0, 1), "a long answer": (-4.0, 4), "": (0.0, 0)})
    pair = Pair("q", "p", "passage", Question("q", "q/1", "Which?", choices=("yes", "a long answer", ""),
                                              correct_choice=1))
    [judgment] = MultipleChoice().bind(stub).grade([pair])
    assert judgment.answer == "a long answer" and judgment.grade == 1.0  # empty choice: never picked
    assert stub.asked[0] == ("Question: Which?\nContext: passage\nAnswer:", "yes")
    assert MultipleChoice().bind(stub).method.method_id == "multiple-choice|stub|multiple-choice@v1"
    assert MultipleChoice().bind(stub).grade([]) == []


def test_questions_without_choices_are_refused():
    assert MultipleChoice.needs == ("choices",)
    no_key = Pair("q", "p", "x", Question("q", "q/9", "Which?", choices=("a", "b")))
    with pytest.raises(ValueError, match=r"^1 question\(s\) have no choices with a 'correct_choice', e.g. q/9"):
        MultipleChoice().bind(_Scores({})).grade([no_key])
