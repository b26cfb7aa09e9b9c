"""2PL fit time and parameter recovery: exampp's IRTModel (MML, EM + L-BFGS-B) vs girth's twopl_mml.

(1) Synthetic: ``--systems`` × ``--items`` responses drawn from a 2PL with known parameters
    (a ~ lognormal(0, 0.3), b ~ N(0, 1), θ ~ N(0, 1), seed ``--seed``). Both packages fit the items
    that have right and wrong answers; reported: wall time, RMSE of a and b against the truth
    (over items both estimated), and the time ratio. girth is slow (a Python loop over items):
    it fits the first ``--girth-items`` items, and exampp fits that slice too for the ratio.
(2) DL19: the systems × questions matrix of the DL19 reference grades (``responses_from_grades``
    at τ = 1, top 20), built from a workspace imported from ``../shared/data/dl19`` into a
    temporary folder; no truth there, so only times and the correlation of the two packages' a, b.

girth (``pip install girth``, pure Python/NumPy) is skipped with a note when it is not installed.

Usage (from the repository root):
    python benchmarks/irt_fit.py [--systems 200] [--items 5000] [--seed 0] [--girth-items 500] [--no-dl19]
(about 6 minutes on 2 CPU cores, nearly all of it girth)
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

from exampp.analysis.irt import IRTModel, irf

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "dl19"


def simulate(n_systems: int, n_items: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.lognormal(0.0, 0.3, n_items)
    b = rng.normal(0.0, 1.0, n_items)
    theta = rng.normal(0.0, 1.0, n_systems)
    return (rng.random((n_systems, n_items)) < irf(theta, a, b)).astype(float), a, b


def fit_exampp(X: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, IRTModel]:
    start = time.perf_counter()
    model = IRTModel("2pl", prior_a=None).fit(X)  # plain ML, as girth fits (no prior below 100 systems)
    return time.perf_counter() - start, model.a_, model.b_, model


def fit_girth(X: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
    try:
        from girth import twopl_mml
    except ImportError:
        return None
    p = np.nanmean(X, axis=0)
    usable = (p > 0) & (p < 1)
    a, b = np.full(X.shape[1], np.nan), np.full(X.shape[1], np.nan)
    start = time.perf_counter()
    result = twopl_mml(X[:, usable].T.astype(int))  # girth wants items × respondents
    elapsed = time.perf_counter() - start
    a[usable], b[usable] = result["Discrimination"], result["Difficulty"]
    return elapsed, a, b


def rmse(estimate: np.ndarray, truth: np.ndarray, mask: np.ndarray) -> float:
    return float(np.sqrt(np.mean((estimate[mask] - truth[mask]) ** 2)))


def synthetic(n_systems: int, n_items: int, seed: int, girth_items: int) -> None:
    X, a, b = simulate(n_systems, n_items, seed)
    print(f"synthetic 2PL: {n_systems} systems x {n_items} items, seed {seed}")
    t_ex, a_ex, b_ex, model = fit_exampp(X)
    ok = np.isfinite(a_ex) & np.isfinite(b_ex)
    print(f"  exampp IRTModel, all items: {t_ex:7.2f} s   RMSE a {rmse(a_ex, a, ok):.3f}   "
          f"RMSE b {rmse(b_ex, b, ok):.3f}"
          f"   ({int(ok.sum())} items estimated, {model.n_iter_} iterations, converged {model.converged_})")
    # girth's M-step loops over items in Python (minutes per 500 items): it fits the first
    # ``girth_items`` items, and exampp fits the same slice for a like-for-like ratio
    k = min(girth_items, n_items)
    girth = fit_girth(X[:, :k])
    if girth is None:
        print("  girth: not installed (pip install girth); comparison skipped")
        return
    t_slice, a_sl, b_sl, _ = fit_exampp(X[:, :k])
    t_gi, a_gi, b_gi = girth
    both = np.isfinite(a_sl) & np.isfinite(a_gi) & np.isfinite(b_sl) & np.isfinite(b_gi)
    a_k, b_k = a[:k], b[:k]
    print(f"  first {k} items ({int(both.sum())} estimated by both):")
    print(f"    exampp IRTModel   {t_slice:7.2f} s   RMSE a {rmse(a_sl, a_k, both):.3f}   "
          f"RMSE b {rmse(b_sl, b_k, both):.3f}")
    print(f"    girth twopl_mml   {t_gi:7.2f} s   RMSE a {rmse(a_gi, a_k, both):.3f}   "
          f"RMSE b {rmse(b_gi, b_k, both):.3f}")
    print(f"    time ratio exampp/girth {t_slice / t_gi:.3f}; girth extrapolated to {n_items} items:"
          f" ~{t_gi * n_items / k:.0f} s")
    central = both & (np.abs(b_k) <= 2)  # where 200 respondents carry information on b
    print(f"    items with |b| <= 2 ({int(central.sum())}): exampp RMSE a {rmse(a_sl, a_k, central):.3f}"
          f" b {rmse(b_sl, b_k, central):.3f} | girth RMSE a {rmse(a_gi, a_k, central):.3f}"
          f" b {rmse(b_gi, b_k, central):.3f}")


def dl19_matrix() -> np.ndarray | None:
    bundle = SHARED / "DL19-graded-t5-rating-genq-exam-qrels-runs-with-text.jsonl.gz"
    if not bundle.exists():
        return None
    from exampp.analysis.irt.responses import responses_from_grades
    from exampp.formats.trec_run import read_runs
    from exampp.stores.grade_store import GradeStore
    from exampp.stores.layout import Workspace

    folder = Path(tempfile.mkdtemp(prefix="irt-bench-")) / "ws"
    subprocess.run([sys.executable, "-m", "exampp", "import", str(bundle), "--workspace", str(folder),
                    "--questions", str(SHARED / "dl19-genq.jsonl.gz")], check=True, capture_output=True)
    workspace = Workspace.at(folder)
    store = GradeStore(workspace.store)
    grades = store.grades(store.methods()[0])
    return responses_from_grades(grades, read_runs(workspace.runs)).values


def dl19() -> None:
    X = dl19_matrix()
    if X is None:
        print(f"DL19: {SHARED} not found; skipped")
        return
    print(f"DL19 reference grades: {X.shape[0]} systems x {X.shape[1]} questions")
    t_ex, a_ex, b_ex, model = fit_exampp(X)
    print(f"  exampp IRTModel   {t_ex:7.2f} s   ({int((model.item_status_ == 'ok').sum())} items estimated,"
          f" {model.n_iter_} iterations, converged {model.converged_})")
    girth = fit_girth(X)
    if girth is None:
        print("  girth: not installed; comparison skipped")
        return
    t_gi, a_gi, b_gi = girth
    both = np.isfinite(a_ex) & np.isfinite(a_gi) & np.isfinite(b_ex) & np.isfinite(b_gi)
    print(f"  girth twopl_mml   {t_gi:7.2f} s   time ratio exampp/girth {t_ex / t_gi:.2f}")
    # Spearman: with 37 systems many ML slopes run to the bound and b = −c/a to extremes
    print(f"  agreement (Spearman): a {stats.spearmanr(a_ex[both], a_gi[both])[0]:.3f}"
          f"  b {stats.spearmanr(b_ex[both], b_gi[both])[0]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", type=int, default=200)
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--girth-items", type=int, default=500, help="items girth fits (it is slow)")
    parser.add_argument("--no-dl19", action="store_true", help="skip the DL19 matrix")
    args = parser.parse_args()
    synthetic(args.systems, args.items, args.seed, args.girth_items)
    if not args.no_dl19:
        dl19()


if __name__ == "__main__":
    main()
