"""`exampp irt` on a small simulated matrix file and on a tiny graded workspace."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from exampp.analysis.correlation import correlate
from exampp.analysis.irt.models import IRTModel
from exampp.cli import main
from exampp.cli.irt import irt
from exampp.collection.grades import Method
from irt_workspace import graded_workspace

A = np.array([0.4, 0.8, 1.2, 1.6, 2.0, 1.0, 0.6, 1.4])
B = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, -1.5, 1.5, 0.2])


@pytest.fixture
def matrix_file(tmp_path):
    rng = np.random.default_rng(11)
    theta = rng.normal(size=120)
    X = (rng.random((120, len(A))) < 1 / (1 + np.exp(-A * (theta[:, None] - B)))).astype(int)
    frame = pd.DataFrame(X, columns=[f"q{j}" for j in range(len(A))])
    frame.insert(0, "system", [f"sys{i:03d}" for i in range(120)])
    path = tmp_path / "matrix.tsv"
    frame.to_csv(path, sep="\t", index=False)
    # an "official" leaderboard: the true abilities
    (tmp_path / "official.tsv").write_text("".join(f"sys{i:03d}\t{t}\n" for i, t in enumerate(theta)))
    return path, frame


def invoke(*args):
    """`exampp irt ARGS` as a user runs it (errors users can act on as one line)."""
    return CliRunner().invoke(main, ["irt", *map(str, args)])


def test_json_output_matches_the_estimator(matrix_file, tmp_path):
    path, frame = matrix_file
    result = invoke("--responses", path, "--format", "json", "--official", tmp_path / "official.tsv")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    model = IRTModel(model="2pl").fit(frame.drop(columns="system").to_numpy(dtype=float))

    assert (report["irt_model"], report["estimator"]) == ("2pl", "mml")
    assert (report["n_systems"], report["n_items"]) == (120, 8)
    assert report["loglik"] == pytest.approx(model.loglik_, rel=1e-9)
    assert report["converged"] is True
    items = {row["item"]: row for row in report["items"]}
    assert list(items) == [f"q{j}" for j in range(8)]
    for j, name in enumerate(items):
        row = items[name]
        assert {"a", "a_se", "b", "b_se", "g", "g_se", "status"} <= row.keys()
        assert (row["a"], row["b"]) == pytest.approx((model.a_[j], model.b_[j]), rel=1e-9)
        assert row["a_se"] == pytest.approx(model.a_se_[j], rel=1e-9)
        assert row["p_correct"] == pytest.approx(frame[name].mean())

    systems = report["systems"]
    assert len(systems) == 120
    thetas = [row["theta"] for row in systems]
    assert thetas == sorted(thetas, reverse=True) and systems[0]["rank"] == 1
    by_name = {row["system"]: row for row in systems}
    eap = dict(zip(frame["system"], model.theta_))
    assert by_name["sys000"]["theta"] == pytest.approx(eap["sys000"], rel=1e-9)
    row = by_name["sys000"]
    assert row["ci_low"] == pytest.approx(row["theta"] - 1.959964 * row["sd"], rel=1e-6)

    official = {name: float(v) for name, v in
                (line.split("\t") for line in (tmp_path / "official.tsv").read_text().splitlines())}
    expected = correlate(official, {s: r["theta"] for s, r in by_name.items()})
    assert report["correlation"]["IRT theta"]["kendall"] == pytest.approx(expected.kendall, abs=1e-12)
    assert expected.kendall > 0.5  # abilities from 8 items track the true abilities


@pytest.mark.slow
def test_outputs_and_pruning_written(matrix_file, tmp_path):
    path, _ = matrix_file
    out = tmp_path / "out"
    result = invoke("--responses", path, "--irt-model", "rasch", "--prune-fraction", "0.25", "--prune-steps", "2",
                    "--out", out, "--top", "3")
    assert result.exit_code == 0, result.output
    assert "RASCH by MML: 120 respondents x 8 items" in result.stdout
    assert "Least informative estimated questions" in result.stdout
    items = pd.read_csv(out / "items.tsv", sep="\t")
    assert list(items["item"]) == [f"q{j}" for j in range(8)]
    assert np.allclose(items["a"], 1.0)
    assert json.loads((out / "items.json").read_text())[0]["item"] == "q0"
    systems = pd.read_csv(out / "systems.tsv", sep="\t")
    assert {"theta", "sd", "ci_low", "ci_high", "theta_mle", "mle_se", "rank"} <= set(systems.columns)
    pruning = pd.read_csv(out / "pruning.tsv", sep="\t")
    assert list(pruning["n_items"]) == [8, 6, 4]
    kept = (out / "kept_items.txt").read_text().split()
    assert len(kept) == 4
    information = pd.read_csv(out / "information.tsv", sep="\t")
    assert set(information["grouping"]) == {"test"}
    for png in ("item_curves.png", "test_information.png", "pruning.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"


def test_bad_matrix_cell_is_one_line_with_file_and_line(write):
    path = write("bad.tsv", "a\tb\n1\t0\n1\tx\n")
    result = CliRunner().invoke(irt, ["--responses", str(path)], standalone_mode=True)
    assert result.exit_code != 0
    assert isinstance(result.exception, Exception)
    assert f"{path}:3: column 2 ('b'): 'x' is not 0, 1 or missing" in str(result.exception)


def test_option_conflicts(matrix_file):
    path, _ = matrix_file
    assert "--prune-fraction and --prune-steps go together" in invoke("--responses", path, "--prune-steps", "2").output
    assert "--guessing needs --irt-model 3pl" in invoke("--responses", path, "--guessing", "0.2").output
    assert "No such option '--model'" in invoke("--responses", path, "--model", "rasch").output
    assert "Error: exclude: no such system(s): nobody\n" in invoke("--responses", path, "--exclude", "nobody").output
    assert "leave out RUNS, --method and --tau" in invoke("--responses", path, "--tau", "1").output


# --- from a workspace's grades ----------------------------------------------------------------------

@pytest.fixture
def workspace(tmp_path):
    return graded_workspace(tmp_path, Method("self-rating", "tiny", "v1").method_id, 5.0)


@pytest.mark.slow
def test_from_grades_with_cover_correlation_and_pruned_bank(workspace):
    out = workspace / "irt"
    result = invoke("-w", workspace, "--irt-model", "rasch", "--official", workspace / "official.tsv",
                    "--format", "json", "--prune-fraction", "0.3", "--prune-steps", "1", "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n_items"] == 6 and report["n_systems"] == 6
    items = {row["item"]: row for row in report["items"]}
    assert items["q1/u0"]["query_id"] == "q1"
    assert items["q1/u0"]["p_correct"] == pytest.approx(5 / 6)  # every run but r0 retrieves p0
    assert items["q2/u3"]["question_word"] == "how" and "Understanding" in items["q2/u3"]["bloom"]
    cover = {row["system"]: row["cover"] for row in report["systems"]}
    # r3 answers u0, u1 of q1 (2/3) and u3 of q2 (1/3): mean 0.5
    assert cover["r3"] == pytest.approx(0.5) and cover["r0"] == 0.0 and cover["r5"] == 1.0
    # The more a run covers, the higher its ability: both agree perfectly with the official order.
    assert report["correlation"]["EXAM-Cover"]["kendall"] == pytest.approx(1.0)
    assert report["correlation"]["IRT theta"]["kendall"] == pytest.approx(1.0)
    pruned = [json.loads(line)["question_id"] for line in (out / "questions.pruned.jsonl").read_text().splitlines()]
    assert len(pruned) == 4 and set(pruned) <= set(items)


def test_small_samples_get_a_prior_on_a_unless_told_otherwise(matrix_file):
    path, frame = matrix_file
    X = frame.drop(columns="system").to_numpy(dtype=float)[:60]
    small = path.with_name("small.tsv")
    frame.head(60).to_csv(small, sep="\t", index=False)
    default = json.loads(invoke("--responses", small, "--format", "json").stdout)
    assert default["prior_a"] == [0.0, 0.5]
    assert default["loglik"] == pytest.approx(IRTModel(model="2pl", prior_a=(0.0, 0.5)).fit(X).loglik_, rel=1e-9)
    plain = json.loads(invoke("--responses", small, "--format", "json", "--no-prior").stdout)
    assert plain["prior_a"] is None
    assert plain["loglik"] == pytest.approx(IRTModel(model="2pl", prior_a=None).fit(X).loglik_, rel=1e-9)
    # 120 respondents: plain ML by default
    assert json.loads(invoke("--responses", path, "--format", "json").stdout)["prior_a"] is None
    assert "exclude each other" in invoke("--responses", small, "--no-prior", "--prior-a", "0", "1").output
