"""Scaling sweeps (lgacc.scaling) and the five scaling figures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from lgacc import scaling
from lgacc.model.hardware import GIB, load_hardware
from lgacc.model.transformer import x_model
from lgacc.paper.artifacts import get_artifact
from lgacc.search import fastest

HW = load_hardware("a100-80gb")
XS = (2, 16, 64, 160, 256, 352, 416, 512)


@pytest.fixture(scope="module")
def limited():
    return scaling.scaling_sweep(HW, "limited", xs=XS)


def test_grid_heads_divisible_by_16_from_x64():
    xs = scaling.sweep_xs()
    assert xs[0] == 2 and xs[-1] >= 1900
    assert all(x % 2 == 0 for x in xs)
    assert all((x // 2) % 16 == 0 for x in xs if x >= 64)
    assert len(xs) == len(set(xs)) >= 20


def test_x160_improved_row_equals_fastest(limited):
    row = limited[(limited.method == "improved") & (limited.x == 160)].iloc[0]
    r = fastest(x_model(160), HW, "improved", "3d", explain=False)
    assert row.time_days == pytest.approx(r.evaluation.time_days, rel=1e-12)
    assert row.memory_gib == pytest.approx(r.evaluation.memory.total / GIB, rel=1e-12)
    assert (row.n_b, row.n_l, row.n_a) == (r.config.n_b, r.config.n_l, r.config.n_a)


#: The tables' reading of the scaling sweep: memory a rule, heads capped and dividing (the package's old sweep).
TABLES = scaling.SCALING_ASSUMPTIONS.replace(memory_limit="constraint", heads_cap=True, divisible_heads=True)


def test_memory_as_an_output_keeps_every_model_and_reports_memory_past_the_gpu(limited):
    """The paper's figures report the fastest configuration's memory past 80 GB: no model is dropped."""
    assert limited.feasible.astype(bool).all() and not limited.offload.astype(bool).any()
    improved = limited[limited.method == "improved"]
    assert (improved.non_offloadable_gib > HW.memory_bytes / GIB).any()
    # the same search with memory a rule: the curve stops, and where it is feasible memory fits
    constrained = scaling.scaling_sweep(HW, "limited", xs=XS, assumptions=TABLES)
    feasible = constrained[constrained.feasible.astype(bool)]
    on_gpu = feasible.non_offloadable_gib.where(feasible.offload.astype(bool), feasible.memory_gib)
    assert (on_gpu <= HW.memory_bytes / GIB + 1e-9).all()
    last = constrained[constrained.method == "improved"]
    assert last.feasible.iloc[0] and not last.feasible.iloc[-1] and last.reason.iloc[-1]


def test_memory_limit_is_read_where_the_curve_crosses_the_gpu():
    """Log-log between the two neighbouring models of the grid where the non-offloadable memory passes 80 GB."""
    limit = scaling.feasibility_limit(HW)
    low = scaling.fastest_row(limit.x_low, HW, "improved")
    high = scaling.fastest_row(limit.x_high, HW, "improved")
    gpu = HW.memory_bytes / GIB
    assert low["non_offloadable_gib"] <= gpu < high["non_offloadable_gib"]
    assert limit.x_high == 2 * limit.x_low  # the paper's grid, x = 2^k
    t = math.log(gpu / low["non_offloadable_gib"]) / math.log(high["non_offloadable_gib"] / low["non_offloadable_gib"])
    assert limit.p == pytest.approx(low["p"] * (high["p"] / low["p"]) ** t, rel=1e-12)
    assert low["time_days"] < limit.time_days < high["time_days"]
    # the offload limit reads the total memory, which crosses first
    assert scaling.offload_limit(HW).p < limit.p
    # with memory a rule: the last feasible model and the next, their geometric mean
    ruled = scaling.feasibility_limit(HW, assumptions=TABLES)
    low = scaling.fastest_row(ruled.x_low, HW, "improved", assumptions=TABLES)
    high = scaling.fastest_row(ruled.x_high, HW, "improved", assumptions=TABLES)
    assert low["feasible"] and not high["feasible"] and ruled.p == pytest.approx(math.sqrt(low["p"] * high["p"]))


def test_the_fine_grid_refines_between_the_bracketing_models():
    fine = scaling.SCALING_ASSUMPTIONS.replace(scaling_grid="fine")
    month = scaling.time_limit(scaling.ONE_MONTH_DAYS, HW, assumptions=fine)
    assert month.grid == "fine" and month.x_high - month.x_low < month.x_low  # neighbours on the refined grid
    low = scaling.fastest_row(month.x_low, HW, "improved", assumptions=fine)
    assert low["time_days"] <= scaling.ONE_MONTH_DAYS
    assert scaling.pow2_xs() == tuple(2**k for k in range(1, 12))


def test_time_limits_interpolate_between_bracketing_models():
    month = scaling.time_limit(scaling.ONE_MONTH_DAYS, HW)
    low = scaling.fastest_row(month.x_low, HW, "improved")
    high = scaling.fastest_row(month.x_high, HW, "improved")
    assert low["time_days"] <= scaling.ONE_MONTH_DAYS < high["time_days"]
    assert month.p_low <= month.p <= month.p_high
    assert low["memory_gib"] <= month.memory_gib <= high["memory_gib"]
    year = scaling.time_limit(scaling.ONE_YEAR_DAYS, HW)
    assert year.p > month.p


@pytest.mark.parametrize("hint", [None, 2, 40, 96, 10_000])
def test_galloping_limit_equals_the_full_grid(hint):
    # brute force: the limit found by visiting every grid row, against galloping from any start
    xs = scaling.sweep_xs(2, 128, 14)
    full = scaling.time_limit(1.0, HW, xs=xs)
    fast = scaling.time_limit(1.0, HW, xs=xs, monotone=True, hint=hint)
    assert (fast.x_low, fast.x_high, fast.p) == (full.x_low, full.x_high, full.p)
    # a condition that holds on the whole grid (or nowhere) has no limit either way
    assert scaling.time_limit(1e9, HW, xs=xs[:4], monotone=True, hint=hint) is None
    assert scaling.time_limit(1e-12, HW, xs=xs[:4], monotone=True, hint=hint) is None


def test_tensor_parallelism_reaches_the_caps_degree_without_a_node_limit():
    """eq:overhead_condition with eq:tensor_intensity by hand: 16 (n_a - 1) ... the NVLink threshold 312e12 /
    (600 GiB/s) = 484.3 flop/B against (4 + 2 n_I) d_m / (3 (n_a - 1)): n_a - 1 <= 0.25 * 12 * 320^2 / (3 * 484.3)
    = 211.4, so X320 takes 212 devices with the node-size limit removed (not at most 2 d_a = 320 nor d_a = 160)."""
    from lgacc.search.candidates import tensor_cap
    from lgacc.search.request import SearchRequest

    nu = 312e12 / (600 * 2**30)
    expected = 1 + math.floor(0.25 * 12 * 320**2 / (3 * nu))
    unlimited = scaling.scenario_hardware(HW, "unlimited")
    request = SearchRequest.create(x_model(320), unlimited, "improved", "3d", assumptions=scaling.SCALING_ASSUMPTIONS)
    assert tensor_cap(request) == expected == 212
    row = scaling.fastest_row(320, unlimited, "improved", "unlimited")
    assert row["n_a"] == expected
    # with 16-GPU nodes InfiniBand carries more than 16 where its cap allows, 1 + 0.25 12 x^2 / (3 nu_IB): 18 at X320,
    # where 16 over NVLink is still faster (16 / (1 + 15 k_NV) > 18 / (1 + 17 k_IB)), and 46 at X512, where it is not
    nu_ib = 312e12 / (50 * 2**30)
    for x, n_a in ((320, 16), (512, 46)):
        cap = 1 + math.floor(0.25 * 12 * x**2 / (3 * nu_ib))
        request = SearchRequest.create(x_model(x), HW, "improved", "3d", assumptions=scaling.SCALING_ASSUMPTIONS)
        assert tensor_cap(request) == cap
        k_nv, k_ib = 3 * nu / (12 * x**2), 3 * nu_ib / (12 * x**2)
        best = 16 if 16 / (1 + 15 * k_nv) > cap / (1 + (cap - 1) * k_ib) else cap
        assert scaling.fastest_row(x, HW, "improved", "limited")["n_a"] == best == n_a


@pytest.mark.parametrize("scenario", ["limited", "unlimited"])
def test_keeping_the_largest_degree_per_link_changes_no_fastest_configuration(monkeypatch, scenario):
    """With memory an output the search keeps only the largest allowed n_a of each link; without that pruning
    (every n_a up to the cap) it picks the same configurations."""
    import sys

    from lgacc.search import fastest

    candidates = sys.modules["lgacc.search.candidates"]
    spec = scaling.scenario_hardware(HW, scenario)
    for x in (32, 160, 336):
        for method in ("baseline", "improved"):
            pruned = fastest(x_model(x), spec, method, "3d", explain=False, assumptions=scaling.SCALING_ASSUMPTIONS)
            with monkeypatch.context() as patch:
                patch.setattr(candidates, "tensor_prunable", lambda request: False)
                full = fastest(x_model(x), spec, method, "3d", explain=False, assumptions=scaling.SCALING_ASSUMPTIONS)
            assert pruned.config == full.config, (x, method)
            assert pruned.evaluation.time_days == full.evaluation.time_days


def test_unlimited_node_is_never_slower():
    unlimited = scaling.scaling_sweep(HW, "unlimited", methods=("improved",), xs=(160, 256))
    limited = scaling.scaling_sweep(HW, "limited", methods=("improved",), xs=(160, 256))
    assert (unlimited.time_days.values <= limited.time_days.values * (1 + 1e-12)).all()
    assert (unlimited.n_a.values > 16).any()


def test_ethernet_swaps_the_inter_node_link():
    spec = scaling.scenario_hardware(HW, "ethernet")
    assert spec.threshold("infiniband") == pytest.approx(HW.threshold("ethernet"))
    with pytest.raises(ValueError):
        scaling.scenario_hardware(HW, "carrier pigeon")


def test_constant_time_ratio_decreases_with_model_size():
    frame = scaling.constant_time_sweep(HW, methods=("improved",), xs=(64, 160, 512, 1024))
    ratio = frame[frame.method == "improved"].ratio_s.values
    assert (ratio[1:] < ratio[:-1]).all()
    # one month exactly: ratio = memory of an instance / compute it needs
    row = frame[(frame.method == "improved") & (frame.x == 160)].iloc[0]
    assert row.ratio_s == pytest.approx(row.memory_gib_per_instance * GIB * scaling.ONE_MONTH_DAYS
                                        / (row.time_days_without_tensor * HW.peak_flop_per_s))


def test_offload_bandwidth_is_peak_over_intensity():
    frame = scaling.offload_sweep(HW, methods=("partitioned",), xs=(160,))
    row = frame.iloc[0]
    assert row.bandwidth_state_bytes_per_s * row.nu_state == pytest.approx(HW.peak_flop_per_s)
    # sec:fast_checkpoints: the partitioned state of a trillion-parameter model can go to a hard drive
    assert row.nu_state > HW.threshold("hdd")


@pytest.mark.parametrize("label", ["fig:scaling_limited", "fig:scaling_constant_time"])
def test_figures_have_log_axes_with_units(label):
    figure = get_artifact(label).reproduce("a100-80gb")
    assert isinstance(figure, Figure)
    for ax in figure.axes:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert "(" in ax.get_ylabel() and "parameters" in ax.get_xlabel()


SMALL_XS = (2, 8, 16, 24, 32, 48, 64)


@pytest.fixture(scope="module")
def ethernet_small():
    return scaling.scaling_sweep(HW, "ethernet", xs=SMALL_XS)


def test_ethernet_sweep_has_the_unpartitioned_improved_series(ethernet_small):
    """fig:scaling_Ethernet's dotted line: the improved method searched with ``partitioned=False``."""
    assert scaling.NOT_PARTITIONED in scaling.scenario_methods("ethernet")
    assert scaling.NOT_PARTITIONED not in scaling.scenario_methods("limited")
    series = ethernet_small[ethernet_small.method == scaling.NOT_PARTITIONED]
    assert tuple(series.x) == SMALL_XS and series.feasible.astype(bool).all()
    # the whole state on each instance: 12 p / (n_l n_a), not 12 p / n_gpu
    state = series.state_gib * GIB
    assert state.values == pytest.approx((12 * series.p / (series.n_l * series.n_a)).values, rel=1e-9)
    improved = ethernet_small[ethernet_small.method == "improved"]
    assert (improved.state_gib * GIB).values == pytest.approx((12 * improved.p / improved.n_gpu).values, rel=1e-9)


def test_ethernet_unpartitioned_is_no_slower_for_the_smallest_models(ethernet_small):
    """"For the smallest models, the partition can be avoided to further reduce the training time"."""
    series = ethernet_small[ethernet_small.method == scaling.NOT_PARTITIONED].set_index("x")
    improved = ethernet_small[ethernet_small.method == "improved"].set_index("x")
    both = series.feasible.astype(bool) & improved.feasible.astype(bool)
    assert both.sum() >= 5
    assert (series.time_days[both] <= improved.time_days[both] * (1 + 1e-12)).all()
    # and strictly faster somewhere: the partition's communication is what Ethernet makes expensive
    assert (series.time_days[both] < improved.time_days[both] * (1 - 1e-3)).any()


def test_ethernet_figure_draws_the_dotted_line():
    figure = get_artifact("fig:scaling_Ethernet").build(HW)
    frame = scaling.scaling_sweep(HW, "ethernet")  # cached: the figure's own rows
    part = frame[frame.method == "improved"].set_index("p").time_days
    for ax in figure.axes:
        dotted = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
        assert len(dotted) == 1
        x, y = (np.asarray(v, float) for v in dotted[0].get_data())
        drawn = ~np.isnan(y)
        assert drawn.sum() >= 3 and (~drawn).any()  # drawn for some models, not at every scale
    # the time axis: every drawn point is faster than the partitioned improved method
    time_ax = next(ax for ax in figure.axes if "time" in ax.get_ylabel().lower())
    x, y = (np.asarray(v, float) for v in next(l for l in time_ax.get_lines() if l.get_linestyle() == ":").get_data())
    drawn = ~np.isnan(y)
    for p, t in zip(x[drawn], y[drawn]):
        assert t < part[p]


def test_unpartitioned_helps_keeps_only_faster_rows():
    rows = [("improved", 2, 1.0), (scaling.NOT_PARTITIONED, 2, 0.5), ("improved", 4, 1.0),
            (scaling.NOT_PARTITIONED, 4, 1.0), ("improved", 6, 1.0), (scaling.NOT_PARTITIONED, 6, 0.9995)]
    frame = pd.DataFrame([{"method": m, "x": x, "time_days": t, "feasible": True} for m, x, t in rows])
    assert list(scaling.unpartitioned_helps(frame).x) == [2]
    assert list(scaling.unpartitioned_helps(frame, margin=1e-4).x) == [2, 6]
