"""The scaling figures span the paper's model sizes and show where the curves stop (issue #10).

Independent facts: the model sizes the paper's text says each figure covers ("from the tiniest
thousand-parameter transformers", "above the quadrillion parameter scale", "up to 100 quadrillion
parameters"), and hand-made sweeps whose last feasible model is known.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lgacc.paper.artifacts import get_artifact
from lgacc.paper.reproductions.fig_scaling_limited import NO_FEASIBLE, curve_ends, paper_model_range


def test_the_paper_ranges_are_read_from_its_transcription():
    assert paper_model_range("fig:scaling_limited") == (1e3, 1e15)
    assert paper_model_range("fig:scaling_unlimited") == (1e3, 1e17)


def test_curve_ends_name_the_last_feasible_model_and_the_rule_beyond():
    frame = pd.DataFrame([
        {"method": "baseline", "p": 1e3, "feasible": True, "reason": ""},
        {"method": "baseline", "p": 1e6, "feasible": True, "reason": ""},
        {"method": "baseline", "p": 1e9, "feasible": False, "reason": "memory: memory within the GPU (e.g. ...)"},
        {"method": "improved", "p": 1e3, "feasible": True, "reason": ""},
        {"method": "improved", "p": 1e6, "feasible": True, "reason": ""},
        {"method": "improved", "p": 1e9, "feasible": True, "reason": ""},  # reaches the last model: no end
        {"method": "partitioned", "p": 1e3, "feasible": False, "reason": "structure: ..."},  # never feasible
    ])
    ends = curve_ends(frame)
    assert ends.to_dict(orient="records") == [{"method": "baseline", "p": 1e6, "rule": "memory"}]


@pytest.mark.parametrize("label, paper_high", [("fig:scaling_limited", 1e15), ("fig:scaling_unlimited", 1e17)])
def test_the_curves_span_the_papers_range_with_memory_shown_past_the_gpus(label, paper_high):
    """Memory is the scaling figures' output (issue #25): every curve reaches past the paper's range, the memory
    panel shades what lies above the GPU's memory, and the models that do not fit even offloaded are hollow."""
    from lgacc.model.hardware import GIB, load_hardware
    from lgacc.paper.reproductions.fig_scaling_limited import OVER_GPU_COLOR
    from lgacc.scaling import scaling_sweep
    from matplotlib.colors import to_rgb

    figure = get_artifact(label).reproduce("a100-80gb")
    memory_ax, time_ax = figure.axes
    low, high = time_ax.get_xlim()
    assert low <= 1e3 and high >= paper_high
    frame = scaling_sweep("a100-80gb", label.split("_", 1)[1])
    assert curve_ends(frame).empty and frame.feasible.astype(bool).all()
    for method, rows in frame.groupby("method"):
        assert rows.p.max() >= paper_high, method  # drawn to the paper's last model and beyond
    gpu = load_hardware("a100-80gb").memory_bytes / GIB
    bands = [patch for patch in memory_ax.patches if patch.get_facecolor()[:3] == pytest.approx(to_rgb(OVER_GPU_COLOR))]
    assert len(bands) == 1
    hollow = [line for ax in (memory_ax, time_ax) for line in ax.get_lines()
              if line.get_linestyle() in ("None", "") and line.get_markerfacecolor() == "white"]
    over = frame[frame.non_offloadable_gib > gpu]
    assert len(over) and sum(len(line.get_xdata()) for line in hollow) == 2 * len(over)


def test_titles_name_the_builds_node_size_and_ethernet_share_and_the_papers_on_its_hardware():
    from lgacc.model.hardware import load_hardware
    from lgacc.paper.reproductions import fig_scaling_Ethernet, fig_scaling_limited

    paper, h100 = load_hardware("a100-80gb"), load_hardware("h100-sxm")
    # on the paper's hardware the titles are the paper's captions, word for word
    assert fig_scaling_limited.caption(paper).endswith("with a maximum node size of 16.")
    assert fig_scaling_Ethernet.caption(paper).endswith("with a 25 Gb/s Ethernet connection.")
    assert fig_scaling_limited.caption(h100).endswith("node size of 8.")  # the H100 spec's HGX node holds 8 GPUs
    assert "25 Gb/s" not in fig_scaling_Ethernet.caption(h100) and "50 Gb/s" in fig_scaling_Ethernet.caption(h100)
    # a spec without a name for its Ethernet link: 12.5e9 B/s both ways is 50 Gb/s each way, decimal
    unnamed = h100.replace(link_names=(), ethernet_bandwidth_bytes_per_s=12.5e9)
    assert "50 Gb/s (decimal, each way)" in fig_scaling_Ethernet.caption(unnamed)


def test_the_time_axis_reaches_below_an_hour_when_a_point_does():
    from matplotlib.figure import Figure

    from lgacc.paper.reproductions.fig_scaling_limited import set_time_axis

    ax = Figure().subplots()
    set_time_axis(ax, [0.5, 10 / 1440, 400.0])  # ten minutes
    bottom, _ = ax.get_ylim()
    assert bottom < 10 / 1440 and "10 min" in [t.get_text() for t in ax.get_yticklabels()]
    set_time_axis(ax, [0.5, 400.0])
    assert ax.get_ylim()[0] == (1 / 24) / 1.5  # an hour, as before, when nothing is shorter


def test_the_shaded_regions_label_keeps_clear_of_the_month_and_year_lines():
    import math

    from matplotlib.figure import Figure

    from lgacc.paper.reproductions.fig_scaling_limited import _free_heights, set_time_axis
    from lgacc.scaling import ONE_MONTH_DAYS, ONE_YEAR_DAYS

    ax = Figure().subplots()
    ax.set_yscale("log")
    set_time_axis(ax, [1e-8, 3 * ONE_YEAR_DAYS])  # a fast GPU: the year line near the top
    low, high = (math.log10(v) for v in ax.get_ylim())
    lines = [(math.log10(d) - low) / (high - low) for d in (ONE_MONTH_DAYS, ONE_YEAR_DAYS)]
    (height,) = _free_heights(ax, 1)
    assert all(height > f + 0.12 or height < f - 0.08 for f in lines), (height, lines)
