"""A flat-layout extension for the toolkit's "your own extension" tests."""

from flatext._kern import devices, run_scale, targets

__all__ = ["devices", "run_scale", "targets"]
