"""The shipped glibc symbol list (toolkit/inspect/glibc-symbols.txt) against the glibcs it
was read from, through readers its generator does not use: pyelftools on this machine's
libraries (when this machine has the glibc of the list's newest section), and glibc 2.33's
abilists (when TOOLKIT_UPSTREAM_DIR holds bminor+glibc); and the loader's rules for an
unversioned reference, on hand-made tables."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from toolkit.inspect.readers import glibc
from toolkit.inspect.readers.glibc import LIBRARIES, Row, parse, parse_readelf, resolve

LIBDIR = Path("/lib/x86_64-linux-gnu")
HERE = tuple(int(p) for p in (os.confstr("CS_GNU_LIBC_VERSION") or "glibc 0").split()[1].split("."))
NEWEST = max(glibc.table().sections)


def _pyelftools_rows(path: Path, library: str) -> set[tuple[str, str, str, bool]]:
    with path.open("rb") as fh:
        elf = ELFFile(fh)
        versym, dynsym = elf.get_section_by_name(".gnu.version"), elf.get_section_by_name(".dynsym")
        verdef = elf.get_section_by_name(".gnu.version_d")
        names = {d["vd_ndx"]: next(aux).name for d, aux in verdef.iter_versions()}
        out = set()
        for i, sym in enumerate(dynsym.iter_symbols()):
            if sym["st_shndx"] in ("SHN_UNDEF", "SHN_ABS") or not sym.name:
                continue
            if sym["st_info"]["bind"] not in ("STB_GLOBAL", "STB_WEAK", "STB_GNU_UNIQUE", "STB_LOOS"):
                continue
            if sym["st_other"]["visibility"] not in ("STV_DEFAULT", "STV_PROTECTED"):
                continue
            ndx = versym.get_symbol(i).entry["ndx"]
            if isinstance(ndx, int) and (ndx & 0x7FFF) in names:
                out.add((sym.name, library, names[ndx & 0x7FFF], not ndx & 0x8000))
        return out


@pytest.mark.skipif(HERE != NEWEST or not (LIBDIR / "libc.so.6").exists(),
                    reason=f"this machine's glibc is not {NEWEST}")
@pytest.mark.parametrize("library", LIBRARIES)
def test_the_newest_section_is_this_glibc_as_pyelftools_reads_it(library: str) -> None:
    rows = {(r.name, r.library, r.version, r.default) for rs in glibc.table().sections[NEWEST].values()
            for r in rs if r.library == library}
    assert rows == _pyelftools_rows(LIBDIR / library, library)


GLIBC_REPO = Path(os.environ.get("TOOLKIT_UPSTREAM_DIR", "/nonexistent")) / "bminor+glibc" / "repo"


@pytest.mark.skipif(not GLIBC_REPO.is_dir(), reason="TOOLKIT_UPSTREAM_DIR holds no bminor+glibc")
def test_the_2_33_section_is_glibc_2_33s_abilists() -> None:
    want = set()
    for library in LIBRARIES:
        stem = "ld" if library.startswith("ld-") else library.split(".so")[0]
        where = "x86_64" if stem == "libmvec" else "x86_64/64"
        text = subprocess.run(["git", f"--git-dir={GLIBC_REPO}", "show",
                               f"glibc-2.33:sysdeps/unix/sysv/linux/{where}/{stem}.abilist"],
                              capture_output=True, text=True, check=True).stdout
        rows = [f for f in map(str.split, text.splitlines()) if f[0].startswith("GLIBC_2")]
        want |= {(f[1], library, f[0]) for f in rows}
    got = {(r.name, r.library, r.version) for rs in glibc.table().sections[(2, 33)].values() for r in rs}
    assert got == want
    assert ("shm_open", "librt.so.1", "GLIBC_2.2.5") in got  # the case, by hand


def test_every_glibc_library_of_the_policies_is_listed() -> None:
    # auditwheel's lib_whitelist: libc, libm, libmvec, libpthread, libdl, librt, libutil,
    # libanl, libnsl, libresolv (libcrypt.so.1 is on no policy's list)
    from toolkit.inspect.readers.policy import load_policies
    allowed = {lib for p in load_policies() for lib in p.libraries}
    assert {"libc.so.6", "libm.so.6", "libmvec.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1",
            "libutil.so.1", "libanl.so.1", "libnsl.so.1", "libresolv.so.2"} <= allowed
    listed = {r.library for s in glibc.table().sections.values() for rs in s.values() for r in rs}
    glibcs = {lib for lib in allowed if lib in set(LIBRARIES)}
    assert glibcs == set(LIBRARIES) - {"ld-linux-x86-64.so.2"} and glibcs <= listed


def test_readelf_output_rows() -> None:
    text = (" 355: 0000000000091b60   157 FUNC    GLOBAL DEFAULT   16 shm_open@GLIBC_2.2.5\n"
            " 356: 0000000000091b60   157 FUNC    GLOBAL DEFAULT   16 shm_open@@GLIBC_2.34\n"
            "  11: 0000000000000000     0 OBJECT  GLOBAL DEFAULT  ABS GLIBC_2.2.5\n"
            "   6: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND __tls_get_addr@GLIBC_2.3 (41)\n"
            "  20: 0000000000001000     8 FUNC    LOCAL  DEFAULT   16 hidden@@GLIBC_2.2.5\n")
    assert parse_readelf(text, "libc.so.6") == [Row("shm_open", "libc.so.6", "GLIBC_2.2.5", False),
                                                Row("shm_open", "libc.so.6", "GLIBC_2.34", True)]


TABLE = parse("""@glibc 2.36
exp libm.so.6 GLIBC_2.2.5 compat
exp libm.so.6 GLIBC_2.29 default
shm_open libc.so.6 GLIBC_2.2.5 compat
shm_open libc.so.6 GLIBC_2.34 default
sys_errlist libc.so.6 GLIBC_2.12 compat
@glibc 2.33
exp libm.so.6 GLIBC_2.2.5 compat
exp libm.so.6 GLIBC_2.29 default
shm_open librt.so.1 GLIBC_2.2.5 default
sys_errlist libc.so.6 GLIBC_2.12 compat
""")


@pytest.mark.parametrize(("name", "loaded", "floor", "want"), [
    # ld.so binds an unversioned reference to the default version: on 2.28 that of exp was
    # GLIBC_2.2.5 (GLIBC_2.29 came with 2.29)
    ("exp", {"libm.so.6"}, (2, 28), ["libm.so.6", "libm.so.6", "libm.so.6", "libm.so.6"]),
    ("exp", {"libc.so.6"}, (2, 28), None),
    # librt's until 2.33, libc's from 2.34: judged at 2.28, 2.33, 2.34 and 2.36
    ("shm_open", {"librt.so.1", "libc.so.6"}, (2, 28),
     ["librt.so.1", "librt.so.1", "libc.so.6", "libc.so.6"]),
    ("shm_open", {"libc.so.6"}, (2, 28), None),
    ("shm_open", {"libc.so.6"}, (2, 34), ["libc.so.6", "libc.so.6"]),
    ("shm_open", {"librt.so.1"}, (2, 34), None),
    # made compat-only (2.32): present on 2.28, gone by 2.33, so unresolved from 2.28 on
    ("sys_errlist", {"libc.so.6"}, (2, 28), None),
])
def test_an_unversioned_reference_resolves_on_every_glibc_from_the_floor(
        name: str, loaded: set[str], floor: tuple[int, ...], want: list[str] | None) -> None:
    assert resolve(name, loaded, floor, data=TABLE) == want
