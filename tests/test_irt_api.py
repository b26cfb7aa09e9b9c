"""exampp.api.irt: the `exampp irt` job from Python gives what the command prints and writes;
τ from the stored method's scale; settings that do not go together."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import shared_path
from exampp.api.irt import IRTJob, IRTOptionsError, responses_from_workspace, write_irt_outputs
from exampp.cli import main
from exampp.formats.leaderboard import read_leaderboard
from exampp.formats.response_matrix import read_response_matrix
from exampp.formats.systems import read_systems
from exampp.report.records import dumps
from irt_workspace import COVER, graded_workspace

QA = "qa|m|qa@v1+string@v1"  # 0/1 grades
RATED = "self-rating|tiny|v1"  # 0-5 grades
# run -> number of the 6 questions its passages answer (p<k> answers question k)
ANSWERED = {"r0": 0, "r1": 1, "r2": 2, "r3": 3, "r4": 4, "r5": 6}


def cli(*args) -> tuple[dict, str]:
    """`exampp irt ARGS --format json`: the printed report and standard error."""
    result = CliRunner().invoke(main, ["irt", *map(str, args), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def without_seconds(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "seconds"}


def printed_as(report: dict) -> dict:
    """A result's report as the command prints it: JSON, floats to 12 significant digits."""
    return json.loads(dumps(without_seconds(report)))


# --- the same as the command -------------------------------------------------------------------------

@pytest.mark.parametrize(("flags", "options"), [
    ([], {}),
    (["--irt-model", "rasch", "--prune-fraction", "0.4", "--prune-steps", "2"],
     dict(irt_model="rasch", prune_fraction=0.4, prune_steps=2)),
    (["--irt-model", "1pl", "--estimator", "jml"], dict(irt_model="1pl", estimator="jml")),
    (["--irt-model", "3pl", "--guessing", "0.1", "--exclude", "1", "--exclude", "32"],
     dict(irt_model="3pl", guessing=0.1, exclude=["1", "32"])),
    (["--no-prior"], dict(prior_a=None)),
    (["--prior-a", "0", "1"], dict(prior_a=(0.0, 1.0))),
])
def test_lsat7_from_the_api_is_what_the_command_prints(flags, options):
    path = shared_path("data", "irt", "lsat7.tsv")
    printed, _ = cli("--responses", path, "--weight-column", "frequency", *flags)
    result = IRTJob(read_response_matrix(path, weight_column="frequency"), **options).run()
    assert without_seconds(printed) == printed_as(result.as_dict())
    # ...and the printed rows are the result's tables, value for value (to 12 significant digits)
    assert [row["a"] for row in printed["items"]] == pytest.approx(result.items["a"].tolist(), rel=1e-11)
    assert [row["system"] for row in printed["systems"]] == result.systems["system"].tolist()
    assert [row["theta"] for row in printed["systems"]] == pytest.approx(result.systems["theta"].tolist(), rel=1e-11)


def test_lsat7_2pl_is_mirts_fit():
    result = IRTJob(read_response_matrix(shared_path("data", "irt", "lsat7.tsv"), weight_column="frequency")).run()
    # mirt(expand.table(LSAT7), 1): log-likelihood −2658.805, a1 = 0.988 1.081 1.706 0.765 0.736
    # (tests/test_irt_lsat.py)
    assert result.summary["loglik"] == pytest.approx(-2658.805, abs=0.01)
    assert result.items["a"].tolist() == pytest.approx([0.988, 1.081, 1.706, 0.765, 0.736], abs=0.005)
    assert result.summary["prior_a"] is None and result.auto_prior_a is None  # 1,000 respondents: plain ML
    assert (result.summary["n_systems"], result.summary["n_items"]) == (32, 5)


@pytest.mark.slow
def test_workspace_from_the_api_is_what_the_command_prints_and_writes(tmp_path):
    ws = graded_workspace(tmp_path / "ws", RATED, 5.0)
    meta = tmp_path / "systems.tsv"
    meta.write_text("system\tdepth\n" + "".join(f"r{k}\t{['short', 'mid', 'long'][k // 2]}\n" for k in range(6)))
    printed, stderr = cli("-w", ws, "--irt-model", "rasch", "--official", ws / "official.tsv", "--systems-meta", meta,
                          "--prune-fraction", "0.3", "--prune-steps", "1", "--out", tmp_path / "cli")

    graded = responses_from_workspace(ws)
    result = IRTJob(graded.responses, irt_model="rasch", texts=graded.texts, cover=graded.cover,
                    official=read_leaderboard(ws / "official.tsv"), prune_fraction=0.3, prune_steps=1,
                    components=read_systems(meta)).run()
    assert without_seconds(printed) == printed_as(result.as_dict())
    assert {row["system"]: row["cover"] for row in printed["systems"]} == pytest.approx(COVER)
    assert set(printed["components"][0]) == {"component", "level", "effect", "se"}

    written = write_irt_outputs(result, tmp_path / "api", bank=graded.bank)
    assert f"wrote {', '.join(written)} to {tmp_path / 'cli'}" in stderr
    assert written[:7] == ["items.tsv", "items.json", "systems.tsv", "information.tsv", "components.tsv",
                           "pruning.tsv", "questions.pruned.jsonl"]
    for name in written:
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "api" / "systems.tsv", sep="\t"),
                                  result.systems.reset_index(drop=True), check_exact=False, rtol=1e-11)


# --- τ: the stored method's scale --------------------------------------------------------------------

@pytest.mark.parametrize(("method", "correct", "tau"), [(QA, 1.0, 1.0), (RATED, 5.0, 4.0)])
def test_tau_defaults_to_the_stored_methods_scale(tmp_path, method, correct, tau):
    ws = graded_workspace(tmp_path, method, correct)
    graded = responses_from_workspace(ws)
    assert (graded.method_id, graded.tau, graded.depth) == (method, tau, 20)
    assert graded.responses.matrix.sum(axis=1).to_dict() == ANSWERED
    assert graded.cover == pytest.approx(COVER)
    assert graded.texts["q1/u0"] == "What is 0?" and len(graded.bank) == 6

    printed, stderr = cli("-w", ws, "--irt-model", "rasch")
    assert f"{method}: correct at grade >= {tau:g} in the top 20\n" in stderr
    systems = {row["system"]: row for row in printed["systems"]}
    assert {s: row["cover"] for s, row in systems.items()} == pytest.approx(COVER)
    # Rasch: θ follows the number correct, so the ranks are those of the cover
    assert [row["system"] for row in printed["systems"]] == ["r5", "r4", "r3", "r2", "r1", "r0"]


def test_0_1_grades_at_the_rating_tau_answer_nothing(tmp_path):
    ws = graded_workspace(tmp_path, QA, 1.0)
    assert responses_from_workspace(ws, tau=4).responses.values.sum() == 0
    result = CliRunner().invoke(main, ["irt", "-w", str(ws), "--tau", "4"])
    assert result.exit_code == 1
    assert result.stderr.endswith("Error: no item has both right and wrong responses: nothing to estimate\n")


# --- priors, options, components -----------------------------------------------------------------------

def test_the_automatic_prior_is_reported(tmp_path):
    ws = graded_workspace(tmp_path, QA, 1.0)
    graded = responses_from_workspace(ws)
    auto = IRTJob(graded.responses).run()
    assert auto.auto_prior_a == (0.0, 0.5) and auto.summary["prior_a"] == [0.0, 0.5]
    _, stderr = cli("-w", ws)
    assert "6 respondents: lognormal(0.0, 0.5) prior on a (--no-prior for plain ML)\n" in stderr
    explicit = IRTJob(graded.responses, prior_a=(0.0, 0.5)).run()
    assert explicit.auto_prior_a is None and explicit.summary["prior_a"] == [0.0, 0.5]
    assert explicit.summary["loglik"] == auto.summary["loglik"]
    _, stderr = cli("-w", ws, "--prior-a", "0", "0.5")
    assert "prior on a" not in stderr


@pytest.mark.parametrize(("options", "message"), [
    (dict(prune_steps=2), "prune_fraction and prune_steps go together"),
    (dict(prune_fraction=0.2), "prune_fraction and prune_steps go together"),
    (dict(guessing=0.2), "a fixed guessing parameter needs the 3pl model, not 2pl"),
    (dict(exclude=["r1", "nobody", "anybody"]), "exclude: no such system(s): anybody, nobody"),
])
def test_settings_that_do_not_go_together(tmp_path, options, message):
    responses = responses_from_workspace(graded_workspace(tmp_path, QA, 1.0)).responses
    with pytest.raises(IRTOptionsError) as error:
        IRTJob(responses, **options).run()
    assert str(error.value) == message


def test_exclude_leaves_systems_out(tmp_path):
    graded = responses_from_workspace(graded_workspace(tmp_path, QA, 1.0))
    result = IRTJob(graded.responses, irt_model="rasch", exclude=["r0", "r5"], cover=graded.cover).run()
    assert sorted(result.systems["system"]) == ["r1", "r2", "r3", "r4"]
    assert result.responses.respondents == ["r1", "r2", "r3", "r4"]
    # r1..r4 all answer q1/u0 and none answers q1/u2 or q2/u5: those tell them apart no more
    assert result.unestimated() == {"all correct": 1, "all wrong": 2}
    assert result.items.set_index("item").loc[["q1/u0", "q1/u2", "q2/u5"], "status"].tolist() == \
        ["all correct", "all wrong", "all wrong"]


def test_components_table_without_a_system_names_its_file(tmp_path):
    ws = graded_workspace(tmp_path / "ws", QA, 1.0)
    meta = tmp_path / "systems.tsv"
    meta.write_text("system\tdepth\n" + "".join(f"r{k}\tx{k % 2}\n" for k in range(5)))
    result = CliRunner().invoke(main, ["irt", "-w", str(ws), "--systems-meta", str(meta)])
    assert result.exit_code == 1
    assert result.stderr.endswith(f"Error: {meta}: no components for system(s) r5\n")
