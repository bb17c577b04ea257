"""Subcommands of ``lgacc``; each module defines ``register(subparsers)``."""
