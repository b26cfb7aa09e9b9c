"""The `exampp irt` job as Python calls: an item response theory analysis of an exam, systems
as respondents and questions as items.

    graded = responses_from_workspace("out/dl19")      # who answers what, at the method's τ
    result = IRTJob(graded.responses, texts=graded.texts, cover=graded.cover).run()
    result.items, result.systems                        # DataFrames
    write_irt_outputs(result, "out/dl19/irt", bank=graded.bank)

:class:`IRTJob` takes any :class:`~exampp.formats.response_matrix.Responses` (from grades,
or read from a 0/1 matrix file with :func:`~exampp.formats.response_matrix.read_response_matrix`)
and its :meth:`~IRTJob.run` returns an :class:`IRTResult`, reading and writing nothing. Errors users can act on are
:class:`~exampp.errors.ExamppError`.
"""
from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from exampp.analysis.correlation import Correlation
from exampp.analysis.irt.models import IRTModel, Prior, PriorSetting
from exampp.analysis.irt.pruning import Pruning
from exampp.api.workspace import RunsSource
from exampp.collection.questions import QuestionBank
from exampp.defaults import DEPTH as DEFAULT_DEPTH
from exampp.errors import ExamppError
from exampp.files.io import PathLike
from exampp.formats.response_matrix import Responses
from exampp.report.records import json_value, records as table_records, write_tsv
from exampp.stores.layout import Workspace


class IRTOptionsError(ExamppError, ValueError):
    """Settings of the analysis that do not go together, or name systems the responses lack."""


# --- responses from a workspace's grades ---------------------------------------------------------

@dataclass(frozen=True)
class GradedResponses:
    """A workspace's exam as a response matrix, with what the analysis can show beside it.

    :param responses: Runs × questions: 1 where one of the run's top-``depth`` passages answers at
        grade >= ``tau``.
    :param method_id: The grading method's id in the store.
    :param tau: The grade at which a question counts as answered.
    :param depth: How many of each run's top passages count.
    :param cover: EXAM-Cover@depth of each run at ``tau`` (as ``exampp cover`` gives it).
    :param bank: The workspace's question bank (None where it has none; the exam is then the
        graded questions).
    """

    responses: Responses
    method_id: str
    tau: float
    depth: int
    cover: dict[str, float]
    bank: QuestionBank | None

    @property
    def texts(self) -> dict[str, str]:
        """Question id → question text, from the bank."""
        return {q.question_id: q.text for q in self.bank} if self.bank is not None else {}


def responses_from_workspace(workspace: Workspace | PathLike, method: str | None = None,
                             runs: RunsSource | None = None, tau: float | None = None,
                             depth: int = DEFAULT_DEPTH) -> GradedResponses:
    """Who answers which question, from a workspace's grades. The exam is the workspace's question
    bank, else the graded questions.

    :param workspace: The workspace.
    :param method: A store method id; None: the only one in the store.
    :param runs: Runs already read, or paths to read (default: the workspace's ``runs/``).
    :param tau: The grade at which a question counts as answered; by default the stored method's:
        4 for 0–5 ratings (self-rating, embedding), 1 for 0/1 grades (qa, multiple-choice).
    :param depth: How many of each run's top passages count.
    """
    from exampp.analysis.irt.responses import responses_from_grades
    from exampp.api.workspace import as_workspace, stored_grades, workspace_bank, workspace_runs
    from exampp.scoring import exam_cover, questions_by_query, summarize

    ws = as_workspace(workspace)
    stored = stored_grades(ws, method)
    tau = stored.default_tau if tau is None else tau
    bank = workspace_bank(ws)
    exam = (bank.question_ids() if bank else {}) or questions_by_query(stored.grades)  # the bank read once
    runs = workspace_runs(ws, runs)
    responses = responses_from_grades(stored.grades, runs, exam, tau=tau, depth=depth)
    board = summarize(exam_cover(runs, stored.grades, exam, tau=tau, depth=depth))
    return GradedResponses(responses, stored.method_id, tau, depth, dict(zip(board["run"], board["mean"])), bank)


# --- the analysis --------------------------------------------------------------------------------

@dataclass(frozen=True)
class IRTResult:
    """What :class:`IRTJob` found.

    :param responses: The responses fitted (the excluded systems left out).
    :param model: The fitted estimator.
    :param items: One row per item: a, b, g with SEs, status, where and how much it informs,
        p_correct (and query_id; question_word, bloom and text where texts were given).
    :param systems: One row per system, best first: EAP θ with SD and 95% interval, MLE with SE,
        rank (and cover).
    :param correlations: With the official leaderboard: "IRT theta" (and "EXAM-Cover" where cover
        was given); empty without one.
    :param pruning: The steps of the iterative pruning, when asked for.
    :param component_effects: Per component level: effect on θ with SE (and the intercept μ); None
        without a components table.
    :param seconds: How long the analysis took.
    """

    responses: Responses
    model: IRTModel
    items: pd.DataFrame
    systems: pd.DataFrame
    correlations: dict[str, Correlation]
    pruning: Pruning | None
    component_effects: pd.DataFrame | None
    seconds: float

    @property
    def summary(self) -> dict[str, Any]:
        """The fit in one flat record (JSON-ready)."""
        m = self.model
        return {
            "irt_model": m.model, "estimator": m.method, "prior_a": list(m.prior_a_) if m.prior_a_ else None,
            "n_systems": len(self.responses.respondents), "n_items": len(self.responses.items),
            "loglik": float(m.loglik_), "aic": float(m.aic_), "bic": float(m.bic_), "converged": bool(m.converged_),
            "n_iter": int(m.n_iter_), "seconds": round(self.seconds, 3),
        }

    @property
    def auto_prior_a(self) -> Prior | None:
        """The prior on a that ``prior_a="auto"`` chose for this small sample (None: none, or not auto)."""
        return self.model.prior_a_ if self.model.prior_a == "auto" else None

    def unestimated(self) -> dict[str, int]:
        """How many items have no estimate (they tell no systems apart), by status."""
        counts = self.items["status"].value_counts()
        return {cast(str, status): int(n) for status, n in counts.items() if status != "ok"}

    def least_informative(self, n: int) -> pd.DataFrame:
        """The ``n`` estimated items of lowest maximum information (then lowest a)."""
        from exampp.analysis.irt.tables import usable

        return self.items[usable(self.items)].sort_values(["max_information", "a"], kind="stable").head(n)

    def as_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready values (what ``exampp irt --format json`` prints); NaN and the
        infinite MLE of a perfect score become None."""
        report: dict[str, Any] = {
            **self.summary,
            "items": records(self.items.drop(columns=["text"], errors="ignore")),
            "systems": records(self.systems),
            "correlation": {name: {k: json_value(v, infinite_as_null=True) for k, v in c.as_dict().items()}
                            for name, c in self.correlations.items()},
        }
        if self.pruning is not None:
            report["pruning"] = [{**row, "dropped_items": row["dropped_items"].split()}
                                 for row in records(self.pruning.table())]
        if self.component_effects is not None:
            report["components"] = records(self.component_effects)
        return report


@dataclass(frozen=True)
class IRTJob:
    """Fit an IRT model to ``responses`` and tabulate items and systems (``exampp irt``). :meth:`run` does the job.

    :param responses: The response matrix.
    :param irt_model: ``rasch`` (a = 1), ``1pl`` (one common a), ``2pl`` or ``3pl`` (with guessing).
    :param estimator: ``mml`` or the paper's ``jml``.
    :param guessing: A fixed guessing parameter of ``3pl``; None estimates it.
    :param prior_a: The prior on a: see :class:`~exampp.analysis.irt.models.IRTModel`.
    :param exclude: Systems to leave out.
    :param texts: Question id → text: adds question words and Bloom levels to the items.
    :param cover: System → EXAM-Cover: adds a column to the systems.
    :param official: System → official score: correlate the abilities (and cover) with it.
    :param prune_fraction: With ``prune_steps``, iterative pruning of the least discriminating
        items: the share of the remaining items each step drops, in (0, 1).
    :param prune_steps: The number of pruning steps (each refits the model).
    :param components: The systems' components table (:func:`~exampp.formats.systems.read_systems`):
        abilities as sums of component effects.
    :raises IRTOptionsError: Settings that do not go together, or systems to exclude the responses lack.
    """

    responses: Responses
    _: KW_ONLY
    irt_model: str = "2pl"
    estimator: str = "mml"
    guessing: float | None = None
    prior_a: PriorSetting = "auto"
    exclude: Collection[str] = ()
    texts: Mapping[str, str] | None = None
    cover: Mapping[str, float] | None = None
    official: Mapping[str, float] | None = None
    prune_fraction: float | None = None
    prune_steps: int | None = None
    components: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        _check_options(self.responses, self.irt_model, self.guessing, self.exclude, self.prune_fraction,
                       self.prune_steps)

    def run(self) -> IRTResult:
        """Do the job: fit the model and tabulate; reads and writes nothing."""
        from exampp.analysis.irt.tables import item_table, system_table

        started = time.perf_counter()
        responses = self.responses.without(self.exclude)
        model = IRTModel(model=self.irt_model, method=self.estimator, guessing=self.guessing, prior_a=self.prior_a)
        model.fit(responses.values, sample_weight=responses.weights)
        items = item_table(model, responses, dict(self.texts or {}))
        systems = system_table(model, responses, dict(self.cover or {}))
        correlations = _correlations(self.official, systems) if self.official is not None else {}
        pruning = None
        if self.prune_fraction is not None and self.prune_steps is not None:
            from exampp.analysis.irt.pruning import prune

            pruning = prune(responses, fraction=self.prune_fraction, steps=self.prune_steps, fitted=model)
        effects = _component_effects(responses, model, self.components) if self.components is not None else None
        return IRTResult(responses, model, items, systems, correlations, pruning, effects,
                         time.perf_counter() - started)


def _check_options(responses: Responses, irt_model: str, guessing: float | None, exclude: Collection[str],
                   prune_fraction: float | None, prune_steps: int | None) -> None:
    if (prune_fraction is None) != (prune_steps is None):
        raise IRTOptionsError("prune_fraction and prune_steps go together")
    if guessing is not None and irt_model != "3pl":
        raise IRTOptionsError(f"a fixed guessing parameter needs the 3pl model, not {irt_model}")
    unknown = sorted(set(exclude) - set(responses.respondents))
    if unknown:
        raise IRTOptionsError(f"exclude: no such system(s): {', '.join(unknown)}")


def _correlations(official: Mapping[str, float], systems: pd.DataFrame) -> dict[str, Correlation]:
    from exampp.analysis.correlation import correlate

    results = {"IRT theta": correlate(official, dict(zip(systems["system"], systems["theta"])))}
    if "cover" in systems:
        results["EXAM-Cover"] = correlate(official, dict(zip(systems["system"], systems["cover"])))
    return results


def _component_effects(responses: Responses, model: IRTModel, components: pd.DataFrame) -> pd.DataFrame:
    from exampp.analysis.irt.hierarchical import HierarchicalAbility

    return HierarchicalAbility().fit(responses.matrix, components, items=model).effects_


# --- JSON-ready values ---------------------------------------------------------------------------

def records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows as JSON-ready records, ±inf (the MLE of a perfect score) as null like NaN.

    :param table: The table.
    """

    return table_records(table, infinite_as_null=True)


# --- files ---------------------------------------------------------------------------------------

def write_irt_outputs(result: IRTResult, folder: PathLike, bank: QuestionBank | None = None) -> list[str]:
    """Write the tables (TSV; items also as JSON), the information curves and the plots. Each file
    is replaced atomically.

    :param result: The analysis.
    :param folder: The folder to write to (made if missing).
    :param bank: With pruning, the bank whose pruned version is written (without a bank, the ids of
        the items kept are).
    :returns: The names written, in order.
    """

    from exampp.analysis.irt.tables import information_table

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    information = information_table(result.items)
    write_tsv(result.items, out / "items.tsv")
    _write_json(records(result.items), out / "items.json")
    write_tsv(result.systems, out / "systems.tsv")
    write_tsv(information, out / "information.tsv")
    written = ["items.tsv", "items.json", "systems.tsv", "information.tsv"]
    if result.component_effects is not None:
        write_tsv(result.component_effects, out / "components.tsv")
        written.append("components.tsv")
    if result.pruning is not None:
        write_tsv(result.pruning.table(), out / "pruning.tsv")
        written += ["pruning.tsv", _write_kept(result.pruning.kept, bank, out)]
    return written + _plots(out, result, information)


def _write_json(value: Any, path: Path) -> None:
    import json

    from exampp.files.io import atomic_write

    with atomic_write(path) as fh:
        fh.write(json.dumps(value, indent=2) + "\n")


def _write_kept(kept: list[str], bank: QuestionBank | None, out: Path) -> str:
    """The pruned bank, or the kept item ids (one a line) where there is no bank."""
    from exampp.files.io import atomic_write

    if bank is not None:
        from exampp.analysis.irt.pruning import prune_bank
        from exampp.formats.question_bank import write_question_bank

        write_question_bank(prune_bank(bank, kept), out / "questions.pruned.jsonl")
        return "questions.pruned.jsonl"
    with atomic_write(out / "kept_items.txt") as fh:
        fh.write("".join(f"{item}\n" for item in kept))
    return "kept_items.txt"


def _plots(out: Path, result: IRTResult, information: pd.DataFrame) -> list[str]:
    from exampp.analysis.irt.information import test_information
    from exampp.analysis.irt.tables import THETA_GRID, finite, usable
    from exampp.report import irt_plots

    kept = result.items[usable(result.items)]
    irt_plots.plot_item_characteristic_curves(out / "item_curves.png", kept["a"], kept["b"], kept["g"],
                                              labels=list(kept["item"]))
    written = ["item_curves.png"]
    curves = {"all items": test_information(THETA_GRID, kept["a"], kept["b"], kept["g"])}
    pruning = result.pruning
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
