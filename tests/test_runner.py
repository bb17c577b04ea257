"""The notebook runner: parameters, failures reported with their cell, outputs kept.

Independent facts checked: hand-written notebooks whose failing cell (index 3), exception
and printed output are known in advance; exit codes 1 and 2; a relative path made absolute.
"""

from __future__ import annotations

import nbformat

from lgacc.book import run
from notebook_pages import write_notebook


def test_failure_names_notebook_cell_exception_and_keeps_output(tmp_path, capsys):
    source = tmp_path / "src"
    source.mkdir()
    good = write_notebook(source / "good.ipynb", "import os\nprint(hardware, os.getcwd())")
    bad = write_notebook(source / "bad.ipynb", "x = 1", "raise ValueError('broken on purpose')")
    out = tmp_path / "out"
    results = run.run_all("a100-80gb", [good, bad], out, kernel="python3", timeout_s=120, jobs=2)
    by_name = {r.notebook.name: r for r in results}
    assert by_name["good.ipynb"].ok
    failed = by_name["bad.ipynb"]
    assert not failed.ok
    # index 3 of the executed copy: parameters, papermill's injected parameters, x = 1, raise
    assert (failed.cell_index, failed.exception) == (3, "ValueError")
    assert "broken on purpose" in failed.message
    assert (out / "bad.ipynb").is_file()
    description = failed.describe()
    assert "bad.ipynb" in description and "cell 3" in description and "raise ValueError" in description and "ValueError" in description
    executed = nbformat.read(out / "good.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
    assert "a100-80gb" in printed and str(source) in printed  # parameter injected, cwd is the notebook's folder
    assert "Built" in (out / "build_info.md").read_text()
    # the pages that include what the scorecard writes still build when it did not run
    assert (out / run.FINDINGS).is_file() and "did not run" in (out / run.ASSUMPTION_EFFECTS).read_text()


def test_main_exits_nonzero_on_failure_and_two_on_bad_hardware(tmp_path, capsys):
    bad = write_notebook(tmp_path / "bad.ipynb", "1/0")
    assert run.main([str(bad), "--output-dir", str(tmp_path / "o"), "--kernel", "python3", "--jobs", "1"]) == 1
    assert "ZeroDivisionError" in capsys.readouterr().err
    assert run.main([str(bad), "--hardware", "no-such-gpu", "--output-dir", str(tmp_path / "o")]) == 2


def test_a_relative_spec_path_is_made_absolute(tmp_path, monkeypatch, a100_spec):
    import yaml

    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(a100_spec))
    monkeypatch.chdir(tmp_path)
    assert run.hardware_parameter("mine.yaml") == str(tmp_path / "mine.yaml")
    assert run.hardware_parameter("a100-80gb") == "a100-80gb"


def test_progress_bars_are_switched_off_only_where_a_notebook_takes_them(tmp_path):
    with_progress = write_notebook(tmp_path / "sweep.ipynb")
    notebook = nbformat.read(with_progress, as_version=4)
    notebook.cells[0].source += "\nprogress = True"
    nbformat.write(notebook, with_progress)
    plain = write_notebook(tmp_path / "plain.ipynb")
    assert run._parameters(with_progress, "a100-80gb") == {"hardware": "a100-80gb", "progress": False}
    assert run._parameters(plain, "a100-80gb") == {"hardware": "a100-80gb"}


def test_execution_order_starts_the_longest_and_ends_with_the_claims():
    from pathlib import Path

    names = ["a_short", "claims", "sensitivity", "scorecard", "z_short", "fig_scaling_unlimited"]
    order = [p.stem for p in run.execution_order(Path(f"{n}.ipynb") for n in names)]
    assert order == ["scorecard", "fig_scaling_unlimited", "sensitivity", "a_short", "z_short", "claims"]


def test_every_notebook_named_in_the_order_exists():
    stems = {p.stem for p in run.NOTEBOOK_DIR.glob("*.ipynb")}
    assert set(run.LONGEST_FIRST + run.LAST) <= stems


def _hardware_free(path, *sources):
    """A notebook whose parameters cell does not declare ``hardware``."""
    notebook = nbformat.read(write_notebook(path, *sources), as_version=4)
    notebook.cells[0].source = "n = 1"
    nbformat.write(notebook, path)
    return path


def test_a_notebook_that_cannot_see_the_hardware_is_executed_once_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LGACC_RESULT_CACHE", raising=False)
    free = _hardware_free(tmp_path / "free.ipynb", "import random\nprint(random.random())")
    bound = write_notebook(tmp_path / "bound.ipynb", "import random\nprint(hardware, random.random())")
    assert run._parameters(free, "a100-80gb") == {}  # not given the hardware it does not declare

    def printed(out, name):
        cells = nbformat.read(out / name, as_version=4).cells
        return "".join(o.get("text", "") for c in cells for o in c.get("outputs", []))

    first = {r.notebook.name: r for r in run.run_all("a100-80gb", [free, bound], tmp_path / "a", kernel="python3", jobs=1)}
    second = {r.notebook.name: r for r in run.run_all("h100-sxm", [free, bound], tmp_path / "b", kernel="python3", jobs=1)}
    assert not first["free.ipynb"].reused and second["free.ipynb"].reused and "reused" in second["free.ipynb"].describe()
    # the random number proves the copy is the first run's, not a second execution
    assert printed(tmp_path / "a", "free.ipynb") == printed(tmp_path / "b", "free.ipynb")
    assert not second["bound.ipynb"].reused and "h100-sxm" in printed(tmp_path / "b", "bound.ipynb")
    # an edited notebook is executed again
    notebook = nbformat.read(free, as_version=4)
    notebook.cells[-1].source += "\nprint('edited')"
    nbformat.write(notebook, free)
    third = run.run_all("a100-80gb", [free], tmp_path / "c", kernel="python3", jobs=1)[0]
    assert not third.reused and "edited" in printed(tmp_path / "c", "free.ipynb")


def test_a_notebook_that_sees_the_hardware_is_reused_for_the_same_spec_only(tmp_path, monkeypatch, a100_spec):
    """Issue #34 (fast feedback): the book built again for the same spec executes none of the pages that read the
    spec; a spec file whose content changed (same path), another spec, or a run writing files beside its page
    (the scorecard's findings) is executed again."""
    import yaml

    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LGACC_RESULT_CACHE", raising=False)
    bound = write_notebook(tmp_path / "bound.ipynb", "import random\nprint(hardware, random.random())")
    spec = tmp_path / "mine.yaml"
    spec.write_text(yaml.safe_dump(a100_spec))

    def printed(out):
        cells = nbformat.read(out / "bound.ipynb", as_version=4).cells
        return "".join(o.get("text", "") for c in cells for o in c.get("outputs", []))

    runs = [run.run_all(hardware, [bound], tmp_path / out, kernel="python3", jobs=1)[0]
            for hardware, out in (("a100-80gb", "a"), ("a100-80gb", "b"), (str(spec), "c"), (str(spec), "d"))]
    assert [r.reused for r in runs] == [False, True, False, True]
    assert printed(tmp_path / "a") == printed(tmp_path / "b") and printed(tmp_path / "c") == printed(tmp_path / "d")
    assert printed(tmp_path / "a") != printed(tmp_path / "c")
    a100_spec["peak_flop_per_s"] = float(a100_spec["peak_flop_per_s"]) * 2
    spec.write_text(yaml.safe_dump(a100_spec))
    again = run.run_all(str(spec), [bound], tmp_path / "e", kernel="python3", jobs=1)[0]
    assert not again.reused and printed(tmp_path / "e") != printed(tmp_path / "d")


def test_a_notebook_that_writes_beside_its_page_is_kept_with_what_it_wrote(tmp_path, monkeypatch):
    """The scorecard writes the front page's findings and the assumptions page's lists beside its page: kept with
    it, restored with it (the first run's random number, not the placeholders), and a page whose file beside it
    does not check out is executed again."""
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LGACC_RESULT_CACHE", raising=False)
    source = tmp_path / "src"
    source.mkdir()
    writes = "\n".join(f"(Path(findings_path).parent / {name!r}).write_text(text)" for name in run.SIDE_FILES)
    scorecard = write_notebook(source / "scorecard.ipynb", "import random\nfrom pathlib import Path\n"
                          "text = f'{hardware} {random.random()}'\nprint(text)\n" + writes)
    notebook = nbformat.read(scorecard, as_version=4)
    notebook.cells[0].source += "\nfindings_path = 'findings.md'"
    nbformat.write(notebook, scorecard)

    def beside(out):
        return [(out / name).read_text() for name in run.SIDE_FILES]

    out = tmp_path / "generated"  # one folder, as the book's: the findings path is a parameter, in the key
    first = run.run_all("a100-80gb", [scorecard], out, kernel="python3", jobs=1)[0]
    written = beside(out)
    second = run.run_all("a100-80gb", [scorecard], out, kernel="python3", jobs=1)[0]
    assert first.ok and not first.reused and second.reused
    assert beside(out) == written and "a100-80gb 0." in written[0]
    sides = list((tmp_path / "cache" / "notebooks").glob("*.side"))
    assert len(sides) == len(run.SIDE_FILES)
    for side in sides:
        side.write_text(side.read_text().replace("a100", "b100"))
    third = run.run_all("a100-80gb", [scorecard], out, kernel="python3", jobs=1)[0]
    assert third.ok and not third.reused and beside(out) != written


def test_a_failed_notebook_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LGACC_RESULT_CACHE", raising=False)
    broken = _hardware_free(tmp_path / "broken.ipynb", "1/0")
    for _ in range(2):
        result = run.run_all("a100-80gb", [broken], tmp_path / "o", kernel="python3", jobs=1)[0]
        assert not result.ok and not result.reused
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


def test_the_cache_is_off_with_the_other_results(tmp_path, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LGACC_RESULT_CACHE", "0")
    free = _hardware_free(tmp_path / "free.ipynb", "print(1)")
    for _ in range(2):
        assert not run.run_all("a100-80gb", [free], tmp_path / "o", kernel="python3", jobs=1)[0].reused
