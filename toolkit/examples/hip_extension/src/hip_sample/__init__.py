"""The toolkit's sample HIP extension.

``run_kernel(a, x, y)`` runs the saxpy kernel on the GPU when one is present and returns
``(result, None)``; otherwise ``(None, reason)`` saying why it did not run.
"""

from __future__ import annotations

from hip_sample import _native

VARIANT: str = _native.VARIANT  # "hip" or "cpu"
ARCHS: tuple[str, ...] = tuple(a for a in _native.ARCHS.split(";") if a)
saxpy = _native.saxpy


def device_count() -> int:
    return int(_native.device_count())


def run_kernel(a: float, x: list[float], y: list[float]) -> tuple[list[float] | None, str | None]:
    if VARIANT != "hip":
        return None, "this is the CPU variant of hip_sample (built without a HIP compiler)"
    if device_count() == 0:
        return None, f"no HIP device visible (built for {', '.join(ARCHS)})"
    return saxpy(a, x, y), None
