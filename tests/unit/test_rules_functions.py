"""Whole-function tests of toolkit/inspect's rules (issue 19, part 8: session 25).

Each pins a function's every branch against a truth outside the code: c++filt's demangling
of the names used, ld.so(8)'s reading of search paths, the core metadata spec (header field
names are case-insensitive; METADATA is UTF-8), PEP 427's layout, or a hand-computed value.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel, wrong_crc
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.policy import get_policy
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.readers.wheelzip import Budget, WheelZip
from toolkit.inspect.report import Finding, LibraryResult, WheelResult
from toolkit.inspect.rules.hygiene import bundled_findings, classify_rpath, rpath_findings
from toolkit.inspect.rules.manylinux import _violation, library_policy, platform_tag_findings
from toolkit.inspect.rules.metadata import _headers, check_metadata
from toolkit.inspect.rules.record import Entry, record_findings
from toolkit.inspect.rules.symbols import (
    EXAMPLES,
    Unresolved,
    demangle_all,
    report_unresolved,
    required_findings,
)
from toolkit.inspect.rules.variants import content_key

# c++filt _ZN3foo3barEv -> foo::bar(); c++filt _ZN3foo3bazEi -> foo::baz(int)
DEMANGLED = {"_ZN3foo3barEv": "foo::bar()", "_ZN3foo3bazEi": "foo::baz(int)"}


def _pending(symbols: list[tuple[bytes, str | None]], providers: list[str] | None = None,
             version_files: dict[str, str] | None = None) -> tuple[WheelResult, Unresolved]:
    wheel = WheelResult("demo-1.0-cp312-cp312-linux_x86_64.whl")
    lr = LibraryResult("demo/_ext.so", "shared-library")
    p = Unresolved(wheel, Lib("demo/_ext.so", "wheel:demo", None), lr, symbols,
                   providers=providers or [], version_files=version_files or {})
    return wheel, p


def test_each_undefined_symbol_is_recorded_on_its_library_demangled_with_its_version() -> None:
    wheel, p = _pending([(b"_ZN3foo3barEv", "LIBFOO_1.0"), (b"plain_c", None), (b"_ZN3foo3bazEi", None)],
                        providers=["/usr/lib/libc.so.6"], version_files={"LIBFOO_1.0": "libfoo.so.1"})
    report_unresolved([p], DEMANGLED)
    assert p.result.unresolved == [
        {"symbol": "_ZN3foo3barEv", "demangled": "foo::bar()", "version": "LIBFOO_1.0"},
        {"symbol": "plain_c", "demangled": "plain_c", "version": None},
        {"symbol": "_ZN3foo3bazEi", "demangled": "foo::baz(int)", "version": None},
    ]
    # one finding per likely provider: the version node names libfoo.so.1; the rest are
    # defined by none of the libraries the library loads
    likely, none = wheel.findings
    assert likely == Finding(
        "undefined-symbol", "error", "demo/_ext.so",
        "import would fail: 1 undefined symbol in demo/_ext.so (likely from libfoo.so.1): "
        "foo::bar() (_ZN3foo3barEv@LIBFOO_1.0)",
        cause="undefined symbols (likely from libfoo.so.1)",
        symbols=("foo::bar() (_ZN3foo3barEv@LIBFOO_1.0)",))
    assert none == Finding(
        "undefined-symbol", "error", "demo/_ext.so",
        "import would fail: 2 undefined symbols in demo/_ext.so (defined by none of libc.so.6): "
        "plain_c, foo::baz(int) (_ZN3foo3bazEi)",
        cause="undefined symbols (defined by none of libc.so.6)",
        symbols=("plain_c", "foo::baz(int) (_ZN3foo3bazEi)"))


def test_a_versioned_plain_name_shows_its_version_after_an_at_sign() -> None:
    wheel, p = _pending([(b"erfc", "GLIBC_2.2.5")])
    report_unresolved([p], {})
    (f,) = wheel.findings
    assert f.message == ("import would fail: 1 undefined symbol in demo/_ext.so (it loads no library "
                         "that could define it): erfc@GLIBC_2.2.5")
    assert f.symbols == ("erfc@GLIBC_2.2.5",)
    assert f.cause == "undefined symbols (it loads no library that could define it)"
    assert p.result.unresolved == [{"symbol": "erfc", "demangled": "erfc", "version": "GLIBC_2.2.5"}]


@pytest.mark.parametrize(("count", "tail"), [(5, ""), (6, " and 1 more"), (12, " and 7 more")])
def test_a_group_shows_five_examples_and_counts_the_rest(count: int, tail: str) -> None:
    assert EXAMPLES == 5  # the issue: "a count and up to 5 examples"
    names = [f"s{i:02d}" for i in range(count)]
    wheel, p = _pending([(n.encode(), None) for n in names], providers=["a/liba.so", "b/liba.so", "libb.so"])
    report_unresolved([p], {})
    (f,) = wheel.findings
    assert f.message == (f"import would fail: {count} undefined symbols in demo/_ext.so (defined by none "
                         f"of liba.so, libb.so): {', '.join(names[:5])}{tail}")
    assert f.symbols == tuple(names)  # every name, for --verbose and JSON
    assert len(p.result.unresolved) == count


def test_nothing_pending_or_nothing_undefined_reports_nothing() -> None:
    report_unresolved([], {})
    wheel, p = _pending([])
    report_unresolved([p], {})
    assert wheel.findings == [] and p.result.unresolved == []


def test_each_pending_library_reports_into_its_own_wheel() -> None:
    w1, p1 = _pending([(b"a", None)])
    w2, p2 = _pending([(b"b", None), (b"c", None)], providers=["x/libq.so.1"])
    report_unresolved([p1, p2], {})
    assert [f.symbols for f in w1.findings] == [("a",)]
    assert [f.symbols for f in w2.findings] == [("b", "c")]
    assert "(defined by none of libq.so.1)" in w2.findings[0].message


def test_a_version_with_a_known_file_groups_apart_from_one_without() -> None:
    # two nodes of one file are one group; a node the library does not name falls back
    wheel, p = _pending([(b"x", "V_1"), (b"y", "V_2"), (b"z", "W_1")], providers=["libv.so"],
                        version_files={"V_1": "libv.so", "V_2": "libv.so"})
    report_unresolved([p], {})
    assert [(f.cause, f.symbols) for f in wheel.findings] == [
        ("undefined symbols (likely from libv.so)", ("x@V_1", "y@V_2")),
        ("undefined symbols (defined by none of libv.so)", ("z@W_1",)),
    ]


# --- content_key: what makes two wheels "the same build" --------------------------------

def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_content_key_is_the_canonical_name_and_a_sha256() -> None:
    key = content_key("Demo_Pkg", {"demo/a.py": "sha256=AAA"}, None)
    name, _, digest = key.partition(":")
    assert name == "demo-pkg"  # PEP 503 normalised
    # hand-computed: one line "member NUL digest LF", no METADATA
    assert digest == _h("demo/a.py\0sha256=AAA\n")


def test_the_content_key_ignores_the_dist_info_name_record_and_version() -> None:
    a = {"demo/a.py": "sha256=A", "demo-1.0+rocm6.dist-info/RECORD": None,
         "demo-1.0+rocm6.dist-info/METADATA": "sha256=M1", "demo-1.0+rocm6.dist-info/WHEEL": "sha256=W"}
    b = {"demo-1.0+rocm7.dist-info/WHEEL": "sha256=W", "demo-1.0+rocm7.dist-info/RECORD": "sha256=R",
         "demo-1.0+rocm7.dist-info/METADATA": "sha256=M2", "demo/a.py": "sha256=A"}
    meta_a = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0+rocm6\n"
    meta_b = b"Metadata-Version: 2.1\nName: demo\nversion: 1.0+rocm7\n"  # field names ignore case
    assert content_key("demo", a, meta_a) == content_key("demo", b, meta_b)
    # a dist-info file other than RECORD/METADATA counts, under its folder-free name
    kept = content_key("demo", {"demo/a.py": "sha256=A", "x.dist-info/WHEEL": "sha256=W"}, None)
    assert kept == "demo:" + _h("<dist-info>/WHEEL\0sha256=W\ndemo/a.py\0sha256=A\n")
    assert content_key("demo", {"demo/a.py": "sha256=A"}, None) != kept
    # a file called RECORD outside the .dist-info folder is content
    assert content_key("demo", {"demo/RECORD": "sha256=A"}, None) == "demo:" + _h("demo/RECORD\0sha256=A\n")
    assert content_key("demo", {"demo/RECORD": "sha256=A"}, None) != content_key("demo", {}, None)


def test_the_content_key_tells_members_digests_and_metadata_apart() -> None:
    base = content_key("demo", {"demo/a.py": "sha256=A"}, b"Name: demo\nVersion: 1\n")
    assert content_key("demo", {"demo/b.py": "sha256=A"}, b"Name: demo\nVersion: 1\n") != base
    assert content_key("demo", {"demo/a.py": "sha256=B"}, b"Name: demo\nVersion: 1\n") != base
    assert content_key("demo", {"demo/a.py": None}, b"Name: demo\nVersion: 1\n") != base
    assert content_key("demo", {"demo/a.py": "sha256=A"}, b"Name: demo\nVersion: 2\n") == base
    torch = b"Name: demo\nVersion: 1\nRequires-Dist: torch\n"
    assert content_key("demo", {"demo/a.py": "sha256=A"}, torch) != base
    assert content_key("demo", {"demo/a.py": "sha256=A"}, None) != base
    assert content_key("other", {"demo/a.py": "sha256=A"}, b"Name: demo\nVersion: 1\n") != base
    # line breaks are kept between METADATA's lines, and members and digests are separated
    assert content_key("d", {}, b"a\nb") != content_key("d", {}, b"ab")
    assert content_key("d", {"ab": "c"}, None) != content_key("d", {"a": "bc"}, None)
    # the order the archive lists its members in does not matter
    assert (content_key("d", {"x": "1", "y": "2"}, None) == content_key("d", {"y": "2", "x": "1"}, None)
            == "d:" + _h("x\x001\ny\x002\n"))


def test_the_metadata_part_of_the_key_is_the_hash_of_its_lines_without_version() -> None:
    meta = b"Name: demo\nVersion: 1.0\nSummary: x\n"
    h = hashlib.sha256()
    h.update(b"METADATA\0" + hashlib.sha256(b"Name: demo\nSummary: x").digest())  # hand-built
    assert content_key("demo", {}, meta) == "demo:" + h.hexdigest()
    # an empty METADATA is still hashed (it is not "no METADATA")
    assert content_key("demo", {}, b"") != content_key("demo", {}, None)


# --- _headers: METADATA / WHEEL read as RFC 822 headers --------------------------------

def _wheel(tmp_path: Path, meta: bytes) -> Path:
    path = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo-1.0.dist-info/METADATA", meta)
    return path


def test_headers_of_a_member_are_parsed_and_bad_utf8_is_replaced(tmp_path: Path) -> None:
    # core metadata is UTF-8; one bad byte in a description must not lose the header
    path = _wheel(tmp_path, b"Metadata-Version: 2.1\nName: demo\nSummary: caf\xe9\nVersion: 1.0\n")
    found: list[Finding] = []
    with WheelZip.open(path, Budget()) as wz:
        msg = _headers(wz, wz.members[0], found, "METADATA")
    assert found == [] and msg is not None
    assert msg["name"] == "demo" and msg["VERSION"] == "1.0" and msg["Summary"] == "caf\ufffd"


def test_a_missing_file_is_one_finding_naming_it(tmp_path: Path) -> None:
    found: list[Finding] = []
    with WheelZip.open(_wheel(tmp_path, b"Name: demo\n"), Budget()) as wz:
        assert _headers(wz, None, found, "WHEEL") is None
    assert found == [Finding("metadata", "error", None, "the wheel has no WHEEL file")]


def test_an_unreadable_member_is_one_finding_with_the_readers_reason(tmp_path: Path) -> None:
    path = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/__init__.py": ""})
    wrong_crc(path, "demo-1.0.dist-info/METADATA")  # APPNOTE 4.4.7: the CRC-32 no longer matches
    found: list[Finding] = []
    with WheelZip.open(path, Budget()) as wz:
        meta = next(i for i in wz.members if i.filename.endswith("/METADATA"))
        assert _headers(wz, meta, found, "METADATA") is None
    (f,) = found
    assert (f.check, f.severity, f.library) == ("metadata", "error", None)
    assert f.message.startswith("demo-1.0.dist-info/METADATA: corrupt or truncated archive member (")


def test_origin_dot_dot_from_a_top_level_library_leaves_the_wheel() -> None:
    # ld.so(8): $ORIGIN/.. of a library at the wheel's root is site-packages itself, which no
    # top-level folder of the wheel can be, whatever the tops are called
    assert classify_rpath("$ORIGIN/..", "libx.so", {"..", "pkg"}) == "leaves"
    assert classify_rpath("$ORIGIN/../..", "libx.so", {"..", "pkg"}) == "leaves"
    assert classify_rpath("$ORIGIN", "libx.so", {"pkg"}) is None  # "." is the wheel's root
    assert classify_rpath("$ORIGIN/pkg", "libx.so", {"pkg"}) is None
    assert classify_rpath("$ORIGIN/pkgx", "libx.so", {"pkg"}) == "leaves"


# --- demangle_all: one batch for every name shown or matched -------------------------------

def test_every_pending_and_candidate_name_is_demangled_in_one_batch() -> None:
    _, p = _pending([(b"_ZN3foo3barEv", None), (b"plain", None)])
    # c++filt _ZN3baz3quxEv -> baz::qux(); a byte that is not UTF-8 is replaced, not fatal
    _, q = _pending([(b"bad\xffname", None)])
    out = demangle_all([p, q], [{"_ZN3baz3quxEv"}, set()])
    # only names that demangle are keys (c++filt prints the others unchanged)
    assert out == {"_ZN3foo3barEv": "foo::bar()", "_ZN3baz3quxEv": "baz::qux()"}
    assert demangle_all([], [{"_ZN3baz3quxEv"}, {"_ZN3foo3barEv"}]) == out


# --- _violation: the newest version a library needs beyond the target, per prefix ----------

def test_a_policy_violation_names_the_first_file_needing_the_newest_version() -> None:
    # libm's symbol versions are GLIBC_ nodes too (readelf -V /lib/x86_64-linux-gnu/libm.so.6);
    # ld.so checks the version needs in order and stops at the first it cannot meet
    info = ElfInfo(machine=62, elf_class=64, type=3,
                   version_needs={"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.34"), "libm.so.6": ("GLIBC_2.34",),
                                  "libown.so": ("OWN_9",)})
    f = _violation("pkg/x.so", info, "manylinux_2_34", get_policy("manylinux_2_28"), "why", {"libown.so"})
    assert f is not None and f.message == (
        "pkg/x.so needs GLIBC_2.34 (from libc.so.6), which manylinux_2_28 (why) does not allow (it allows "
        "up to GLIBC_2.28); the library's symbols need manylinux_2_34")
    assert (f.check, f.severity, f.library, f.cause) == ("policy", "error", "pkg/x.so",
                                                          "needs more than manylinux_2_28 allows")
    assert _violation("pkg/x.so", info, "manylinux_2_34", get_policy("manylinux_2_34"), "why", set()) is None


def test_a_library_needing_its_own_sibling_first_is_still_judged_on_the_system_ones() -> None:
    """The version needs of a library are listed in its DT_VERNEED order, which may name a
    library of the wheel itself first (``readelf -V``); that sibling is not judged, yet the
    system libraries needed after it are: libc's GLIBC_2.34 is more than manylinux_2_28
    allows (PEP 600: glibc 2.28)."""
    info = ElfInfo(machine=62, elf_class=64, type=3,
                   version_needs={"libown.so": ("OWN_9",), "libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.34")})
    f = _violation("pkg/x.so", info, "manylinux_2_34", get_policy("manylinux_2_28"), "why", {"libown.so"})
    assert f is not None and f.severity == "error"
    assert "GLIBC_2.34" in f.message and "libc.so.6" in f.message and "OWN_9" not in f.message


@pytest.mark.parametrize(("path", "project", "what"), [
    # torch's own libraries (torch/lib in every torch wheel): libshm, libcaffe2_nvrtc, libc10_hip
    ("demo/libshm.so", "demo", "torch"),
    ("demo/libshm.so", "rocm-sdk-libraries", "torch"),  # the ROCm SDK does not own torch's
    ("torch/lib/libshm.so", "torch", None),
    ("demo/libcaffe2_nvrtc.so", "rocm", "torch"),
    ("demo/libc10_hip.so", "pytorch-triton-rocm", None),
    ("demo/libhsa-runtime64.so.1", "rocm-sdk-core", None),
    ("demo/libhsa-runtime64.so.1", "rocmx", "ROCm"),
    ("demo/libhsa-runtime64.so.1", "torch", None),
])
def test_a_bundled_library_belongs_to_torch_or_rocm(path: str, project: str, what: str | None) -> None:
    found = bundled_findings(path, project, ())
    assert [f.cause for f in found] == ([f"bundles a {what} library"] if what else [])
    if what:
        base = path.rsplit("/", 1)[-1].split(".")[0]
        tail = f"must come from the installed {what} (or pass --allow-bundled {base})"
        assert found[0].message.endswith(tail)


def test_a_dist_info_folder_splits_at_its_last_hyphen(tmp_path: Path) -> None:
    # PEP 440 normalised versions hold no hyphen, so the version is after the last one; an
    # unescaped name (demo-pkg, PEP 427 asks for demo_pkg) still names the same project
    src = make_wheel(tmp_path / "src", "demo-pkg", "1.0", "py3-none-any", {"demo_pkg/__init__.py": ""})
    for folder, found in (("demo-pkg-1.0.dist-info", []),
                          ("demo-pkg-2.0.dist-info", ["demo-pkg-2.0.dist-info does not match the file name "
                                                      "(demo-pkg 1.0)"])):
        out = tmp_path / folder / src.name
        out.parent.mkdir()
        with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
            for info in zin.infolist():
                zout.writestr(info.filename.replace("demo_pkg-1.0.dist-info", folder), zin.read(info))
        res = WheelResult(str(out))
        with WheelZip.open(out, Budget()) as wz:
            check_metadata(res, wz)
        assert [f.message for f in res.findings] == found


def test_a_librarys_policy_is_judged_with_its_own_architectures_symbol_versions() -> None:
    # auditwheel's policy.json: GLIBC_2.2.5 is an x86_64 node (the first glibc of x86-64); the
    # i686 lists have no such node, so an i386 library needing it fits no manylinux policy
    needs: dict[str, tuple[str, ...]] = {"libc.so.6": ("GLIBC_2.2.5",)}
    x86_64 = LibraryResult("a.so", "shared-library")
    info64 = ElfInfo(machine=62, elf_class=64, type=3, version_needs=needs)
    assert library_policy(x86_64, info64, set()) is None
    i386 = LibraryResult("b.so", "shared-library")
    assert library_policy(i386, ElfInfo(machine=3, elf_class=32, type=3, version_needs=needs), set()) is None
    assert (x86_64.policy, i386.policy) == ("manylinux_2_5", "linux")
    assert x86_64.max_versions == i386.max_versions == {"GLIBC": "2.2.5"}


# --- record_findings: RECORD against the members as read (PEP 376 / PEP 627) ---------------

def test_each_record_disagreement_is_one_error_with_its_cause() -> None:
    entries = {"a.py": Entry("sha256", "sha256=AAA", 3), "b.py": Entry("sha256", "sha256=BBB", 3),
               "c.py": Entry(None, None, 5), "gone.py": Entry("sha256", "sha256=X", 1),
               "x.dist-info/RECORD.jws": Entry(None, None, None),
               "x.dist-info/RECORD": Entry(None, None, None)}
    seen = {"a.py": ("sha256=ZZZ", 3), "b.py": ("sha256=BBB", 4), "c.py": ("sha256=C", 1),
            "new.py": ("sha256=N", 1), "x.dist-info/RECORD": ("sha256=R", 10),
            "x.dist-info/RECORD.p7s": ("sha256=S", 2)}  # RECORD and its signatures list no hash
    found = record_findings(entries, seen, set())
    assert [(f.check, f.severity, f.library, f.cause, f.message) for f in found] == [
        ("record", "error", "a.py", "hash differs from RECORD",
         "a.py: RECORD says sha256=AAA, its content hashes to sha256=ZZZ"),
        ("record", "error", "b.py", "size differs from RECORD",
         "b.py: RECORD says 3 bytes, the member has 4"),
        ("record", "error", "c.py", "RECORD entry without a hash", "RECORD lists c.py without a hash"),
        ("record", "error", "c.py", "size differs from RECORD",
         "c.py: RECORD says 5 bytes, the member has 1"),
        ("record", "error", "new.py", "member not in RECORD", "new.py is not listed in RECORD"),
        ("record", "error", "gone.py", "RECORD lists a missing file",
         "RECORD lists gone.py, which the wheel lacks"),
    ]
    # a member that could not be inflated is only checked for being listed
    assert record_findings({"a.py": Entry("sha256", "sha256=AAA", 3)}, {"a.py": (None, 0)}, {"a.py"}) == []
    assert [f.cause for f in record_findings({}, {"a.py": (None, 0)}, {"a.py"})] == ["member not in RECORD"]
    # missing files are named in sorted order
    two = {"z.py": Entry(None, None, None), "m.py": Entry(None, None, None)}
    assert [f.library for f in record_findings(two, {}, set())] == ["m.py", "z.py"]


def test_native_code_in_a_wheel_with_several_any_tags_names_them_all() -> None:
    # packaging.tags: py2.py3-none-any expands to py2-none-any and py3-none-any
    libs = [LibraryResult("demo/a.so", "shared-library"), LibraryResult("demo/b.so", "shared-library")]
    res = WheelResult("w.whl", "demo", "1.0", ["py2-none-any", "py3-none-any"], libraries=libs)
    assert [(f.check, f.severity, f.cause, f.message) for f in platform_tag_findings(res)] == [
        ("platform-tag", "error", "native code in a -any wheel",
         "native code (demo/a.so) in a wheel tagged py2-none-any, py3-none-any")]
    # a wheel tagged for a platform and any at once is not "-any" only: nothing to say
    mixed = WheelResult("w.whl", "demo", "1.0", ["py3-none-any", "cp312-cp312-linux_x86_64"], libraries=libs)
    assert platform_tag_findings(mixed) == []


def test_a_bad_file_name_or_two_dist_info_folders_stop_the_metadata_rule(tmp_path: Path) -> None:
    src = make_wheel(tmp_path / "src", "demo", "1.0", "py3-none-any", {"demo/__init__.py": ""})
    bad = tmp_path / "demo.whl"  # PEP 427: name-version(-build)?-python-abi-platform.whl
    bad.write_bytes(src.read_bytes())
    res = WheelResult(str(bad))
    with WheelZip.open(bad, Budget()) as wz:
        check_metadata(res, wz)
    (f,) = res.findings
    assert (f.check, f.severity, f.library) == ("metadata", "error", None)
    head = "bad wheel file name 'demo.whl': "
    assert f.message.startswith(head) and len(f.message) > len(head)  # packaging's reason follows
    assert (res.name, res.version, res.tags, res.requires) == (None, None, [], [])
    two = tmp_path / "two" / src.name
    two.parent.mkdir()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(two, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info))
        zout.writestr("other-2.0.dist-info/METADATA", "Name: other\n")
        zout.writestr("demo/sub.dist-info/RECORD", "")  # not top-level: no .dist-info folder of the wheel
    res = WheelResult(str(two))
    with WheelZip.open(two, Budget()) as wz:
        check_metadata(res, wz)
    assert [(f.check, f.severity, f.message) for f in res.findings] == [
        ("metadata", "error", "expected exactly one .dist-info folder, found ['demo-1.0.dist-info', "
         "'other-2.0.dist-info']")]
    assert (res.name, res.version, res.tags) == ("demo", "1.0", ["py3-none-any"])


def test_a_required_symbol_is_found_by_its_plain_or_demangled_name() -> None:
    # c++filt _ZN3foo3barEi -> foo::bar(int): "foo::bar" is found as the name before "("
    cands = {"plain_c", "_ZN3foo3barEi"}
    demangled = {"_ZN3foo3barEi": "foo::bar(int)"}
    assert required_findings("x.whl", ["plain_c", "foo::bar", "_ZN3foo3barEi"], cands, demangled) == []
    found = required_findings("x.whl", ["foo::ba", "foo", "plain"], cands, demangled)
    rows = [(f.check, f.severity, f.library, f.cause) for f in found]
    assert rows == [("required-symbol", "error", None, None)] * 3
    assert [f.message for f in found] == [
        f"required symbol {s} is defined by no library of x.whl (like `nm -gDC lib | grep ' {s}('` "
        "finding nothing)" for s in ("foo::ba", "foo", "plain")]
    assert required_findings("x.whl", [], cands, demangled) == []


def test_an_rpath_finding_names_three_libraries_then_counts_the_rest() -> None:
    def libs(n: int) -> list[tuple[str, ElfInfo]]:
        return [(f"demo/l{i}.so", ElfInfo(machine=62, elf_class=64, type=3, rpath=("/usr/local/lib",)))
                for i in range(n)]

    shown = "RPATH '/usr/local/lib' in demo/l0.so, demo/l1.so, demo/l2.so"
    (three,) = rpath_findings(libs(3), {"demo"})
    assert three.message.startswith(shown + ": an absolute")
    (four,) = rpath_findings(libs(4), {"demo"})
    assert four.message.startswith(shown + " and 1 more: an absolute")
    assert (four.library, four.libraries) == (None, tuple(f"demo/l{i}.so" for i in range(4)))
    # RPATH and RUNPATH of the same entry are two findings (ld.so reads them differently)
    both = ElfInfo(machine=62, elf_class=64, type=3, rpath=("/opt/x",), runpath=("/opt/x",))
    assert [f.cause for f in rpath_findings([("demo/a.so", both)], {"demo"})] == [
        "RPATH an absolute path outside the wheel (libraries there would load on users' machines)",
        "RUNPATH an absolute path outside the wheel (libraries there would load on users' machines)"]


def test_an_elf_header_is_described_by_class_encoding_and_machine() -> None:
    from toolkit.inspect.rules.machine import describe

    # EM_X86_64 is 62 (System V gABI machine numbers)
    assert describe(64, True, 62) == "64-bit little-endian x86-64"
    assert describe(32, False, 0x9999).startswith("32-bit big-endian machine ")


@pytest.mark.parametrize(("tags", "want"), [
    (["cp312-cp312-manylinux_2_28_aarch64"], ("aarch64", "manylinux_2_28_aarch64")),  # PEP 600
    (["cp312-cp312-manylinux2014_ppc64le"], ("ppc64le", "manylinux2014_ppc64le")),  # PEP 599
    (["cp312-cp312-musllinux_1_2_x86_64"], ("x86_64", "musllinux_1_2_x86_64")),  # PEP 656
    (["cp312-cp312-linux_x86_64"], ("x86_64", "linux_x86_64")),
    (["py3-none-any"], None),
])
def test_the_architecture_a_wheel_tag_names(tags: list[str], want: tuple[str, str] | None) -> None:
    from toolkit.inspect.rules.machine import tag_arch

    assert tag_arch(tags) == want
