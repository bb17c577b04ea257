"""The InfiniBand what-if (lgacc.studies.validation.what_if): NCCL's developers' stated ring bandwidth per card
against the model's borrowed share, refitted and held out as `lgacc validate` is."""

from __future__ import annotations

import numpy as np
import pytest

from lgacc.errors import UserInputError
from lgacc.model.calibrated.parameters import fitted_calibration
from lgacc.studies.validation import calibrated as cal
from lgacc.studies.validation.runs import load_runs
from lgacc.studies.validation.tables import comparison, summary
from lgacc.studies.validation.what_if import (infiniband_paragraph, infiniband_table, infiniband_what_if,
                                              load_statements, stated_share)


@pytest.fixture(scope="module")
def runs():
    return load_runs()


@pytest.fixture(scope="module")
def what_if(runs):
    return infiniband_what_if(runs)


def test_the_stated_shares_are_the_quotes_over_the_link():
    statements = load_statements()
    # 24 of HDR's 25 GB/s; the middles of 46-48 and 48-49 of NDR's 50 GB/s
    assert sorted(round(s.share, 4) for s in statements) == [0.94, 0.96, 0.97]
    assert stated_share(statements) == 0.96


@pytest.mark.parametrize("body, message", [
    ("statements: []\n", "non-empty list"),
    ("statements:\n  - {source: s, who: w, date: d, link: HDR, link_gb_per_s: 25, stated_gb_per_s: [24, 26]}\n",
     "within the link's 25"),
    ("statements:\n  - {source: s, who: w, date: d, link: HDR, link_gb_per_s: 25}\n", "missing stated_gb_per_s"),
    ("statements:\n  - {source: s, who: w, date: d, link: HDR, link_gb_per_s: -1, stated_gb_per_s: [1, 1]}\n",
     "must be a positive number"),
])
def test_a_bad_statements_file_is_one_clear_error(tmp_path, body, message):
    path = tmp_path / "statements.yaml"
    path.write_text(body)
    with pytest.raises(UserInputError, match=message):
        load_statements(path)


def test_as_the_model_reads_it_the_what_if_is_validates_held_out_error(runs, what_if):
    # another code path: the comparison frame's leave-one-publication-out column, summarised as validate does
    numbers = summary(comparison(runs), runs)
    assert what_if["model"]["runs"] == numbers["time_runs"]
    assert what_if["model"]["mean_error"] == pytest.approx(numbers["lopo_mean_error"], rel=1e-12)
    assert what_if["model"]["max_error"] == pytest.approx(numbers["lopo_max_error"], rel=1e-12)
    fitted = fitted_calibration()
    assert (what_if["model"]["kappa"], what_if["model"]["xi"]) == (fitted.kappa, fitted.xi)
    assert what_if["eta"] == {"model": fitted.eta, "stated": 0.96}
    by_source = what_if["by_publication"]
    assert by_source["runs"].sum() == numbers["time_runs"]


def test_a_faster_card_never_slows_a_step_and_leaves_one_node_alone(runs):
    dense = cal.fit_runs(runs)
    fitted = fitted_calibration()
    slow = cal.predict(dense, fitted, compact=True)["step_time_s"]
    fast = cal.predict(dense, fitted.replace(eta=0.96), compact=True)["step_time_s"]
    assert np.all(fast <= slow * (1 + 1e-12))
    one_node = np.array([run.n_gpu <= 8 for run in dense])
    assert one_node.any() and np.allclose(fast[one_node], slow[one_node], rtol=1e-12)
    assert np.any(fast[~one_node] < slow[~one_node] * (1 - 1e-3))


def test_the_page_says_what_the_table_holds(what_if):
    statements = load_statements()
    text = infiniband_paragraph(what_if, statements)
    model, stated = what_if["model"], what_if["stated"]
    assert f"{model['mean_error']:.2%} to {stated['mean_error']:.2%}" in text
    assert "24 GB/s of the 25 an HDR 200 Gb/s card" in text and "46–48 and 48–49 GB/s of the 50" in text
    verdict = "does not predict these runs better" if stated["mean_error"] >= model["mean_error"] else "predicts"
    assert verdict in text
    table = infiniband_table(what_if)
    assert len(table) == len(what_if["by_publication"]) and table.columns[0] == "source"
    assert all("\u00a0/\u00a0" in cell for cell in table.iloc[:, 2]) and "\\" not in text.replace("$\\eta$", "").replace(
        "$\\kappa$", "").replace("$\\xi$", "")
