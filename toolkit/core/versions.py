"""Version ordering shared by every layer."""

from __future__ import annotations

import re


def version_sort_key(version: str) -> tuple[int, ...]:
    """``"6.2.4"`` -> ``(6, 2, 4)``: the numbers in a version string, for sorting."""
    return tuple(int(p) for p in re.findall(r"[0-9]+", version))


def rocm_label(rocm: str) -> str:
    """``cpu`` for the CPU variant, else ``rocm<version>``: env names and local labels."""
    return "cpu" if rocm == "cpu" else f"rocm{rocm}"
