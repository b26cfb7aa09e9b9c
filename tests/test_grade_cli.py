"""`exampp grade` end to end on the repository's example collection with the fake grader, and
the exampp.toml configuration. Expected qrels and leaderboards are worked out here from the
files and the fake grader's formula, without exampp's pooling or scoring."""
from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import fake_grader
from conftest import EXAMPLES
from exampp.cli import main
from exampp.errors import InputError, ModelLoadError
from exampp.formats.exampp_toml import load_config, read_config
from exampp.grading import registry
from exampp.stores.grade_store import GradeStore
from fake_grader import fake_grade, use_method

CONFIG = EXAMPLES / "exampp.toml"


@pytest.fixture(autouse=True)
def fake(monkeypatch):
    use_method(monkeypatch, fake_grader.FakeMethod)


# --- the example collection, read independently -------------------------------------------------

def top_k(depth: int) -> dict[str, dict[str, list[str]]]:
    """run -> query -> top-depth docids, in trec_eval order (score desc, then docid desc)."""
    runs: dict[str, dict[str, list[tuple[float, str]]]] = {}
    for path in sorted((EXAMPLES / "runs").iterdir()):
        for line in path.read_text().splitlines():
            qid, _, docid, _, score, name = line.split()
            runs.setdefault(name, {}).setdefault(qid, []).append((float(score), docid))
    return {name: {q: [d for _, d in sorted(docs, reverse=True)[:depth]] for q, docs in queries.items()}
            for name, queries in runs.items()}


def collection():
    texts = {r["docid"]: r["text"]
             for r in map(json.loads, (EXAMPLES / "corpus/passages.jsonl").read_text().splitlines())}
    questions: dict[str, list[str]] = {}
    for record in map(json.loads, (EXAMPLES / "question_banks/questions.jsonl").read_text().splitlines()):
        questions.setdefault(record["query_id"], []).append(record["text"])
    return texts, questions


def expected(depth: int, tau: float, extra_runs=None, extra_texts=None):
    """(qrels lines, {run: (mean, stderr)}) from the formula."""
    texts, questions = collection()
    texts = {**texts, **(extra_texts or {})}
    runs = {**top_k(depth), **(extra_runs or {})}
    pooled = {(q, d) for docs in runs.values() for q, ids in docs.items() for d in ids}
    qrels = [f"{q} 0 {d} {max(fake_grade(texts[d], text) for text in questions[q])}" for q, d in sorted(pooled)]
    board = {}
    for name, docs in runs.items():
        covers = []
        for q in sorted(questions):
            answered = [any(fake_grade(texts[d], text) >= tau for d in docs.get(q, [])) for text in questions[q]]
            covers.append(sum(answered) / len(answered))
        mean = sum(covers) / len(covers)
        stderr = math.sqrt(sum((c - mean) ** 2 for c in covers) / (len(covers) - 1) / len(covers))
        board[name] = (mean, stderr)
    return qrels, board


def grade(*args: str):
    result = CliRunner().invoke(main, ["grade", "--config", str(CONFIG), "--grader", "fake", *args])
    return result


def read_board(path: Path) -> list[tuple[str, float, float, int]]:
    return [(r["run"], r["mean"], r["stderr"], r["n_queries"]) for r in json.loads(path.read_text())]


def check_board(rows, board):
    assert [r[0] for r in rows] == sorted(board, key=lambda n: (-round(board[n][0], 12), n))
    for name, mean, stderr, n in rows:
        assert mean == pytest.approx(board[name][0], abs=1e-12)
        assert stderr == pytest.approx(board[name][1], abs=1e-12)
        assert n == 6


@pytest.mark.slow
def test_grade_example_collection_end_to_end(tmp_path):
    ws = tmp_path / "ws"
    result = grade(str(EXAMPLES / "runs"), "-w", str(ws), "--depth", "3", "--tau", "5",
                   "--format", "json", "-o", str(tmp_path / "board.json"))
    assert result.exit_code == 0, result.output
    qrels, board = expected(depth=3, tau=5)
    assert (ws / "qrels" / "exam.qrels").read_text() == "\n".join(qrels) + "\n"
    check_board(read_board(tmp_path / "board.json"), board)
    pairs = sum(10 for _ in qrels)  # every example query has 10 questions
    assert f"{pairs} pairs: {pairs} new pairs graded" in result.output

    again = grade(str(EXAMPLES / "runs"), "-w", str(ws), "--depth", "3", "--tau", "5", "--format", "tsv")
    assert again.exit_code == 0, again.output
    assert f"{pairs} pairs: 0 new pairs graded" in again.output
    assert f"{pairs} reused from the store" in again.output
    assert (ws / "qrels" / "exam.qrels").read_text() == "\n".join(qrels) + "\n"


def test_config_settings_apply_and_flags_override(tmp_path):
    # depth 20 comes from exampp.toml, tau 4 is the grader's own; binary qrels from --min-grade
    ws = tmp_path / "ws"
    result = grade(str(EXAMPLES / "runs"), "-w", str(ws), "--min-grade", "4", "--format", "json",
                   "-o", str(tmp_path / "board.json"))
    assert result.exit_code == 0, result.output
    qrels, board = expected(depth=20, tau=4)
    binary = [" ".join(line.split()[:3] + [str(int(int(line.split()[3]) >= 4))]) for line in qrels]
    assert (ws / "qrels" / "exam.qrels").read_text() == "\n".join(binary) + "\n"
    check_board(read_board(tmp_path / "board.json"), board)


def test_responses_are_segmented_and_graded_as_a_run(tmp_path):
    answers = {"Q1": "Corals bleach when warm water makes them expel their algae. " * 3,
               "Q2": "Gutenberg built a press with movable metal type around 1440 in Mainz."}
    path = tmp_path / "rag.jsonl"
    path.write_text("".join(json.dumps({"run_id": "rag", "topic_id": q, "answer": [{"text": t, "citations": []}]})
                            + "\n" for q, t in answers.items()))
    texts = {f"rag:{q}:1:{hashlib.md5(t.strip().encode()).hexdigest()[:8]}": t.strip() for q, t in answers.items()}
    ws = tmp_path / "ws"
    result = grade(str(EXAMPLES / "runs"), "-w", str(ws), "--depth", "3", "--tau", "5", "--responses", str(path),
                   "--format", "json", "-o", str(tmp_path / "board.json"))
    assert result.exit_code == 0, result.output
    rag = {pid.split(":")[1]: [pid] for pid in texts}
    qrels, board = expected(depth=3, tau=5, extra_runs={"rag": rag}, extra_texts=texts)
    # the answers' labels apart from the runs': one workspace, one answer
    answers = [line for line in qrels if " rag:" in line]
    assert len(answers) == 2
    assert (ws / "qrels" / "exam.qrels").read_text() == "\n".join(line for line in qrels if line not in answers) + "\n"
    assert (ws / "qrels" / "responses.qrels").read_text() == "\n".join(answers) + "\n"
    check_board(read_board(tmp_path / "board.json"), board)


def test_direct_grader_grades_passages_against_the_topic_titles(tmp_path, monkeypatch):
    class FakeDirect(fake_grader.FakeMethod):
        name, direct = "fake-direct", True

    use_method(monkeypatch, FakeDirect)
    titles = {r["query_id"]: r["text"]
              for r in map(json.loads, (EXAMPLES / "topics/topics.jsonl").read_text().splitlines())}
    texts, _ = collection()
    ws = tmp_path / "ws"
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(CONFIG),
                                       "--grader", "fake-direct", "-w", str(ws), "--depth", "2", "--tau", "3"])
    assert result.exit_code == 0, result.output
    pooled = sorted({(q, d) for docs in top_k(2).values() for q, ids in docs.items() for d in ids})
    assert (ws / "qrels" / "exam.qrels").read_text() == "".join(
        f"{q} 0 {d} {fake_grade(texts[d], titles[q])}\n" for q, d in pooled)
    assert f"{len(pooled)} pairs: {len(pooled)} new pairs graded" in result.output


@pytest.mark.slow
def test_export_reference_round_trips_the_grades(tmp_path):
    from exampp.formats.reference_grades import paragraph_grades, read_reference_grades
    from exampp.stores.grade_store import GradeStore

    ws = tmp_path / "ws"
    out = tmp_path / "graded.jsonl.gz"
    result = grade(str(EXAMPLES / "runs"), "-w", str(ws), "--depth", "2", "--export-reference", str(out))
    assert result.exit_code == 0, result.output
    exported = {(g.query_id, g.passage_id, g.question_id, g.grade)
                for line in read_reference_grades(out) for p in line.paragraphs
                for g in paragraph_grades(line.query_id, p)}
    with GradeStore(ws / "grades.sqlite") as store:
        frame = store.grades()
    # The fake method grades 0-5, so its grades are self-ratings in the reference format.
    stored = {(q, p, qu, g) for q, p, qu, g in zip(frame.query_id, frame.passage_id, frame.question_id, frame.grade)}
    assert exported == stored and len(stored) == len((ws / "qrels" / "exam.qrels").read_text().splitlines()) * 10


def test_unknown_grader_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["grade", "--config", str(CONFIG), "--grader", "nope", "-w", str(tmp_path)])
    assert result.exit_code == 2
    assert ("unknown grading method 'nope'; choose one of citation-support, direct, embedding, fake, injection-check, "
            "multiple-choice, "
            "nugget-cosine, nugget-embedding, nugget-support, qa," in " ".join(result.output.split()))
    result = CliRunner().invoke(main, ["grade", "--grader", "qa(verify=regex)", "-w", str(tmp_path)])
    assert result.exit_code == 2 and "qa(verify=regex): verify='regex' is not one of string, llm" in result.output


def test_model_that_cannot_load_is_one_message_and_exit_1(tmp_path, monkeypatch):
    message = "cannot load model 'google/flan-t5-large': offline. Give a local copy with --model PATH"

    class Broken(fake_grader.FakeMethod):
        name = "broken"

        def bind(self, backend):
            raise ModelLoadError(message)

    use_method(monkeypatch, Broken)
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(CONFIG), "--grader", "broken",
                                       "-w", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output == f"Error: {message}\n"


# --- exampp.toml --------------------------------------------------------------------------------

def test_repo_config_names_the_example_collection():
    config = read_config(CONFIG)
    assert config.values == {"topics": str(EXAMPLES / "topics/topics.jsonl"),
                              "bank": str(EXAMPLES / "question_banks/questions.jsonl"),
                              "corpus": str(EXAMPLES / "corpus/passages.jsonl"),
                              "grader": "embedding", "depth": 20}  # tau: the grader's own (4 for embedding)
    assert config.pick("depth", 5) == 5 and config.pick("depth", None) == 20 and config.pick("model", None, "m") == "m"


def test_config_paths_are_relative_to_the_file_and_sources_kept(write, tmp_path):
    path = write("sub/exampp.toml", 'corpus = "irds:msmarco-passage"\nbank = "b.jsonl"\nstore = "/abs/g.sqlite"\n')
    assert read_config(path).values == {"corpus": "irds:msmarco-passage", "bank": str(tmp_path / "sub" / "b.jsonl"),
                                        "store": "/abs/g.sqlite"}
    assert load_config(directory=tmp_path / "sub").path == path
    assert load_config(directory=tmp_path).values == {}


@pytest.mark.parametrize("text, line, message", [
    ('depth = 20\n\n  grade = "qa"\n', 3, "unknown key 'grade'; known keys: topics, bank, corpus, responses, grader, "
                                          "backend, model, base_url, api_key_env, tokenizer, max_input_tokens, "
                                          "endpoint, concurrency, adaptive_concurrency, max_requests, timeout, "
                                          "max_retries, gpu_memory_utilization, "
                                          "tensor_parallel_size, max_model_len, depth, "
                                          "workspace, store, device, dtype, batch_size, max_batch_tokens, threads, "
                                          "compile, tau, "
                                          "min_grade, label, cascade, "
                                          "cascade_threshold"),
    ('[options]\nname = "qa"\n', 1, "unknown key 'options'"),
    ('tau = 4\ndepth = "20"\n', 2, "key 'depth' (top-k passages of each run to pool) must be an integer, found '20'"),
    ('tau = true\n', 1, "key 'tau' (grade at which a question counts as answered (EXAM-Cover)) must be a number"),
    ('compile = 1\n', 1, "key 'compile' (hf: torch.compile the model) must be true or false, found 1"),
    ('depth = 20\ngrader = \n', 2, "invalid TOML"),
])
def test_bad_config_names_file_line_and_key(write, text, line, message):
    path = write("exampp.toml", text)
    with pytest.raises(InputError) as err:
        read_config(path)
    assert str(err.value).startswith(f"{path}:{line}: {message}")


def test_backend_options_from_the_config_apply_only_where_the_backend_takes_them(write):
    from exampp.api.grade import GradeJob
    from exampp.llm.backend import BackendError, BackendSpec

    path = write("ws/exampp.toml", 'grader = "embedding"\ndtype = "bf16"\ndevice = "cpu"\nbase_url = "http://x/v1"\n')
    job = GradeJob.configure(path, batch_size=3)
    assert job.method == "embedding" and job.backend_options["batch_size"] == 3
    assert job.backend_defaults == {"device": "cpu", "dtype": "bf16", "max_batch_tokens": None, "threads": None,
                                    "compile": None, "base_url": "http://x/v1",
                                    "api_key_env": None, "tokenizer": None, "max_input_tokens": None,
                                    "endpoint": None, "concurrency": None, "adaptive_concurrency": None,
                                    "max_requests": None, "timeout": None,
                                    "max_retries": None, "gpu_memory_utilization": None,
                                    "tensor_parallel_size": None, "max_model_len": None}
    backend = job.backend_spec(job.grading_method()).open()  # the embedding backend takes no dtype or base_url
    assert type(backend).__name__ == "SentenceEmbedder" and (backend.device, backend.batch_size) == ("cpu", 3)
    with pytest.raises(BackendError, match=r"^backend 'embedding' takes no --dtype$"):  # a flag is never dropped
        BackendSpec("embedding", None, {"dtype": "bf16"}).open()


@pytest.mark.parametrize("args, message", [
    # tau 6: no question counted, all-zero scores; tau 0: every question counted; min_grade 5.5: every label 0
    (["--grader", "self-rating", "--tau", "6"], "tau must be a grade of self-rating in (0, 5], found 6"),
    (["--grader", "self-rating", "--tau", "0"], "tau must be a grade of self-rating in (0, 5], found 0"),
    (["--grader", "self-rating", "--min-grade", "5.5"],
     "min_grade must be a grade of self-rating in (0, 5], found 5.5"),
    (["--grader", "qa", "--tau", "4"], "tau must be a grade of qa in (0, 1], found 4"),  # 0/1 grades
])
def test_a_tau_outside_the_methods_grades_is_refused_before_anything_is_read(tmp_path, args, message):
    result = grade(str(EXAMPLES / "runs"), "-w", str(tmp_path), *args)
    assert (result.exit_code, result.output) == (1, f"Error: {message}\n")
    assert not any(tmp_path.iterdir())


def test_grade_collection_refuses_the_settings_a_job_refuses(tmp_path):
    from exampp.api.grade import grade_collection
    from exampp.setting_rules import SettingError
    from exampp.stores.grade_store import GradeStore

    grader = registry.make_grader("embedding")  # its model loads on first use: never here
    with GradeStore(tmp_path / "grades.sqlite") as store:
        for options, message in [({"depth": 0}, "depth must be an integer >= 1, found 0"),
                                 ({"tau": math.nan}, "tau must be a finite number, found nan"),
                                 ({"tau": 6}, "tau must be a grade of embedding in (0, 5], found 6"),
                                 ({"chunk_size": -1}, "chunk_size must be an integer >= 1, found -1")]:
            with pytest.raises(SettingError) as caught:
                grade_collection({}, [], grader, store, **options)
            assert str(caught.value) == message
        # A count of questions has no top grade: min_grade 6 of --label count is a count of 6 questions.
        with pytest.raises(SettingError, match="found inf"):
            grade_collection({}, [], grader, store, label="count", min_grade=math.inf)


def test_bad_config_is_a_cli_error(write, tmp_path):
    path = write("bad.toml", "runs = 'x'\n")
    result = CliRunner().invoke(main, ["grade", "--config", str(path)])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}:1: unknown key 'runs'")


# --- the registry with real graders on a tiny local model ----------------------------------------

@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    tiny_models = pytest.importorskip("exampp.testing.tiny_models")
    from tiny_model_dirs import t5_tokenizer_dir

    return str(tiny_models.build_t5(tmp_path_factory.mktemp("tiny-t5"), t5_tokenizer_dir()))


@pytest.mark.slow
@pytest.mark.parametrize("name, cls", [
    ("self-rating", "SelfRating"), ("qa", "QA"), ("qa-llm", "QA"),
    ("multiple-choice", "MultipleChoice"), ("direct:thomas", "Direct"), ("direct:sun_few", "Direct"),
])
def test_registry_builds_each_llm_grader_on_a_local_model(tiny_model, name, cls):
    grader = registry.make_grader(name, model=tiny_model, device="cpu", batch_size=4)
    assert type(grader.grading_method).__name__ == cls and type(grader.backend).__name__ == "HFBackend"
    assert grader.method.model == tiny_model and grader.direct == name.startswith("direct:")


@pytest.mark.slow
def test_qa_and_qa_llm_are_different_methods(tiny_model):
    options = {"model": tiny_model, "device": "cpu", "batch_size": 4}
    assert registry.make_grader("qa", **options).method != registry.make_grader("qa-llm", **options).method


def test_registry_defaults_and_unknown_direct_key():
    from exampp.grading.method import MethodError

    assert registry.default_tau("self-rating") == 4 and registry.default_tau("qa") == 1
    embedding = registry.make_grader("embedding")  # its model loads on first use
    assert type(embedding.backend).__name__ == "SentenceEmbedder" and embedding.backend.device == "cpu"
    with pytest.raises(MethodError, match="prompt='nope' is not one of thomas,"):
        registry.make_grader("direct:nope")


@pytest.mark.slow
def test_grade_with_the_multiple_choice_grader_on_a_tiny_model(tiny_model, tmp_path):
    bank = EXAMPLES / "question_banks" / "answer_key.jsonl"
    with_choices = sum('"choices"' in line for line in bank.read_text().splitlines())
    queries = {json.loads(line)["query_id"] for line in bank.read_text().splitlines() if '"choices"' in line}
    args = ["grade", str(EXAMPLES / "runs" / "bm25.run"), "--config", str(CONFIG), "--grader", "multiple-choice",
            "--bank", str(bank), "--model", tiny_model, "--device", "cpu", "--depth", "1", "-w", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    # one passage per query; only questions with choices are graded, the others are skipped
    assert f"{with_choices} pairs: {with_choices} new pairs graded" in result.output
    assert f"skipped: {30 - with_choices} questions lacking the grader's answer key or choices" in result.output
    labels = [line.split() for line in (tmp_path / "qrels" / "exam.qrels").read_text().splitlines()]
    assert {q for q, *_ in labels} == queries and all(label in ("0", "1") for *_, label in labels)
    again = CliRunner().invoke(main, args)
    assert f"{with_choices} pairs: 0 new pairs graded" in again.output


# --- config discovery and empty results ----------------------------------------------------------

def example_workspace(path: Path, config: str | None = None) -> Path:
    """The example collection's runs, corpus and bank copied into ``path`` (with ``config`` as exampp.toml)."""
    import shutil

    for folder in ("runs", "corpus", "question_banks"):
        shutil.copytree(EXAMPLES / folder, path / folder)
    if config is not None:
        (path / "exampp.toml").write_text(config, encoding="utf-8")
    return path


def graded_pairs(output: str) -> int:
    line = next(line for line in output.splitlines() if " new pairs graded" in line)
    return int(line.split()[0])


@pytest.mark.parametrize("ws_config, depth", [(None, 20), ("depth = 1\n", 1)])
def test_workspace_config_is_the_workspaces_never_the_current_folders(tmp_path, monkeypatch, ws_config, depth):
    here = tmp_path / "here"
    here.mkdir()
    # The current folder's config names files that exist only relative to it: -w WS must ignore it.
    (here / "exampp.toml").write_text('bank = "elsewhere.jsonl"\ndepth = 2\n', encoding="utf-8")
    (here / "elsewhere.jsonl").write_text('{"query_id": "zz", "question_id": "z1", "text": "Z?"}\n', encoding="utf-8")
    ws = example_workspace(tmp_path / "ws", ws_config)
    monkeypatch.chdir(here)
    result = CliRunner().invoke(main, ["grade", "--grader", "fake", "-w", str(ws), "--no-progress"])
    assert result.exit_code == 0, result.output
    qrels, _ = expected(depth=depth, tau=4)
    assert graded_pairs(result.output) == len(qrels) * 10  # 10 questions per example query


def test_current_folder_config_applies_without_workspace(tmp_path, monkeypatch):
    here = example_workspace(tmp_path / "here", 'depth = 2\n')
    monkeypatch.chdir(here)
    result = CliRunner().invoke(main, ["grade", "--grader", "fake", "--no-progress"])
    assert result.exit_code == 0, result.output
    qrels, _ = expected(depth=2, tau=4)
    assert graded_pairs(result.output) == len(qrels) * 10


def test_runs_without_exam_questions_are_refused_in_one_line_not_a_traceback(tmp_path):
    ws = tmp_path / "ws"
    (ws / "runs").mkdir(parents=True)
    (ws / "runs" / "x.run").write_text("zz Q0 d-Q1-001 1 1 X\n", encoding="utf-8")
    result = grade("-w", str(ws), "--format", "tsv")
    assert (result.exit_code, result.output) == (
        1, "Error: nothing to grade: no run ranks a passage for a query of the exam; no output written\n")
    assert not (ws / "qrels").exists()  # no empty qrels file in place of a good one


# --- a wrong --device is the device's fault, found before anything is read or loaded -------------

@pytest.mark.parametrize("grader", ["embedding", "self-rating", "qa-extractive"])
@pytest.mark.parametrize("device, message", [
    ("gpu", "--device 'gpu' is not a device: use auto, cpu, cuda or cuda:N"),
    ("cuda", "--device 'cuda': this torch is a CPU-only build, without CUDA; use auto or cpu"),
])
def test_wrong_device_is_named_before_inputs_are_read(tmp_path, monkeypatch, grader, device, message):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.version, "cuda", None)  # a CPU build, whatever this machine has
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(CONFIG), "--grader", grader,
                                       "--device", device, "--bank", str(tmp_path / "missing.jsonl"),
                                       "-w", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output == f"Error: {message}\n"


@pytest.mark.parametrize("grader", ["embedding", "qa-extractive", "self-rating"])
def test_graders_check_the_device_before_loading_a_model(tmp_path, grader):
    from exampp.llm.device import DeviceError

    pytest.importorskip("torch")
    with pytest.raises(DeviceError, match="--device 'gpu' is not a device"):
        registry.make_grader(grader, model=str(tmp_path / "nowhere"), device="gpu")


# --- where the model comes from: a local folder, or a hub id when the hub is out of reach --------

@pytest.mark.parametrize("grader", ["self-rating", "qa-extractive", "embedding"])
def test_missing_model_folder_is_named(tmp_path, monkeypatch, grader):
    pytest.importorskip("transformers")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(CONFIG), "--grader", grader,
                                       "--model", "./nope", "--no-progress", "-w", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output == "Error: no such model folder ./nope\n"


def test_uncached_default_model_fails_at_once_without_the_hub(tmp_path, unreachable_hub):
    pytest.importorskip("exampp.llm.backends.hf")  # transformers imported before the clock starts
    start = time.perf_counter()
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs"), "--config", str(CONFIG),
                                       "--grader", "self-rating", "--no-progress", "-w", str(tmp_path)])
    elapsed = time.perf_counter() - start
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output == (
        "Error: model 'google/flan-t5-large' is not in the local HuggingFace cache and the hub "
        "(http://127.0.0.1:9) cannot be reached. Give a local copy of the model with --model PATH (a folder "
        "with config.json, weights and tokenizer files), or grade offline with --grader embedding.\n")
    assert elapsed < 3, f"{elapsed:.1f} s"  # huggingface_hub's retries took 25 s here


@pytest.mark.slow
def test_a_cached_hub_model_grades_without_the_hub(tmp_path, unreachable_hub, tiny_model):
    from conftest import cache_model

    cache_model(unreachable_hub, "exampp-test/tiny-t5", Path(tiny_model))
    result = CliRunner().invoke(main, ["grade", str(EXAMPLES / "runs" / "bm25.run"), "--config", str(CONFIG),
                                       "--grader", "self-rating", "--model", "exampp-test/tiny-t5", "--depth", "1",
                                       "--no-progress", "-w", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "60 pairs: 60 new pairs graded" in result.output  # 6 queries x 1 passage x 10 questions


def test_a_failed_first_grade_leaves_no_empty_store_and_a_failed_later_one_keeps_the_grades(tmp_path):
    stray = tmp_path / "stray.run"
    stray.write_text("Q99 Q0 d-Q1-001 1 1.0 stray\n")  # a query the exam lacks: nothing to grade
    ws = tmp_path / "ws"
    failed = grade(str(stray), "-w", str(ws))
    assert failed.exit_code == 1 and "nothing to grade" in failed.output
    assert not (ws / "grades.sqlite").exists() and not list(ws.glob("grades.sqlite*"))
    assert grade(str(EXAMPLES / "runs"), "-w", str(ws), "--depth", "2").exit_code == 0
    with GradeStore(ws / "grades.sqlite", read_only=True) as store:
        kept = len(store.grades())
    assert grade(str(stray), "-w", str(ws)).exit_code == 1
    with GradeStore(ws / "grades.sqlite", read_only=True) as store:
        assert len(store.grades()) == kept > 0
