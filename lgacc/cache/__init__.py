"""Foundations: what the package keeps on disk between processes -- data only, never code.

* :mod:`.codegen` -- numeric code printed from the sympy derivations into the package
  (``lgacc/model/generated/``), checked current by its sources' key; never written to the cache;
* :mod:`.results` -- results that take seconds (claims, sweeps, grids), keyed by the values of their
  inputs, the package's version, its sources and ``data/``;
* :mod:`.sealed` -- every entry with an HMAC under a per-user secret, read only from regular files.
"""
