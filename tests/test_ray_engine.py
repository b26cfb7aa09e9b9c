"""Grading on Ray workers (`exampp grade --engine ray`): the grades are exactly those of one
process, a worker killed mid-chunk loses nothing and commits nothing twice, an error of the
grading itself reaches the caller as it was raised."""
from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

import fake_grader
from conftest import EXAMPLES
from exampp.api.grade import grade_collection
from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.corpus_sources import open_corpus
from exampp.formats.question_bank import read_question_bank
from exampp.formats.trec_run import read_runs
from exampp.grading.base import Judgment, Pair
from exampp.grading.method import param
from exampp.grading.registry import parse_method
from exampp.llm.backend import BackendSpec
from exampp.stores.grade_store import GradeStore
from killing import kill_when

ray = pytest.importorskip("ray")
from exampp.grading.ray_engine import RayEngine, RayEngineError  # noqa: E402

pytestmark = pytest.mark.slow  # every test starts Ray

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
EXAMPLE = ("runs", "corpus", "question_banks", "topics", "exampp.toml")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One local Ray for the module (the engine uses a running Ray and leaves it running). Its
    workers import exampp and this module as this process does: they inherit PYTHONPATH."""
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS)] + ([saved] if saved else []))
    try:
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    yield
    ray.shutdown()


@dataclass(frozen=True)
class MarkedFake(fake_grader.FakeMethod):
    """The fake grader (md5 mod 6) that can write the process id of the first worker to grade a
    chunk to a file and then hold that chunk, or raise an input error."""

    name = "marked-fake"
    mark: str = field(default="", metadata=param("file the first grading process writes its pid to", in_id=False))
    hold: float = field(default=0.0, metadata=param("seconds that process holds its first chunk", in_id=False))
    fail: bool = field(default=False, metadata=param("raise an InputError", in_id=False))
    crash: bool = field(default=False, metadata=param("kill the grading process", in_id=False))

    def grade(self, backend, pairs: Sequence[Pair]) -> list[Judgment]:
        if self.fail:
            raise InputError("bank.jsonl", 3, "no answer key")
        if self.crash:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.mark:
            try:
                fd = os.open(self.mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                time.sleep(self.hold)  # killed in here
        return fake_grader.judge(pairs, 0.01, None)


def example(tmp_path: Path) -> Path:
    """A copy of the example collection (its exampp.toml: embedding grader, depth 20, tau 4)."""
    root = tmp_path / "example"
    for name in EXAMPLE:
        source = EXAMPLES / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    return root


def collection(root: Path):
    return (read_runs([root / "runs"]), open_corpus(root / "corpus" / "passages.jsonl"),
            read_question_bank(root / "question_banks" / "questions.jsonl"))


class CountingStore(GradeStore):
    """A store that counts how often each pair's grade is committed."""

    def __init__(self, path):
        super().__init__(path)
        self.committed: Counter = Counter()

    def put_many(self, grades):
        grades = list(grades)
        self.committed.update((g[1], g[2]) for g in grades)
        return super().put_many(grades)


def test_example_collection_on_two_ray_workers_gives_exactly_the_single_process_grades(tmp_path):
    root = example(tmp_path)

    def grade(ws: str, *flags: str):  # the top 5 of each run: 112 passages, 1,120 pairs
        result = CliRunner().invoke(main, ["grade", str(root / "runs"), "--config", str(root / "exampp.toml"),
                                           "-w", str(root / ws), "--no-progress", "--depth", "5", *flags])
        assert result.exit_code == 0, result.output
        with GradeStore(root / ws / "grades.sqlite") as store:
            return result.stdout, list(store.records()), (root / ws / "qrels" / "exam.qrels").read_text()

    single = grade("single")
    on_ray = grade("ray", "--engine", "ray", "--workers", "2", "--chunk-size", "50")
    assert len(single[1]) == 1120 and all(g.method_id.startswith("embedding|") for g in single[1])
    assert (on_ray[0], on_ray[2]) == (single[0], single[2])  # the leaderboard and the qrels
    # every key, grade and probability; the cosine shown (4 decimals) to its last digit: a worker embeds
    # a text in the batch of the first chunk that it was sent with it, and the last float bits of an
    # embedding depend on its batch (the embedding backend's cache; which chunk goes where is Ray's choice)
    assert [replace(g, answer=None) for g in on_ray[1]] == [replace(g, answer=None) for g in single[1]]
    assert [float(g.answer) for g in on_ray[1]] == pytest.approx([float(g.answer) for g in single[1]], abs=1.5e-4)


def test_an_llm_grader_on_two_ray_workers_gives_exactly_the_single_process_grades(tmp_path, tiny_t5_dir):
    import torch

    runs, corpus, bank = collection(example(tmp_path))
    runs = {"bm25": runs["bm25"]}
    method = parse_method("self-rating")
    spec = BackendSpec("hf", str(tiny_t5_dir), {"device": "cpu"})
    with GradeStore(tmp_path / "single.sqlite") as store, spec.open() as backend:
        single = grade_collection(runs, corpus, method.bind(backend), store, bank, depth=1, progress=False)
        expected = list(store.records())
    # The workers multiply in fp32 with as many threads as this process (1 thread gives the same grades on
    # this tiny model, but a larger model's sums may be split and added up differently).
    with GradeStore(tmp_path / "ray.sqlite") as store, \
            RayEngine(method, spec, workers=2, threads=torch.get_num_threads()) as engine:
        on_ray = grade_collection(runs, corpus, engine.grader, store, bank, depth=1, progress=False, engine=engine,
                                  chunk_size=8)
        assert list(store.records()) == expected
    assert on_ray.summary.method_id == single.summary.method_id == f"self-rating|{tiny_t5_dir}|" + method.prompt_id
    assert on_ray.summary.graded == single.summary.graded == len(expected) == 6 * 10  # 6 queries x 10 questions
    assert len({g.answer for g in expected}) > 1  # the model's raw outputs, compared exactly
    # What the judge used, summed over the chunks the workers handed back: the same prompts, the same tokens.
    assert on_ray.usage == single.usage and single.usage.requests == 60 and single.usage.prompt_tokens > 60


def test_a_worker_killed_mid_chunk_is_replaced_and_nothing_is_lost_or_committed_twice(tmp_path):
    runs, corpus, bank = collection(example(tmp_path))
    with CountingStore(tmp_path / "single.sqlite") as store:
        grade_collection(runs, corpus, MarkedFake().bind(None), store, bank, progress=False)
        expected = list(store.records())

    mark = tmp_path / "first-worker.pid"
    killed: list[int] = []

    def kill_the_first_worker():  # as soon as it is inside its first chunk
        while not mark.exists() or not mark.read_text():
            time.sleep(0.01)
        killed.append(int(mark.read_text()))
        os.kill(killed[0], signal.SIGKILL)

    method = MarkedFake(mark=str(mark), hold=30.0)
    killer = threading.Thread(target=kill_the_first_worker, daemon=True)
    killer.start()
    with CountingStore(tmp_path / "ray.sqlite") as store, RayEngine(method, None, workers=2) as engine:
        first_pids = list(engine.pids)
        result = grade_collection(runs, corpus, engine.grader, store, bank, progress=False, engine=engine,
                                  chunk_size=20)
        assert list(store.records()) == expected
        committed = store.committed
    killer.join(timeout=1)
    assert killed and killed[0] in first_pids and killed[0] not in engine.pids  # replaced
    assert result.summary.graded == len(committed) == len(expected) == 2180
    assert set(committed.values()) == {1}  # every distinct pair committed exactly once


def test_an_error_of_the_grading_reaches_the_caller_as_raised(tmp_path):
    runs, corpus, bank = collection(example(tmp_path))
    with GradeStore(tmp_path / "grades.sqlite") as store, RayEngine(MarkedFake(fail=True), None, workers=1) as engine:
        with pytest.raises(InputError, match=r"^bank\.jsonl:3: no answer key$"):
            grade_collection(runs, corpus, engine.grader, store, bank, progress=False, engine=engine)
        assert store.counts()["grades"] == 0


def test_a_chunk_that_kills_every_worker_it_is_sent_to_ends_the_job(tmp_path):
    runs, corpus, bank = collection(example(tmp_path))
    with GradeStore(tmp_path / "grades.sqlite") as store, RayEngine(MarkedFake(crash=True), None, workers=1) as engine:
        with pytest.raises(RayEngineError, match=r"a chunk of 20 pairs \(query Q\d\) was being graded by 3 workers "
                                                 r"that died: not sent again\. The last: The actor died"):
            grade_collection(runs, corpus, engine.grader, store, bank, progress=False, engine=engine, chunk_size=20)
        assert store.counts()["grades"] == 0


def test_more_workers_than_the_cluster_holds_is_an_error_not_a_hang():
    with pytest.raises(RayEngineError, match="5 workers x 1 CPUs asked for, but the Ray cluster has 4 CPUs"):
        with RayEngine(MarkedFake(), None, workers=5, threads=1):
            pass


def test_without_ray_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ray", None)
    root = example(tmp_path)
    result = CliRunner().invoke(main, ["grade", str(root / "runs"), "--config", str(root / "exampp.toml"),
                                       "-w", str(root / "ws"), "--engine", "ray", "--no-progress"])
    assert result.exit_code != 0
    assert "--engine ray needs the package ray: install the exampp extra 'ray'" in result.output


def test_a_killed_driver_loses_no_committed_chunk_and_the_same_command_grades_only_the_rest(tmp_path, monkeypatch):
    fake_grader.use_method(monkeypatch)

    def command(ws: Path) -> list[str]:
        return ["grade", str(EXAMPLES / "runs"), "--config", str(EXAMPLES / "exampp.toml"), "--grader", "fake",
                "-w", str(ws), "--chunk-size", "20", "--no-progress", "--engine", "ray", "--workers", "2"]

    def committed(ws: Path) -> int:
        if not (ws / "grades.sqlite").exists():
            return 0
        with GradeStore(ws / "grades.sqlite") as store:
            return store.counts()["grades"]

    reference = tmp_path / "reference"
    result = CliRunner().invoke(main, command(reference)[:-4])  # one process
    assert result.exit_code == 0, result.output
    ws = tmp_path / "killed"
    script = [sys.executable, fake_grader.__file__]
    env = {**os.environ, "FAKE_GRADER_SLEEP": "0.3"}  # the workers inherit it from the driver's own Ray
    process = subprocess.Popen(script + command(ws), cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kill_when(process, lambda: committed(ws) >= 3 * 20, "3 chunks committed")
    done = committed(ws)
    assert 3 * 20 <= done < 2180 and done % 20 == 0  # whole chunks only

    resumed = subprocess.run(script + command(ws), cwd=REPO, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    pairs, new = map(int, re.search(r"(\d+) pairs: (\d+) new pairs graded", resumed.stderr).groups())
    assert (pairs, new) == (2180, 2180 - done)
    with GradeStore(ws / "grades.sqlite") as store, GradeStore(reference / "grades.sqlite") as expected:
        assert list(store.records()) == list(expected.records())
    assert resumed.stdout == result.stdout


def test_the_engine_settings_come_from_exampp_toml_unless_flags_say_otherwise(write):
    from exampp.api.grade import GradeJob

    config = write("exampp.toml", 'engine = "ray"\nworkers = 3\nray_address = "ray://head:10001"\n')
    job = GradeJob.configure(config)
    assert (job.engine, job.workers, job.ray_address) == ("ray", 3, "ray://head:10001")
    assert GradeJob.configure(config, engine="local", workers=1).engine == "local"
    assert GradeJob.configure(config, engine="local", workers=1).workers == 1


def test_ray_settings_without_the_ray_engine_are_refused(tmp_path):
    root = example(tmp_path)
    for flags in (["--workers", "2"], ["--ray-address", "auto"]):
        result = CliRunner().invoke(main, ["grade", str(root / "runs"), "--config", str(root / "exampp.toml"),
                                           "-w", str(root / "ws"), "--no-progress", *flags])
        assert result.exit_code != 0
        assert result.output.strip().splitlines()[-1] == (
            "Error: --workers and --ray-address (workers, ray_address) are settings of --engine ray")


def test_with_a_cascade_the_driver_rules_out_and_the_workers_grade_the_rest_as_in_one_process(tmp_path):
    from exampp.formats.topic_files import read_topics
    from exampp.grading.cascade import CascadeSpec

    root = example(tmp_path)
    runs, corpus, bank = collection(root)
    topics = read_topics(root / "topics" / "topics.jsonl")
    cascade = CascadeSpec.parse("embedding:0.95")
    with GradeStore(tmp_path / "single.sqlite") as store:
        single = grade_collection(runs, corpus, MarkedFake().bind(None), store, bank, topics, progress=False,
                                  cascade=cascade)
        expected = list(store.records())
    with CountingStore(tmp_path / "ray.sqlite") as store, RayEngine(MarkedFake(), None, workers=2) as engine:
        on_ray = grade_collection(runs, corpus, engine.grader, store, bank, topics, progress=False, cascade=cascade,
                                  engine=engine, chunk_size=50)
        assert list(store.records()) == expected
    assert (on_ray.summary.graded, on_ray.summary.cascaded) == (single.summary.graded, single.summary.cascaded)
    assert 0 < single.summary.cascaded < 2180 and single.summary.graded + single.summary.cascaded == 2180
    assert len(store.committed) == 2180 and set(store.committed.values()) == {1}  # graded or ruled out, once
