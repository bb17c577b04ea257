"""Errors a user can cause and fix: bad files, bad arguments, infeasible requests."""

import numbers

#: Largest count accepted anywhere (int64): numpy arithmetic would wrap beyond it.
MAX_INT64 = 2**63 - 1


class UserInputError(ValueError):
    """Input that breaks a stated rule; the message names the value and the rule.

    The command line reports these in one line with exit code 2, never as a traceback.
    """


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is (as Ctrl-C raises :class:`KeyboardInterrupt`) so that the same
    clean-ups run; the command line exits 143 for it, 130 for Ctrl-C."""


def interrupt_exit_code(interrupt: BaseException) -> int:
    """The shell's code for a process stopped by this interrupt: 143 (SIGTERM) or 130 (SIGINT)."""
    return 143 if isinstance(interrupt, Terminated) else 130


#: The signals this process received through :func:`raise_on_interrupts`' handlers: an import can turn the interrupt
#: it raised into an error of its own (numpy's C modules answer it with an ImportError), which
#: :func:`run_quietly` then still reports as the interrupt it was.
_RECEIVED: list = []


def _raise_interrupted(signum, frame):
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def _raise_terminated(signum, frame):
    _RECEIVED.append(signum)
    raise Terminated()


def _quiet_about_interrupts(kind, value, traceback) -> None:
    """``sys.excepthook`` once :func:`raise_on_interrupts` ran: an interrupt its handlers raised is reported by the
    program in one line (:func:`report_interrupt`), so it prints nothing here.  A C extension that meets an error while
    it imports numpy prints it with ``PyErr_Print``, which calls this hook, before raising its own ImportError (numpy's
    ``import_array``): an interrupt landing in that import would otherwise print its traceback first.  Every other
    exception goes to Python's own hook."""
    import sys

    if issubclass(kind, KeyboardInterrupt) and _RECEIVED:
        return
    sys.__excepthook__(kind, value, traceback)


def raise_on_interrupts() -> None:
    """For a program's entry point, before its heavy imports: Ctrl-C raises :class:`KeyboardInterrupt` (even when
    the process was started with SIGINT ignored, a parent's setting) and SIGTERM raises :class:`Terminated`; such an
    interrupt is not printed by ``sys.excepthook`` (:func:`_quiet_about_interrupts`)."""
    import signal
    import sys

    sys.excepthook = _quiet_about_interrupts
    signal.signal(signal.SIGINT, _raise_interrupted)
    signal.signal(signal.SIGTERM, _raise_terminated)


def report_interrupt(program: str, interrupt: BaseException, what: str = "interrupted") -> int:
    """Print ``program: what`` (one line; a second signal meanwhile is ignored) and return the exit code, 130 or 143;
    the signals are then as a fresh interpreter has them."""
    import signal
    import sys

    for name in ("SIGINT", "SIGTERM"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    print(f"{program}: {what}", file=sys.stderr, flush=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return interrupt_exit_code(interrupt)


def received_interrupt() -> BaseException | None:
    """The interrupt this process received through :func:`raise_on_interrupts`' handlers (the last one), as the
    exception its handler raised, or ``None``: what an error that an interrupted import raised instead really was."""
    if not _RECEIVED:
        return None
    import signal

    return Terminated() if _RECEIVED[-1] == signal.SIGTERM else KeyboardInterrupt()


def run_quietly(program: str, module: str, function: str = "main") -> int:
    """``module.function()`` for ``python -m module``, with a Ctrl-C or SIGTERM while ``module`` imports (its whole
    body) or runs answered by one line and 130 or 143 (:func:`report_interrupt`).  ``python -m`` runs the module's
    body before anything in it can catch an interrupt: its first lines hand over to this instead (or its last
    lines, where the body is light; the function is then the one ``__main__`` already defined).

    A reader that stops reading (``python -m module | head``) ends the program quietly with 0, as ``lgacc`` does:
    the output is flushed here, so that a closed pipe is met inside the ``try`` rather than in the interpreter's
    last flush, which would print ``Exception ignored ... BrokenPipeError`` and exit 120."""
    raise_on_interrupts()
    try:
        code = _entry_point(module, function)()
        _flush_stdout()
    except BrokenPipeError:
        code = _closed_pipe()
    except KeyboardInterrupt as interrupt:
        code = report_interrupt(program, interrupt)
    except Exception:
        interrupt = received_interrupt()
        if interrupt is None:
            raise
        # the interrupt came, and whatever ran turned it into an error of its own (an import that failed)
        code = report_interrupt(program, interrupt)
    if code in (130, 143):
        _exit_interrupted(code)
    return code


def _entry_point(module: str, function: str):
    """``module.function``: the one ``python -m module`` already defined in ``__main__`` when it has run that far,
    else imported (a module whose whole body waits behind its ``__main__`` guard is imported under its name)."""
    import importlib
    import sys

    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None) == module and hasattr(main, function):
        return getattr(main, function)
    return getattr(importlib.import_module(module), function)


def _flush_stdout() -> None:
    """Flush standard output now (a closed pipe raises :class:`BrokenPipeError` here, where it can be caught)."""
    import sys

    if sys.stdout is not None:
        sys.stdout.flush()


def _closed_pipe() -> int:
    """The reader of standard output went away: point the descriptor at ``/dev/null`` (Python's documented answer,
    so that the interpreter's last flush has somewhere to go) and report success, as ``lgacc`` does."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return 0


def _exit_interrupted(code: int) -> None:
    """End the process with ``code`` once the exit handlers ran.  CPython 3.11 marks an interrupt that lands inside
    ``exec`` of a string (a dataclass being created, as a module imports) as unhandled even when it is caught, and
    then ends the process by SIGINT instead of with its exit code: the code is kept by leaving through ``os._exit``."""
    import atexit
    import os
    import sys

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def positive_int(owner: str, field: str, value) -> int:
    """``value`` as a positive integer of at most ``2**63 - 1``, or a :class:`UserInputError`
    naming ``owner``, the field and the rule.

    Python and numpy integers are accepted, and so are integral real numbers such as
    ``4.0`` or ``np.float64(4.0)``; booleans (``True`` is not a count), non-integral or
    non-finite numbers, strings and everything else are rejected.
    """
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise UserInputError(f"{owner}: {field}={value!r} must be a positive integer")
    if not isinstance(value, numbers.Integral):
        try:
            integral = float(value).is_integer()
        except (OverflowError, ValueError):
            integral = False
        if not integral:
            raise UserInputError(f"{owner}: {field}={value!r} must be a positive integer")
    value = int(value)
    if value < 1:
        raise UserInputError(f"{owner}: {field}={value} must be a positive integer (>= 1)")
    if value > MAX_INT64:
        raise UserInputError(f"{owner}: {field}={value} must be at most 2**63 - 1 = {MAX_INT64}")
    return value


def positive_finite(value) -> float | None:
    """``value`` as a float when it is a real number (not a boolean) in ``(0, inf)`` that a float holds,
    else ``None``: ``10**400`` is too large for a float, not an overflow in the arithmetic after."""
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        return None
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):
        return None
    return number if 0 < number < float("inf") else None
