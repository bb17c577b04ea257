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
