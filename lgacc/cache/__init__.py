"""Foundations: what the package keeps on disk between processes.

* :mod:`.codegen` -- numeric code printed from the sympy derivations, keyed by their sources;
* :mod:`.results` -- results that take seconds (claims, sweeps, grids), keyed by inputs, sources
  and ``data/``.
"""
