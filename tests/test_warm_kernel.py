"""Pages run by kernels forked from a warm worker (:mod:`lgacc.book.warmkernel`, issue #34).

Independent facts checked: a page sees the modules the worker imported ahead of it (``sys.modules`` before its
own import) only in the warm mode; two pages run one after the other by the same worker share no state (a global,
matplotlib's settings, pandas' options, an lgacc module attribute, the process); a failing cell is reported with
its index and exception as with papermill's own kernel; every start-up problem (a spec that is not this
interpreter's ipykernel, a fork that fails, a kernel that does not come up) falls back to the normal kernel,
whose page shows the modules not imported.  No wall-clock assertion.
"""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

from lgacc.book import run, warmkernel
from notebook_pages import write_notebook


#: First cell of a probe page: what the page's process holds before its own imports, printed as JSON.
PROBE = ("import json, os, sys\n"
         "print('PROBE', json.dumps({'pandas': 'pandas' in sys.modules, 'pid': os.getpid(), 'cwd': os.getcwd(),"
         " 'main': sys.modules['__main__'].__name__, 'argv0': os.path.basename(sys.argv[0])}))")
#: What a page changes, and what the next page must not see.
CHANGES = ("import matplotlib, pandas\n"
           "import lgacc.book.notebook as notes\n"
           "leaked = 'from the first page'\n"
           "matplotlib.rcParams['lines.linewidth'] = 7.25\n"
           "pandas.set_option('display.max_rows', 3)\n"
           "notes.LEAKED_BY_A_PAGE = True")
LOOKS = ("import matplotlib, pandas\n"
         "import lgacc.book.notebook as notes\n"
         "print('LOOKS', json.dumps({'leaked': 'leaked' in globals(), 'linewidth': matplotlib.rcParams['lines.linewidth'],"
         " 'max_rows': pandas.get_option('display.max_rows'), 'lgacc': hasattr(notes, 'LEAKED_BY_A_PAGE'),"
         " 'backend': matplotlib.get_backend()}))")


def _printed(path, tag):
    executed = nbformat.read(path, as_version=4)
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines():
                if line.startswith(tag + " "):
                    return json.loads(line[len(tag) + 1:])
    raise AssertionError(f"no {tag} line in {path}")


#: Replacements made in the fresh runner process before it starts (its workers are forked: they see them).
PATCHES = {
    "none": "",
    "kernel fails": "def _fails(*args, **kwargs):\n    raise RuntimeError('the forked kernel could not start')\n"
                    "warmkernel._initialised_app = _fails\n",
    "no fork": "def _no_fork(*args, **kwargs):\n    raise OSError('fork: no memory')\nwarmkernel.call_forked = _no_fork\n",
}


def _run(tmp_path, notebooks, warm=True, patch="none", kernel="python3"):
    """The runner in a fresh interpreter, as ``make book`` starts it (a test session has imported matplotlib and
    pandas: a runner called in it runs normal kernels, :func:`lgacc.book.warmkernel.fresh_image`)."""
    out = tmp_path / "out"
    argv = [*map(str, notebooks), "--output-dir", str(out), "--kernel", kernel, "--jobs", "1", "--timeout", "120"]
    if not warm:
        argv.append("--no-warm-kernel")
    script = (f"import sys\nfrom lgacc.book import run, warmkernel\n{PATCHES[patch]}"
              f"sys.exit(run.main({argv!r}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    return done, out


def test_the_imports_a_worker_makes_ahead_are_those_of_the_notebooks(tmp_path):
    page = write_notebook(tmp_path / "a.ipynb", "import pandas as pd\nimport os, math", "from lgacc.model.hardware import GIB",
                     "%matplotlib inline\nimport numpy", "from tqdm.auto import tqdm\nimport matplotlib_inline.backend_inline",
                     "from . import local\nimport matplotlib.pyplot as plt")
    # a magic makes its cell unreadable as Python: skipped; relative, standard-library and never-warm imports left out
    assert warmkernel.notebook_imports([page, tmp_path / "missing.ipynb"]) == (
        "lgacc.model.hardware", "matplotlib.pyplot", "pandas")


def test_a_kernel_command_is_warm_only_for_ipykernel_on_this_interpreter():
    assert warmkernel.warm_command([sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "c.json"]) \
        == ["-f", "c.json"]
    assert warmkernel.warm_command([sys.executable, "-m", "ipykernel_launcher", "-f", "c.json"]) == ["-f", "c.json"]
    assert warmkernel.warm_command(["/usr/bin/some-other-python", "-m", "ipykernel_launcher", "-f", "c.json"]) is None
    assert warmkernel.warm_command([sys.executable, "-m", "other_kernel", "-f", "c.json"]) is None
    assert warmkernel.warm_command([]) is None


def _probe_pages(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    first = write_notebook(source / "first.ipynb", PROBE, CHANGES)
    second = write_notebook(source / "second.ipynb", PROBE, LOOKS)
    return first, second


@pytest.mark.parametrize("warm", [True, False])
def test_pages_of_one_worker_share_nothing_and_see_the_warm_imports_only_when_warm(tmp_path, warm):
    first, second = _probe_pages(tmp_path)
    done, out = _run(tmp_path, [first, second], warm=warm)
    assert done.returncode == 0, done.stderr[-2000:]
    one, two = _printed(out / "first.ipynb", "PROBE"), _printed(out / "second.ipynb", "PROBE")
    assert one["pandas"] is warm and two["pandas"] is warm  # imported by the worker before the page, or not at all
    assert one["pid"] != two["pid"]
    assert one["cwd"] == two["cwd"] == str(first.parent)
    assert one["main"] == "__main__" and one["argv0"] == "ipykernel_launcher.py"
    looks = _printed(out / "second.ipynb", "LOOKS")
    assert looks == {"leaked": False, "linewidth": 1.5, "max_rows": 60, "lgacc": False,
                     "backend": "module://matplotlib_inline.backend_inline"}
    # both kernels' sockets carry CurveZMQ keys: ipykernel says nothing of plain-text TCP
    assert "without encryption" not in done.stderr, done.stderr[-2000:]


def test_the_kernel_managers_provision_curve_keys_for_a_spec_that_supports_them():
    import zmq
    from jupyter_client.manager import AsyncKernelManager

    if not zmq.has("curve"):
        assert warmkernel.encrypted(AsyncKernelManager) is AsyncKernelManager
        return
    manager = warmkernel.encrypted(AsyncKernelManager)()
    assert isinstance(manager, AsyncKernelManager) and manager.transport_encryption == "auto"
    assert AsyncKernelManager().transport_encryption == "disabled"  # jupyter_client's own default, left alone


def test_a_failing_cell_is_reported_as_with_the_normal_kernel(tmp_path):
    bad = write_notebook(tmp_path / "bad.ipynb", "import pandas\nx = 1", "raise ValueError('broken on purpose')")
    done, out = _run(tmp_path, [bad])
    assert done.returncode == 1
    # index 3 of the executed copy: parameters, papermill's injected parameters, x = 1, raise
    [line] = [line for line in done.stderr.splitlines() if line.startswith("FAILED ")]
    assert line.startswith("FAILED bad.ipynb, cell 3 (") and "raise ValueError" in line, line
    assert line.endswith("): ValueError: broken on purpose"), line
    assert (out / "bad.ipynb").is_file()


def test_a_page_may_start_processes(tmp_path):
    """The kernel is forked from a daemonic pool worker, but is a main process: it may have children."""
    page = write_notebook(tmp_path / "pool.ipynb", PROBE, "import pandas\nimport multiprocessing as mp\n"
                     "with mp.get_context('fork').Pool(1) as pool:\n    print('SQUARES', pool.map(abs, [-3, 4]))")
    done, out = _run(tmp_path, [page])
    assert done.returncode == 0, done.stderr[-2000:]
    assert _printed(out / "pool.ipynb", "PROBE")["pandas"] is True
    assert _printed(out / "pool.ipynb", "SQUARES") == [3, 4]


@pytest.mark.parametrize("patch", ["kernel fails", "no fork"])
def test_a_start_up_problem_falls_back_to_the_normal_kernel(tmp_path, patch):
    first, second = _probe_pages(tmp_path)
    done, out = _run(tmp_path, [first, second], patch=patch)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _printed(out / "first.ipynb", "PROBE")["pandas"] is False  # a normal kernel: nothing imported ahead
    assert _printed(out / "second.ipynb", "LOOKS")["leaked"] is False


def test_a_spec_that_sets_variables_gets_the_normal_kernel(tmp_path, monkeypatch):
    spec = tmp_path / "jupyter" / "kernels" / "withenv"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "with a variable", "language": "python", "env": {"LGACC_TEST_SPEC_VARIABLE": "set"}}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    page = write_notebook(tmp_path / "env.ipynb", PROBE, "import pandas\n"
                     "print('VARIABLE', json.dumps(os.environ.get('LGACC_TEST_SPEC_VARIABLE')))")
    done, out = _run(tmp_path, [page], kernel="withenv")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _printed(out / "env.ipynb", "VARIABLE") == "set"
    assert _printed(out / "env.ipynb", "PROBE")["pandas"] is False


def test_a_runner_called_by_a_process_that_imported_matplotlib_runs_normal_kernels(tmp_path):
    """This test session imported matplotlib (its backend chosen, its settings perhaps changed): a page forked from it
    could differ from a fresh kernel's, so the runner called here starts normal kernels."""
    import matplotlib  # noqa: F401

    first, second = _probe_pages(tmp_path)
    results = run.run_all("a100-80gb", [first, second], tmp_path / "out", kernel="python3", timeout_s=120, jobs=1)
    assert all(r.ok for r in results), [r.describe() for r in results]
    assert _printed(tmp_path / "out" / "first.ipynb", "PROBE")["pandas"] is False
    assert _printed(tmp_path / "out" / "second.ipynb", "LOOKS")["backend"] == "module://matplotlib_inline.backend_inline"
