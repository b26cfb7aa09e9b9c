"""IRT plots: the figures hold exactly the data given, and the files are PNGs of the set size."""
import struct

import numpy as np
import pandas as pd
import pytest

from exampp.analysis.irt.information import information_by_group, item_information
from exampp.report.irt_plots import (
    DPI,
    FIGSIZE,
    THETA,
    information_figure,
    item_characteristic_figure,
    plot_information_curves,
    plot_item_characteristic_curves,
    plot_pruning_steps,
    plot_test_information,
    pruning_steps_figure,
    test_information_figure as information_total_figure,  # not collected as a test
)

WIDTH, HEIGHT = int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI)


def png_size(path):
    """(width, height) from the PNG signature and IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def line_data(ax):
    return [(line.get_label(), line.get_xdata(), line.get_ydata()) for line in ax.get_lines()]


def test_item_characteristic_curves_are_the_3pl_probabilities(tmp_path):
    a, b, g = np.array([1.0, 2.0]), np.array([0.0, 1.0]), np.array([0.0, 0.25])
    fig = item_characteristic_figure(a, b, g, labels=["q1", "q2"])
    (ax,) = fig.axes
    (l1, x1, y1), (l2, x2, y2) = line_data(ax)
    assert (l1, l2) == ("q1 (a=1.00, b=0.00)", "q2 (a=2.00, b=1.00, g=0.25)")
    np.testing.assert_array_equal(x1, THETA)
    np.testing.assert_allclose(y1, 1 / (1 + np.exp(-THETA)), rtol=1e-15)
    np.testing.assert_allclose(y2, 0.25 + 0.75 / (1 + np.exp(-2 * (THETA - 1))), rtol=1e-15)
    assert ax.get_xlabel() == "ability θ" and ax.get_ylabel() == "P(correct)"
    path = plot_item_characteristic_curves(tmp_path / "icc.png", a, b, g, labels=["q1", "q2"])
    assert path == tmp_path / "icc.png" and png_size(path) == (WIDTH, HEIGHT)


def test_many_items_are_spread_over_difficulty():
    b = np.array([5.0, -3.0, 0.0, 1.0, 2.0, -1.0, 4.0])  # sorted: -3 -1 0 1 2 4 5
    fig = item_characteristic_figure(np.ones(7), b, max_items=3)
    labels = [label for label, _, _ in line_data(fig.axes[0])]
    assert labels == ["item 1 (a=1.00, b=-3.00)", "item 3 (a=1.00, b=1.00)", "item 0 (a=1.00, b=5.00)"]
    assert "3 of 7" in fig.axes[0].get_title()
    with pytest.raises(ValueError):
        item_characteristic_figure([1.0], [0.0], labels=["a", "b"])


def test_information_curves_hold_the_group_sums(tmp_path):
    theta = np.linspace(-3, 3, 7)
    a, b = np.array([1.0, 1.5, 0.8]), np.array([-1.0, 0.0, 1.0])
    table = information_by_group(theta, a, b, 0.2, ["how", "what", "how"])
    fig = information_figure(table, title="By question word")
    (ax,) = fig.axes
    info = item_information(theta, a, b, 0.2)
    (lh, xh, yh), (lw, xw, yw) = line_data(ax)
    assert (lh, lw) == ("how (n=2)", "what (n=1)")
    np.testing.assert_array_equal(xh, theta)
    np.testing.assert_array_equal(xw, theta)
    np.testing.assert_allclose(yh, info[:, 0] + info[:, 2], rtol=1e-14)
    np.testing.assert_allclose(yw, info[:, 1], rtol=1e-14)
    assert ax.get_title() == "By question word"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["how (n=2)", "what (n=1)"]
    assert png_size(plot_information_curves(tmp_path / "sub" / "info.png", table)) == (WIDTH, HEIGHT)
    with pytest.raises(ValueError):
        information_figure(table.drop(columns="n_items"))


@pytest.mark.slow
def test_test_information_curves(tmp_path):
    theta = np.array([-1.0, 0.0, 1.0])
    curves = {"before": np.array([1.0, 2.0, 1.5]), "after pruning": np.array([0.5, 1.8, 1.4])}
    fig = information_total_figure(theta, curves)
    assert [(label, x.tolist(), y.tolist()) for label, x, y in line_data(fig.axes[0])] == [
        ("before", [-1.0, 0.0, 1.0], [1.0, 2.0, 1.5]), ("after pruning", [-1.0, 0.0, 1.0], [0.5, 1.8, 1.4])]
    assert png_size(plot_test_information(tmp_path / "test.png", theta, curves)) == (WIDTH, HEIGHT)
    with pytest.raises(ValueError):
        information_total_figure(theta, {"short": [1.0]})


@pytest.mark.slow
def test_pruning_steps(tmp_path):
    steps = pd.DataFrame({"step": [0, 1, 2], "n_items": [430, 387, 348], "information": [12.5, 12.1, 11.0]})
    fig = pruning_steps_figure(steps)
    left, right = fig.axes
    assert [(x.tolist(), y.tolist()) for _, x, y in line_data(left)] == [([0, 1, 2], [12.5, 12.1, 11.0])]
    assert [(x.tolist(), y.tolist()) for _, x, y in line_data(right)] == [([0, 1, 2], [430, 387, 348])]
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["test information", "items"]
    assert png_size(plot_pruning_steps(tmp_path / "pruning.png", steps)) == (WIDTH, HEIGHT)
    with pytest.raises(ValueError):
        pruning_steps_figure(steps.drop(columns="step"))
    # the pruning report's columns
    report = steps.rename(columns={"information": "information_mean"}).assign(information_integral=[80.0, 79.0, 70.0])
    left = pruning_steps_figure(report, column="information_integral").axes[0]
    assert left.get_lines()[0].get_ydata().tolist() == [80.0, 79.0, 70.0]
    assert left.get_ylabel() == "∫ test information dθ"
    with pytest.raises(ValueError):
        pruning_steps_figure(report)  # no "information" column


def test_many_items_are_coloured_by_difficulty_without_a_legend():
    # 157 items with hash ids, as `exampp irt` labels them: 20 curves, no legend of ids
    b = np.linspace(-5.0, 6.0, 157)
    labels = [f"{1000 + i}/{i:032x}" for i in range(157)]
    fig = item_characteristic_figure(np.ones(157), b, labels=labels)
    ax, bar = fig.axes
    assert len(ax.get_lines()) == 20 and ax.get_legend() is None and not fig.legends
    assert bar.get_ylabel() == "difficulty b of the item" and bar.get_ylim() == pytest.approx((-5.0, 6.0))
    # each curve's colour is viridis at its item's difficulty on the bar's scale, -5 to 6
    from matplotlib import colormaps

    for line in ax.get_lines():
        difficulty = b[int(line.get_label().split("/")[0]) - 1000]  # the item its label names
        np.testing.assert_allclose(line.get_color(), colormaps["viridis"]((difficulty + 5.0) / 11.0), atol=1e-12)
    assert ax.get_lines()[0].get_label() == "1000/0000000000… (a=1.00, b=-5.00)"  # cut to 16 characters
    fig.canvas.draw()  # the title whole inside the figure
    box = ax.title.get_window_extent()
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1
    assert ax.get_title() == "Item characteristic curves (20 of 157, spread over difficulty)"


def test_a_few_items_get_a_legend_of_short_labels():
    labels = ["1037798/20afe912318d932e780a4c5bcc0d9a4f", "q2"]
    fig = item_characteristic_figure([1.0, 2.0], [0.0, 1.0], labels=labels)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "1037798/20afe91… (a=1.00, b=0.00)", "q2 (a=2.00, b=1.00)"]
