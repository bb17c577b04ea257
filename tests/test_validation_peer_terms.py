"""Term by term beside SimuMax (lgacc.studies.validation.peer_terms): SimuMax's breakdown, kept as data, against the
calibrated model's parts on the same B200 runs."""

from __future__ import annotations

import math

import pytest

from lgacc.errors import UserInputError
from lgacc.studies.validation.peer_terms import (TERMS, held_out_calibration, lgacc_terms, load_peer_terms,
                                                 release_tool_steps, term_comparison, term_table)
from lgacc.studies.validation.runs import load_runs


@pytest.fixture(scope="module")
def runs():
    return load_runs()


@pytest.fixture(scope="module")
def comparison(runs):
    return term_comparison(runs)


def _significant(value: float, digits: int = 5) -> float:
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def test_simumaxs_terms_sum_to_the_column_its_table_prints(runs):
    # two independent records of SimuMax's prediction: the run file transcribes the release table's "perf ms" (five
    # significant digits); the terms file sums the operations of SimuMax run here at the release's commit
    by_id = {run.id: run for run in runs}
    terms = load_peer_terms()
    assert len(terms) == 4
    for run_id, parts in terms.items():
        printed = by_id[run_id].peers["SimuMax"]["iteration_time_s"]
        assert _significant(sum(parts.values())) == pytest.approx(printed, rel=1e-9)
        assert set(parts) == set(TERMS) and min(parts.values()) >= 0


def test_the_release_tool_as_shipped_reads_slower_than_its_own_table():
    steps = release_tool_steps()
    assert len(steps) == 4
    # the unfused cross entropy reads and writes the fp32 logits several times: every row slower, by a few percent
    assert all(0.01 < unfused / step - 1 < 0.05 for step, unfused in steps.values())


def test_lgaccs_terms_sum_to_its_held_out_step(runs, comparison):
    from lgacc.studies.validation import frame_for

    frame = frame_for().set_index("id")
    totals = comparison[comparison["term"] == "total"].set_index("run")["lgacc_s"]
    for run_id, total in totals.items():
        # the leave-one-publication-out column of the side-by-side table, computed by the validation's own loop
        assert total == pytest.approx(frame.loc[run_id, "expected_lopo_s"], rel=1e-9)


def test_both_tools_read_the_same_kernel_table_lgacc_at_kappa_of_it(runs, comparison):
    # SimuMax times each product at the table's efficiency, lgacc at kappa times it: the layers' compute parts by
    # 1/kappa on every run, whatever its split (to the kappa's four decimals and the attention's reading)
    chosen = [run for run in runs if run.id in set(comparison["run"])]
    kappa = held_out_calibration(runs, chosen).kappa
    compute = comparison[comparison["term"] == "layer_compute"]
    for row in compute.itertuples():
        assert row.lgacc_s * kappa / row.peer_s == pytest.approx(1, abs=0.003)


def test_a_run_without_tensor_parallelism_has_no_collective_and_one_without_a_pipeline_no_ramp(comparison):
    cells = comparison.set_index(["run", "term"])
    for run_id in comparison["run"].unique():
        tp1 = "-tp1-" in run_id
        pp1 = "-pp1-" in run_id
        for tool in ("peer_s", "lgacc_s"):
            assert (cells.loc[(run_id, "layer_tensor_parallel"), tool] == 0) == tp1
            assert (cells.loc[(run_id, "ramp"), tool] == 0) == pp1


def test_lgaccs_layer_terms_are_its_per_layer_parts_times_the_stages_passes(runs):
    from lgacc.model.calibrated import fitted_calibration
    from lgacc.studies.validation.calibrated import predict

    run = next(run for run in runs if run.id == "simumax-b200-llama3-70b-l12-tp1-pp2-dp4-mbc8-cef")
    calibration = fitted_calibration()
    parts = predict([run], calibration)
    terms = lgacc_terms([run], calibration)[run.id]
    # 8 micro-batches through the last stage's 12 / 2 = 6 layers
    assert terms["layer_compute"] == pytest.approx(48 * parts["layer_matmul"][0])
    assert terms["layer_memory_bound"] == pytest.approx(48 * parts["layer_memory_bound"][0])
    assert sum(terms.values()) == pytest.approx(parts["step_time_s"][0])


def test_the_page_table_has_a_row_per_term_and_a_column_per_run(runs, comparison):
    table = term_table(comparison, runs)
    assert list(table.columns[1:]) == ["TP 8", "TP 1, PP 2", "TP 2", "TP 4"]
    assert len(table) == len(TERMS) + 2
    assert table.iloc[-1, 1] == "556.7"  # the measured step of the TP 8 run, as the release table prints it
    assert all("\u00a0/\u00a0" in cell for cell in table.iloc[0, 1:])  # a pair never breaks across lines


@pytest.mark.parametrize("change, message", [
    (lambda row: row["terms_ms"].pop("optimizer"), "must name exactly"),
    (lambda row: row["terms_ms"].update(ramp=-1.0), "0 or more"),
    (lambda row: row.update(step_ms=row["step_ms"] + 1), "its terms sum to"),
    (lambda row: row["terms_ms"].update(host=float("nan")), "must be a number"),
])
def test_a_bad_breakdown_file_is_one_clear_error(tmp_path, change, message):
    import yaml

    from lgacc.studies.validation.peer_terms import SIMUMAX_TERMS

    data = yaml.safe_load(SIMUMAX_TERMS.read_text(encoding="utf-8"))
    change(data["rows"][0])
    path = tmp_path / "terms.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(UserInputError, match=message):
        load_peer_terms(path)


def test_the_pages_sentences_read_the_comparison(runs, comparison):
    from lgacc.studies.validation import chapter

    chosen = [run for run in runs if run.id in set(comparison["run"])]
    text = chapter.peer_terms_paragraph(comparison, held_out_calibration(runs, chosen).kappa)
    # SimuMax's column is below the measured step on all four rows of the release table (the run files' own columns)
    below = sum(run.peers["SimuMax"]["iteration_time_s"] < run.reported["iteration_time_s"] for run in chosen)
    assert below == 4 and f"SimuMax's total is below it on {below} of the 4 runs" in text
    assert "$\\kappa = " in text and "lgacc charges less" in text
    flag = chapter.peer_flag_sentence(release_tool_steps())
    assert "slower than its own table on these 4 rows" in flag
