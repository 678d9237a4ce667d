"""Write (or, with --check, compare) toolkit/inspect/glibc-symbols.txt from real glibcs.

    python tools/glibc_symbols.py [--check] [--glibc-repo DIR]

The ``@glibc 2.N`` section of this machine's glibc: ``readelf -W --dyn-syms`` of each glibc
library auditwheel's policies allow (/lib/x86_64-linux-gnu, Debian's libc6). The ``@glibc
2.33`` section: glibc 2.33's own x86_64 ABI lists, read at the glibc-2.33 tag of a bare clone
of bminor/glibc (``--glibc-repo``; default ``$TOOLKIT_UPSTREAM_DIR/bminor+glibc/repo``).
Exit 0: written, or the file matches; 1: the file differs (--check); 2: a source is missing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from toolkit.core.files import write_atomic
from toolkit.core.proc import CommandFailed, run
from toolkit.inspect.readers.glibc import LIBRARIES, Row, parse_abilist, parse_readelf, render

LIBDIR = "/lib/x86_64-linux-gnu"
TAG = "glibc-2.33"
ABILIST = "sysdeps/unix/sysv/linux/x86_64/64/{}.abilist"
ABILIST_OF = {"ld-linux-x86-64.so.2": ABILIST.format("ld"),
              "libmvec.so.1": "sysdeps/unix/sysv/linux/x86_64/libmvec.abilist"}
OUT = Path(__file__).resolve().parent.parent / "toolkit" / "inspect" / "glibc-symbols.txt"


def machine_rows() -> tuple[str, str, list[Row]]:
    """(this glibc's release, where it comes from, its rows)."""
    rel = os.confstr("CS_GNU_LIBC_VERSION") or ""
    if not rel.startswith("glibc "):
        sys.exit(f"error: this machine's C library is not glibc ({rel!r})")
    try:
        pkg = run(["dpkg-query", "-W", "-f", "${Version}", "libc6"], check=True).stdout.strip()
        where = f"Debian's libc6 {pkg} (amd64)"
    except (CommandFailed, OSError):
        where = "this machine's glibc"
    rows: list[Row] = []
    for lib in LIBRARIES:
        path = os.path.join(LIBDIR, lib)
        if not os.path.exists(path):
            sys.exit(f"error: {path}: no such file (every library of {LIBRARIES} is needed)")
        rows += parse_readelf(run(["readelf", "-W", "--dyn-syms", path], check=True).stdout, lib)
    return rel.split()[1], where, rows


def abilist_rows(repo: str, hidden: set[tuple[str, str, str]]) -> tuple[str, list[Row]]:
    """(evidence, rows) of glibc 2.33's ABI lists."""
    git = ["git", f"--git-dir={repo}"]
    try:
        commit = run([*git, "rev-parse", f"{TAG}^{{commit}}"], check=True).stdout.strip()
    except (CommandFailed, OSError) as err:
        sys.exit(f"error: {repo}: no {TAG} tag of bminor/glibc ({err}); give --glibc-repo DIR")
    rows: list[Row] = []
    for lib in LIBRARIES:
        path = ABILIST_OF.get(lib) or ABILIST.format(lib.split(".so")[0])
        rows += parse_abilist(run([*git, "show", f"{commit}:{path}"], check=True).stdout, lib, hidden)
    return f"bminor/glibc@{commit[:10]} ({TAG}) {ABILIST.format('<library>')}", rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    default = os.path.join(os.environ.get("TOOLKIT_UPSTREAM_DIR", "/work/.mirror"), "bminor+glibc", "repo")
    ap.add_argument("--glibc-repo", default=default)
    args = ap.parse_args(argv)
    rel, where, rows = machine_rows()
    hidden = {(r.name, r.library, r.version) for r in rows if not r.default}
    evidence, old = abilist_rows(args.glibc_repo, hidden)
    header = [
        "Which glibc library exports which name at which version node: one 'name library version",
        "default|compat' a line ('default' is name@@version, the one an unversioned reference binds",
        "to; 'compat' is name@version, hidden: only a versioned reference binds to it), per glibc",
        "release ('@glibc 2.N'). Libraries: glibc's on auditwheel's lib_whitelist, and the loader:",
        f"{', '.join(LIBRARIES)}.",
        f"@glibc {rel}: readelf -W --dyn-syms of {LIBDIR}/<library>, {where}. Since 2.34",
        "libpthread, libdl, librt, libutil and libanl are stubs; their names are libc's.",
        f"@glibc 2.33 (the last release before that merge): {evidence}",
        "(glibc's own list of what each built library exports, checked by its check-abi test). An",
        "abilist marks no default: a name's newest version is taken as its default, unless the",
        f"{rel} section has that very version of that library as compat.",
        "Written by tools/glibc_symbols.py (--check compares).",
    ]
    text = render({rel: rows, "2.33": old}, header)
    if args.check:
        same = OUT.read_text("utf-8") == text
        print(f"{OUT}: {'matches' if same else 'differs from'} this machine's glibc and {TAG}")
        return 0 if same else 1
    write_atomic(OUT, text, "the glibc symbol list")
    print(f"wrote {OUT}: {len(rows)} rows of glibc {rel}, {len(old)} of glibc 2.33")
    return 0


if __name__ == "__main__":
    sys.exit(main())
