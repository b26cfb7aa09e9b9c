"""Every numeric setting keeps one rule wherever its value comes from: an exampp.toml key, a flag of
any command that takes it, or the Python API (GradeJob, a backend's options). A value that breaks
the rule gets the same message from each, after where it came from (``exampp.toml:2: ``,
``Invalid value for '--timeout': ``), before anything is read or graded: never a traceback, a
silently empty pool or an all-zero leaderboard."""
from __future__ import annotations

import math
import re

import click
import pytest
from click.testing import CliRunner
from hypothesis import example, strategies as st

from exampp.api.grade import GradeJob
from exampp.api.scores import CoverJob, export_qrels, export_question_qrels
from exampp.cli import main
from exampp.cli.settings import Setting
from exampp.errors import InputError
from exampp.formats.exampp_toml import KEYS, read_config
from exampp.llm.backend import open_backend
from exampp.setting_rules import RULES, SettingError, check_setting

from .checks import scratch, tries

NAN, INF = float("nan"), float("inf")
NUMERIC_KEYS = sorted(key for key, (types, _) in KEYS.items() if int in types or float in types)

# The cases and a bound of every rule: (setting, value, message)
BAD = [
    ("depth", -5, "depth must be an integer >= 1, found -5"),  # pooled rank[:-5]
    ("depth", 0, "depth must be an integer >= 1, found 0"),  # emptied exam.qrels
    ("tau", NAN, "tau must be a finite number, found nan"),  # all-zero scores
    ("tau", INF, "tau must be a finite number, found inf"),
    ("min_grade", NAN, "min_grade must be a finite number, found nan"),
    ("min_grade", -INF, "min_grade must be a finite number, found -inf"),
    ("batch_size", -3, "batch_size must be an integer >= 1, found -3"),  # a traceback
    ("timeout", -1, "timeout must be a number in (0, 86400], found -1"),
    ("timeout", 0, "timeout must be a number in (0, 86400], found 0"),
    ("timeout", NAN, "timeout must be a number in (0, 86400], found nan"),
    ("timeout", INF, "timeout must be a number in (0, 86400], found inf"),
    ("timeout", 1e300, "timeout must be a number in (0, 86400], found 1e+300"),  # overflows the timers
    ("max_retries", -2, "max_retries must be an integer >= 0, found -2"),
    ("max_input_tokens", -1, "max_input_tokens must be an integer >= 32, found -1"),  # cut every passage away
    ("max_input_tokens", 1, "max_input_tokens must be an integer >= 32, found 1"),
    ("max_batch_tokens", 0, "max_batch_tokens must be an integer >= 1, found 0"),
    ("threads", 0, "threads must be an integer in [1, 1024], found 0"),
    ("threads", 2**31, "threads must be an integer in [1, 1024], found 2147483648"),  # torch's C int overflows
    ("concurrency", 0, "concurrency must be an integer >= 1, found 0"),
    ("max_requests", 0, "max_requests must be an integer >= 1, found 0"),
    ("gpu_memory_utilization", 0, "gpu_memory_utilization must be a number in (0, 1], found 0"),
    ("gpu_memory_utilization", 1.5, "gpu_memory_utilization must be a number in (0, 1], found 1.5"),
    ("gpu_memory_utilization", NAN, "gpu_memory_utilization must be a number in (0, 1], found nan"),
    ("tensor_parallel_size", 0, "tensor_parallel_size must be an integer >= 1, found 0"),
    ("max_model_len", 64, "max_model_len must be an integer > 64, found 64"),  # no room left for a prompt
    ("cascade_threshold", NAN, "cascade_threshold must be a finite number, found nan"),
    ("workers", 0, "workers must be an integer >= 1, found 0"),
    ("batch_poll", 0, "batch_poll must be a number in (0, 86400], found 0"),  # polls without pause
    ("canaries", -1, "canaries must be an integer >= 0, found -1"),
]
FLAGS = {"depth": "'--depth' / '-k'"}  # how click names a flag with a short form


def toml(value: float) -> str:
    """A number as TOML writes it (Python's repr: nan, inf, 1e+300 are TOML)."""
    return repr(value)


def flag_error(key: str, message: str) -> str:
    return f"Error: Invalid value for {FLAGS.get(key, repr('--' + key.replace('_', '-')))}: {message}"


def test_every_numeric_key_of_exampp_toml_has_a_rule():
    assert set(RULES) == set(NUMERIC_KEYS) | {"chunk_size"}  # chunk_size: a flag and an API setting only
    assert {key for key, *_ in BAD} == set(NUMERIC_KEYS)


@pytest.mark.parametrize("key, value, message", BAD)
def test_a_bad_setting_in_exampp_toml_names_the_file_and_line(tmp_path, key, value, message):
    path = tmp_path / "exampp.toml"
    path.write_text(f'grader = "embedding"\n{key} = {toml(value)}\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["grade", "--config", str(path)])
    assert (result.exit_code, result.output) == (1, f"Error: {path}:2: {message}\n")


@pytest.mark.parametrize("key, value, message", BAD)
def test_the_same_value_as_a_flag_is_the_same_message(tmp_path, key, value, message):
    result = CliRunner().invoke(main, ["grade", f"--{key.replace('_', '-')}", str(value), "-w", str(tmp_path)])
    assert result.exit_code == 2 and result.output.endswith(flag_error(key, message) + "\n"), result.output
    assert not any(tmp_path.iterdir())  # refused before anything was written


@pytest.mark.parametrize("key, value, message", BAD)
def test_the_same_value_through_the_api_is_the_same_message(tmp_path, key, value, message):
    with pytest.raises(SettingError) as caught:
        GradeJob.configure(workspace=tmp_path, **{key: value})
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


def test_a_backend_opened_from_python_checks_its_options_before_it_connects():
    with pytest.raises(SettingError, match=r"^timeout must be a number in \(0, 86400\], found nan$"):
        open_backend("openai", "m", base_url="http://127.0.0.1:9/v1", timeout=NAN)
    with pytest.raises(SettingError, match=r"^max_retries must be an integer >= 0, found -2$"):
        open_backend("openai", "m", base_url="http://127.0.0.1:9/v1", max_retries=-2)
    with pytest.raises(SettingError, match=r"^batch_size must be an integer >= 1, found -3$"):
        open_backend("embedding", batch_size=-3)


def test_a_job_made_directly_keeps_the_rules_too(tmp_path):
    with pytest.raises(SettingError, match=r"^depth must be an integer >= 1, found -5$"):
        GradeJob(workspace=tmp_path, depth=-5)
    with pytest.raises(SettingError, match=r"^chunk_size must be an integer >= 1, found 0$"):
        GradeJob(workspace=tmp_path, chunk_size=0)
    with pytest.raises(SettingError, match=r"^timeout must be a number in \(0, 86400\], found inf$"):
        GradeJob(workspace=tmp_path, backend_options={"timeout": INF})
    with pytest.raises(SettingError, match=r"^depth must be an integer >= 1, found True$"):  # a bool is no count
        GradeJob(workspace=tmp_path, depth=True)


@pytest.mark.parametrize("call, message", [
    (lambda ws: CoverJob(ws, tau=NAN).run(), "tau must be a finite number, found nan"),
    (lambda ws: CoverJob(ws, depth=0).run(), "depth must be an integer >= 1, found 0"),
    (lambda ws: export_qrels(ws, min_grade=INF), "min_grade must be a finite number, found inf"),
    (lambda ws: export_qrels(ws, tau=-INF, label="count"), "tau must be a finite number, found -inf"),
    (lambda ws: export_question_qrels(ws, tau=NAN), "tau must be a finite number, found nan"),
])
def test_the_scoring_functions_keep_the_rules_before_reading_the_workspace(tmp_path, call, message):
    # The workspace has no store: the setting is refused first, as the flag is.
    with pytest.raises(SettingError, match=f"^{re.escape(message)}$"):
        call(tmp_path)


# Every command's flags that set the same quantities: (command line before the flag, flag, value, message)
OTHER_COMMANDS = [
    (["cover"], "--tau", "nan", "tau must be a finite number, found nan"),
    (["cover"], "--min-grade", "inf", "tau must be a finite number, found inf"),  # cover's alias of --tau
    (["cover"], "--depth", "0", "depth must be an integer >= 1, found 0"),
    (["qrels"], "--tau", "-inf", "tau must be a finite number, found -inf"),
    (["qrels"], "--min-grade", "nan", "min_grade must be a finite number, found nan"),
    (["leaderboard"], "--depth", "-5", "depth must be an integer >= 1, found -5"),
    (["correlate"], "--depth", "0", "depth must be an integer >= 1, found 0"),
    (["significance"], "--depth", "0", "depth must be an integer >= 1, found 0"),
    (["irt"], "--tau", "nan", "tau must be a finite number, found nan"),
    (["irt"], "--depth", "-1", "depth must be an integer >= 1, found -1"),
    (["meta-evaluate"], "--tau", "inf", "tau must be a finite number, found inf"),
    (["report"], "--depth", "0", "depth must be an integer >= 1, found 0"),
    (["bank", "review"], "--tau", "nan", "tau must be a finite number, found nan"),
    (["bank", "impact"], "--min-grade", "nan", "min_grade must be a finite number, found nan"),
    (["bank", "impact"], "--timeout", "inf", "timeout must be a number in (0, 86400], found inf"),
    (["bank", "generate"], "--timeout", "nan", "timeout must be a number in (0, 86400], found nan"),
    (["bank", "generate"], "--chunk-size", "0", "chunk_size must be an integer >= 1, found 0"),
    (["exam", "generate"], "--max-retries", "-2", "max_retries must be an integer >= 0, found -2"),
    # number flags without a setting of their own: NaN and the infinities passed click's ranges
    (["significance"], "--alpha", "nan", "nan is not a finite number"),
    (["cover"], "--confidence", "nan", "nan is not a finite number"),
    (["irt"], "--guessing", "nan", "nan is not a finite number"),
    (["exam", "generate"], "--drop-fraction", "nan", "nan is not a finite number"),
    (["bank", "generate"], "--temperature", "inf", "inf is not a finite number"),
]


@pytest.mark.parametrize("values, message", [(["nan", "0.5"], "nan is not a finite number"),
                                             (["0", "inf"], "inf is not a finite number"),
                                             (["0", "0"], "0.0 is not in the range x>0")])
def test_the_prior_on_discrimination_is_a_finite_lognormal(values, message):
    result = CliRunner().invoke(main, ["irt", "--prior-a", *values])
    assert result.exit_code == 2 and f"Invalid value for '--prior-a': {message}" in result.output, result.output


@pytest.mark.parametrize("command, flag, value, message", OTHER_COMMANDS)
def test_every_command_taking_the_quantity_refuses_it_alike(command, flag, value, message):
    # The flag comes first: click checks flags in the order given, before the missing arguments.
    result = CliRunner().invoke(main, [*command, flag, value])
    hint = "'--depth' / '-k'" if flag == "--depth" else "'--tau' / '--min-grade'" \
        if command == ["cover"] and flag in ("--tau", "--min-grade") else repr(flag)
    assert result.exit_code == 2 and result.output.endswith(f"Error: Invalid value for {hint}: {message}\n"), \
        result.output


# --- one verdict, one message, wherever the value comes from ----------------------------------------

def _values(key: str) -> st.SearchStrategy:
    if RULES[key].integer:
        return st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 100)
    return st.floats(allow_nan=True, allow_infinity=True) | st.integers(-3, 100) | st.floats(-2, 6)


cases = st.sampled_from(NUMERIC_KEYS).flatmap(lambda key: st.tuples(st.just(key), _values(key)))


def _verdicts(key: str, value: float) -> dict[str, str | None]:
    """The message each source gives for ``value`` of ``key`` (None: accepted as given)."""
    verdicts: dict[str, str | None] = {}
    try:
        verdicts["api"] = None if check_setting(key, value) == value else "changed"
    except SettingError as exc:
        verdicts["api"] = str(exc)
    with scratch() as folder:
        path = folder / "exampp.toml"
        path.write_text(f"{key} = {toml(value)}\n", encoding="utf-8")
        try:
            read = read_config(path).get(key)
            verdicts["toml"] = None if read == value and type(read) is type(value) else f"read as {read!r}"
        except InputError as exc:
            assert str(exc).startswith(f"{path}:1: "), str(exc)
            verdicts["toml"] = str(exc)[len(f"{path}:1: "):]
        try:
            job = GradeJob.configure(workspace=folder / "ws", **{key: value})  # a workspace without exampp.toml
            given = job.backend_options.get(key, getattr(job, key, None))
            verdicts["job"] = None if given == value else f"set to {given!r}"
        except SettingError as exc:
            verdicts["job"] = str(exc)
    try:
        converted = Setting(key).convert(str(value), None, None)
        verdicts["flag"] = None if converted == value and type(converted) is type(value) else f"as {converted!r}"
    except click.BadParameter as exc:
        verdicts["flag"] = exc.message
    return verdicts


@pytest.mark.slow
@tries(100, case=cases)
@example(case=("timeout", 5e-324))  # the smallest timeout above 0
@example(case=("timeout", 0))  # an integer of a number setting: "found 0" from a flag too, not "found 0.0"
@example(case=("max_model_len", 65))
@example(case=("depth", 10**400))  # an integer too large for a float is still finite (math.isfinite overflowed)
def test_every_source_gives_one_verdict_with_one_message(case):
    key, value = case
    verdicts = _verdicts(key, value)
    assert len(set(verdicts.values())) == 1, verdicts
    if isinstance(value, float) and not math.isfinite(value):
        assert verdicts["api"] is not None, verdicts
    if verdicts["api"] is not None:
        assert verdicts["api"] == f"{key} must be {RULES[key]}, found {value!r}"
