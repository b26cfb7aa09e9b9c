"""``exampp eval``: trec_eval, byte for byte, plus ir_measures names and several runs at once."""
from __future__ import annotations

import click

from exampp.cli.output import format_option_of, one_stdin, output_option, write_output
from exampp.formats.trec_qrels import read_qrels
from exampp.formats.trec_run import RunFile, run_paths
from exampp.trec_eval import Score, evaluate_runs, format_json, format_trec, format_tsv, select, unreachable_level


@click.command("eval")
@click.option("-q", "per_query", is_flag=True, help="Also print each query's values (before the 'all' lines).")
@click.option("-c", "complete", is_flag=True, help="Average over all qrels queries; a query missing from a run counts.")
@click.option("-M", "max_retrieved", type=int, default=None, metavar="N",
              help="Evaluate only the top N documents per query.")
@click.option("-l", "rel_level", type=int, default=1, show_default=True, metavar="N",
              help="Minimum grade counted relevant by binary measures (nDCG uses the raw grades).")
@click.option("-J", "judged_only", is_flag=True,
              help="Drop unjudged documents from rankings first (trec_eval: DO NOT USE).")
@click.option("-N", "num_docs_in_coll", type=int, default=0, metavar="N",
              help="Collection size, for utility's 4th coefficient.")
@click.option("-m", "measures", multiple=True, metavar="MEASURE",
              help="trec_eval measure (map, P.5,10, ndcg_cut.20), nickname (official, all_trec, set) "
                   "or ir_measures name (nDCG@20, 'P(rel=2)@10', AP, RR). Repeatable; default official.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Evaluate up to N runs at once, in worker processes (output unchanged).  [default: the CPUs "
                   "this process may use]")
@format_option_of("trec", "json", "tsv",
                  help="trec: trec_eval's text, one block per run; json/tsv: rows of run, measure, query, value.")
@output_option
@click.argument("qrels", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=click.Path(allow_dash=True))
def eval_cmd(per_query, complete, max_retrieved, rel_level, judged_only, num_docs_in_coll, measures, jobs, fmt,
             output, qrels, runs):
    """Evaluate RUNS (files or directories of runs) against QRELS like NIST trec_eval.

    With trec_eval's flags the output is identical to trec_eval's. Measures trec_eval does not
    know are computed by ir_measures and printed in the same format under their ir_measures name.

    \b
    Example:
      exampp eval qrels/official.qrels runs/sys1.run
      exampp eval -q -m map -m ndcg_cut.10 qrels/exam.qrels runs/
      exampp eval -mall_trec -c -M1000 qrels/official.qrels runs/sys1.run
      exampp eval -m nDCG@20 -m 'P(rel=2)@10' --format tsv qrels/official.qrels runs/
    """
    one_stdin(qrels, *runs)
    try:
        select(measures)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'-m'") from None
    judgments = read_qrels(qrels)
    problem = unreachable_level(judgments, rel_level)
    if problem:
        click.echo(problem, err=True)
    results = evaluate_runs(
        judgments,
        (RunFile(path) for path in run_paths(runs)),
        measures,
        jobs=jobs,
        per_query=per_query,
        complete=complete,
        max_retrieved=max_retrieved,
        rel_level=rel_level,
        judged_only=judged_only,
        num_docs_in_coll=num_docs_in_coll,
    )
    if fmt == "trec":
        write_output("".join(format_trec(_labelled(name, scores, len(results) > 1))
                             for name, scores in results.items()), output)
    else:
        write_output((format_json if fmt == "json" else format_tsv)(results), output)


def _labelled(name: str, scores: list[Score], several: bool) -> list[Score]:
    """With several runs, each block starts with trec_eval's own ``runid  all  NAME`` line
    (unless runid was asked for), so that the blocks can be told apart."""
    if not several or any(s.measure == "runid" for s in scores):
        return scores
    return [Score("runid", "all", name, "%s"), *scores]

