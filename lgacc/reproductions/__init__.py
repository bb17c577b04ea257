"""One module per table or figure of the paper; each defines ``ARTIFACT``.

See :mod:`lgacc.artifacts` for the contract.
"""
