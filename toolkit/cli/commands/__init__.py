"""Subcommands of `python -m toolkit`; each module exposes ``register(subparsers)``."""
