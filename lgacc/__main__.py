"""``python -m lgacc`` and the ``lgacc`` command: signals first, then the command line.

Ctrl-C (SIGINT) or SIGTERM at any moment, while modules import included, prints one line and exits 130 or
143 (issue #34): the handlers are set before anything heavy is imported, SIGTERM is raised as
:class:`lgacc.errors.Terminated` (a :class:`KeyboardInterrupt`) so that the same clean-ups run, and a
second signal while the first is reported is ignored.
"""

import signal
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

        return main()
    except KeyboardInterrupt as interrupt:  # while modules import or the parser is built
        return _report(interrupt)
    except Exception:
        interrupt = received_interrupt()
        if interrupt is None:
            raise
        return _report(interrupt)


def _report(interrupt: BaseException) -> int:
    for name in ("SIGINT", "SIGTERM"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    from lgacc.errors import interrupt_exit_code

    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    print(f"lgacc{' ' + command if command and command.isidentifier() else ''}: interrupted", file=sys.stderr)
    # the process ends here; called in-process, it leaves the signals as a fresh interpreter has them, so
    # that no later child inherits an ignored Ctrl-C
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return interrupt_exit_code(interrupt)


if __name__ == "__main__":
    sys.exit(run())
