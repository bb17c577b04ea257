"""``lgacc --help``, ``lgacc`` alone and a mistyped command answer from the commands' one-line summaries
(:data:`lgacc.commands.SUMMARIES`) without importing any command's module: what they print is what the full
parser (every module imported and registered) prints."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lgacc import commands
from lgacc.cli import _command_names, build_parser, main


def test_the_overview_prints_the_full_parsers_help():
    assert build_parser(overview=True).format_help() == build_parser().format_help()


def test_every_command_has_its_summary_and_registers_it():
    full = build_parser()
    (subcommands,) = [a for a in full._actions if a.dest == "command"]  # noqa: SLF001
    registered = {choice.dest: choice.help for choice in subcommands._choices_actions}  # noqa: SLF001
    assert set(_command_names(commands.__path__)) == set(registered) == set(commands.SUMMARIES)
    assert registered == commands.SUMMARIES


@pytest.mark.parametrize("argv", [[], ["evalute"], ["--no-such-option"]])
def test_the_overview_and_the_full_parser_refuse_alike(argv, capsys, monkeypatch):
    assert main(argv) == 2
    overview = capsys.readouterr().err
    import lgacc.cli as cli

    full = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda first, overview=False: full(first))
    assert main(argv) == 2
    assert capsys.readouterr().err == overview and overview.count("\n") == 1


def test_help_in_a_fresh_process_imports_no_command_and_no_numerical_library():
    code = ("import sys\nfrom lgacc.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit as done:\n    assert done.code == 0\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas', 'yaml', 'sympy')"
            " or (m.startswith('lgacc.commands.') and m != 'lgacc.commands'))\n"
            "print('LOADED', loaded, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stderr.strip().splitlines()[-1] == "LOADED []"
    assert "reproduce a table or figure" in done.stdout
