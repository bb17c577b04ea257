"""The grading of the paper's hardware statements (:mod:`lgacc.studies.codesign.implications`) on made-up
sweeps whose verdicts are known by hand: each rule holds on one side of its threshold and fails on the other."""

from __future__ import annotations

import math

import pytest

from lgacc.studies.codesign import implications as I

NAN = math.nan


def _row(label: str, model: str = "M", ideal: float = NAN, calibrated: float = NAN, **columns):
    row = {"label": label, "model": model, "split": 1, "split_links": "divided", "ideal_time_days": ideal,
           "calibrated_time_days": calibrated, "ideal_n_a": 8, "calibrated_n_a": 8, "ideal_offload": False,
           "calibrated_offload": False, "ideal_gpu_hours": NAN, "calibrated_gpu_hours": NAN}
    row.update(columns)
    return row


def _grade(rows, statement, time_model="calibrated"):
    frame = I.rows_frame(rows)
    (grade,) = [g for g in I.grade_all(frame) if g.statement == statement and g.time_model == time_model]
    return grade


def _bandwidth_rows(slow_low: float, slow_high: float):
    rows = []
    for peak, slow in ((312, slow_low), (1248, slow_high)):
        for hbm, factor in ((2189, slow), (8757, 1.0)):
            rows.append(_row(f"peak_tflop_per_s={peak} gpu_memory_bandwidth_gib_per_s={hbm}", ideal=1.0,
                             calibrated=factor, peak_tflop_per_s=peak, hbm_gb_per_s=hbm))
    return rows


def test_a_memory_bottleneck_holds_from_ten_percent_and_growing():
    assert _grade(_bandwidth_rows(1.05, 1.20), "bandwidth").mark == I.HOLDS
    assert _grade(_bandwidth_rows(1.05, 1.08), "bandwidth").mark == I.FAILS  # below 10 %
    assert _grade(_bandwidth_rows(1.30, 1.20), "bandwidth").mark == I.FAILS  # not worse with more cores
    ideal = _grade(_bandwidth_rows(1.05, 1.20), "bandwidth", "ideal")
    assert ideal.mark == I.UNGRADED and "no HBM" in ideal.measure


def _interconnect_rows(domain_times, link_times, tensor=(8, 16, 40, 40)):
    rows = [_row(f"gpus_per_node={g}", ideal=t, calibrated=t, gpus_per_node=g, ideal_n_a=a, calibrated_n_a=a)
            for g, t, a in zip((8, 16, 72, 576), domain_times, tensor)]
    rows += [_row(f"gpus_per_node=72 nvlink_bandwidth_gib_per_s={b}", ideal=t, calibrated=t, gpus_per_node=72,
                  nvlink_gb_per_s=b) for b, t in zip((80, 1288), link_times)]
    return rows


def test_the_interconnect_is_key_from_one_and_a_half_times():
    assert _grade(_interconnect_rows((10, 5, 2, 2), (8, 1)), "interconnect").mark == I.HOLDS
    assert _grade(_interconnect_rows((10, 9, 7, 7), (8, 1)), "interconnect").mark == I.FAILS  # 1.43x
    assert _grade(_interconnect_rows((10, 5, 2, 2), (8, 6)), "interconnect").mark == I.FAILS  # bandwidth 1.33x
    assert _grade(_interconnect_rows((10, 5, 2, 2), (8, 1), (8, 8, 8, 8)), "interconnect").mark == I.FAILS
    assert _grade(_interconnect_rows((10, NAN, 2, 2), (8, 1)), "interconnect").mark == I.UNGRADED


def _size_rows(times):
    return [_row(f"split={k} split_links={links}", ideal=t, calibrated=t, split=k, split_links=links)
            for k, t in zip((1, 2, 4), times) for links in ("divided", "kept")]


def test_gpu_size_is_not_important_within_ten_percent():
    assert _grade(_size_rows((1.0, 1.09, 3.0)), "size").mark == I.HOLDS
    assert _grade(_size_rows((1.0, 1.5, 1.2)), "size").mark == I.FAILS
    assert _grade(_size_rows((NAN, 1.0, 1.0)), "size").mark == I.UNGRADED


def _memory_rows(times, memories=(1, 5, 10, 40, 80)):
    return [_row(f"gpus_per_node=16 memory_gib={m}", ideal=t, calibrated=t, gpus_per_node=16, memory_gib=m)
            for m, t in zip(memories, times)]


def test_a_small_memory_is_enough_up_to_ten_gib():
    assert _grade(_memory_rows((NAN, NAN, 1.05, 1.0, 1.0)), "memory").mark == I.HOLDS
    grade = _grade(_memory_rows((NAN, NAN, 2.0, 1.0, 1.0)), "memory")
    assert grade.mark == I.FAILS and "40 GiB" in grade.measure
    assert _grade(_memory_rows((NAN,) * 5), "memory").mark == I.UNGRADED


def test_timing_grows_linearly_with_designs_and_models():
    text = I.timing_markdown(10, 2, 2.0, workers=2)
    assert "20 searches" in text and "2 s of one core" in text and "100 ms per design" in text
    assert "33.3 min on one core" in text and "16.7 min on 2" in text  # 10,000 x 2 x 0.1 s = 2000 s


def test_the_summary_names_every_grade():
    rows = _interconnect_rows((10, 5, 2, 2), (8, 1)) + _size_rows((1.0, 1.5, 1.2))
    text = I.summary_markdown(I.grade_all(I.rows_frame(rows)))
    assert "✓ holds for M (ideal), M (calibrated)" in text
    assert "✗ does not hold for M (ideal), M (calibrated)" in text


def test_the_pareto_frame_keeps_each_design_once():
    rows = [_row("a", ideal=1.0, ideal_gpu_hours=10.0), _row("a", ideal=1.0, ideal_gpu_hours=10.0),
            _row("b", ideal=2.0, ideal_gpu_hours=5.0), _row("c", ideal=3.0, ideal_gpu_hours=6.0)]
    front = I.pareto_frame(I.rows_frame(rows), "M")
    assert front["label"].tolist() == ["a", "b"]
    assert I.pareto_front([1, 2, 3], [3, 2, 1]) == [0, 1, 2] and I.pareto_front([1, 1], [2, 2]) == [0]


@pytest.mark.parametrize("value, text", [(500, "500"), (2000, "2k"), (5e6, "5M"), (1e9, "1G")])
def test_tick_labels_are_short(value, text):
    from lgacc.studies.codesign.figures import _short

    assert _short(value) == text
