"""The host's available memory (``toolkit.env.host.discover``) is ``MemAvailable`` of
``/proc/meminfo`` (proc(5): in kB, that is KiB) in GiB: KiB / 2**20, exactly. The truth is read
from /proc/meminfo here, before and after; memory moves while other processes run, so the
comparison is made over a moment in which both reads agree."""

from __future__ import annotations

from toolkit.env import host


def _mem_available_kib() -> int:
    with open("/proc/meminfo", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("MemAvailable:"))


def test_available_memory_is_memavailable_kib_over_two_to_the_twenty() -> None:
    for _ in range(500):
        before = _mem_available_kib()
        got = host._mem_available_gib()
        if _mem_available_kib() == before and got == before / 2**20:
            return  # (memory that moved and came back between the reads: try again)
    raise AssertionError(f"never MemAvailable KiB / 2**20: last {got} GiB for {before} KiB")
