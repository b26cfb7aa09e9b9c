"""HierarchicalAbility: recovery of known component effects, identification, a components table that
does not fit, parameters."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from exampp.analysis.irt import HierarchicalAbility, IRTModel, clone, irf
from exampp.analysis.irt.hierarchical import ComponentsError
from exampp.errors import ExamppError

RETRIEVERS = {"bm25": -0.6, "dense": 0.2, "splade": 0.4}
RERANKERS = {"none": -0.3, "monot5": 0.3}
GENERATORS = {"small": -0.5, "mid": 0.1, "large": 0.4}
MU = 0.2


@pytest.fixture(scope="module")
def simulated():
    """18 systems (every combination), 600 items with known 2PL parameters."""
    rng = np.random.default_rng(11)
    rows = [(f"{r}+{k}+{g}", r, k, g) for r, k, g in itertools.product(RETRIEVERS, RERANKERS, GENERATORS)]
    systems = pd.DataFrame(rows, columns=["system", "retriever", "reranker", "generator"])
    theta = MU + np.array([RETRIEVERS[r] + RERANKERS[k] + GENERATORS[g] for _, r, k, g in rows])
    a, b = rng.lognormal(0, 0.3, 600), rng.normal(0, 1, 600)
    X = (rng.random((len(rows), 600)) < irf(theta, a, b)).astype(float)
    frame = pd.DataFrame(X, index=systems.system)
    return frame, systems, theta, a, b


def test_recovers_component_effects_within_standard_errors(simulated):
    frame, systems, theta, a, b = simulated
    model = HierarchicalAbility().fit(frame, systems, items=(a, b, np.zeros_like(a)))
    assert model.converged_
    truth = {("intercept", ""): MU}
    truth.update({("retriever", k): v for k, v in RETRIEVERS.items()})
    truth.update({("reranker", k): v for k, v in RERANKERS.items()})
    truth.update({("generator", k): v for k, v in GENERATORS.items()})
    effects = model.effects_.set_index(["component", "level"])
    assert len(effects) == len(truth)
    z = [abs(effects.loc[key, "effect"] - value) / effects.loc[key, "se"] for key, value in truth.items()]
    assert max(z) < 3
    # sum-to-zero within each component, and θ_m = μ + Σ effects of its levels
    levels = model.effects_[model.effects_.component != "intercept"]
    np.testing.assert_allclose(levels.groupby("component").effect.sum(), 0.0, atol=1e-10)
    system = "dense+monot5+large"
    expected = effects.loc[("intercept", ""), "effect"] + sum(
        effects.loc[(c, lvl), "effect"] for c, lvl in zip(["retriever", "reranker", "generator"], system.split("+")))
    assert model.theta_[system] == pytest.approx(expected)
    assert np.corrcoef(model.theta_.to_numpy(), theta)[0, 1] > 0.97


def test_derived_level_se_matches_reference_coding(simulated):
    """SE of the last (derived) level equals the SE of −Σ the others from the same covariance:
    checked by refitting with the levels renamed so that another level is the derived one."""
    frame, systems, _, a, b = simulated
    items = (a, b, np.zeros_like(a))
    first = HierarchicalAbility(components=["retriever"]).fit(frame, systems, items=items)
    renamed = systems.assign(retriever=systems.retriever.map({"bm25": "z_bm25", "dense": "dense", "splade": "splade"}))
    second = HierarchicalAbility(components=["retriever"]).fit(frame, renamed, items=items)
    one = first.effects_.set_index("level")
    two = second.effects_.set_index("level").rename(index={"z_bm25": "bm25"})
    np.testing.assert_allclose(one.loc[["bm25", "dense", "splade"], "effect"],
                               two.loc[["bm25", "dense", "splade"], "effect"], atol=1e-5)
    np.testing.assert_allclose(one.loc[["bm25", "dense", "splade"], "se"],
                               two.loc[["bm25", "dense", "splade"], "se"], rtol=1e-4)


@pytest.mark.slow
def test_items_from_a_fitted_model(simulated):
    frame, systems, theta, *_ = simulated
    items = IRTModel("2pl").fit(frame.to_numpy())
    model = HierarchicalAbility().fit(frame, systems, items=items)
    assert np.corrcoef(model.theta_.to_numpy(), theta)[0, 1] > 0.97
    # without items, the same IRTModel("2pl") is fitted first
    pd.testing.assert_frame_equal(HierarchicalAbility().fit(frame, systems).effects_, model.effects_)


ITEMS = (np.ones(600), np.zeros(600), np.zeros(600))


@pytest.mark.parametrize(("table", "message"), [
    (lambda s: s.iloc[:-1], "no components for system(s) splade+monot5+large"),
    (lambda s: pd.concat([s, s.iloc[:1]]), "system(s) listed twice in the components table: bm25+none+small"),
    (lambda s: s.rename(columns={"system": "run"}), "the components table needs a 'system' column"),
])
def test_a_components_table_that_does_not_fit_is_a_user_error(simulated, table, message):
    frame, systems, *_ = simulated
    with pytest.raises(ComponentsError) as error:
        HierarchicalAbility().fit(frame, table(systems), items=ITEMS)
    assert isinstance(error.value, ExamppError) and str(error.value).startswith(message)
    with pytest.raises(ComponentsError, match=r"^no component column\(s\) 'index' in the components table"):
        HierarchicalAbility(components=["index"]).fit(frame, systems, items=ITEMS)


def test_parameters_clone_round_trip(simulated):
    frame, systems, *_ = simulated
    model = HierarchicalAbility(components=["retriever"], max_iter=50, tol=1e-6)
    assert model.get_params() == {"components": ["retriever"], "max_iter": 50, "tol": 1e-6}
    copy = HierarchicalAbility(**model.get_params())
    assert copy.get_params() == model.get_params()
    model.fit(frame, systems, items=ITEMS)
    fresh = clone(model)
    assert fresh.get_params() == model.get_params() and not hasattr(fresh, "effects_")
    pd.testing.assert_frame_equal(fresh.fit(frame, systems, items=ITEMS).effects_, model.effects_)
    assert fresh.set_params(components=["generator"]) is fresh and fresh.components == ["generator"]
    with pytest.raises(ValueError, match="invalid parameter"):
        fresh.set_params(retriever="bm25")


def test_confounded_components_are_rejected(simulated):
    frame, systems, *_ = simulated
    confounded = systems.assign(index_type=systems.retriever)  # same split as the retriever
    with pytest.raises(ComponentsError, match="not identified"):
        HierarchicalAbility(components=["retriever", "index_type"]).fit(
            frame, confounded, items=(np.ones(600), np.zeros(600), np.zeros(600)))
