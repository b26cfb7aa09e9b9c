"""The AutoJudge judge's settings: the workflow's ``settings`` (``**kwargs`` of every protocol call, ``-S key=value``
on the harness's command line) and the harness's ``LlmConfig``.

The harness builds the judge with no arguments, so everything comes in as keyword arguments. Their names are
``exampp.toml``'s keys (``grader``, ``backend``, ``model``, ``base_url``, ``depth``, ``tau``, ``min_grade``,
``label``, ``bank``, ``corpus``, ``concurrency``...; :data:`exampp.formats.exampp_toml.KEYS`, checked the same way),
plus the judge's own (:data:`JUDGE_KEYS`). The harness's own keyword arguments (``outdir``, ``filebase``) are
read where they mean something and otherwise ignored.

The ``LlmConfig`` (``OPENAI_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` in the environment) is the judge
model of a method that needs an LLM unless the settings name another backend: ``backend = openai`` with its
model and base URL. The key stays in the environment: exampp's openai backend reads it from there
(``api_key_env``, default ``OPENAI_API_KEY``); it is never written to the workspace or the logs.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exampp import defaults
from exampp.errors import ExamppError
from exampp.formats.exampp_toml import BACKEND_KEYS, KEYS, value_problem
from exampp.grading.method import GradingMethod
from exampp.llm.backend import BackendSpec

MEASURES = ("EXAM-Cover", "n-EXAM", "V_strict")
"""The judge's leaderboard measures: EXAM-Cover@depth and n-EXAM@depth of the answers' passages (the grades of
``grader``), and the nugget score V_strict (each answer's topic nuggets assigned by ``nugget_method``)."""

JUDGE_KEYS: dict[str, str] = {
    "measures": "leaderboard measures, a list or comma-separated: " + ", ".join(MEASURES),
    "nugget_method": "the method assigning nuggets for V_strict: nugget-support (an LLM) or nugget-embedding "
                     "(offline)",
    "prompt": "create_nuggets: bank generate's prompt, auto, facet, query or nuggets",
    "config": "an exampp.toml whose keys apply where the settings give none",
    "progress": "progress bars on stderr",
    "workspace": "the folder the judge works in [default: OUTDIR/exampp, else CACHE_DIR/exampp]",
}
_HARNESS_KEYS = frozenset({"outdir", "filebase"})  # what auto-judge run adds to every call
# exampp.toml keys not taken: the judge writes its inputs itself, and its workspace is its own setting
_NOT_SETTINGS = frozenset({"workspace", "responses", "topics", "store"})

DEFAULT_NUGGET_METHOD = "nugget-support"


class JudgeSettingError(ExamppError, ValueError):
    """A judge setting with an unknown name or a value of the wrong type."""


@dataclass(frozen=True)
class JudgeSettings:
    """What the judge does, from the protocol call's keyword arguments and the harness's ``LlmConfig``.

    :param workspace: The folder the judge works in (its grade store, the inputs it writes): ``workspace``,
        else ``OUTDIR/exampp`` (the harness's out-dir), else ``CACHE_DIR/exampp`` (the LlmConfig's).
    :param llm: The LLM of what needs one: the grader when it is an LLM method and no backend is named, bank
        generation (``create_nuggets``), ``nugget-support`` (:func:`llm_backend`).
    :param grade: Settings of :meth:`exampp.api.grade.GradeJob.configure`: exampp.toml's keys.
    :param measures: The leaderboard's measures (:data:`MEASURES`).
    :param nugget_method: The method assigning nuggets for V_strict.
    :param prompt: The bank generation prompt of ``create_nuggets``.
    :param progress: Show progress bars.
    """

    workspace: Path
    llm: BackendSpec
    grade: dict[str, Any] = field(default_factory=dict)
    measures: tuple[str, ...] = ("EXAM-Cover",)
    nugget_method: str = DEFAULT_NUGGET_METHOD
    prompt: str = "auto"
    progress: bool = False

    @classmethod
    def parse(cls, kwargs: Mapping[str, Any], llm_config: Any = None) -> "JudgeSettings":
        """Check and read the keyword arguments of a protocol call.

        :param kwargs: The workflow's settings and the harness's ``outdir``/``filebase``.
        :param llm_config: The harness's ``LlmConfig`` (``model``, ``base_url``, ``cache_dir``), or None.
        :raises JudgeSettingError: An unknown key, or a value of the wrong type.
        """
        grade: dict[str, Any] = {}
        own: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in _HARNESS_KEYS:
                continue
            if key in JUDGE_KEYS:
                own[key] = value
            elif key in KEYS and key not in _NOT_SETTINGS:
                problem = value_problem(key, value)
                if problem is not None:
                    raise JudgeSettingError(f"judge setting {problem}")
                grade[key] = value
            else:
                known = sorted(set(KEYS) - _NOT_SETTINGS | set(JUDGE_KEYS))
                raise JudgeSettingError(f"unknown judge setting {key!r}; known: {', '.join(known)}")
        config = own.get("config")
        if config is not None:  # its keys where the settings give none; what the judge writes itself is not taken
            from exampp.formats.exampp_toml import read_config

            if not isinstance(config, (str, Path)):
                raise JudgeSettingError(f"judge setting 'config' must be an exampp.toml's path, found {config!r}")
            values = read_config(config).values
            grade = {**{k: v for k, v in values.items() if k not in _NOT_SETTINGS}, **grade}
        llm = llm_backend(grade, llm_config)
        return cls(workspace=_workspace(own.get("workspace"), kwargs.get("outdir"), llm_config),
                   grade=_with_llm(grade, llm), llm=llm, measures=_measures(own.get("measures", "EXAM-Cover")),
                   nugget_method=_text(own, "nugget_method", DEFAULT_NUGGET_METHOD),
                   prompt=_text(own, "prompt", "auto"), progress=_flag(own, "progress"))


def _workspace(given: Any, outdir: Any, llm_config: Any) -> Path:
    if given is not None:
        if not isinstance(given, (str, Path)):
            raise JudgeSettingError(f"judge setting 'workspace' must be a folder's path, found {given!r}")
        return Path(given)
    if outdir is not None:
        return Path(outdir) / "exampp"
    cache = getattr(llm_config, "cache_dir", None)
    if cache is not None:
        return Path(cache) / "exampp"
    raise JudgeSettingError("the judge needs a folder to work in: give the setting 'workspace' (the harness "
                            "passes its --out-dir)")


LLM_BACKENDS = ("hf", "openai", "vllm")  # the backends that generate: bank generation, nugget-support


def llm_backend(grade: Mapping[str, Any], llm_config: Any) -> BackendSpec:
    """The LLM of the jobs that need one (a grader's, bank generation's, nugget-support's): the settings' backend
    when it is one that generates, else the LlmConfig's served model through openai.

    :param grade: The judge's exampp settings.
    :param llm_config: The harness's LlmConfig, or None.
    """
    options = {key: grade[key] for key in BACKEND_KEYS if key in grade}
    name = grade.get("backend")
    if name in LLM_BACKENDS:
        return BackendSpec(name, grade.get("model"), options)
    if "model" in grade and grade.get("backend") is None:  # the settings' model, served by the LlmConfig's server
        model = grade["model"]
    else:
        model = getattr(llm_config, "model", None)
    base_url = options.get("base_url") or getattr(llm_config, "base_url", None)
    # the other backend's options (an embedding grader's device) are left out where openai takes none
    return BackendSpec("openai", model, {"base_url": base_url} if base_url else {}, options)


def needs_llm(method: GradingMethod) -> bool:
    """Whether a method's own backend is one that generates: the judge's LLM then grades it.

    :param method: The grading method.
    """
    return method.default_backend in LLM_BACKENDS


def _with_llm(grade: dict[str, Any], llm: BackendSpec) -> dict[str, Any]:
    """The grading settings with the LLM where the grader needs one and the settings name no backend."""
    from exampp.grading.registry import parse_method

    if grade.get("backend") is not None or not needs_llm(parse_method(grade.get("grader", defaults.GRADING_METHOD))):
        return grade
    return {**grade, "backend": llm.name, "model": llm.model, **llm.options}  # llm.defaults: grade's own


def _measures(value: Any) -> tuple[str, ...]:
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise JudgeSettingError(f"judge setting 'measures' must be a list of names or a comma-separated string, "
                                f"found {value!r}")
    measures = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
    unknown = [m for m in measures if m not in MEASURES]
    if unknown or not measures:
        raise JudgeSettingError(f"judge setting 'measures': unknown {', '.join(map(repr, unknown)) or 'none given'}; "
                                f"choose from {', '.join(MEASURES)}")
    return measures


def _text(own: Mapping[str, Any], key: str, default: str) -> str:
    value = own.get(key, default)
    if not isinstance(value, str):
        raise JudgeSettingError(f"judge setting {key!r} ({JUDGE_KEYS[key]}) must be a string, found {value!r}")
    return value


def _flag(own: Mapping[str, Any], key: str) -> bool:
    value = own.get(key, False)
    if not isinstance(value, bool):
        raise JudgeSettingError(f"judge setting {key!r} must be true or false, found {value!r}")
    return value
