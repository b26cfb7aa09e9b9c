"""The command line on hostile files, as users run it: ``exampp eval``, ``leaderboard``, ``agree``,
``correlate``, ``import``, ``cover`` and ``qrels`` end with exit code 0, or 1/2 and one
``Error: ...`` line, never a traceback."""
from __future__ import annotations

import json
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import strategies as st

from exampp.cli import main
from exampp.stores.layout import Workspace

from .checks import put, scratch, tries
from .strategies import bank_text, graded_text, hostile, leaderboard_text, qrels_text, run_text


def invoke(args: list[str], stdin: bytes | None = None) -> Result:
    """``exampp ARGS``, checked: no exception but SystemExit, exit code 0, 1 or 2, and on failure
    the output ends with one single-line ``Error: ...``."""
    result = CliRunner().invoke(main, [str(a) for a in args], input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError("".join(traceback.format_exception(result.exception)) + result.output)
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code:
        errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
        assert len(errors) == 1 and result.output.endswith(errors[0] + "\n"), result.output
    return result


GOOD = {
    "qrels": b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n",
    "run": b"q1 Q0 d1 1 2.5 sysA\nq1 Q0 d2 2 1.5 sysA\nq2 Q0 d3 1 1 sysA\n",
    "run2": b"q1 Q0 d2 1 9 sysB\nq2 Q0 d1 1 8 sysB\nq2 Q0 d3 2 7 sysB\n",
    "board": b"run\tscore\nsysA\t0.5\nsysB\t0.25\n",
    "graded": json.dumps(["q1", [{"paragraph_id": "d1", "text": "t", "paragraph_data": {"rankings": [
        {"method": "sysA", "paragraphId": "d1", "queryId": "q1", "rank": 1, "score": 2}]}}]]).encode() + b"\n",
}
HOSTILE = {"qrels": hostile(qrels_text), "run": hostile(run_text), "run2": hostile(run_text),
           "board": hostile(leaderboard_text), "graded": hostile(graded_text)}


def files(*slots: str) -> st.SearchStrategy[dict[str, bytes]]:
    """Contents for the named files: valid ones that go together, all but (now and then) one,
    which is hostile; the command then gets past the other files to the hostile one."""
    def contents(bad: str | None) -> st.SearchStrategy[dict[str, bytes]]:
        return st.fixed_dictionaries({slot: HOSTILE[slot.removesuffix("_b")] if slot == bad else
                                      st.just(GOOD[slot.removesuffix("_b")]) for slot in slots})

    return st.sampled_from([*slots, None]).flatmap(contents)


@pytest.mark.slow
@tries(60, given=files("qrels", "run"), measures=st.sampled_from(
    [[], ["-q", "-m", "map", "-m", "ndcg_cut.10"], ["-c", "-m", "all_trec"], ["-m", "nDCG@20", "--format", "tsv"]]))
def test_eval(given, measures):
    with scratch() as folder:
        invoke(["eval", *measures, put(folder / "qrels", given["qrels"]), put(folder / "a.run", given["run"])])
        invoke(["eval", *measures, folder / "qrels", "-"], stdin=given["run"])


def test_eval_names_standard_input_as_stdin(tmp_path):
    qrels = put(tmp_path / "qrels", GOOD["qrels"])
    result = invoke(["eval", qrels, "-"], stdin=b"q9 Q0 d1 1 1 sysA\n")  # it was named '-'
    assert result.output == ("Error: <stdin>: no queries with both results and relevance judgments (the run's: "
                             "'q9'; the qrels': 'q1', 'q2')\n")


@pytest.mark.parametrize("args", [["eval", "{qrels}", "{run}"], ["leaderboard", "{run}", "--qrels", "{qrels}"],
                                  ["agree", "--exam", "{qrels}", "--official", "{qrels}"]])
def test_a_relevance_grade_beyond_any_scale_is_refused(tmp_path, args):
    # eval: OverflowError (or a table of 2**31 grades); leaderboard: pytrec_eval's SystemError, then a segfault
    paths = {"qrels": put(tmp_path / "qrels", b"q1 0 d1 99999999999999999999\n"),
             "run": put(tmp_path / "a.run", GOOD["run"])}
    result = invoke([arg.format(**paths) for arg in args])
    assert result.exit_code == 1 and "qrels:1: relevance '99999999999999999999' is out of range" in result.output


@pytest.mark.slow
@tries(40, given=files("qrels", "run", "run2"))
def test_leaderboard(given):
    with scratch() as folder:
        runs = [put(folder / "a.run", given["run"]), put(folder / "b.run", given["run2"])]
        invoke(["leaderboard", *runs, "--qrels", put(folder / "qrels", given["qrels"]), "-m", "nDCG@10", "-m", "P@5"])
        invoke(["leaderboard", *runs, "--qrels", folder / "qrels", "--per-query", "--strict", "--format", "json"])


@pytest.mark.slow
@tries(40, given=files("qrels", "qrels_b"), fmt=st.sampled_from(["text", "tsv", "json"]))
def test_agree(given, fmt):
    with scratch() as folder:
        invoke(["agree", "--exam", put(folder / "exam.qrels", given["qrels"]),
                "--official", put(folder / "official.qrels", given["qrels_b"]), "--format", fmt])


@pytest.mark.slow
@tries(40, given=files("board", "board_b", "qrels", "run", "run2"))
def test_correlate(given):
    with scratch() as folder:
        a, b = put(folder / "a.tsv", given["board"]), put(folder / "b.tsv", given["board_b"])
        invoke(["correlate", "--a", a, "--b", b, "--show"])
        (folder / "runs").mkdir()
        put(folder / "runs" / "a.run", given["run"])
        put(folder / "runs" / "b.run", given["run2"])
        invoke(["correlate", "--a-qrels", put(folder / "qrels", given["qrels"]), "--a-measure", "P@10",
                "--b", b, "--runs", folder / "runs"])


@pytest.mark.slow
@tries(40, given=files("graded"), bank=st.none() | hostile(bank_text))
def test_import(given, bank):
    with scratch() as folder:
        extra = [] if bank is None else ["--questions", put(folder / "bank.jsonl", bank)]
        invoke(["import", put(folder / "graded.jsonl", given["graded"]), "--workspace", folder / "ws", *extra])


GRADED = [
    ["q1", [{"paragraph_id": f"p{i}", "text": f"passage {i}",
             "paragraph_data": {"judgments": [{"paragraphId": f"p{i}", "query": "q1", "relevance": i % 2}],
                                "rankings": [{"method": "sysA", "paragraphId": f"p{i}", "queryId": "q1",
                                              "rank": i, "score": 5.0 - i}]},
             "exam_grades": [{"llm": "t5", "answers": [], "correctAnswered": [], "wrongAnswered": [],
                              "prompt_info": {"prompt_class": "P", "is_self_rated": True},
                              "self_ratings": [{"question_id": "q1/a", "self_rating": i},
                                               {"question_id": "q1/b", "self_rating": 5 - i}]}]}
            for i in range(1, 4)]],
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A workspace imported from a small valid graded file (read-only for the tests)."""
    root = tmp_path_factory.mktemp("cli")
    graded = root / "graded.jsonl"
    graded.write_text("".join(json.dumps(line) + "\n" for line in GRADED))
    assert invoke(["import", graded, "--workspace", root / "ws"]).exit_code == 0
    return root / "ws"


@pytest.mark.slow
@tries(40, given=files("run", "run2"), bank=st.none() | hostile(bank_text))
def test_cover(workspace, given, bank):
    with scratch() as folder:
        runs = [put(folder / "a.run", given["run"]), put(folder / "b.run", given["run2"])]
        extra = [] if bank is None else ["--bank", put(folder / "bank.jsonl", bank)]
        invoke(["cover", *runs, "--workspace", workspace, *extra, "--per-query"])


@pytest.mark.slow
@tries(40, bank=hostile(bank_text), facets=st.booleans())
def test_qrels(workspace, bank, facets):
    with scratch() as folder:
        out = folder / "exam.qrels"
        flags = ["--facets"] if facets else []
        if invoke(["qrels", "--workspace", workspace, "--bank", put(folder / "bank.jsonl", bank), *flags,
                   "-o", out]).exit_code == 0:
            invoke(["eval", "-m", "map", out, Workspace.at(workspace).runs / "sysA.run"])
