"""``python -m lgacc`` and the ``lgacc`` command: signals first, then the command line.

Ctrl-C (SIGINT) or SIGTERM at any moment, while modules import included, prints one line and exits 130 or
143 (issue #34): the handlers are set before anything heavy is imported, SIGTERM is raised as
:class:`lgacc.errors.Terminated` (a :class:`KeyboardInterrupt`) so that the same clean-ups run, and a
second signal while the first is reported is ignored.
"""

import sys


def run() -> int:
    """The ``lgacc`` command's entry point."""
    # lgacc.errors imports nothing heavy (the package itself is already imported, lazily, to reach this module)
    from lgacc.errors import raise_on_interrupts, received_interrupt

    try:
        # Ctrl-C raises KeyboardInterrupt even when the process was started with SIGINT ignored (a parent's
        # setting, inherited: a non-interactive shell's background job, a test runner); the handlers remember the
        # signal, for an import that turns the interrupt into an error of its own (numpy's C modules do)
        raise_on_interrupts()
        from lgacc.cli import main

        code = main()
    except KeyboardInterrupt as interrupt:  # while modules import or the parser is built
        return _report(interrupt)
    except Exception:
        interrupt = received_interrupt()
        if interrupt is None:
            raise
        return _report(interrupt)
    _ignore_interrupts_while_exiting()
    return code


def _ignore_interrupts_while_exiting() -> None:
    """The command has answered (its output written, its code known): a Ctrl-C from here on is ignored.  The
    interpreter's teardown resets a Python signal handler to the system's default, so a Ctrl-C that lands while it
    tears down (after a Dask cluster: a second or more) would end the process by SIGINT, without its line and
    without its code; an ignored signal stays ignored through the teardown."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _report(interrupt: BaseException) -> int:
    """One line, ``lgacc COMMAND: interrupted``, and 130 or 143 (:func:`lgacc.errors.report_interrupt`: a second
    signal meanwhile is ignored, and the signals are left as a fresh interpreter has them)."""
    from lgacc.errors import report_interrupt

    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    return report_interrupt(f"lgacc{' ' + command if command and command.isidentifier() else ''}", interrupt)


if __name__ == "__main__":
    sys.exit(run())
