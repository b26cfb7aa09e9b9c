"""A Python port of NIST trec_eval (v9.x) whose output matches it byte for byte.

Each measure family lives in its own module behind the :class:`~exampp.trec_eval.measure.Measure`
interface; :mod:`~exampp.trec_eval.registry` lists them in trec_eval's order. Names that
trec_eval does not know are handed to ir_measures.

    scores = evaluate(read_qrels("qrels"), read_run("run"), ["map", "ndcg_cut.10"], per_query=True)
    print(format_trec(scores), end="")
"""
from exampp.trec_eval.engine import Score, evaluate, evaluate_runs, unreachable_level
from exampp.trec_eval.registry import MEASURES, NICKNAMES, select
from exampp.trec_eval.report import format_json, format_trec, format_tsv, records, to_dataframe

__all__ = [
    "MEASURES",
    "NICKNAMES",
    "Score",
    "evaluate",
    "evaluate_runs",
    "format_json",
    "format_trec",
    "format_tsv",
    "records",
    "select",
    "to_dataframe",
    "unreachable_level",
]
