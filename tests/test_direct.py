"""Direct-grading baselines: label parsing, and the grader on a tiny model steered to known outputs."""
from __future__ import annotations

import pytest
import torch

from exampp.collection.grades import DIRECT_QUESTION_ID
from exampp.collection.questions import Question
from exampp.grading.base import Pair
from exampp.grading.method import MethodError
from exampp.grading.method_prompts import DIRECT_PROMPTS
from exampp.grading.methods.direct import Direct, parse_thomas, parse_yes_no
from exampp.grading.registry import default_tau, parse_method
from exampp.llm.backends.hf import HFBackend
from exampp.testing.tiny_models import steer


@pytest.mark.parametrize("text, label", [
    ("2", 2), ("1", 1), ("0", 0), (" 2 = highly relevant", 2), ("The score is 1.", 1),
    ("3", 0), ("5 stars, or 2", 2), ("10", 1), ("relevant", 0), ("", 0),
])
def test_parse_thomas(text, label):
    assert parse_thomas(text) == label


@pytest.mark.parametrize("text, label", [
    ("Yes", 1), ("yes", 1), ("YES!", 1), ("'Yes'", 1), (" Yes, it does.", 1), ("Yes2", 1),
    ("No", 0), ("no, yes", 0), ("Yesterday", 0), ("The answer is yes", 0), ("1. Yes", 0), ("", 0), ("?!", 0),
])
def test_parse_yes_no(text, label):
    assert parse_yes_no(text) == label


def pair(passage: str, title: str) -> Pair:
    return Pair("q", f"p{len(passage)}", passage, Question("q", DIRECT_QUESTION_ID, title))


PAIRS = [
    pair("You can open a Wells Fargo account online in minutes.", "can you open a wells fargo account online"),
    pair("Eye drops are about 20 per ml. " * 200, "how many eye drops per ml"),  # long: cut to fit
    pair("Bananas are yellow.", "what colour are bananas"),
    pair("The moon orbits the earth.", "what orbits the earth"),
]
OUTPUTS = {  # what the steered model says for each pair, and the label each prompt family reads from it
    "thomas": [("2", 2), ("0", 0), ("The score is 1", 1), ("3", 0)],
    "yes/no": [("Yes", 1), ("No", 0), ("Yesterday", 0), ("'yes'", 1)],
}


@pytest.fixture(scope="module")
def loaded(tiny_t5_dir):  # noqa: F811
    """The tiny model, loaded once, with its output layer untied from the input embeddings (transformers 5
    ties them in a freshly built T5) so that steering moves only the output; and that layer's weights."""
    model = HFBackend.load(str(tiny_t5_dir), device="cpu", batch_size=3)
    head = model.model.get_output_embeddings()
    head.weight = torch.nn.Parameter(head.weight.detach().clone())
    return model, head.weight.detach().clone()


@pytest.fixture
def model(loaded) -> HFBackend:
    model, original = loaded
    with torch.no_grad():  # undo the previous test's steering
        model.model.get_output_embeddings().weight.copy_(original)
    return model


@pytest.mark.slow
@pytest.mark.parametrize("key", list(DIRECT_PROMPTS))
def test_grader_labels_generated_output(key, model):
    prompt = DIRECT_PROMPTS[key]
    prompts = [model.fit(prompt, context=p.passage, query_title=p.question.text) for p in PAIRS]
    assert model.count_tokens(prompts[1]) <= model.max_input_tokens and "Passage: Eye drops" in prompts[1]
    outputs = OUTPUTS["thomas" if key == "thomas" else "yes/no"]
    eos = model.tokenizer.eos_token_id
    steer(model, prompts, [model.tokenizer(text, add_special_tokens=False)["input_ids"] + [eos]
                           for text, _ in outputs])
    grader = parse_method(f"direct:{key}").bind(model)
    assert grader.direct and grader.name == f"direct:{key}"
    assert grader.method.method_id == f"direct:{key}|{model.name}|{prompt.prompt_id}"
    judgments = grader.grade(PAIRS)
    assert [j.answer for j in judgments] == [text for text, _ in outputs]  # input order
    assert [j.grade for j in judgments] == [float(label) for _, label in outputs]


def test_unknown_prompt_is_refused():
    with pytest.raises(MethodError, match=r"^direct:umbrela: prompt='umbrela' is not one of thomas, "):
        parse_method("direct:umbrela")
    with pytest.raises(MethodError, match=r"^direct: method 'direct' needs prompt$"):
        parse_method("direct")


def test_scales_follow_the_prompt():
    assert Direct("thomas").grades == (0, 1, 2) and Direct("sun").grades == (0, 1)
    assert default_tau("direct:thomas|m|direct-thomas@v1") == default_tau("direct:helm|m|direct-helm@v1") == 1.0
