"""The book's build programs answer Ctrl-C and SIGTERM at any moment, while their modules import included, with at most
one line and exit 130 or 143 (issue #34); the calculator's script imports neither sympy nor pandas when the printed
functions are on disk already.

Each program is started and signalled after a delay from 0 (Python still starting: killed silently by the default
action, exit -signum, or interrupted in its imports) to well into its work.  No wall-clock assertion.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import nbformat
import pytest

from lgacc.book import jsgen


def _programs(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell("import time\ntime.sleep(60)")]
    nbformat.write(notebook, tmp_path / "sleeps.ipynb")
    return {
        "calculator": ["-m", "lgacc.book.jsgen", str(tmp_path / "calc.js"), "--hardware", "h100-sxm"],
        "schedules": ["-m", "lgacc.book.jsgen.schedules", str(tmp_path / "schedules.js")],
        "runner": ["-m", "lgacc.book.run", str(tmp_path / "sleeps.ipynb"), "--output-dir", str(tmp_path / "out"),
                   "--kernel", "python3", "--jobs", "1"],
    }


def _our_lines(stderr: str) -> list[str]:
    """The program's own lines (a kernel logs its own, '[IPKernelApp] ...', on the same stream)."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("[IPKernelApp]")]


def _before_the_program_ran(stderr: str) -> bool:
    """Python's report of a KeyboardInterrupt none of whose frames ran a line of the package's own code."""
    import re

    frames = re.findall(r'File "([^"]+)"', stderr)
    return stderr.rstrip().endswith("KeyboardInterrupt") and not any("/lgacc/" in frame for frame in frames)


@pytest.mark.parametrize("program", ["calculator", "schedules", "runner"])
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("delay", [0.1, 0.35, 0.7])
def test_an_interrupt_at_any_moment_prints_at_most_one_line(program, signum, code, delay, tmp_path):
    env = {**os.environ, "LGACC_CACHE_DIR": str(tmp_path / "cache")}  # nothing on disk: the slow path, all of it
    process = subprocess.Popen([sys.executable, *_programs(tmp_path)[program]], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(delay)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=120)
    if process.returncode == 0:  # finished before the signal came
        return
    if process.returncode == -signum:  # before the program's handlers: a shell's $? is 128 + signum
        # silent before Python set its own handler; after it, Python's own report of a Ctrl-C while it starts (its
        # site modules, runpy importing the packages and compiling the module) until the program's first line runs
        assert stderr == "" or _before_the_program_ran(stderr), stderr[-600:]
        return
    assert process.returncode == code, (process.returncode, stderr[-600:])
    assert len(_our_lines(stderr)) <= 1 and "Traceback" not in stderr, stderr[-600:]


def test_the_calculator_script_imports_no_sympy_nor_pandas_when_the_printed_functions_are_kept(tmp_path):
    env = {**os.environ, "LGACC_CACHE_DIR": str(tmp_path / "cache")}
    probe = ("import sys\nfrom lgacc.book.jsgen.command import main\n"
             f"assert main([{str(tmp_path / 'calc.js')!r}, '--hardware', 'h100-sxm']) == 0\n"
             "import json\nprint(json.dumps(sorted(m for m in ('sympy', 'pandas') if m in sys.modules)))")
    first = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    again = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert json.loads(first.stdout.splitlines()[-1]) == ["sympy"]  # printed once, from the derivations
    assert json.loads(again.stdout.splitlines()[-1]) == []  # then read from disk
    # the package still exports what it did, on first use
    assert callable(jsgen.write) and callable(jsgen.main) and "d_m" in jsgen.ARGUMENTS
    with pytest.raises(AttributeError):
        jsgen.no_such_name  # noqa: B018


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_an_import_turned_into_its_own_error_is_still_one_line(signum, code, tmp_path):
    # numpy's C modules answer an interrupt that lands while they load with an ImportError ("PyCapsule_Import could
    # not import module datetime"); a module doing the same on purpose, run as the book's programs run theirs
    (tmp_path / "swallows.py").write_text(
        "import os, signal\n"
        f"try:\n    os.kill(os.getpid(), {int(signum)})\n"
        "    for _ in range(10**6):\n        pass\n"
        "except BaseException:\n    raise ImportError('could not import module datetime') from None\n"
        "def main():\n    return 0\n")
    program = ("import sys\nfrom lgacc.errors import run_quietly\n"
               f"sys.path.insert(0, {str(tmp_path)!r})\nsys.exit(run_quietly('swallows', 'swallows'))")
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert finished.returncode == code, finished.stderr[-600:]
    assert finished.stderr.strip() == "swallows: interrupted"


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_the_lgacc_command_reports_an_interrupt_an_import_turned_into_its_own_error(signum, code):
    # the same case under the `lgacc` command (lgacc.__main__.run): a command's lazy import answers the interrupt with
    # an ImportError, which the command line would otherwise call an internal error (exit 1)
    program = ("import argparse, os, signal, sys\nimport lgacc.cli as cli\n"
               "def swallows(args):\n"
               f"    try:\n        os.kill(os.getpid(), {int(signum)})\n"
               "        for _ in range(10**6):\n            pass\n"
               "    except BaseException:\n        raise ImportError('could not import module datetime') from None\n"
               "class Parser:\n    def parse_args(self, argv):\n"
               "        return argparse.Namespace(handler=swallows, command='evaluate')\n"
               "cli.build_parser = lambda first, **options: Parser()\n"
               "from lgacc.__main__ import run\nsys.argv = ['lgacc', 'evaluate']\nsys.exit(run())")
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert finished.returncode == code, finished.stderr[-600:]
    assert finished.stderr.strip() == "lgacc evaluate: interrupted"


def test_a_ctrl_c_after_the_command_answered_leaves_its_code_and_its_output():
    """Once the command has answered, a Ctrl-C while the interpreter tears down (after a Dask cluster that takes a
    second or more) is ignored: the process ends with the command's own code and output, not killed by SIGINT with
    a traceback or without a word."""
    program = ("import os, signal, sys\nfrom lgacc.__main__ import run\nsys.argv = ['lgacc']\ncode = run()\n"
               "os.kill(os.getpid(), signal.SIGINT)\nfor _ in range(10**6):\n    pass\nsys.exit(code)")
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert finished.returncode == 2, finished.stderr[-600:]
    assert finished.stderr.strip().startswith("lgacc: error: a command is required")
    assert len(finished.stderr.strip().splitlines()) == 1


def test_a_c_extension_printing_the_interrupt_it_met_prints_nothing():
    # numpy's import_array() answers an error met while importing numpy with PyErr_Print, then an ImportError of its
    # own: an interrupt that lands there (a race seen once in CI) must not print a traceback before the program's one
    # line; any other error still prints as Python prints it.  PyRun_SimpleString, called through ctypes, prints the
    # error of the code it runs with PyErr_Print as such a C extension does; the interrupt is raised by the package's
    # own SIGTERM handler.
    script = (
        "import ctypes, sys\n"
        "from lgacc import errors\n"
        "errors.raise_on_interrupts()\n"
        "run = ctypes.pythonapi.PyRun_SimpleString\n"
        "assert run(b'import signal; from lgacc import errors; errors._raise_terminated(signal.SIGTERM, None)') == -1\n"
        "print('after the interrupt', file=sys.stderr)\n"
        "assert run(b'raise ValueError(\"an ordinary error\")') == -1\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    before, _, after = out.stderr.partition("after the interrupt\n")
    assert before == ""
    assert "Traceback" in after and "ValueError: an ordinary error" in after


def test_a_warm_evaluate_imports_neither_pandas_nor_numpys_masked_arrays(tmp_path):
    """lgacc evaluate's calibrated columns read the measured tables with plain medians: np.median's first call
    imports numpy.ma (about 20 ms of a 0.2 s budget, issue #35's start-up target); pandas is never needed."""
    env = {**os.environ, "LGACC_CACHE_DIR": str(tmp_path / "cache")}
    probe = ("import sys\nfrom lgacc.cli import main\n"
             "rc = main(['evaluate', '--model', 'X160', '--method', 'improved', '--n-b', '483', '--n-l', '5', "
             "'--n-a', '16', '--n-mu', '5', '--b-mu', '1', '--format', 'json'])\n"
             "import json\nprint(json.dumps([rc, sorted(m for m in ('numpy.ma', 'pandas') if m in sys.modules)]))")
    for _ in range(2):  # the first call may generate code into the cache; the second is the warm one
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == [0, []]
