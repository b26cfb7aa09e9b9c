"""Backends that installed packages add through the entry-point group ``exampp.backends`` (each entry a name
and a backend class): found by name beside the built-in ones, opened by ``open_backend`` and by ``--backend
NAME``; an entry point that does not load, or names no backend class, is one BackendError naming it. The
package is faked: a module in ``sys.modules`` and the registry's ``entry_points`` answering for it."""
from __future__ import annotations

import sys
import types
from importlib.metadata import EntryPoint

import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.llm import backend as registry
from exampp.llm.backend import Backend, BackendError, Capability, Usage, backend_class, backend_names, open_backend
from exampp.stores.grade_store import GradeStore
from small_collection import write_collection

PLUGIN = "exampp_test_plugin"  # the fake package's module
BUILT_IN = {"embedding", "extractive", "hf", "openai", "vllm"}


class EchoBackend(Backend):
    """Generation only: every prompt answered "4"."""

    capabilities = frozenset({Capability.GENERATE})

    def __init__(self, model: str):
        self.name, self.usage = f"echo-{model}", Usage()

    @classmethod
    def open(cls, model=None):
        return cls(model or "judge")

    def count_tokens(self, text):
        return len(text.split())

    def generate(self, prompts, *, max_new_tokens=32, temperature=0.0):
        self.usage.requests += len(prompts)
        return ["4"] * len(prompts)


@pytest.fixture
def install(monkeypatch):
    """``install(NAME="module:Class", ...)``: the entry points a package's metadata would declare."""
    plugin = types.ModuleType(PLUGIN)
    plugin.EchoBackend = EchoBackend
    plugin.NotABackend = object
    monkeypatch.setitem(sys.modules, PLUGIN, plugin)

    def installed(**entries: str) -> None:
        points = [EntryPoint(name, value, registry.ENTRY_POINTS) for name, value in entries.items()]
        monkeypatch.setattr(registry, "entry_points", lambda group: [p for p in points if p.group == group])
        registry._installed.cache_clear()

    yield installed
    registry._installed.cache_clear()


def test_an_installed_backend_is_named_beside_the_built_in_ones_and_opens(install):
    install(echo=f"{PLUGIN}:EchoBackend")
    assert backend_names() == sorted(BUILT_IN | {"echo"})
    assert backend_class("echo") is EchoBackend
    with open_backend("echo", "small") as backend:
        assert isinstance(backend, EchoBackend) and backend.name == "echo-small"
        assert backend.generate(["Rate it."]) == ["4"]


def grade(folder, *args: str):
    """``exampp grade`` of a small collection written under ``folder`` (two passages, two questions)."""
    runs = {"a": {"Q1": ["d0", "d1"]}}
    passages = {"d0": "Corals bleach in warm water.", "d1": "Reefs shelter fish."}
    questions = [{"query_id": "Q1", "question_id": f"Q1/{i}", "text": f"Question {i}?"} for i in range(2)]
    write_collection(folder, runs, passages, questions)
    return CliRunner().invoke(main, ["grade", str(folder / "runs"), "--corpus", str(folder / "passages.jsonl"),
                                     "--bank", str(folder / "questions.jsonl"), "-w", str(folder / "ws"),
                                     "--no-progress", "--grader", "self-rating", *args])


def test_an_installed_backend_grades_through_the_command_line(install, tmp_path):
    install(echo=f"{PLUGIN}:EchoBackend")
    result = grade(tmp_path, "--backend", "echo", "--model", "small")
    assert result.exit_code == 0, result.output
    with GradeStore(tmp_path / "ws" / "grades.sqlite", read_only=True) as store:
        grades = store.grades()
    assert len(grades) == 4 and set(grades["grade"]) == {4.0}
    assert {tuple(method.split("|")[:2]) for method in grades["method_id"]} == {("self-rating", "echo-small")}


def test_an_entry_point_that_does_not_load_is_one_backend_error(install):
    install(broken="exampp_no_such_plugin:Backend", wrong=f"{PLUGIN}:NotABackend", echo=f"{PLUGIN}:EchoBackend")
    assert {"broken", "wrong", "echo"} <= set(backend_names())  # listed: loaded only when chosen
    with pytest.raises(BackendError) as caught:
        open_backend("broken")
    assert str(caught.value) == ("backend 'broken' cannot be loaded: its entry point broken = "
                                 "'exampp_no_such_plugin:Backend' (group exampp.backends) fails: No module named "
                                 "'exampp_no_such_plugin'")
    with pytest.raises(BackendError) as caught:
        open_backend("wrong")
    assert str(caught.value) == (f"backend 'wrong' cannot be loaded: its entry point wrong = '{PLUGIN}:NotABackend' "
                                 "(group exampp.backends) names <class 'object'>, not a subclass of "
                                 "exampp.llm.backend.Backend")
    assert backend_class("echo") is EchoBackend  # one broken plugin costs the others nothing


def test_a_broken_entry_point_ends_the_command_in_one_line(install, tmp_path):
    install(broken="exampp_no_such_plugin:Backend")
    result = grade(tmp_path, "--backend", "broken")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.output.strip().splitlines()[-1] == (
        "Error: backend 'broken' cannot be loaded: its entry point broken = 'exampp_no_such_plugin:Backend' (group "
        "exampp.backends) fails: No module named 'exampp_no_such_plugin'")


def test_a_built_in_name_stays_the_built_in_backend(install):
    pytest.importorskip("openai")
    from exampp.llm.openai.backend import OpenAIBackend

    install(openai=f"{PLUGIN}:EchoBackend")
    assert backend_names() == sorted(BUILT_IN)
    assert backend_class("openai") is OpenAIBackend
