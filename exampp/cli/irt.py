"""`exampp irt`: item response theory analysis of an exam (systems are students, questions items)."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from exampp.analysis.irt.tables import THETA_GRID, finite, information_table, item_table, system_table, usable
from exampp.cli.output import emit, json_value, one_stdin, render

FILE = click.Path(dir_okay=False, exists=True, allow_dash=True)
# Below this many respondents plain 2PL/3PL ML is degenerate (on DL19's 36 systems 191 of 315
# slopes hit their bound); a weak lognormal prior on a keeps the fit sensible.
SMALL_SAMPLE = 100
DEFAULT_PRIOR_A = (0.0, 0.5)


@click.command()
@click.argument("runs", nargs=-1, type=click.Path(exists=True, allow_dash=True))
@click.option("--workspace", "-w", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Workspace folder (grades.sqlite, question_banks/, runs/).")
@click.option("--method", help="Grading method id in the store (default: the only one there).")
@click.option("--tau", type=float, default=4, show_default=True, help="Correct when covered at grade >= tau.")
@click.option("--depth", "-k", type=click.IntRange(min=1), default=20, show_default=True, help="Top-k passages of each run.")
@click.option("--exclude", multiple=True, metavar="SYSTEM", help="Leave this system (run) out, repeatable.")
@click.option("--responses", "responses_file", type=FILE,
              help="Fit this 0/1 matrix file (CSV/TSV: a row per respondent, a column per item) instead of grades.")
@click.option("--id-column", metavar="NAME", help="Respondent id column of --responses.")
@click.option("--weight-column", metavar="NAME", help="Frequency/weight column of --responses.")
@click.option("--model", "model_name", type=click.Choice(["1pl", "2pl", "3pl", "rasch"]), default="2pl", show_default=True,
              help="1pl: common discrimination; rasch: a = 1; 3pl: with guessing.")
@click.option("--estimator", type=click.Choice(["mml", "jml"]), default="mml", show_default=True,
              help="mml: marginal ML by EM (Bock-Aitkin); jml: the paper's joint ML (L-BFGS-B, bounded).")
@click.option("--guessing", type=click.FloatRange(0, 1, max_open=True), help="3PL: fix the guessing parameter g.")
@click.option("--prior-a", type=(float, float), metavar="MEANLOG SDLOG",
              help="Lognormal prior on a (MAP) for 2PL/3PL by MML [default: 0 0.5 with fewer than "
                   "100 respondents, where plain ML drives discriminations to their bounds; else none].")
@click.option("--no-prior", is_flag=True, help="Plain maximum likelihood: no prior on a, whatever the size.")
@click.option("--systems-meta", type=FILE, help="Systems' components table: abilities as sums of component effects.")
@click.option("--official", type=FILE, help="Official leaderboard file to correlate IRT system scores with.")
@click.option("--official-column", metavar="NAME", help="Measure column of --official (several columns).")
@click.option("--prune-fraction", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Pruning: drop this fraction of the remaining items per step (lowest discrimination).")
@click.option("--prune-steps", type=click.IntRange(min=1), help="Pruning: number of drop-and-refit steps.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="Least informative questions to list.")
@click.option("--out", type=click.Path(file_okay=False), help="Write tables, plots and the pruned bank to this folder.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def irt(runs, workspace, method, tau, depth, exclude, responses_file, id_column, weight_column, model_name, estimator,
        guessing, prior_a, no_prior, systems_meta, official, official_column, prune_fraction, prune_steps, top, out, fmt) -> None:
    """Fit an item response theory model to an exam: each question's difficulty b and
    discrimination a (and guessing g), each system's ability theta, item information,
    and optionally iterative pruning of the least discriminating questions.

    A system answers a question correctly when one of its top-k passages for the query
    answers it at grade >= tau (RUNS: run files or folders, default the workspace's runs/),
    or give any 0/1 matrix with --responses.

    \b
    Example:
      exampp irt -w out/dl19 --tau 4 --depth 20 --exclude UNH_exDL_bm25 \\
                 --official out/dl19/official.tsv --official-column nDCG@10 \\
                 --out out/dl19/irt --prune-fraction 0.1 --prune-steps 5
      exampp irt --responses ../shared/data/irt/lsat7.tsv --weight-column frequency --model rasch --format json
    """
    from exampp.analysis.irt.models import IRTModel

    if (prune_fraction is None) != (prune_steps is None):
        raise click.UsageError("--prune-fraction and --prune-steps go together")
    if guessing is not None and model_name != "3pl":
        raise click.UsageError("--guessing needs --model 3pl")
    one_stdin(responses_file, systems_meta, official, *runs)
    if responses_file and (runs or method):
        raise click.UsageError("--responses replaces the grades: leave out RUNS and --method")
    started = time.perf_counter()
    data = _FromFile(responses_file, id_column, weight_column) if responses_file \
        else _FromGrades(workspace, method, runs, tau, depth)
    responses = data.responses
    unknown = sorted(set(exclude) - set(responses.respondents))
    if unknown:
        raise click.UsageError(f"--exclude: no such system(s): {', '.join(unknown)}")
    responses = responses.without(exclude)

    if no_prior and prior_a:
        raise click.UsageError("--no-prior and --prior-a exclude each other")
    n = float(responses.weights.sum()) if responses.weights is not None else len(responses.respondents)
    if prior_a is None and not no_prior and model_name in ("2pl", "3pl") and estimator == "mml" and n < SMALL_SAMPLE:
        prior_a = DEFAULT_PRIOR_A
        click.echo(f"{n:g} respondents: lognormal{DEFAULT_PRIOR_A} prior on a (--no-prior for plain ML)", err=True)

    model = IRTModel(model=model_name, method=estimator, guessing=guessing, prior_a=prior_a)
    model.fit(responses.values, sample_weight=responses.weights)
    items = item_table(model, responses, data.texts())
    systems = system_table(model, responses, data.cover(exclude))
    correlations = _correlations(official, official_column, systems, "cover" in systems)
    pruning = None
    if prune_steps:
        from exampp.analysis.irt.pruning import prune

        pruning = prune(responses, fraction=prune_fraction, steps=prune_steps, fitted=model)
    components = _components(systems_meta, responses, model) if systems_meta else None
    elapsed = time.perf_counter() - started
    if out:
        _write_outputs(Path(out), items, systems, data, pruning, components)

    summary = {
        "model": model_name, "estimator": estimator, "prior_a": list(prior_a) if prior_a else None, "n_systems": len(responses.respondents),
        "n_items": len(responses.items), "loglik": float(model.loglik_), "aic": float(model.aic_),
        "bic": float(model.bic_), "converged": bool(model.converged_), "n_iter": int(model.n_iter_),
        "seconds": round(elapsed, 3),
    }
    if fmt == "json":
        report: dict[str, Any] = {
            **summary,
            "items": _records(items.drop(columns=["text"], errors="ignore")),
            "systems": _records(systems),
            "correlation": {name: {k: json_value(v) for k, v in result.as_dict().items()}
                            for name, result in correlations.items()},
        }
        if pruning is not None:
            report["pruning"] = [{**row, "dropped_items": row["dropped_items"].split()}
                                 for row in _records(pruning.table())]
        if components is not None:
            report["components"] = _records(components)
        click.echo(json.dumps(report, indent=2))
        return
    rows = "systems" if responses.question_query else "respondents"
    click.echo(f"{model_name.upper()} by {estimator.upper()}: {summary['n_systems']} {rows} x {summary['n_items']} "
               f"items; log-likelihood {model.loglik_:.4f}, AIC {model.aic_:.2f}, BIC {model.bic_:.2f}; "
               f"{'converged' if model.converged_ else 'NOT converged'} after {model.n_iter_} iterations "
               f"({elapsed:.2f} s)")
    flat = items["status"].value_counts().drop("ok", errors="ignore")
    if len(flat):
        click.echo("items without an estimate (tell no systems apart): "
                   + ", ".join(f"{n} {status}" for status, n in flat.items()))
    if top:
        click.echo("\nLeast informative estimated questions (lowest maximum information):")
        shown = ["item", "query_id", "a", "b", "max_information", "p_correct", "text"]
        least = items[usable(items)].sort_values(["max_information", "a"], kind="stable").head(top)
        emit(least[[c for c in shown if c in items]], "text")
    click.echo("\nSystems by ability (EAP with 95% interval; MLE with SE):")
    emit(systems, "text")
    for name, result in correlations.items():
        click.echo(f"{name} vs official: {result.n_systems} systems, Spearman {result.spearman:.4f}, "
                   f"Kendall {result.kendall:.4f}, tau_ap {result.tau_ap:.4f}, Pearson {result.pearson:.4f}")
    if pruning is not None:
        click.echo("\nPruning (test information over the systems' ability range):")
        emit(pruning.table().drop(columns="dropped_items"), "text")
    if components is not None:
        click.echo("\nComponent effects:")
        emit(components, "text")


class _FromGrades:
    """Responses from a workspace's grades and runs; question texts from its bank."""

    def __init__(self, workspace: str, method: str | None, runs: tuple[str, ...], tau: float, depth: int):
        from exampp.analysis.irt.responses import responses_from_grades
        from exampp.api.workspace import stored_grades, workspace_exam
        from exampp.collection.runs import read_runs
        from exampp.scoring import questions_by_query
        from exampp.workspace import Workspace

        self.ws = Workspace.at(workspace)
        self.grades = stored_grades(self.ws, method).grades
        self.exam = workspace_exam(self.ws, None) or questions_by_query(self.grades)
        self.runs = read_runs(runs or [self.ws.runs])
        self.tau, self.depth = tau, depth
        self.responses = responses_from_grades(self.grades, self.runs, self.exam, tau=tau, depth=depth)

    def bank(self):
        from exampp.collection.question_bank import read_question_bank

        return read_question_bank(self.ws.question_bank) if self.ws.question_bank.exists() else None

    def texts(self) -> dict[str, str]:
        bank = self.bank()
        return {q.question_id: q.text for q in bank} if bank is not None else {}

    def cover(self, exclude) -> dict[str, float]:
        from exampp.scoring import exam_cover, summarize

        kept = {name: run for name, run in self.runs.items() if name not in set(exclude)}
        table = summarize(exam_cover(kept, self.grades, self.exam, tau=self.tau, depth=self.depth))
        return dict(zip(table["run"], table["mean"]))


class _FromFile:
    def __init__(self, path: str, id_column: str | None, weight_column: str | None):
        from exampp.collection.response_matrix import read_response_matrix

        self.responses = read_response_matrix(path, id_column=id_column, weight_column=weight_column)

    def bank(self):
        return None

    def texts(self) -> dict[str, str]:
        return {}

    def cover(self, exclude) -> dict[str, float]:
        return {}


def _correlations(official: str | None, column: str | None, systems: pd.DataFrame, with_cover: bool) -> dict:
    if official is None:
        return {}
    from exampp.analysis.correlation import correlate
    from exampp.collection.leaderboard import read_leaderboard

    board = read_leaderboard(official, column=column)
    results = {"IRT theta": correlate(board, dict(zip(systems["system"], systems["theta"])))}
    if with_cover:
        results["EXAM-Cover"] = correlate(board, dict(zip(systems["system"], systems["cover"])))
    return results


def _components(path: str, responses, model) -> pd.DataFrame:
    from exampp.analysis.irt.hierarchical import HierarchicalAbility
    from exampp.collection.systems import read_systems

    return HierarchicalAbility().fit(responses.matrix, read_systems(path), items=model).effects_


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON records; infinite values (the MLE of a perfect score) become null, as NaN does."""
    return json.loads(render(table.replace([np.inf, -np.inf], np.nan), "json"))


def _write_outputs(out: Path, items, systems, data, pruning, components) -> None:
    from exampp.collection.io import atomic_write

    out.mkdir(parents=True, exist_ok=True)
    emit(items, "tsv", str(out / "items.tsv"))
    emit(items, "json", str(out / "items.json"))
    emit(systems, "tsv", str(out / "systems.tsv"))
    information = information_table(items)
    emit(information, "tsv", str(out / "information.tsv"))
    written = ["items.tsv", "items.json", "systems.tsv", "information.tsv"]
    if components is not None:
        emit(components, "tsv", str(out / "components.tsv"))
        written.append("components.tsv")
    if pruning is not None:
        emit(pruning.table(), "tsv", str(out / "pruning.tsv"))
        written.append("pruning.tsv")
        bank = data.bank()
        if bank is not None:
            from exampp.analysis.irt.pruning import prune_bank
            from exampp.collection.question_bank import write_question_bank

            write_question_bank(prune_bank(bank, pruning.kept), out / "questions.pruned.jsonl")
            written.append("questions.pruned.jsonl")
        else:
            with atomic_write(out / "kept_items.txt") as fh:
                fh.write("".join(f"{item}\n" for item in pruning.kept))
            written.append("kept_items.txt")
    written += _plots(out, items, information, pruning)
    click.echo(f"wrote {', '.join(written)} to {out}", err=True)


def _plots(out: Path, items, information, pruning) -> list[str]:
    from exampp.analysis.irt.information import test_information
    from exampp.report import irt_plots

    kept = items[usable(items)]
    irt_plots.plot_item_characteristic_curves(out / "item_curves.png", kept["a"], kept["b"], kept["g"],
                                              labels=list(kept["item"]))
    written = ["item_curves.png"]
    curves = {"all items": test_information(THETA_GRID, kept["a"], kept["b"], kept["g"])}
    if pruning is not None:
        final = pruning.model
        ok = finite(final.a_) & finite(final.b_) & finite(final.g_)
        g = np.broadcast_to(np.asarray(final.g_, dtype=float), ok.shape)
        curves[f"after pruning ({len(pruning.kept)} items)"] = test_information(
            THETA_GRID, np.asarray(final.a_)[ok], np.asarray(final.b_)[ok], g[ok])
        irt_plots.plot_pruning_steps(out / "pruning.png",
                                     pruning.table().rename(columns={"information_mean": "information"}))
        written.append("pruning.png")
    irt_plots.plot_test_information(out / "test_information.png", THETA_GRID, curves)
    written.append("test_information.png")
    for grouping in ("bloom", "question_word"):
        rows = information[information["grouping"] == grouping]
        if len(rows):
            irt_plots.plot_information_curves(out / f"information_{grouping}.png", rows.drop(columns="grouping"),
                                              title=f"Information by {grouping.replace('_', ' ')}")
            written.append(f"information_{grouping}.png")
    return written
