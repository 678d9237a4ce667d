"""abi3 wheels: one ``py_limited_api`` wheel serves every CPython from its tag's on.

A wheel tagged ``cpXY-abi3`` (PEP 425's ``abi3``; PEP 384's stable ABI) promises that each of
its extension modules imports only interpreter symbols of the stable ABI as it was in Python
X.Y, and that every later Python finds the module. The rule checks, per extension module:

- every ``Py*``/``_Py*`` symbol it imports is in the stable ABI on Linux (an item of CPython's
  ``Misc/stable_abi.toml`` not limited to Windows or to debug builds), read from pypa's
  ``abi3info``, which packages that file: outside it, another Python may not define it;
- none was added to the stable ABI after X.Y: on X.Y the import fails (``undefined symbol``);
- its file name is one every Python imports (``<mod>.abi3.so`` or ``<mod>.so``): a name for
  one interpreter (``<mod>.cpython-312-x86_64-linux-gnu.so``) is imported by that one only.

``PyInit_*`` are the module's own entry points (abi3audit skips them too).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache

from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.report import Finding

CHECK = "abi3"
# the feature macros (stable_abi.toml ``ifdef``) a Linux CPython defines (CPython's own
# Lib/test/test_stable_abi_ctypes.py lists the symbols under each)
LINUX_FEATURES = frozenset({"HAVE_FORK", "PY_HAVE_THREAD_NATIVE_ID"})
_ONE_PYTHON = re.compile(r"\.(cpython-[0-9]+[a-z]*|pypy[0-9]*-[0-9a-z]+)(-[^.]*)?\.so$")
EXAMPLES = 5


@cache
def stable_abi() -> Mapping[str, tuple[int, int]]:
    """Every stable-ABI function and data symbol a Linux CPython exports: name -> the
    (major, minor) Python that added it."""
    from abi3info import DATAS, FUNCTIONS

    out: dict[str, tuple[int, int]] = {}
    for table in (FUNCTIONS, DATAS):
        for sym, item in table.items():
            ifdef = getattr(item, "ifdef", None)
            if ifdef is None or ifdef.name in LINUX_FEATURES:
                out[sym.name] = (item.added.major, item.added.minor)
    return out


def baseline(tags: Sequence[str]) -> tuple[int, int] | None:
    """The oldest Python of a wheel's ``cpXY-abi3`` tags (``cp39-abi3-linux_x86_64``); None
    for a wheel without an abi3 tag."""
    found = []
    for tag in tags:
        parts = tag.split("-")
        m = re.fullmatch(r"cp([0-9])([0-9]+)", parts[0]) if len(parts) == 3 else None
        if m and parts[1] == "abi3":
            found.append((int(m.group(1)), int(m.group(2))))
    return min(found) if found else None


def module_findings(path: str, info: ElfInfo, base: tuple[int, int]) -> list[Finding]:
    """The findings for one extension module of a wheel tagged for Python ``base`` on."""
    tag = f"cp{base[0]}{base[1]}-abi3"
    out = []
    name = posixpath.basename(path)
    if _ONE_PYTHON.search(name):
        out.append(Finding(
            CHECK, "error", path,
            f"{path}: an extension module named for one Python ({name}) in a {tag} wheel: "
            "other Pythons do not import it; name it <module>.abi3.so (setuptools: "
            "Extension(..., py_limited_api=True))",
            cause="module named for one Python"))
    outside, newer = _imports(info.undefined, base)
    if outside:
        out.append(Finding(
            CHECK, "error", path,
            f"{path} imports {_count(outside)} outside the stable ABI ({_shown(outside)}), yet "
            f"the wheel is tagged {tag}: another Python may not define "
            f"{'them' if len(outside) > 1 else 'it'}; build with Py_LIMITED_API="
            f"0x{base[0]:02X}{base[1]:02X}0000 or tag the wheel for one Python",
            cause="imports outside the stable ABI"))
    if newer:
        first = max(newer.values())
        shown = _shown(f"{n} ({a[0]}.{a[1]})" for n, a in sorted(newer.items()))
        out.append(Finding(
            CHECK, "error", path,
            f"{path} imports {_count(newer)} the stable ABI added after Python "
            f"{base[0]}.{base[1]} ({shown}), yet the wheel is tagged {tag}: on Python "
            f"{base[0]}.{base[1]} the import fails with 'undefined symbol'; tag it "
            f"cp{first[0]}{first[1]}-abi3 or leave {'them' if len(newer) > 1 else 'it'} out",
            cause="stable ABI newer than the wheel's tag"))
    return out


def _imports(undefined: Iterable[tuple[bytes, str | None]],
             base: tuple[int, int]) -> tuple[list[str], dict[str, tuple[int, int]]]:
    """The interpreter symbols ``undefined`` names: (outside the stable ABI, name -> the
    Python that added it for those added after ``base``)."""
    known = stable_abi()
    outside: dict[str, None] = {}
    newer: dict[str, tuple[int, int]] = {}
    for raw, _version in undefined:
        if not raw.startswith((b"Py", b"_Py")) or raw.startswith(b"PyInit_"):
            continue
        name = raw.decode("utf-8", "replace")
        added = known.get(name)
        if added is None:
            outside[name] = None
        elif added > base:
            newer[name] = added
    return sorted(outside), newer


def _count(names: Sequence[str] | Mapping[str, object]) -> str:
    return f"{len(names)} interpreter symbol{'s' * (len(names) != 1)}"


def _shown(names: Iterable[str]) -> str:
    items = list(names)
    more = len(items) - EXAMPLES
    return ", ".join(items[:EXAMPLES]) + (f" and {more} more" if more > 0 else "")
