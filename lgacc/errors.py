"""Errors a user can cause and fix: bad files, bad arguments, infeasible requests."""


class UserInputError(ValueError):
    """Input that breaks a stated rule; the message names the value and the rule.

    The command line reports these in one line with exit code 2, never as a traceback.
    """


def positive_int(owner: str, field: str, value) -> int:
    """``value`` as a positive integer (a float such as ``4.0`` is accepted), or a
    :class:`UserInputError` naming ``owner``, the field and the rule."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise UserInputError(f"{owner}: {field}={value!r} must be a positive integer")
    if value < 1:
        raise UserInputError(f"{owner}: {field}={value} must be a positive integer (>= 1)")
    return value
