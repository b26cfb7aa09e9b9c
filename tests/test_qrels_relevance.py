"""A qrels relevance read as NIST trec_eval reads it (C's ``atol``), or refused with its line (issue 24).

The eval cases are issue 24's table: qrels ``1 0 a 1`` and ``1 0 b X``, a run ranking a then b,
``-m ndcg -q``. The expected lines are trec_eval 10.0's output on those files, and each figure is
worked by hand: with grades 1 and g, nDCG = (1 + g/log2 3) / (g + 1/log2 3), so g = 1 gives 1,
g = 2 gives 2.26186/2.63093 = 0.8597, g = 10 gives 7.30930/10.63093 = 0.6876.
"""
from __future__ import annotations

import ctypes

import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.errors import InputError
from exampp.formats.trec_qrels import atol, parse_label, read_intent_qrels, read_qrels, write_qrels

RUN = "1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n"


def _ndcg(value: str) -> str:
    return f"ndcg                  \t1\t{value}\nndcg                  \tall\t{value}\n"


def _invoke(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def _files(tmp_path, label: str) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(f"1 0 a 1\n1 0 b {label}\n")
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


@pytest.mark.parametrize("label, figure", [
    ("1", "1.0000"), ("2", "0.8597"), ("10", "0.6876"),
    # spellings both tools read as the same grade
    ("2.0", "0.8597"), ("1e0", "1.0000"), ("+2", "0.8597"), ("02", "0.8597"), ("2.", "0.8597"), ("1.0e0", "1.0000"),
])
def test_labels_both_readings_agree_on_give_trec_evals_figures(tmp_path, label, figure):
    result = _invoke(["eval", "-m", "ndcg", "-q", *_files(tmp_path, label)])
    assert result.exit_code == 0 and result.output == _ndcg(figure)


# trec_eval reads each as the first number; Python as the second: a different grade, so refused
@pytest.mark.parametrize("label, c_reads, python_reads", [
    ("1e1", 1, "10"), ("1_0", 1, "10"), ("10e-1", 10, "1"), ("15e-1", 15, "1.5"), ("\u0661", 0, "1"),
])
def test_labels_the_readings_differ_on_are_refused_with_both_values(tmp_path, label, c_reads, python_reads):
    qrels, run = _files(tmp_path, label)
    result = _invoke(["eval", "-m", "ndcg", "-q", qrels, run])
    assert result.exit_code == 1
    assert result.output == (f"Error: {qrels}:2: relevance {label!r} refused: trec_eval reads it as {c_reads} "
                             f"(C's atol takes its leading digits), Python as {python_reads}; "
                             "write the grade meant in plain digits\n")


@pytest.mark.parametrize("label, message", [
    ("0x1", "relevance '0x1' is not a number"),  # trec_eval: 0
    ("2.5", "trec_eval measures take integer relevance labels; query '1' docid 'b' has 2.5"),  # trec_eval: 2
])
def test_a_non_number_and_a_fractional_label_keep_their_documented_refusals(tmp_path, label, message):
    result = _invoke(["eval", "-m", "ndcg", "-q", *_files(tmp_path, label)])
    assert result.exit_code == 1 and message in result.output


def test_a_fractional_label_stays_exampps_own():
    # what `exampp qrels` writes for expected labels, and `exampp agree` takes
    assert parse_label("2.5") == 2.5 and parse_label("-0.5") == -0.5 and parse_label(".5") == 0.5
    assert isinstance(parse_label("3.0"), int) and isinstance(parse_label("1e0"), int)


@pytest.mark.parametrize("text, value", [
    ("7", 7), ("-7", -7), ("+7", 7), ("  \t12abc", 12), ("1e1", 1), ("10e-1", 10), ("1_0", 1), ("0x1", 0),
    ("2.9", 2), ("-2.9", -2), (".5", 0), ("-", 0), ("", 0), ("x1", 0), ("\u0661", 0), ("- 1", 0),
    ("9" * 30, 2**63 - 1), ("-" + "9" * 30, -2**63),
])
def test_atol_reads_what_cs_atol_reads(text, value):
    assert atol(text) == value


def test_atol_agrees_with_the_c_library():
    """An independent route: the C library's own atol (glibc here)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        pytest.skip("no C library to load")
    libc.atol.restype, libc.atol.argtypes = ctypes.c_long, [ctypes.c_char_p]
    for text in ["7", "-7", "+7", " 12abc", "1e1", "10e-1", "1_0", "0x1", "2.9", "-2.9", ".5", "-", "", "x1",
                 "9" * 30, "-" + "9" * 30, "+-1", "00042", "\t-0"]:
        assert atol(text) == libc.atol(text.encode()), text


# ---- every reader of qrels ----------------------------------------------------------------------

def test_both_file_readers_refuse_a_spelling_read_two_ways(tmp_path):
    path = tmp_path / "q.qrels"
    path.write_text("q1 0 a 1\nq1 0 b 1_0\n")
    with pytest.raises(InputError) as err:
        read_qrels(path)
    assert str(err.value).startswith(f"{path}:2: relevance '1_0' refused: trec_eval reads it as 1")
    path.write_text("q1 1 a 1\nq1 2 a 1e1\n")  # intent qrels used to read 1_0 with int(), 1e1 not at all
    with pytest.raises(InputError) as err:
        read_intent_qrels(path)
    assert str(err.value).startswith(f"{path}:2: label '1e1' refused: trec_eval reads it as 1")
    path.write_text("q1 1 a 1\nq1 2 a 1_0\n")
    with pytest.raises(InputError, match=r"q\.qrels:2: label '1_0' refused"):
        read_intent_qrels(path)
    path.write_text("q1 1 a 2.0\nq1 2 a +1\n")  # spellings of integers every reader agrees on
    assert read_intent_qrels(path) == {"q1": {"1": {"a": 2}, "2": {"a": 1}}}


@pytest.mark.parametrize("args", [
    ["eval", "{qrels}", "{runs}/a.run"],
    ["leaderboard", "{runs}", "--qrels", "{qrels}", "-m", "nDCG@10"],
    ["leaderboard", "{runs}", "--qrels", "{qrels}", "-m", "alpha_nDCG@10"],  # read as intent qrels
    ["agree", "--exam", "{qrels}", "--official", "{qrels}"],
    ["correlate", "--runs", "{runs}", "--a-qrels", "{qrels}", "--a-measure", "P@1",
     "--b-qrels", "{qrels}", "--b-measure", "nDCG@10"],
])
def test_every_command_reading_qrels_refuses_it_naming_the_line(tmp_path, args):
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("a", "b"):
        (runs / f"{name}.run").write_text(RUN.replace(" r\n", f" {name}\n"))
    qrels = tmp_path / "q.qrels"
    qrels.write_text("1 0 a 1\n1 0 b 10e-1\n")
    result = _invoke([arg.format(qrels=qrels, runs=runs) for arg in args])
    assert result.exit_code == 1
    assert f"{qrels}:2: " in result.output and "'10e-1' refused: trec_eval reads it as 10" in result.output


def test_a_small_fractional_label_is_written_in_plain_digits(tmp_path):
    # repr would write 2e-05, which trec_eval reads as 2 (and exampp would now refuse)
    write_qrels({"q": {"d": 2e-05, "e": -2.5e-07, "f": 0.1 + 0.2}}, tmp_path / "out.qrels")
    assert (tmp_path / "out.qrels").read_text() == "q 0 d 0.00002\nq 0 e -0.00000025\nq 0 f 0.30000000000000004\n"
    assert read_qrels(tmp_path / "out.qrels") == {"q": {"d": 2e-05, "e": -2.5e-07, "f": 0.1 + 0.2}}
