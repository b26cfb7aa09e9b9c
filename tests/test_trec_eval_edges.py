"""Corners where a plain port of trec_eval goes wrong: C's NaN, parameters read with atol/atof,
measures that read odd parameters, and the deliberate differences the README lists. Every expected
line below was worked out by hand and is what trec_eval 10.0 prints (the random cases of
tests/test_trec_eval_differential.py cover the rest)."""
from __future__ import annotations

import functools
import math

import pytest
from click.testing import CliRunner

from exampp.cli import main
from exampp.trec_eval.gains import _glibc_qsort
from exampp.trec_eval.measure import C_NAN, atof, atol, ratio
from exampp.trec_eval.report import printf


def _eval(write, qrels: str, run: str, *args: str) -> str:
    result = CliRunner().invoke(main, ["eval", *args, str(write("qrels", qrels)), str(write("run", run))])
    assert result.exit_code == 0, result.output
    return result.stdout


def _line(name: str, query: str, value: str) -> str:
    return f"{name:<22}\t{query}\t{value}\n"


def test_zero_over_zero_is_cs_negative_nan_and_prints_so(write):
    assert math.isnan(ratio(0, 0)) and math.copysign(1, ratio(0, 0)) < 0
    assert (ratio(3, 0), ratio(-3, 0), ratio(3, -0.0)) == (math.inf, -math.inf, -math.inf)
    assert printf("%6.4f", C_NAN) == "  -nan"
    assert printf("%6.4f", math.nan) == "   nan"
    assert printf("%6.4f", (0.0 + C_NAN) / 2) == "  -nan"  # an average keeps the sign
    # -J drops the one retrieved document (unjudged): 11pt_avg then divides 0 relevant by 0 retrieved
    out = _eval(write, "q1 0 a 1\nq1 0 b 0\n", "q1 Q0 x 1 3 r\n", "-q", "-J", "-m", "11pt_avg",
                "-m", "iprec_at_recall.0.5")
    assert out == (_line("iprec_at_recall_0.50", "q1", "0.0000") + _line("11pt_avg", "q1", "  -nan")
                   + _line("iprec_at_recall_0.50", "all", "0.0000") + _line("11pt_avg", "all", "  -nan"))


def test_set_f_of_minus_one_divides_zero_by_zero(write):
    # P = R = 1: (x + 1) P R / (x P + R) = 0 / 0 at x = -1
    out = _eval(write, "q1 0 a 1\n", "q1 Q0 a 1 3 r\n", "-m", "set_F.-1")
    assert out == _line("set_F_-1", "all", "  -nan")


def test_rbp_resid_takes_rbps_persistence(write):
    # x (unjudged) at rank 1, b relevant at rank 2: p^2 + (1 - p) * p^0
    qrels, run = "q1 0 b 1\n", "q1 Q0 x 1 2 r\nq1 Q0 b 2 1 r\n"
    assert _eval(write, qrels, run, "-m", "rbp_resid.p=0.5,1=3") == _line("rbp_resid_p=0.5,1=3", "all", "0.7500")
    assert _eval(write, qrels, run, "-m", "rbp_resid") == _line("rbp_resid", "all", "0.9100")


def test_num_rel_under_c_counts_the_qrels_judgments_above_zero(write):
    qrels, run = "q1 0 a 1\nq1 0 b 2\nq2 0 c 3\nq2 0 d 0\n", "q1 Q0 a 1 3 r\n"
    # per query at -l2: q1 has b, q2 has c; the -c summary counts a, b and c whatever -l says
    assert _eval(write, qrels, run, "-q", "-c", "-l2", "-m", "num_rel") == (
        _line("num_rel", "q1", "1") + _line("num_rel", "q2", "1") + _line("num_rel", "all", "3"))
    assert _eval(write, qrels, run, "-l2", "-m", "num_rel") == _line("num_rel", "all", "1")


def test_parameters_are_read_as_atol_and_atof_read_them(write):
    assert [atol(t) for t in ("5x", " +3", "1e1", "0x10", "abc", "")] == [5, 3, 1, 0, 0, 0]
    assert [atof(t) for t in ("5x", ".5", "1e1", "0x1p-1", "abc", "1e", "-0x.8p1")] == [
        5.0, 0.5, 10.0, 0.5, 0.0, 1.0, -1.0]
    qrels, run = "q1 0 a 1\nq1 0 b 2\n", "q1 Q0 a 1 3 r\nq1 Q0 c 2 2 r\n"
    assert _eval(write, qrels, run, "-m", "P.2x") == _line("P_2", "all", "0.5000")
    assert _eval(write, qrels, run, "-m", "iprec_at_recall.abc") == _line("iprec_at_recall_0.00", "all", "1.0000")
    # an empty name is a pair get_param_pairs takes; it names no grade, so the gains stay the grades
    plain = _eval(write, qrels, run, "-m", "ndcg").split("\t")[-1]
    assert _eval(write, qrels, run, "-m", "ndcg.=3") == _line("ndcg_=3", "all", plain.strip("\n"))


@pytest.mark.parametrize("spec", ["P.0x10", "P.5,5.0", "ndcg.1=3,", "ndcg.1=2=3", "ndcg.,1=2", "set_F.inf"])
def test_parameters_trec_eval_refuses_are_refused(spec, write):
    result = CliRunner().invoke(main, ["eval", "-m", spec, str(write("qrels", "q1 0 a 1\n")),
                                       str(write("run", "q1 Q0 a 1 1 r\n"))])
    assert result.exit_code == 2 and "'-m'" in result.output


def test_gain_levels_are_sorted_as_glibcs_merge_sort_sorts_them():
    compare = lambda a, b: int(a - b)  # noqa: E731 - trec_eval's comp_rel_gain: gains < 1 apart tie
    gains = [1.0, 0.5, 0.0, 1.5]
    # halves [1.0, 0.5] (a tie: kept) and [0.0, 1.5]; merging: 0.0 < 1.0, then 1.0 = 1.5 takes the
    # left 1.0, then 0.5 < 1.5
    assert _glibc_qsort(gains, compare) == [0.0, 1.0, 0.5, 1.5]
    assert sorted(gains, key=functools.cmp_to_key(compare)) == [1.0, 0.5, 0.0, 1.5]  # Python's differs


def test_a_query_whose_judgments_are_all_negative_is_evaluated(write):
    # trec_eval stops or crashes here (README: deliberate differences); exampp has no relevant document
    out = _eval(write, "q1 0 a -1\nq2 0 b 1\n", "q1 Q0 a 1 1 r\nq2 Q0 b 1 1 r\n", "-q", "-m", "num_rel", "-m", "map")
    assert out == (_line("num_rel", "q1", "0") + _line("map", "q1", "0.0000") + _line("num_rel", "q2", "1")
                   + _line("map", "q2", "1.0000") + _line("num_rel", "all", "1") + _line("map", "all", "0.5000"))


def test_dcg_keeps_its_own_gains_beside_a_parameterised_ndcg(write):
    # trec_eval shares one parameter block among dcg, ideal_dcg and ndcg and crashes here
    out = _eval(write, "q1 0 a 1\n", "q1 Q0 a 1 1 r\n", "-m", "ndcg.1=3", "-m", "dcg")
    assert out == _line("dcg", "all", "1.0000") + _line("ndcg_1=3", "all", "1.0000")


# q1's 'a' comes back at rank 3; q2 (not judged) repeats 'z'; the last line's runid is r2
_DUPLICATES_QRELS = "q1 0 a 1\nq1 0 b 0\n"
_DUPLICATES_RUN = "q1 Q0 a 1 3 r1\nq1 Q0 b 2 2 r1\nq1 Q0 a 3 1 r1\nq2 Q0 z 1 1 r1\nq2 Q0 z 2 1 r2\n"


def test_a_docid_twice_is_refused_only_among_the_documents_kept(write):
    # trec_eval checks the top -M of a query it evaluates (form_res_rels.c), nothing else
    assert _eval(write, _DUPLICATES_QRELS, _DUPLICATES_RUN, "-M2", "-m", "num_ret") == _line("num_ret", "all", "2")
    result = CliRunner().invoke(main, ["eval", "-m", "num_ret", str(write("qrels", _DUPLICATES_QRELS)),
                                       str(write("run", _DUPLICATES_RUN))])
    assert result.exit_code == 1 and "run:3: duplicate docid 'a' in query 'q1'" in result.output


def test_runid_and_num_q_never_look_at_the_ranking(write):
    # neither calls form_res_rels, so trec_eval does not see the docid twice; runid is the last line's
    assert _eval(write, _DUPLICATES_QRELS, _DUPLICATES_RUN, "-m", "runid", "-m", "num_q") == (
        _line("runid", "all", "r2") + _line("num_q", "all", "1"))


def test_huge_parameters_go_through_cs_integer_casts(write):
    from exampp.trec_eval.interpolated import lround
    from exampp.trec_eval.measure import c_int, c_long

    # x86-64 casts a double beyond the integer's range (or NaN) to its most negative value
    assert (c_int(2.9), c_int(-2.9), c_int(2147483647.5), c_int(-2147483648.5)) == (2, -2, 2147483647, -2147483648)
    assert c_int(3e9) == c_int(-3e9) == c_int(math.nan) == -(2 ** 31)
    assert (c_long(3e9), c_long(-2.5), c_long(1e19), c_long(-1e300)) == (3000000000, -2, -(2 ** 63), -(2 ** 63))
    assert (lround(2.5), lround(-2.5), lround(1e300), lround(-1e300)) == (3, -3, -(2 ** 63), -(2 ** 63))
    qrels, run = "q1 0 d1 1\nq1 0 d2 2\n", "q1 Q0 d1 1 2 r\nq1 Q0 d3 2 1 r\nq1 Q0 d2 3 0.5 r\n"
    # gains 1e308 and 0 compare as INT_MIN: "less" both ways, so the merge sort leaves grade 0's
    # level (gain 0) on top; the ideal ranking then never starts and nDCG is 0 (not 0.9197)
    out = _eval(write, qrels, run, "-m", "ndcg.1=1e308,2=1e308")
    assert out == _line("ndcg_1=1e308,2=1e308", "all", "0.0000")
    # recall level 1e300 x 2 relevant: lround gives LONG_MIN documents, which the walk never meets,
    # so the level takes the best precision of the whole walk, 1/1 at rank 1 (not 0)
    out = _eval(write, qrels, run, "-m", "iprec_at_recall.1e300")
    assert out == _line("iprec_at_recall_10000000", "all", "1.0000")
