"""One module per table or figure of the paper; each defines ``ARTIFACT``.

See :mod:`lgacc.paper.artifacts` for the contract.
"""
