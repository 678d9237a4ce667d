"""What a wheel may make ``toolkit check`` inflate, judged on the declared sizes before any
byte is inflated (a member over the per-member limit, a ratio over the limit for a large
member, members over the total), which member names are safe to extract (no absolute
paths, drive letters, backslashes or ``..``: the zip-slip rules pip applies), which names are
libraries, and the bad-input lines for paths that are not wheels, folders or ELF files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.core.errors import MemberError, UsageError
from toolkit.inspect.inputs import collect_wheel, looks_native, open_input
from toolkit.inspect.readers.wheelzip import MAX_SMALL, RATIO_FLOOR, Budget, WheelZip, safe_name
from toolkit.inspect.report import WheelResult


def _info(name: str, size: int, compressed: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.file_size, info.compress_size = size, compressed
    return info


@pytest.fixture
def wz(tmp_path: Path) -> WheelZip:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/a.bin": bytes(3000),
                                                              "demo/b.bin": bytes(3000)})
    return WheelZip.open(whl, Budget(member_bytes=4 << 30, ratio=200))


def test_a_large_member_over_the_ratio_limit_is_not_inflated(wz: WheelZip) -> None:
    with wz:
        big = 100 << 20
        assert wz.bomb_check(_info("m.so", big, big // 1024)) == (
            "m.so inflates 1024:1, over the 200:1 limit (a zip bomb? --max-ratio): not inspected")
        assert wz.bomb_check(_info("m.so", big, big // 200)) is None  # at the limit
        assert wz.bomb_check(_info("m.so", big, 0)) == (
            f"m.so inflates {big}:1, over the 200:1 limit (a zip bomb? --max-ratio): not inspected")
        # small members may compress as well as they like (a file of zeros)
        assert wz.bomb_check(_info("m.so", RATIO_FLOOR, 1)) is None
        assert wz.bomb_check(_info("m.so", RATIO_FLOOR + 1, 1)) is not None
        assert wz.bomb_check(_info("m.so", 4 << 30, 1 << 30)) is None  # at the member limit
        assert wz.bomb_check(_info("m.so", (4 << 30) + 1, 1 << 30)) == (
            f"m.so declares {(4 << 30) + 1} inflated bytes, over the 4 GiB limit "
            "(--max-member-size): not inspected")


def test_metadata_files_over_their_limit_are_not_read(wz: WheelZip) -> None:
    with wz, pytest.raises(MemberError) as err:
        wz.read_small(_info("demo-1.0.dist-info/METADATA", MAX_SMALL + 1, 10))
    assert str(err.value) == f"demo-1.0.dist-info/METADATA: {MAX_SMALL + 1} bytes is too large"


def test_members_past_the_total_budget_are_named(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/a.bin": bytes(3000),
                                                              "demo/b.bin": bytes(3000)})
    inp = open_input(whl, Budget(total_bytes=4000))
    inp.result = WheelResult(str(whl))
    with inp.wheel as wz:  # type: ignore[union-attr]
        collect_wheel(inp, wz, 1)
    over = [(f.check, f.severity, f.library, f.cause, f.message) for f in inp.result.findings]
    assert over == [("archive", "error", "demo/b.bin", "over the size budget",
                     "demo/b.bin: the archive's members declare more than 1000 inflated bytes in "
                     "all (--max-total-size): not inspected")]


@pytest.mark.parametrize(("name", "safe"), [
    ("demo/__init__.py", True), ("a", True), ("demo/..x/y", True), ("demo/x..", True),
    ("", False), ("/etc/passwd", False), ("\\evil", False), ("demo\\x.py", False),
    ("C:/x", False), ("c:x", False), ("../x", False), ("demo/../../x", False), ("demo/..", False),
    ("demo/\0x", False),
])
def test_unsafe_member_names(name: str, safe: bool) -> None:
    assert safe_name(name) is safe


@pytest.mark.parametrize(("name", "native"), [
    ("demo/_ext.so", True), ("demo/libfoo.so.1", True), ("demo/libfoo.so.1.2.3", True),
    ("demo/kernel.hsaco", True), ("demo/kernel.co", True), ("libx.so", True),
    ("demo/so.py", False), ("demo/x.sox", False), ("demo/x.dll", False), ("demo/libs.so/README", False),
    ("demo/a.cow", False), ("demo/x.hsaco.txt", False),
])
def test_names_like_libraries(name: str, native: bool) -> None:
    assert looks_native(name) is native


def test_paths_that_are_not_inputs_are_bad_input(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        open_input(tmp_path / "nope.whl")
    assert str(err.value) == f"{tmp_path / 'nope.whl'}: no such file or directory"
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(UsageError) as err:
        open_input(tmp_path / "notes.txt")
    assert str(err.value) == f"{tmp_path / 'notes.txt'}: not a wheel, a directory or an ELF file"
    (tmp_path / "lib.so").write_bytes(b"\x7fELF" + bytes(60))
    inp = open_input(tmp_path / "lib.so")
    assert inp.wheel is None and inp.path == tmp_path / "lib.so"
    assert open_input(tmp_path).wheel is None


def _collected(whl: Path) -> list[tuple[str, str, str | None, str | None, str]]:
    inp = open_input(whl)
    inp.result = WheelResult(str(whl))
    with inp.wheel as wz:  # type: ignore[union-attr]
        collect_wheel(inp, wz, 1)
    return [(f.check, f.severity, f.library, f.cause, f.message) for f in inp.result.findings]


def test_a_member_named_like_a_library_must_be_elf(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/_fake.so": b"text", "demo/x.py": b""})
    assert _collected(whl) == [("elf", "error", "demo/_fake.so", "named like a library, not ELF",
                                "demo/_fake.so is named like a library but is not an ELF file")]


def test_an_empty_archive_is_named(tmp_path: Path) -> None:
    whl = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w"):
        pass
    found = _collected(whl)
    assert found[0] == ("archive", "error", None, None, "empty wheel: the archive holds no files")
    assert [f[3] for f in found[1:]] == ["no RECORD"]
