"""Generated numeric code (issue #34): committed with the package, current, never in the cache directory."""

import os
import subprocess
import sys

import sympy

from lgacc.cache import codegen as _codegen
from lgacc.model.regenerate import GENERATED, files


def test_the_committed_generated_code_is_what_the_derivations_print():
    """A stale derivation fails here: regenerating gives byte-identical text (run
    ``python -m lgacc.model.regenerate`` after changing a formula)."""
    stale = [path.name for path, text in files() if path.read_text(encoding="utf-8") != text()]
    assert not stale, f"stale generated code, run python -m lgacc.model.regenerate: {stale}"


def test_every_generated_module_is_registered():
    folder = GENERATED[0].path().parent
    assert {p.name for p in folder.iterdir() if p.suffix in (".py", ".json")} - {"__init__.py"} \
        == {path.name for path, _ in files()}


def test_a_current_module_is_imported_a_stale_one_printed_in_memory(tmp_path):
    x, y = sympy.symbols("x y_\\mu", positive=True)
    source = tmp_path / "derivation.py"
    source.write_text("x * y\n")
    calls = []

    def build():
        calls.append(1)
        return {"f": ((x, y), 3 * x / (4 * y) + sympy.sqrt(x))}, {"answer": 42}

    generated = _codegen.Generated("demo", "lgacc.model.generated.no_such_module", (source,), build)
    out = generated.namespace()  # no committed module: printed in memory, nothing written
    assert calls and out["FUNCTIONS"]["f"](4.0, 3.0) == 3.0 and out["CONSTANTS"] == {"answer": 42}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["derivation.py"]
    models = GENERATED[0]
    assert models.namespace()["FUNCTIONS"] is __import__("lgacc.model.generated.models").model.generated.models.FUNCTIONS
    changed = _codegen.Generated(models.name, models.module, (*models.sources, source), models.build)
    assert changed.key() != models.key()
    assert changed.namespace()["FUNCTIONS"] is not models.namespace()["FUNCTIONS"]  # stale: printed again


def test_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("LGACC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _codegen.cache_dir() == tmp_path / "lgacc"
    monkeypatch.setenv("LGACC_CACHE_DIR", "/elsewhere")
    assert str(_codegen.cache_dir()) == "/elsewhere"


def test_the_command_line_imports_no_sympy_and_keeps_no_code(tmp_path):
    """Issue #15, #34: `lgacc evaluate` (models included) never imports sympy, even with an empty cache,
    and no file it leaves in the cache directory is Python."""
    code = (
        "import sys\n"
        "from lgacc.cli import main\n"
        "rc = main(['evaluate', '--model', 'X160', '--method', 'improved', '--n-b', '8', '--n-l', '4',"
        " '--n-a', '16', '--n-mu', '4', '--format', 'json'])\n"
        "print('SYMPY' if 'sympy' in sys.modules else 'NOSYMPY', rc)\n"
    )
    env = {**os.environ, "LGACC_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.strip().endswith("NOSYMPY 0"), out[-200:]
    assert not [p for p in tmp_path.rglob("*") if p.suffix in (".py", ".pyc")]
