"""The policy, platform-tag and record rules' findings as a user reads them: each message, and
the cause that groups findings of one kind under one line of ``toolkit check``'s text output
(and in ``--json``). Policies: PEP 600 (``manylinux_2_N`` needs glibc 2.N at most) and
auditwheel's policy file; wheel tags: PEP 425."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.cli.commands.check import _finding_lines
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.policy import get_policy
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.readers.wheelzip import Budget, WheelZip
from toolkit.inspect.report import Finding, LibraryResult, WheelResult
from toolkit.inspect.rules.manylinux import (
    check_policy,
    claimed_policy,
    library_policy,
    platform_tag_findings,
)
from toolkit.inspect.rules.record import Entry, read_record, record_findings


def _info(machine: int = 62, needs: dict[str, tuple[str, ...]] | None = None) -> ElfInfo:
    return ElfInfo(machine=machine, elf_class=64, type=3, version_needs=needs or {})


def test_a_library_gets_the_best_policy_its_outside_versions_allow() -> None:
    lr = LibraryResult("demo/_ext.so", "shared-library")
    needs = {"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.17"), "libstdc++.so.6": ("GLIBCXX_3.4.19",),
             "libown.so": ("GLIBC_2.99",)}  # a library of the wheel itself does not count
    assert library_policy(lr, _info(needs=needs), {"libown.so"}) is None
    assert lr.max_versions == {"GLIBC": "2.17", "GLIBCXX": "3.4.19"}
    assert lr.policy == "manylinux_2_17"  # glibc 2.17, GCC 4.8's libstdc++ (manylinux2014)
    lr2 = LibraryResult("demo/_new.so", "shared-library")
    assert library_policy(lr2, _info(needs={"libc.so.6": ("GLIBC_2.28",)}), set()) is None
    assert lr2.policy == "manylinux_2_28"


def test_libraries_of_an_unknown_machine_cannot_be_judged() -> None:
    findings = []
    for path in ("demo/a.so", "demo/b.so"):
        lr = LibraryResult(path, "shared-library")
        f = library_policy(lr, _info(machine=0xBEEF, needs={"libc.so.6": ("GLIBC_2.17",)}), set())
        assert f is not None and lr.policy is None and lr.max_versions == {"GLIBC": "2.17"}
        findings.append(f)
    assert (findings[0].check, findings[0].severity, findings[0].library) == ("policy", "error", "demo/a.so")
    assert findings[0].message == ("demo/a.so is ELF for machine 48879, which no manylinux policy "
                                   "covers: its policy cannot be judged")
    assert _finding_lines(findings, False) == [
        "  error [policy] unknown ELF machine: cannot be judged: 2 findings, 2 libraries",
        "      demo/a.so, demo/b.so"]


def _wheel(tags: list[str], kinds: list[str]) -> WheelResult:
    libs = [LibraryResult(f"demo/l{i}.so", k) for i, k in enumerate(kinds)]
    return WheelResult("w.whl", "demo", "1.0", tags, libraries=libs)


def test_native_code_in_an_any_wheel_is_an_error() -> None:
    found = platform_tag_findings(_wheel(["py3-none-any"], ["gpu-code-object", "shared-library"]))
    assert [(f.check, f.severity, f.library, f.cause, f.message) for f in found] == [
        ("platform-tag", "error", None, "native code in a -any wheel",
         "native code (demo/l1.so) in a wheel tagged py3-none-any")]
    two = [platform_tag_findings(_wheel(["py3-none-any"], ["executable"]))[0],
           platform_tag_findings(_wheel(["py2.py3-none-any"], ["object"]))[0]]
    assert _finding_lines(two, False)[0] == (
        "  error [platform-tag] native code in a -any wheel: 2 findings, 0 libraries")


@pytest.mark.parametrize(("tags", "kinds", "want"), [
    (["cp312-cp312-manylinux_2_28_x86_64"], [],
     "no native code, yet tagged manylinux_2_28_x86_64: a redundant platform variant "
     "(a py3-none-any wheel would do)"),
    (["cp312-cp312-manylinux_2_28_x86_64", "cp312-cp312-manylinux_2_17_x86_64"],
     ["gpu-code-object"],
     "no host code (only GPU code objects), yet tagged manylinux_2_17_x86_64, "
     "manylinux_2_28_x86_64: a redundant platform variant (a py3-none-any wheel would do)"),
    (["cp312-cp312-manylinux_2_28_x86_64"], ["unreadable"], None),  # may be native: no claim
    (["cp312-cp312-manylinux_2_28_x86_64"], ["shared-library"], None),
    (["py3-none-any"], [], None),
    (["py3-none-any"], ["unreadable", "gpu-code-object"], None),
    ([], ["shared-library"], None),  # no tags (a folder): nothing to judge
])
def test_a_platform_tag_without_native_code_is_a_warning(
    tags: list[str], kinds: list[str], want: str | None
) -> None:
    found = platform_tag_findings(_wheel(tags, kinds))
    assert [(f.check, f.severity, f.message) for f in found] == (
        [] if want is None else [("platform-tag", "warning", want)])


def test_the_claimed_policy_is_the_highest_priority_tag() -> None:
    pol, problems = claimed_policy(["cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64",
                                    "cp312-cp312-manylinux_2_28_x86_64"])
    assert problems == [] and pol is not None and pol.name == "manylinux_2_17"
    assert claimed_policy(["py3-none-any"]) == (None, [])
    # a tag that claims no policy (musllinux, sorted after manylinux) leaves the claim as it was
    pol, problems = claimed_policy(["cp312-cp312-manylinux_2_28_x86_64", "cp312-cp312-musllinux_1_2_x86_64"])
    assert problems == [] and pol is not None and pol.name == "manylinux_2_28"
    pol, problems = claimed_policy(["cp312-cp312-manylinux_2_99_x86_64"])
    assert [(f.check, f.severity, f.cause) for f in problems] == [
        ("platform-tag", "error", "platform tag cannot be judged")]
    assert problems[0].message.startswith("tag manylinux_2_99_x86_64: ")


def test_a_wheel_without_record_names_what_it_lacks(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/__init__.py": ""})
    bare = tmp_path / "bare" / whl.name
    bare.parent.mkdir()
    with zipfile.ZipFile(whl) as src, zipfile.ZipFile(bare, "w") as dst:
        for i in src.infolist():
            if not i.filename.endswith("RECORD"):
                dst.writestr(i.filename, src.read(i))
    with WheelZip.open(bare, Budget()) as wz:
        entries, found = read_record(wz)
    assert entries is None
    assert [(f.check, f.severity, f.library, f.cause, f.message) for f in found] == [
        ("record", "error", None, "no RECORD",
         "the wheel has no (single) .dist-info/RECORD: its members cannot be verified")]


def test_record_disagreements_are_grouped_by_kind() -> None:
    entries = {"a.py": Entry("sha256", "sha256=AAA", 3), "b.py": Entry("sha256", "sha256=BBB", 3),
               "c.py": Entry(None, None, None), "gone.py": Entry("sha256", "sha256=X", 1),
               "gone2.py": Entry("sha256", "sha256=Y", 1), "d.dist-info/RECORD": Entry(None, None, None)}
    seen = {"a.py": ("sha256=ZZZ", 3), "b.py": ("sha256=YYY", 4), "c.py": ("sha256=C", 1),
            "new.py": ("sha256=N", 1), "d.dist-info/RECORD": (None, 10)}
    found = record_findings(entries, seen, set())
    lines = _finding_lines(found, False)
    assert lines == [
        "  error [record] hash differs from RECORD: 2 findings, 2 libraries",
        "      a.py, b.py",
        "  error [record] b.py: RECORD says 3 bytes, the member has 4",
        "  error [record] RECORD lists c.py without a hash",
        "  error [record] new.py is not listed in RECORD",
        "  error [record] RECORD lists a missing file: 2 findings, 2 libraries",
        "      gone.py, gone2.py",
    ]
    assert [f.message for f in found if f.library == "a.py"] == [
        "a.py: RECORD says sha256=AAA, its content hashes to sha256=ZZZ"]
    # a member that could not be read is only checked for being listed
    assert record_findings(entries, {"a.py": (None, 0)}, {"a.py"}) == [
        f for f in record_findings(entries, {"a.py": (None, 0)}, set()) if f.library != "a.py"]


def test_finding_lines_show_every_member_of_a_group_when_verbose() -> None:
    fs = [Finding("record", "error", n, f"{n} is not listed in RECORD", cause="member not in RECORD")
          for n in ("x.py", "y.py")]
    assert _finding_lines(fs, True) == ["  error [record] x.py is not listed in RECORD",
                                        "  error [record] y.py is not listed in RECORD"]


def _checked(needs: dict[str, tuple[str, ...]], tags: list[str], required: str | None = None,
             own: frozenset[str] = frozenset()) -> WheelResult:
    lib = Lib("pkg/x.so", "wheel:pkg", _info(needs=needs))
    lr = LibraryResult(lib.path, "shared-library")
    assert lib.info is not None and library_policy(lr, lib.info, set(own)) is None
    res = WheelResult("w", tags=tags)
    check_policy(res, [(lib, lr)], set(own), is_wheel=False,
                 required=get_policy(required) if required else None)
    return res


NEEDS = {"libm.so.6": ("GLIBC_2.27",), "libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.28"),
         "libstdc++.so.6": ("GLIBCXX_3.4.21", "CXXABI_1.3.7")}


def test_a_library_over_the_claimed_policy_names_its_newest_needs_and_what_is_allowed() -> None:
    # auditwheel's policy: manylinux_2_17 allows up to GLIBC_2.17 and GLIBCXX_3.4.19 (and
    # CXXABI_1.3.7); GLIBC_2.28 first appears in manylinux_2_28
    res = _checked(NEEDS, ["cp312-cp312-manylinux_2_17_x86_64"])
    assert [(f.check, f.severity, f.library, f.cause, f.message) for f in res.findings] == [(
        "policy", "error", "pkg/x.so", "needs more than manylinux_2_17 allows",
        "pkg/x.so needs GLIBC_2.28 (from libc.so.6) and GLIBCXX_3.4.21 (from libstdc++.so.6), "
        "which manylinux_2_17 (claimed by the platform tag) does not allow (it allows up to "
        "GLIBC_2.17, GLIBCXX_3.4.19); the library's symbols need manylinux_2_28")]
    assert res.policy == "manylinux_2_28" and res.policy_library == "pkg/x.so"


def test_a_required_policy_is_judged_instead_of_the_tag() -> None:
    res = _checked(NEEDS, ["cp312-cp312-manylinux_2_28_x86_64"], required="manylinux_2_17")
    assert len(res.findings) == 1 and "(required by --policy)" in res.findings[0].message
    assert _checked(NEEDS, ["cp312-cp312-manylinux_2_28_x86_64"]).findings == []
    # versions needed from the wheel's own libraries are not the system's to provide
    assert _checked({"libown.so": ("GLIBC_2.28",)}, ["cp312-cp312-manylinux_2_17_x86_64"],
                    own=frozenset({"libown.so"})).findings == []
