"""Question-answering graders on tiny random-weight models: generative answers verified by string
matching or by the model, and extractive SQuAD2-style span reading."""
from __future__ import annotations

import math

import pytest
import torch

from exampp.collection.questions import Question
from exampp.errors import ModelLoadError
from exampp.grading.base import Pair
from exampp.grading.method import MethodError
from exampp.grading.method_prompts import ANSWER_VERIFICATION, QUESTION_ANSWERING
from exampp.grading.methods.qa import QA, require_answers
from exampp.grading.methods.qa_extractive import ExtractiveQA
from exampp.grading.registry import parse_method
from exampp.llm.backends.extractive import ExtractiveReader, chunk_candidates
from exampp.llm.backends.hf import HFBackend
from exampp.testing.tiny_models import steer
from tiny_model_dirs import t5_tokenizer_dir

LONG = "The sea level keeps changing along the coast. " * 120  # far beyond 512 tokens: cut by fit


def pair(passage: str, question: str, answers=(), qid: str = "q1") -> Pair:
    return Pair("q", f"p-{len(passage)}-{question}", passage,
                Question("q", qid, question, answers=tuple(answers)))


def ids(model: HFBackend, text: str, *, eos: bool = True) -> list[int]:
    tokens = model.tokenizer(text, add_special_tokens=False)["input_ids"]
    return tokens + ([model.tokenizer.eos_token_id] if eos else [])


def qa_prompt(model: HFBackend, p: Pair) -> str:
    return model.fit(QUESTION_ANSWERING, context=p.passage, question=p.question.text)


def verify_prompt(p: Pair, gold: str, answer: str) -> str:
    return ANSWER_VERIFICATION.render(question=p.question.text, correct_answer=gold, answer=answer)


def load_untied(path) -> HFBackend:
    """The tiny model with its own output layer: transformers 5 ties T5's head to the input embeddings
    of a freshly built model, and steering the head would then also move the decoder's inputs."""
    model = HFBackend.load(str(path), device="cpu", batch_size=2)
    head = model.model.get_output_embeddings()
    head.weight = torch.nn.Parameter(head.weight.detach().clone())
    return model


@pytest.fixture
def model(tiny_t5_dir):  # noqa: F811
    return load_untied(tiny_t5_dir)


# --- generative QA, string verification ------------------------------------------------------

def test_string_verification_of_generated_answers(model):
    pairs = [
        pair("Sea levels are rising.", "What do sea levels do?", ["rise"]),
        pair(LONG, "What does the sea level do?", ["rise"]),  # long: batched apart, cut to fit
        pair("Prices went up.", "What do prices do?", ["rise"]),
        pair("Nothing here.", "Who won?", ["Paris"]),
    ]
    said = ["rising", "increase", "be higher", "unanswerable"]
    steer(model, [qa_prompt(model, p) for p in pairs], [ids(model, s) for s in said])
    judgments = QA().bind(model).grade(pairs)
    assert [j.answer for j in judgments] == said  # input order, answers kept for inspection
    assert [j.grade for j in judgments] == [1.0, 0.0, 0.0, 0.0]  # only "rising" matches "rise"
    assert "Context: The sea level" in qa_prompt(model, pairs[1])
    assert model.count_tokens(qa_prompt(model, pairs[1])) <= 512


@pytest.mark.slow
def test_method_ids_name_the_verifier(model):
    assert QA().bind(model).method.method_id == f"qa|{model.name}|qa@v1+string@v1"
    assert QA(verify="llm").bind(model).method.method_id == f"qa|{model.name}|qa@v1+verify@v1"
    with pytest.raises(MethodError, match=r"verify='regex' is not one of string, llm"):
        parse_method("qa(verify=regex)")


def test_questions_without_answer_key_are_refused(model):
    pairs = [pair("x", "Who?", qid="a"), pair("y", "Who?", qid="a"), pair("z", "What?", qid="b"),
             pair("w", "Why?", ["because"], qid="c")]
    assert [QA().usable(p.question) for p in pairs] == [False, False, False, True]
    with pytest.raises(ValueError, match=r"^2 question\(s\) have no answer key \('answers'\), e.g. a, b:"):
        QA().bind(model).grade(pairs)
    require_answers(pairs[3:])  # a keyed question passes


# --- generative QA, LLM verification ---------------------------------------------------------

def test_llm_verification_asks_gold_answers_in_turn(model):
    p_synonym = pair("Sea levels are going up.", "What do sea levels do?", ["go down", "rise"])
    p_refused = pair("Sea levels are rising.", "What do they do?", ["rise"])
    p_unanswerable = pair(LONG, "Who won?", ["Paris"])
    p_first = pair("It rose.", "What did it do?", ["rise", "climb"])
    pairs = [p_synonym, p_refused, p_unanswerable, p_first]
    said = ["increase", "rising", "unanswerable", "climbed"]
    yes, no = ids(model, "yes", eos=False), ids(model, "no", eos=False)
    verifications = {  # every prompt the verifier may ask, and what the model answers
        verify_prompt(p_synonym, "go down", "increase"): no,
        verify_prompt(p_synonym, "rise", "increase"): yes,  # second gold answer accepts the synonym
        verify_prompt(p_refused, "rise", "rising"): no,  # the LLM overrules what strings would accept
        verify_prompt(p_first, "rise", "climbed"): yes,  # yes at once: "climb" is never asked
    }
    steer(model, [qa_prompt(model, p) for p in pairs] + list(verifications),
          [ids(model, s) for s in said] + list(verifications.values()))
    asked: list[str] = []
    next_token_labels = model.next_token_labels
    model.next_token_labels = lambda prompts, *a, **k: (asked.extend(prompts), next_token_labels(prompts, *a, **k))[1]
    judgments = QA(verify="llm").bind(model).grade(pairs)
    assert [j.answer for j in judgments] == said
    assert [j.grade for j in judgments] == [1.0, 0.0, 0.0, 1.0]
    assert sorted(asked) == sorted(verifications)  # the unanswerable answer is never asked about


# --- extractive QA ----------------------------------------------------------------------------

def test_chunk_candidates_hand_worked():
    # position 0 = <cls> (no answer); 1 = question token; 2..4 = context
    in_context = torch.tensor([False, False, True, True, True])
    start = torch.tensor([0.0, 50.0, math.log(3), 0.0, 0.0])  # the question token is masked out
    end = torch.tensor([0.0, 50.0, 0.0, math.log(3), 0.0])
    null, spans = chunk_candidates(start, end, in_context)
    # softmax over {0, 2, 3, 4}: start (1, 3, 1, 1)/6, end (1, 1, 3, 1)/6; spans need 2 <= s <= e
    assert null == pytest.approx(1 / 36)
    assert spans[0][:2] == (2, 3) and spans[0][2] == pytest.approx(9 / 36)  # best first
    assert sorted((s, e, round(score * 36, 4)) for s, e, score in spans) == [
        (2, 2, 3), (2, 3, 9), (2, 4, 3), (3, 3, 3), (3, 4, 1), (4, 4, 1)]
    # spans longer than max_answer_len are not candidates: (2, 3) has 2 tokens
    _, spans = chunk_candidates(start, end, in_context, max_answer_len=1)
    assert sorted((s, e, round(score * 36, 4)) for s, e, score in spans) == [(2, 2, 3), (3, 3, 3), (4, 4, 1)]
    assert len(chunk_candidates(start, end, in_context, candidates=2)[1]) == 2
    # no context at all: no span
    assert chunk_candidates(torch.zeros(3), torch.zeros(3), torch.tensor([False, False, False]))[1] == []


def build_extractive(path):
    """A tiny T5 question-answering model whose weights are drawn by torch alone (standard normal, parameters
    in name order), so that they are the same under every transformers version."""
    from transformers import AutoTokenizer, T5Config, T5ForQuestionAnswering

    tokenizer = AutoTokenizer.from_pretrained(t5_tokenizer_dir())
    tokenizer.add_special_tokens({"cls_token": "<cls>"})  # as sjrhuschlee/flan-t5-*-squad2 do
    config = T5Config(vocab_size=32128, d_model=32, d_ff=64, d_kv=16, num_layers=1, num_decoder_layers=1,
                      num_heads=2, feed_forward_proj="gated-gelu", tie_word_embeddings=False, dropout_rate=0.0,
                      decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    model = T5ForQuestionAnswering(config)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for _, parameter in sorted(model.named_parameters()):
            parameter.copy_(torch.randn(parameter.shape, generator=generator))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def extractive_dir(tmp_path_factory):
    return build_extractive(tmp_path_factory.mktemp("tiny-t5-qa"))


QUESTIONS = ["What rises?", "Who lives in London?", "Where?", "What is the sea level doing?", "When?",
             "Who lives in London?", "Which city?"]
CONTEXTS = ["Sea levels rise every year along the coast.", "My name is Sarah and I live in London.", "Paris", LONG,
            "In 1889 the tower was opened to the public.", "Sarah lives in London.",
            "PARIS, paris; Paris! The city of Paris (France) is big. " * 30]
# What transformers 4.57.6's pipeline("question-answering") answered for these pairs on the same weights,
# with question="<cls>" + question and handle_impossible_answer=True (the pipeline is gone from transformers 5).
PIPELINE_ANSWERS = ["every year along", "name is", "", "The sea level keeps changing along the",
                    "In 1889 the tower was opened", "lives in London.",
                    "paris; Paris! The city of Paris (France) is big."]


@pytest.mark.slow
def test_extractive_reader_reproduces_the_transformers_pipeline(extractive_dir):
    reader = ExtractiveReader.load(str(extractive_dir), device="cpu", batch_size=3)
    assert reader.question_prefix == "<cls>"  # the T5 tokenizer puts no <cls> first itself
    answers = reader.extract(QUESTIONS, CONTEXTS)
    assert answers == PIPELINE_ANSWERS  # word-aligned spans, null answers, long passages read in chunks
    # batches mixing lengths and chunk counts change nothing, and the order is kept
    assert answers == [reader.extract([q], [c])[0] for q, c in zip(QUESTIONS, CONTEXTS)]


@pytest.mark.slow
def test_extractive_grader_verifies_spans(extractive_dir):
    reader = ExtractiveReader.open(str(extractive_dir), device="cpu")
    grader = ExtractiveQA().bind(reader)
    assert grader.method.method_id == f"qa|{extractive_dir}|extractive-squad2@v1+string@v1"
    passages = ["My name is Sarah and I live in London.", "Sea levels rise every year along the coast."]
    spans = reader.extract(["Who lives in London?", "What rises?"], passages)
    assert all(spans), "the random model happens to find an answer in both"
    pairs = [pair(passages[0], "Who lives in London?", [spans[0].upper() + "!"]),  # same after normalising
             pair(passages[1], "What rises?", ["zebra crossing"])]
    judgments = grader.grade(pairs)
    assert [j.answer for j in judgments] == spans
    assert [j.grade for j in judgments] == [1.0, 0.0]


def test_extractive_null_answer_is_unanswerable(extractive_dir, tmp_path):
    # Steer the head to "no answer": the decoder's position 0 reads the start token (pad, id 0); make
    # its embedding dominate there and point the start/end logits along it (through a neutral final norm).
    reader = ExtractiveReader.load(str(extractive_dir), device="cpu")
    passage, question = "My name is Sarah and I live in London.", "Who lives in London?"
    assert reader.extract([question], [passage]) != [""]  # unsteered, the random model picks a span
    with torch.no_grad():
        direction = torch.randn(reader.model.config.d_model, generator=torch.Generator().manual_seed(0))
        reader.model.shared.weight[0] = 1e4 * direction
        reader.model.decoder.final_layer_norm.weight.fill_(1.0)
        reader.model.qa_outputs.weight[:] = 10 * direction
        reader.model.qa_outputs.bias.zero_()
    judgments = ExtractiveQA().bind(reader).grade([pair(passage, question, ["Sarah"])])
    assert judgments[0].answer == "" and judgments[0].grade == 0.0


def test_extractive_load_error_names_the_way_out(tmp_path, unreachable_hub):
    with pytest.raises(ModelLoadError) as error:
        ExtractiveReader.open(str(tmp_path / "nowhere"), device="cpu")
    assert str(error.value) == f"no such model folder {tmp_path / 'nowhere'}"
    with pytest.raises(ModelLoadError) as error:
        ExtractiveReader.open("org/squad2", device="cpu")
    assert str(error.value) == (
        "extractive question-answering model 'org/squad2' is not in the local HuggingFace cache and the hub "
        "(http://127.0.0.1:9) cannot be reached. Give a local copy of a SQuAD2-fine-tuned model with "
        "--model PATH, or grade offline with --grader embedding.")
