"""Errors a user can cause and fix: bad files, bad arguments, infeasible requests."""


class UserInputError(ValueError):
    """Input that breaks a stated rule; the message names the value and the rule.

    The command line reports these in one line with exit code 2, never as a traceback.
    """
