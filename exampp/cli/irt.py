"""`exampp irt`: item response theory analysis of an exam (systems are students, questions items).

Flags in, :mod:`exampp.api.irt` does the work, the result printed."""
from __future__ import annotations

import click

from exampp.cli.output import (
    FILE,
    InputPath,
    depth_option,
    emit,
    format_option_of,
    method_option,
    one_stdin,
    workspace_option,
)
from exampp.cli.settings import FiniteRange, Setting
from exampp.errors import InputError
from exampp.report.records import dumps


@click.command()
@click.argument("runs", nargs=-1, type=InputPath(allow_dash=True))
@workspace_option
@method_option
@click.option("--tau", type=Setting("tau"),
              help="Correct when covered at grade >= tau [default: the stored method's: 4 for "
                   "0-5 self-ratings, 1 for 0/1 grades].")
@depth_option
@click.option("--exclude", multiple=True, metavar="SYSTEM", help="Leave this system (run) out, repeatable.")
@click.option("--responses", "responses_file", type=FILE,
              help="Fit this 0/1 matrix file (CSV/TSV: a row per respondent, a column per item) instead of grades.")
@click.option("--id-column", metavar="NAME", help="Respondent id column of --responses.")
@click.option("--weight-column", metavar="NAME", help="Frequency/weight column of --responses.")
@click.option("--irt-model", type=click.Choice(["1pl", "2pl", "3pl", "rasch"]), default="2pl", show_default=True,
              help="IRT model family. 1pl: common discrimination; rasch: a = 1; 3pl: with guessing.")
@click.option("--estimator", type=click.Choice(["mml", "jml"]), default="mml", show_default=True,
              help="mml: marginal ML by EM (Bock-Aitkin); jml: the paper's joint ML (L-BFGS-B, bounded).")
@click.option("--guessing", type=FiniteRange(0, 1, max_open=True), help="3PL: fix the guessing parameter g.")
@click.option("--prior-a", type=(FiniteRange(), FiniteRange(min=0, min_open=True)), metavar="MEANLOG SDLOG",
              help="Lognormal prior on a (MAP) for 1PL/2PL/3PL by MML [default: 0 0.5 for 2PL/3PL with fewer than "
                   "100 respondents, where plain ML drives discriminations to their bounds; else none].")
@click.option("--no-prior", is_flag=True, help="Plain maximum likelihood: no prior on a, whatever the size.")
@click.option("--systems-meta", type=FILE, help="Systems' components table: abilities as sums of component effects.")
@click.option("--official", type=FILE, help="Official leaderboard file to correlate IRT system scores with.")
@click.option("--official-column", metavar="NAME", help="Measure column of --official (several columns).")
@click.option("--prune-fraction", type=FiniteRange(0, 1, min_open=True, max_open=True),
              help="Pruning: drop this fraction of the remaining items per step (lowest discrimination).")
@click.option("--prune-steps", type=click.IntRange(min=1), help="Pruning: number of drop-and-refit steps.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="Least informative questions to list.")
@click.option("--out", type=click.Path(file_okay=False), help="Write tables, plots and the pruned bank to this folder.")
@format_option_of("text", "json", help="Output format (no tsv: the report is several tables; --out writes each "
                                      "as TSV).")
def irt(runs, workspace, method, tau, depth, exclude, responses_file, id_column, weight_column, irt_model, estimator,
        guessing, prior_a, no_prior, systems_meta, official, official_column, prune_fraction, prune_steps, top, out,
        fmt) -> None:
    """Fit an item response theory model to an exam: each question's difficulty b and
    discrimination a (and guessing g), each system's ability theta, item information,
    and optionally iterative pruning of the least discriminating questions.

    A system answers a question correctly when one of its top-k passages for the query
    answers it at grade >= tau (RUNS: run files or folders, default the workspace's runs/),
    or give any 0/1 matrix with --responses.

    \b
    Example:
      exampp irt -w out/dl19 --depth 20 --exclude UNH_exDL_bm25 \\
                 --official out/dl19/official.tsv --official-column nDCG@10 \\
                 --out out/dl19/irt --prune-fraction 0.1 --prune-steps 5
      exampp irt --responses ../shared/data/irt/lsat7.tsv --weight-column frequency --irt-model rasch --format json
    """
    from exampp.analysis.irt.hierarchical import ComponentsError
    from exampp.api.irt import IRTJob, write_irt_outputs
    from exampp.formats.leaderboard import read_leaderboard
    from exampp.formats.systems import read_systems

    if (prune_fraction is None) != (prune_steps is None):
        raise click.UsageError("--prune-fraction and --prune-steps go together")
    if guessing is not None and irt_model != "3pl":
        raise click.UsageError("--guessing needs --irt-model 3pl")
    if no_prior and prior_a:
        raise click.UsageError("--no-prior and --prior-a exclude each other")
    if responses_file and (runs or method or tau is not None):
        raise click.UsageError("--responses replaces the grades: leave out RUNS, --method and --tau")
    one_stdin(responses_file, systems_meta, official, *runs)
    responses, texts, cover, bank = _responses(responses_file, id_column, weight_column, workspace, method, runs, tau,
                                               depth)
    try:
        result = IRTJob(
            responses, irt_model=irt_model, estimator=estimator, guessing=guessing,
            prior_a=None if no_prior else prior_a or "auto", exclude=exclude, texts=texts, cover=cover,
            official=read_leaderboard(official, column=official_column) if official else None,
            prune_fraction=prune_fraction, prune_steps=prune_steps,
            components=read_systems(systems_meta) if systems_meta else None).run()
    except ComponentsError as error:  # the table came from this file: say so
        raise InputError(systems_meta, None, str(error)) from None
    if result.auto_prior_a:
        click.echo(f"{result.responses.total_weight:g} respondents: lognormal{result.auto_prior_a} prior on a "
                   "(--no-prior for plain ML)", err=True)
    if out:
        written = write_irt_outputs(result, out, bank)
        click.echo(f"wrote {', '.join(written)} to {out}", err=True)
    if fmt == "json":
        click.echo(dumps(result.as_dict(), indent=2))
    else:
        _print_text(result, top)


def _responses(responses_file, id_column, weight_column, workspace, method, runs, tau, depth):
    """The responses to fit, with the question texts, EXAM-Cover and bank where they come from grades."""
    if responses_file:
        from exampp.formats.response_matrix import read_response_matrix

        return read_response_matrix(responses_file, id_column=id_column, weight_column=weight_column), None, None, None
    from exampp.api.irt import responses_from_workspace
    from exampp.formats.trec_run import read_runs

    graded = responses_from_workspace(workspace, method, read_runs(runs) if runs else None, tau, depth)
    click.echo(f"{graded.method_id}: correct at grade >= {graded.tau:g} in the top {graded.depth}", err=True)
    return graded.responses, graded.texts, graded.cover, graded.bank


def _print_text(result, top: int) -> None:
    summary, model = result.summary, result.model
    rows = "systems" if result.responses.question_query else "respondents"
    click.echo(f"{summary['irt_model'].upper()} by {summary['estimator'].upper()}: {summary['n_systems']} {rows} x "
               f"{summary['n_items']} items; log-likelihood {model.loglik_:.4f}, AIC {model.aic_:.2f}, "
               f"BIC {model.bic_:.2f}; {'converged' if model.converged_ else 'NOT converged'} after "
               f"{model.n_iter_} iterations ({result.seconds:.2f} s)")
    unestimated = result.unestimated()
    if unestimated:
        click.echo("items without an estimate (tell no systems apart): "
                   + ", ".join(f"{n} {status}" for status, n in unestimated.items()))
    if top:
        click.echo("\nLeast informative estimated questions (lowest maximum information):")
        shown = ["item", "query_id", "a", "b", "max_information", "p_correct", "text"]
        least = result.least_informative(top)
        emit(least[[c for c in shown if c in least]], "text")
    click.echo("\nSystems by ability (EAP with 95% interval; MLE with SE):")
    emit(result.systems, "text")
    for name, c in result.correlations.items():
        click.echo(f"{name} vs official: {c.n_systems} systems, Spearman {c.spearman:.4f}, "
                   f"Kendall {c.kendall:.4f}, tau_ap {c.tau_ap:.4f}, Pearson {c.pearson:.4f}")
    if result.pruning is not None:
        click.echo("\nPruning (test information over the systems' ability range):")
        emit(result.pruning.table().drop(columns="dropped_items"), "text")
    if result.component_effects is not None:
        click.echo("\nComponent effects:")
        emit(result.component_effects, "text")
