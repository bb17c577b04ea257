"""The on-disk cache of generated numeric code: keyed by the sources, rebuilt when they change, read-only safe."""

import os

import pytest
import sympy

from lgacc.cache import codegen as _codegen


def _build_counter(calls, expr):
    x, y = sympy.symbols("x y_\\mu", positive=True)

    def build():
        calls.append(1)
        return {"f": ((x, y), expr(x, y))}, {"answer": 42}

    return build


def test_built_once_then_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "derivation.py"
    source.write_text("x * y\n")
    calls = []
    build = _build_counter(calls, lambda x, y: 3 * x / (4 * y) + sympy.sqrt(x))
    first = _codegen.compiled("demo", [source], build)
    again = _codegen.compiled("demo", [source], build)
    assert len(calls) == 1
    assert first["FUNCTIONS"]["f"](4.0, 3.0) == pytest.approx(1.0 + 2.0)  # 3*4/(4*3) + sqrt(4)
    assert again["CONSTANTS"] == {"answer": 42}
    assert len(list((tmp_path / "cache").glob("demo-*.py"))) == 1


def test_changed_derivation_rebuilds(tmp_path, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "derivation.py"
    source.write_text("version 1\n")
    calls = []
    old = _codegen.compiled("demo", [source], _build_counter(calls, lambda x, y: x + y))
    source.write_text("version 2\n")
    new = _codegen.compiled("demo", [source], _build_counter(calls, lambda x, y: x * y))
    assert len(calls) == 2
    assert old["FUNCTIONS"]["f"](2.0, 5.0) == 7.0 and new["FUNCTIONS"]["f"](2.0, 5.0) == 10.0
    assert len(list((tmp_path / "cache").glob("demo-*.py"))) == 1  # the stale file is removed


def test_unwritable_cache_falls_back_to_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")  # no directory can be created below a file, even by root
    monkeypatch.setenv("LGACC_CACHE_DIR", str(blocker / "sub"))
    source = tmp_path / "derivation.py"
    source.write_text("x\n")
    out = _codegen.compiled("demo", [source], _build_counter([], lambda x, y: x - y))
    assert out["FUNCTIONS"]["f"](5.0, 2.0) == 3.0


def test_corrupt_cache_file_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("LGACC_CACHE_DIR", str(tmp_path))
    source = tmp_path / "derivation.py"
    source.write_text("x\n")
    key = _codegen.source_key("demo", [source])
    (tmp_path / f"demo-{key}.py").write_text("def broken(:\n")
    calls = []
    out = _codegen.compiled("demo", [source], _build_counter(calls, lambda x, y: 2 * x))
    assert calls and out["FUNCTIONS"]["f"](1.5, 0.0) == 3.0


def test_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("LGACC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _codegen.cache_dir() == tmp_path / "lgacc"
    monkeypatch.setenv("LGACC_CACHE_DIR", "/elsewhere")
    assert str(_codegen.cache_dir()) == "/elsewhere"


def _run_evaluate(env):
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from lgacc.cli import main\n"
        "rc = main(['evaluate', '--model', 'X160', '--method', 'improved', '--n-b', '8', '--n-l', '4',"
        " '--n-a', '16', '--n-mu', '4', '--format', 'json'])\n"
        "print('SYMPY' if 'sympy' in sys.modules else 'NOSYMPY', rc)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout


def test_warm_command_line_imports_no_sympy(tmp_path):
    """Issue #15: once the generated code is cached, `lgacc evaluate` (models included) never imports sympy."""
    import os

    env = {**os.environ, "LGACC_CACHE_DIR": str(tmp_path)}
    cold = _run_evaluate(env)
    assert cold.strip().endswith("SYMPY 0")  # first call derives and writes the cache
    warm = _run_evaluate(env)
    assert warm.strip().endswith("NOSYMPY 0"), warm[-200:]
    assert {p.name.split("-")[0] for p in tmp_path.glob("*.py")} >= {"models", "evaluate"}
