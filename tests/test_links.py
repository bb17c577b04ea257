"""Issue #35: the collectives' alpha-beta from a published NCCL benchmark, not fitted on step times."""

import numpy as np
import pytest

from lgacc.model.calibrated import FITTED, fitted_calibration
from lgacc.model.calibrated.links import REFERENCE_TABLE, fit_table, link_constants, link_fits
from lgacc.paths import DATA


def test_an_exact_alpha_beta_table_is_recovered():
    sizes = 2.0 ** np.arange(10, 34)
    alpha, bandwidth, ranks = 20e-6, 200e9, 8
    times = alpha + 2 * (ranks - 1) / ranks * sizes / bandwidth
    busbw = 2 * (ranks - 1) / ranks * sizes / times  # nccl-tests' definition
    fitted_alpha, fitted_bandwidth, worst = fit_table(sizes, busbw, ranks)
    assert fitted_alpha == pytest.approx(alpha, rel=1e-9) and fitted_bandwidth == pytest.approx(bandwidth, rel=1e-9)
    assert worst < 1e-9


def test_the_shipped_tables_and_what_the_model_reads():
    fits = link_fits()
    a100 = fits[REFERENCE_TABLE]
    # the table's largest message reaches 231.58 GB/s of the 300 GB/s link, its 1 KiB message 0.04 GB/s: the fitted
    # bandwidth lies below the asymptote, the latency is that of the small messages (1 KiB: 1.75 KiB / 0.04 GB/s = 45 us)
    assert 150e9 < a100.busbw < 231.58e9 and 0.5 < a100.efficiency < 231.58 / 300
    assert 10e-6 < a100.alpha_s < 60e-6
    assert fits["h200-sxm-nvlink4"].busbw > a100.busbw  # NVLink 4 with NVLS is faster than NVLink 3
    constants = link_constants()
    calibration = fitted_calibration()
    assert calibration.eta == constants["eta"] and calibration.nvlink_latency_s == constants["nvlink_latency_s"]
    assert FITTED == ("kappa", "xi") and calibration.T_0 == 0


def test_each_gpu_reads_the_table_of_its_nvlink_generation():
    from lgacc.model.calibrated.expected import inputs
    from lgacc.model.calibrated.links import nvlink_constants
    from lgacc.model.hardware import load_hardware

    fits = link_fits()
    calibration = fitted_calibration()
    for name, table in (("h100-sxm", "h200-sxm-nvlink4"), ("h200-sxm", "h200-sxm-nvlink4"),
                        ("a100-80gb", None), ("gb200-nvl72", None)):  # A100's spec states 600 GiB/s: the reference
        hardware = load_hardware(name)
        found = nvlink_constants(hardware.nvlink_bandwidth_bytes_per_s / 2, hardware.gpus_per_node)
        assert (found and found[0]) == table, name
        values = inputs("X64", name, "baseline", n_b=8, calibration=calibration)
        expected_eta = round(fits[table].efficiency, 4) if table else calibration.eta
        expected_alpha = round(fits[table].alpha_s, 7) if table else calibration.nvlink_latency_s
        assert float(values["eta_nvl"]) == expected_eta and float(values["alpha_nvl"]) == expected_alpha, name
        assert float(values["delta_nvl"]) == 0  # a table of one group size has no latency per rank
        assert float(values["eta"]) == calibration.eta  # InfiniBand keeps the reference's share


def test_the_b200_reads_the_collectives_measured_on_its_node():
    # SimuMax's B200 release node (configs/system/b200_bf16_ceperm.json at 4dcaae5): all-gather 0.6735, reduce-scatter
    # 0.6731 of 900 GiB/s; latency 9.1828 and 8.0325 us per rank beyond the first, plus 23.1049 and 25.5604 us
    from lgacc.model.calibrated.expected import inputs
    from lgacc.model.calibrated.links import measured_fits, nvlink_constants
    from lgacc.model.hardware import load_hardware

    fit = measured_fits()["b200-nvlink5"]
    assert fit.efficiency * fit.link_bytes_per_s == pytest.approx(0.6733 * 900 * 2**30, rel=1e-12)  # 650.7 GB/s
    for name in ("b200", str(DATA / "validation" / "hardware" / "b200-simumax.yaml")):
        hardware = load_hardware(name)
        assert nvlink_constants(hardware.nvlink_bandwidth_bytes_per_s / 2, hardware.gpus_per_node)[0] == "b200-nvlink5"
        values = inputs("X64", hardware, "baseline", n_b=8, n_a=8, calibration=fitted_calibration())
        assert float(values["eta_nvl"]) == pytest.approx(0.7230, abs=1e-4)  # 650.7 of the spec's 900 GB/s
        # a group of 8: the mean of the two collectives' latencies, (87.3845 + 81.7879) / 2 us
        latency = float(values["alpha_nvl"]) + 7 * float(values["delta_nvl"])
        assert latency == pytest.approx(84.586e-6, abs=5e-9)  # each constant kept to the nanosecond
    # the same link in a 72-GPU rack domain (GB200 NVL72) was not measured: no table
    assert nvlink_constants(900e9, 72) is None and nvlink_constants(900e9) is None


def test_the_tensor_collective_latency_grows_with_the_group_over_nvlink_only():
    from lgacc.model.calibrated.collectives import tensor_link
    from lgacc.model.calibrated.symbols import G, alpha_ib, alpha_nvl, delta_nvl
    from lgacc.model.symbols import n_a

    _, latency = tensor_link()
    values = {alpha_nvl: 20e-6, delta_nvl: 5e-6, alpha_ib: 30e-6, G: 8}
    assert float(latency.subs({**values, n_a: 2})) == pytest.approx(25e-6)
    assert float(latency.subs({**values, n_a: 8})) == pytest.approx(55e-6)
    assert float(latency.subs({**values, n_a: 16})) == pytest.approx(30e-6)  # InfiniBand: no step term


def test_the_b200_all_to_all_reads_its_own_fit_by_group_size():
    # SimuMax's all2all on the same node: 0.5968 of 900 GiB/s, 7.3039 us a rank beyond the first, and a fixed part by
    # group size (2: 51.0578 us, 4: 19.2102 us, 8: 0)
    from lgacc.model.calibrated.links import all_to_all_constants

    for ranks, latency in ((2, 51.0578 + 7.3039), (4, 19.2102 + 3 * 7.3039), (8, 7 * 7.3039)):
        efficiency, alpha = all_to_all_constants(900e9, 8, ranks)
        assert efficiency * 900e9 == pytest.approx(0.5968 * 900 * 2**30, rel=1e-12)
        assert alpha == pytest.approx(latency * 1e-6, rel=1e-12), ranks
    assert all_to_all_constants(900e9, 72, 8) is None and all_to_all_constants(450e9, 8, 8) is None


@pytest.mark.parametrize("change", ["drop ops", "drop fixed", "ops not a mapping", "gpus not a number"])
def test_a_malformed_fits_file_is_one_clear_line(tmp_path, change):
    import yaml

    from lgacc.errors import UserInputError
    from lgacc.model.calibrated.links import FITS_FILE, measured_fits

    data = yaml.safe_load(FITS_FILE.read_text())
    fit = data["fits"][0]
    if change == "drop ops":
        del fit["ops"]
    elif change == "drop fixed":
        for op in fit["ops"].values():
            op.pop("fixed_latency_us", None)
    elif change == "ops not a mapping":
        fit["ops"] = ["all_gather"]
    else:
        fit["gpus_per_node"] = "eight"
    path = tmp_path / "fits.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(UserInputError, match="fits.yaml: ") as raised:
        measured_fits(path)
    assert "\n" not in str(raised.value)
