"""The measured-runs chapter's sentences on made-up frames: the bound's failures named with their method only
where the frame shows them, the worst held-out runs in order, the counts and errors as the summary gives them."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from lgacc.studies.validation import chapter


def frame(upper_bound=(True, True, False)) -> pd.DataFrame:
    return pd.DataFrame({"id": ["a-1", "a-2", "b-1"], "publication": ["A", "A", "B"],
                         "method": ["baseline", "baseline", "partitioned"], "upper_bound": list(upper_bound),
                         "uses": ["time", "time memory", "memory"], "lopo_ratio": [1.10, 0.70, float("nan")],
                         "expected_lopo_s": [11.0, 7.0, float("nan")], "measured_step_s": [10.0, 10.0, 5.0]})


NUMBERS = {"runs": 3, "publications": 2, "time_runs": 2, "memory_runs": 1,
           "methods": {"baseline": {"runs": 2, "publications": 1}, "partitioned": {"runs": 1, "publications": 1}},
           "ideal_upper_bound": {"per-gpu": 2, "ring": 3, "every_reading": 2, "of": 3},
           "lopo_mean_error": 0.2, "lopo_max_error": 0.3, "fitted_mean_error": 0.1, "within_publication_error": 0.05,
           "memory_mean_error": 0.08, "memory_max_error": 0.08}


def test_the_bound_names_the_runs_it_fails_for_and_their_method():
    text = chapter.bound_paragraph(frame(), NUMBERS)
    assert "for 2 of 3 runs; it is not for 1 runs, all of the partitioned method (b-1)" in text
    assert "Under the **ring** reading it holds for 3 of 3 runs." in text
    assert "the bound holds for 2 of 3." in text
    held = chapter.bound_paragraph(frame((True, True, True)), NUMBERS | {"ideal_upper_bound": {
        "per-gpu": 3, "ring": 3, "every_reading": 3, "of": 3}})
    assert "an upper bound on speed for every run" in held and "finding about the paper" not in held


def test_the_worst_runs_are_the_held_out_ones_in_order():
    text = chapter.worst_runs_markdown(frame(), count=5)
    assert text.startswith("The 2 runs the calibrated model predicts worst")  # the memory-only run has no time
    assert text.index("`a-2`") < text.index("`a-1`") and "(-30%)" in text and "(+10%)" in text


def test_counts_and_errors_as_the_summary_gives_them():
    assert chapter.runs_sentence(NUMBERS).startswith("**3 runs from 2 publications and benchmark suites**: 2 of the "
                                                     "baseline method (1 sources), 1 of the partitioned method")
    parameters = SimpleNamespace(kappa=0.77, eta=0.71, xi=0.3, T_0=0.0, nvlink_latency_s=44e-6, fragmentation=0.05,
                                 host_layer_s=2.8e-3, host_micro_batch_s=2.1e-3, host_step_s=2.0e-3)
    errors = chapter.errors_sentence(NUMBERS, parameters)
    assert "**Leave one publication out: 20.0% mean, 30.0% worst** over 2 runs of 2 sources" in errors
    assert "within publication: 5.0%, beside Calculon's 3.65%" in errors and "Memory: 8.0% mean" in errors
    assert "5% of the activations" in chapter.memory_sentence(parameters)
    assert "20.0% for the calibrated model" in chapter.onefactor_sentence(
        {"kernel_efficiency": 0.6, "lopo_mean_abs_error": 0.25}, NUMBERS)


def test_the_errors_sentence_names_the_two_fitted_parameters_and_the_published_links():
    parameters = SimpleNamespace(kappa=0.74, eta=0.68, xi=0.31, T_0=0.0, nvlink_latency_s=44e-6, fragmentation=0.05,
                                 host_layer_s=2.5e-3, host_micro_batch_s=2.1e-3, host_step_s=2.0e-3)
    text = chapter.errors_sentence(NUMBERS, parameters)
    assert "$\\kappa$ = 0.74" in text and "$\\xi$ = 0.31" in text and "the two fitted parameters" in text
    assert "$\\eta$ = 0.68" in text and "44 µs" in text and "NCCL" in text
    assert "NVLink 4 table" in text and "2.5 ms per layer and micro-batch, 2.1 ms per micro-batch and 2.0 ms per step" in text
    # the B200's collectives measured on its node (data/calibrated/nccl_collective_fits.yaml): the mean of SimuMax's
    # all-gather and reduce-scatter, (23.1049 + 25.5604) / 2 = 24.3 us and (9.1828 + 8.0325) / 2 = 8.6 us a rank
    assert "$\\eta$ 0.723, 24 µs plus 8.6 µs for each rank beyond the first" in text


def test_the_host_floor_bullet_divides_the_measured_steps_by_their_layers():
    ids = ["mtut-tpstrong-r12-gpt2-1.2b-tp2-gbs8", "mtut-tpstrong-r13-gpt2-1.2b-tp4-gbs8",
           "mtut-tpstrong-r14-gpt2-1.2b-tp8-gbs8", "simumax-b200-llama3-70b-l12-tp8-pp1-dp1-mbc4-cef",
           "mtut-pp-r5-gpt2-8.3b-pp8-m16", "mtut-pp-r6-gpt2-8.3b-pp8-m32"]
    made_up = pd.DataFrame({"id": ids, "measured_step_s": [0.2, 0.21, 0.25, 0.24, 1.0, 2.0],
                            "n_mu": [1, 1, 1, 4, 16, 32], "lopo_ratio": [1, 1, 1, 1, 0.79, 1.04]})
    runs = [SimpleNamespace(id=i, model=SimpleNamespace(d_l=layers)) for i, layers in zip(ids, (40, 40, 40, 12, 72, 72))]
    parameters = SimpleNamespace(host_layer_s=2.8e-3, host_megatron_layer_s=1.5e-3, host_megatron_step_s=0.0,
                                 host_megatron_step_layer_s=1.2e-3, host_megatron_micro_batch_s=5.6e-3,
                                 host_te_layer_s=1.8e-3)
    te = dict(zip(ids, (0.31, 0.25, 0.28, 0.02, 0.021, -0.03)))
    text = chapter.host_floor_bullet(made_up, runs, parameters, te)
    # the fastest of the three steps over 40 layers: 0.2 / 40 = 5.0 ms; 0.24 s / (4 x 12) = 5.0 ms
    assert "0.2, 0.21 and 0.25 s" in text and "5.0 ms per layer." in text
    assert "read 5.0 ms per layer and micro-batch" in text
    # Megatron's floor: plain PyTorch's 2.8 ms and Megatron-Core's 1.5 ms more a layer and micro-batch, 1.2 ms a layer
    # and step, 5.6 ms a micro-batch: for 40 layers and one micro-batch 0 + 40 x 1.2 + 5.6 + 40 x 4.3 = 225.6 ms
    assert "4.30 ms per layer and micro-batch (plain PyTorch's 2.80 ms and 1.50 ms more)" in text
    assert "1.20 ms per layer and step" in text and "5.60 ms per micro-batch and 0.00 ms per step" in text
    assert "0.226 s for the 1.2B model's 40 layers and one micro-batch" in text
    assert "still read -21% and +4% with their source left out" in text
    # read with Transformer Engine's host cost: the 1F1B runs and Llama's as given, the 1.2B runs' lowest and highest
    assert "costs the host 1.80 ms more per layer and micro-batch" in text
    assert "would come to +2% and -3% and Llama-3-70B's to +2%" in text and "would go to +25% to +31%" in text
    assert chapter.host_floor_bullet(made_up.iloc[:2], runs, parameters, te) == ""


def test_the_host_floor_bullet_computes_the_transformer_engine_readings_itself_when_not_given():
    """The page's call (no readings given): each named run read with host_framework=megatron_te, its held-out ratio
    scaled by what that reading changes; a 1F1B run waits on the host, so it grows by more than the TE layer cost alone
    would add to its measured step."""
    from lgacc.model.calibrated import fitted_calibration
    from lgacc.studies.validation import load_runs

    ids = ["mtut-tpstrong-r12-gpt2-1.2b-tp2-gbs8", "mtut-tpstrong-r13-gpt2-1.2b-tp4-gbs8",
           "mtut-tpstrong-r14-gpt2-1.2b-tp8-gbs8", "simumax-b200-llama3-70b-l12-tp8-pp1-dp1-mbc4-cef",
           "mtut-pp-r5-gpt2-8.3b-pp8-m16", "mtut-pp-r6-gpt2-8.3b-pp8-m32"]
    runs = [run for run in load_runs() if run.id in ids]
    frame = pd.DataFrame({"id": ids, "measured_step_s": [0.2, 0.2, 0.205, 0.24, 1.16, 2.05],
                          "n_mu": [1, 1, 1, 4, 16, 32], "lopo_ratio": [1.0] * 6})
    parameters = fitted_calibration()
    readings = chapter.te_readings(frame, runs, parameters, ids)
    assert all(value >= 0 for value in readings.values())  # a heavier host never makes a step faster
    assert readings["mtut-pp-r6-gpt2-8.3b-pp8-m32"] > 0.3  # 39 pipeline slots of 9 host-paced layers each
    text = chapter.host_floor_bullet(frame, runs, parameters)
    assert text == chapter.host_floor_bullet(frame, runs, parameters, readings)
    r5, r6 = readings["mtut-pp-r5-gpt2-8.3b-pp8-m16"], readings["mtut-pp-r6-gpt2-8.3b-pp8-m32"]
    assert f"would come to {r5:+.0%} and {r6:+.0%}" in text
