"""C++ symbol demangling: one ``c++filt`` run per batch, a small pure-Python fallback.

The fallback understands the common Itanium shapes (``_ZN...E`` nested names, ``St``,
ABI tags, constructors/destructors) well enough to name a function as ``ns::f(...)``;
anything else keeps its mangled spelling.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable

from toolkit.core.errors import CommandFailed
from toolkit.core.proc import run

_SOURCE_NAME = re.compile(rb"([0-9]+)")
DEMANGLE_TIMEOUT_S = 120.0


def demangle_many(names: Iterable[str], *, tool: str | None = "c++filt") -> dict[str, str]:
    """Map each mangled name to its demangled form (unmangled names map to themselves)."""
    todo = sorted({n for n in names if n.startswith("_Z") and "\n" not in n})
    out: dict[str, str] = {}
    exe = shutil.which(tool) if tool else None
    if todo and exe:
        try:
            proc = run([exe], input="\n".join(todo) + "\n", timeout=DEMANGLE_TIMEOUT_S)
            lines = proc.stdout.split("\n")
            if len(lines) >= len(todo):
                out = dict(zip(todo, lines[: len(todo)], strict=True))
        except CommandFailed:  # missing, failing or hanging c++filt: the fallback below
            out = {}
    for name in todo:
        if name not in out:
            qual = qualified_name(name)
            out[name] = f"{qual}(...)" if qual else name
    return out


_MALFORMED = -1


def _special_part(s: bytes, i: int, parts: list[str]) -> int | None:
    """At ``s[i]``, ``St`` (std), an ABI tag or a constructor/destructor name: added to
    ``parts``, and the position after it; None when none starts there; ``_MALFORMED``."""
    if s.startswith(b"St", i):
        parts.append("std")
        return i + 2
    if s.startswith(b"B", i) and parts:  # ABI tag: [abi:cxx11]
        m = _SOURCE_NAME.match(s, i + 1)
        if not m:
            return _MALFORMED
        n = int(m.group(1))
        parts[-1] += f"[abi:{s[m.end() : m.end() + n].decode()}]"
        return m.end() + n
    if s[i : i + 1] in (b"C", b"D") and parts and s[i + 1 : i + 2].isdigit():
        base = parts[-1].split("[")[0]
        parts.append(("~" if s[i : i + 1] == b"D" else "") + base)
        return i + 2
    return None


def qualified_name(mangled: str) -> str | None:
    """``_ZN10fbgemm_gpu18jagged_2d_to_denseEN2at6TensorE...`` -> ``fbgemm_gpu::jagged_2d_to_dense``."""
    if not mangled.startswith("_Z"):
        return None
    s, i = mangled.encode("ascii", "replace"), 2
    parts: list[str] = []
    nested = s[i : i + 1] == b"N"
    if nested:
        i += 1
        while s[i : i + 1] in (b"r", b"V", b"K", b"R", b"O"):  # cv/ref qualifiers
            i += 1
    while i < len(s):
        after = _special_part(s, i, parts)
        if after == _MALFORMED:
            return None
        if after is not None:
            i = after
            continue
        m = _SOURCE_NAME.match(s, i)
        if not m:
            break
        n = int(m.group(1))
        if n == 0 or m.end() + n > len(s):
            return None
        parts.append(s[m.end() : m.end() + n].decode("ascii", "replace"))
        i = m.end() + n
        if not nested:
            break
    if nested and s[i : i + 1] != b"E":
        return None
    return "::".join(parts) if parts else None


def source_name_fragment(qualified: str) -> bytes | None:
    """The mangled spelling of the last component (``18jagged_2d_to_dense``), for prefilters."""
    last = qualified.split("::")[-1]
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", last):
        return None
    return f"{len(last)}{last}".encode()
