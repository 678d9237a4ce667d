"""Which glibc library provides which name, at which version, on which glibc (shipped data).

``glibc-symbols.txt`` holds two sections, each read from a real glibc (its header names the
sources; ``tests/fixtures/glibc_symbols.py`` writes it and ``--check`` compares it):

* ``@glibc 2.36``: the dynamic symbol tables of this machine's glibc 2.36 libraries, every
  exported name with each version node, ``default`` (``name@@VERSION``: an unversioned
  reference binds there) or ``compat`` (``name@VERSION``: hidden, only a versioned reference
  binds there). Since glibc 2.34, libpthread, libdl, librt, libutil and libanl are stubs:
  their names live in libc, at a new default version and their old one as compat.
* ``@glibc 2.33``: the last glibc before that merge, from glibc's own per-library ABI lists
  (the release's ``check-abi`` test compares its built libraries with them), where those
  names still live in their own libraries (``shm_open`` in librt.so.1).

An unversioned reference resolves, as ld.so resolves it, when some library loaded in the
process defines the name at a default version: :func:`providers` answers for one glibc release,
:func:`resolve` for every release from a wheel's oldest glibc on.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from toolkit.core.errors import DataError

DATA_FILE = "glibc-symbols.txt"
MERGE = (2, 34)  # glibc 2.34 moved libpthread, libdl, librt, libutil and libanl into libc
# glibc's libraries on auditwheel's lib_whitelist (every manylinux policy's), and the loader
LIBRARIES = ("ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libmvec.so.1", "libpthread.so.0",
             "libdl.so.2", "librt.so.1", "libutil.so.1", "libanl.so.1", "libnsl.so.1", "libresolv.so.2")
# What a CPython process has loaded before it imports an extension module: the interpreter
# links libc and libm; built on a glibc before 2.34 also libpthread, libdl and libutil
# (sysconfig's LIBS there: "-lcrypt -lpthread -ldl  -lutil -lm").
INTERPRETER = frozenset({"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "libutil.so.1"})
EVERY_PROCESS = frozenset({"libc.so.6"})  # every dynamically linked program loads libc
_GLIBC = re.compile(r"^GLIBC_([0-9]+(?:\.[0-9]+)+)$")


@dataclass(frozen=True)
class Row:
    name: str
    library: str
    version: str  # GLIBC_2.2.5
    default: bool


def release(version: str) -> tuple[int, ...] | None:
    """``GLIBC_2.2.5`` -> (2, 2, 5); None for a node that names no release (GLIBC_PRIVATE)."""
    m = _GLIBC.match(version)
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def parse_readelf(text: str, library: str) -> list[Row]:
    """Rows of ``readelf -W --dyn-syms`` output: every defined global, weak or unique name
    that is not hidden or internal, with its version (``@@`` default, ``@`` compat)."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].endswith(":") or f[6] == "UND":
            continue
        if f[4] not in ("GLOBAL", "WEAK", "UNIQUE") or f[5] not in ("DEFAULT", "PROTECTED"):
            continue
        name, at, version = f[7].partition("@")
        if not at or f[6] == "ABS":  # unversioned, or a version node's own symbol
            continue
        default = version.startswith("@")
        out.append(Row(name, library, version.lstrip("@"), default))
    return out


def parse_abilist(text: str, library: str, hidden: Collection[tuple[str, str, str]] = ()) -> list[Row]:
    """Rows of a glibc ``.abilist`` (``GLIBC_2.2.5 shm_open F``), which marks no default:
    a name's newest version is its default unless ``hidden`` (name, library, version: read
    from a later release, where it is compat) says otherwise."""
    versions: dict[str, list[str]] = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 2 and release(f[0]) is not None:
            versions.setdefault(f[1], []).append(f[0])
    out = []
    for name, vs in versions.items():
        newest = max(vs, key=lambda v: release(v) or ())
        for v in sorted(set(vs), key=lambda v: release(v) or ()):
            default = v == newest and (name, library, v) not in hidden
            out.append(Row(name, library, v, default))
    return out


def render(sections: Mapping[str, Iterable[Row]], header: Iterable[str]) -> str:
    """The data file: ``header`` as comments, then per glibc release one ``@glibc`` line and
    its rows, ``name library version default|compat``, sorted."""
    lines = [f"# {h}".rstrip() for h in header]
    for rel, rows in sections.items():
        lines.append(f"@glibc {rel}")
        for r in sorted(set(rows), key=lambda r: (r.name, r.library, release(r.version) or (), r.version)):
            lines.append(f"{r.name} {r.library} {r.version} {'default' if r.default else 'compat'}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Table:
    """The data, per described release: name -> rows."""

    sections: Mapping[tuple[int, ...], Mapping[str, tuple[Row, ...]]]

    def section(self, glibc: tuple[int, ...]) -> tuple[tuple[int, ...], Mapping[str, tuple[Row, ...]]]:
        """(release, rows) of the section describing ``glibc``: of those on its side of the
        merge, the newest not after it, else the oldest (2.36's describes 2.34 and 2.35)."""
        side = sorted(k for k in self.sections if (k >= MERGE) == (glibc >= MERGE)) or sorted(self.sections)
        older = [k for k in side if k <= glibc]
        rel = older[-1] if older else side[0]
        return rel, self.sections[rel]


def parse(text: str, source: str = DATA_FILE) -> Table:
    sections: dict[tuple[int, ...], dict[str, list[Row]]] = {}
    current: dict[str, list[Row]] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        f = line.split()
        if f[0] == "@glibc" and len(f) == 2 and release("GLIBC_" + f[1]):
            current = sections.setdefault(release("GLIBC_" + f[1]) or (), {})
        elif current is not None and len(f) == 4 and f[3] in ("default", "compat"):
            current.setdefault(f[0], []).append(Row(f[0], f[1], f[2], f[3] == "default"))
        else:
            raise DataError(f"{source}:{n}: expected '@glibc 2.N' or 'name library version "
                            f"default|compat', got {line[:80]!r}")
    if not sections:
        raise DataError(f"{source}: no '@glibc 2.N' section")
    return Table({k: {n: tuple(rs) for n, rs in v.items()} for k, v in sections.items()})


@cache
def table() -> Table:
    return parse(resources.files("toolkit.inspect").joinpath(DATA_FILE).read_text("utf-8"))


def providers(name: str, glibc: tuple[int, ...], data: Table | None = None) -> list[str]:
    """The libraries that define ``name`` at a default version on glibc ``glibc``. At or
    after the release a section was read from, its default marks tell; before it, a name with
    a version node not newer than ``glibc`` is taken to have had its newest such node as the
    default then (``exp``: GLIBC_2.29 since 2.29, GLIBC_2.2.5 before): a name later made
    compat-only (``sys_errlist`` in 2.32) fails at the section's own release (:func:`checkpoints`)."""
    rel, section = (data or table()).section(glibc)
    exact = glibc >= rel
    return list(dict.fromkeys(
        r.library for r in section.get(name, ())
        if (r.default or not exact) and (v := release(r.version)) is not None and v <= glibc
    ))


def checkpoints(floor: tuple[int, ...], data: Table | None = None) -> list[tuple[int, ...]]:
    """The releases to judge a wheel for glibc ``floor`` and newer at: ``floor``, the first
    after the merge (where names moved into libc) and every later release a section was read
    from (where its default marks are exact); between them names are only added."""
    later = {rel for rel in (data or table()).sections if rel > floor}
    return sorted({floor, *later, *([MERGE] if floor < MERGE else [])})


def resolve(name: str, loaded: Collection[str], floor: tuple[int, ...], prefer: Collection[str] = (),
            data: Table | None = None) -> list[str] | None:
    """The library of ``loaded`` that provides ``name`` to an unversioned reference at each
    of :func:`checkpoints` (one in ``prefer`` where there is one), or None when some glibc
    from ``floor`` on has none."""
    out = []
    for glibc in checkpoints(floor, data):
        found = [lib for lib in providers(name, glibc, data) if lib in loaded]
        if not found:
            return None
        out.append(next((lib for lib in found if lib in prefer), found[0]))
    return out
