"""The entry layer: ``python -m toolkit``, the nox session bodies, rendering."""

from toolkit.cli.main import main

__all__ = ["main"]
