"""Numeric code printed from the sympy derivations, one module per set of expressions, committed.

Written by ``python -m lgacc.model.regenerate``; do not edit.  Each module records the key of the
sources it was printed from (:class:`lgacc.cache.codegen.Generated`); ``tests/test_codegen.py`` checks
that regenerating gives the same text.
"""
