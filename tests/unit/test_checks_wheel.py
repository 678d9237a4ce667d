"""Wheel-level checks on real wheels assembled from real system libraries (no compiler)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.native import system_lib
from tests.fixtures.wheels import edit_member_headers, make_wheel
from toolkit.cli.commands.check import expand_targets
from toolkit.cli.main import main
from toolkit.core.errors import UsageError
from toolkit.inspect.checks import check_paths
from toolkit.inspect.readers import wheelzip
from toolkit.inspect.report import Report

TAG = "cp311-cp311-manylinux_2_28_x86_64"


@pytest.fixture(scope="module")
def libz() -> Path:
    return system_lib("libz.so.1")


def checks(report: Report, severity: str = "error") -> set[str]:
    return {f.check for w in report.wheels for f in w.findings if f.severity == severity}


def messages(report: Report) -> str:
    return "\n".join(f.message for w in report.wheels for f in w.findings)


def test_clean_native_wheel(tmp_path: Path, libz: Path) -> None:
    whl = make_wheel(tmp_path, "demo-pkg", "1.0", TAG, {"demo_pkg/_ext.so": libz, "demo_pkg/__init__.py": ""})
    report = check_paths([whl])
    assert report.ok, messages(report)
    (w,) = report.wheels
    assert (w.name, w.version, w.tags) == ("demo-pkg", "1.0", [TAG])
    (lib,) = w.libraries
    assert lib.path == "demo_pkg/_ext.so" and "libc.so.6" in lib.needed
    assert lib.max_versions["GLIBC"] and lib.policy and lib.policy.startswith("manylinux")


def test_json_shape_and_cli_exit_codes(
    tmp_path: Path, libz: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_ext.so": libz})
    assert main(["check", str(good), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True
    (w,) = doc["wheels"]
    assert set(w) >= {"path", "name", "version", "tags", "policy", "findings", "libraries"}
    lib_keys = {"path", "max_symbol_versions", "policy", "gpu_targets", "unresolved", "needed"}
    assert set(w["libraries"][0]) >= lib_keys
    bad = make_wheel(tmp_path / "b", "demo", "1.0", "py3-none-any", {"demo/_ext.so": libz})
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "[platform-tag] native code" in out and "FAILED" in out
    assert main(["check", str(tmp_path / "missing.whl")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_native_code_in_pure_wheel_and_redundant_platform_variant(tmp_path: Path, libz: Path) -> None:
    r = check_paths([make_wheel(tmp_path, "a", "1.0", "py3-none-any", {"a/_x.so": libz})])
    assert "platform-tag" in checks(r) and "py3-none-any" in messages(r)
    r = check_paths([make_wheel(tmp_path, "b", "1.0", "py3-none-linux_x86_64", {"b/x.py": "x = 1"})])
    assert r.ok and "platform-tag" in checks(r, "warning") and "redundant" in messages(r)
    assert check_paths([make_wheel(tmp_path, "c", "1.0", "py3-none-any", {"c/x.py": ""})]).findings == []


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"metadata_name": "other"}, "METADATA Name 'other'"),
        ({"metadata_version": "2.0"}, "METADATA Version 2.0 does not match"),
        ({"metadata_version": "1.0+rocm7.0+git1"}, "not valid PEP 440"),
        ({"wheel_tags": ["py2.py3-none-any"]}, "WHEEL Tag lines"),
        ({"filename": "demo-1.0+a+b-py3-none-any.whl"}, "bad wheel file name"),
    ],
)
def test_metadata_consistency(tmp_path: Path, kwargs: dict[str, object], needle: str) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/x.py": ""}, **kwargs)  # type: ignore[arg-type]
    r = check_paths([whl])
    assert not r.ok and "metadata" in checks(r) and needle in messages(r)


def test_unsafe_names_empty_wheel_and_non_elf_library(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_ext.so": b"this is not ELF"})
    with zipfile.ZipFile(whl, "a") as zf:
        zf.writestr("../evil.so", b"\x7fELF")
        zf.writestr("/abs/evil.so", b"\x7fELF")
    r = check_paths([whl])
    msg = messages(r)
    assert "unsafe path in archive: '../evil.so'" in msg and "'/abs/evil.so'" in msg
    assert "demo/_ext.so is named like a library but is not an ELF file" in msg
    empty = tmp_path / "empty-1.0-py3-none-any.whl"
    zipfile.ZipFile(empty, "w").close()
    r = check_paths([empty])
    assert not r.ok and "empty wheel" in messages(r)


def test_truncated_or_corrupt_elf_member(tmp_path: Path, libz: Path) -> None:
    data = libz.read_bytes()
    whl = make_wheel(
        tmp_path,
        "demo",
        "1.0",
        TAG,
        {"demo/a.so": data[: len(data) // 3], "demo/b.so": b"\x7fELF" + bytes(10)},
    )
    r = check_paths([whl])
    bad = {f.library: f for f in r.findings if f.check == "elf"}
    assert set(bad) == {"demo/a.so", "demo/b.so"}
    assert all(f.severity == "error" and "cannot be judged" in f.message for f in bad.values())
    assert not r.ok and r.wheels[0].failed_checks.get("elf") == 2
    assert all(lib.kind == "unreadable" for lib in r.wheels[0].libraries)


def test_truncated_zip_and_bad_requests_are_usage_errors(tmp_path: Path, libz: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_ext.so": libz})
    cut = tmp_path / "cut-1.0-py3-none-any.whl"
    cut.write_bytes(whl.read_bytes()[: whl.stat().st_size // 2])
    with pytest.raises(UsageError, match="not a readable zip"):
        check_paths([cut])
    with pytest.raises(UsageError, match="bad gfx target id 'gfxbogus'"):
        expand_targets(["gfxbogus"])
    with pytest.raises(UsageError, match="unknown manylinux policy"):
        check_paths([whl], policy="manylinux_9_9")
    (tmp_path / "nolibs").mkdir()
    (tmp_path / "nolibs" / "readme.txt").write_text("hi")
    with pytest.raises(UsageError, match="no ELF files"):
        check_paths([tmp_path / "nolibs"])
    with pytest.raises(UsageError, match="--with"):
        check_paths([whl], with_paths=[tmp_path / "nowhere"])


def _lie_about_size(whl: Path, member: str, size: int) -> None:
    """Rewrite the declared inflated size of ``member`` (local and central headers)."""
    edit_member_headers(whl, member, 22, 24, "<I", lambda _: size)


def test_zip_bombs_are_refused_and_bounded(
    tmp_path: Path, libz: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = b"\x7fELF" + bytes(8 << 20)
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/bomb.so": big, "demo/_ext.so": libz})
    monkeypatch.setattr(wheelzip, "MAX_MEMBER_BYTES", 4 << 20)
    r = check_paths([whl])
    assert "demo/bomb.so declares 8388612 inflated bytes, over the 4 MiB limit" in messages(r)
    monkeypatch.setattr(wheelzip, "MAX_MEMBER_BYTES", 8 << 30)
    monkeypatch.setattr(wheelzip, "RATIO_FLOOR", 1 << 20)
    monkeypatch.setattr(wheelzip, "MAX_RATIO", 50)
    r = check_paths([whl])
    assert "over the 50:1 limit (a zip bomb?" in messages(r)
    monkeypatch.setattr(wheelzip, "MAX_RATIO", 1100)
    monkeypatch.setattr(wheelzip, "MAX_TOTAL_BYTES", 1 << 20)  # libz fits, the big one does not
    r = check_paths([whl])
    assert [f.library for f in r.findings if "in all (--max-total-size)" in f.message] == ["demo/bomb.so"]
    monkeypatch.setattr(wheelzip, "MAX_TOTAL_BYTES", 32 << 30)
    # a member that inflates to more than it declares is cut at the declared size and fails
    _lie_about_size(whl, "demo/bomb.so", 1 << 16)
    r = check_paths([whl])
    assert any(f.library == "demo/bomb.so" for f in r.findings if f.severity == "error")


def test_bundled_torch_and_rocm_libraries(tmp_path: Path, libz: Path) -> None:
    files = {"demo/_ext.so": libz, "demo/lib/libamdhip64.so.6": libz, "demo/lib/libc10.so": libz}
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, files)
    r = check_paths([whl])
    bundled = {f.library for f in r.findings if f.check == "bundled-library"}
    assert bundled == {"demo/lib/libamdhip64.so.6", "demo/lib/libc10.so"}
    r = check_paths([whl], allow_bundled=["libamdhip64", "libc10.so"])
    assert "bundled-library" not in checks(r)
    torch = make_wheel(
        tmp_path / "t", "torch", "2.8.0", TAG, {"torch/lib/libc10.so": libz, "torch/lib/libamdhip64.so": libz}
    )
    assert "bundled-library" not in checks(check_paths([torch]))


def test_required_symbols(tmp_path: Path, libz: Path) -> None:
    dirs = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64")
    stdcxx = next(Path(d) / "libstdc++.so.6" for d in dirs if (Path(d) / "libstdc++.so.6").exists())
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_ext.so": libz, "demo/libcxx.so": stdcxx.resolve()})
    r = check_paths([whl], required_symbols=["zlibVersion", "std::terminate"], allow_bundled=["*"])
    assert "required-symbol" not in checks(r)
    r = check_paths([whl], required_symbols=["fbgemm_gpu::jagged_2d_to_dense", "std::termin"])
    missing = [f.message for f in r.findings if f.check == "required-symbol"]
    assert len(missing) == 2 and "fbgemm_gpu::jagged_2d_to_dense" in missing[0] + missing[1]


def test_folder_input_is_one_entry_without_name(tmp_path: Path, libz: Path) -> None:
    d = tmp_path / "libs"
    d.mkdir()
    (d / "libz.so.1").write_bytes(libz.read_bytes())
    (d / "notes.so").write_text("not a library")
    r = check_paths([d])
    (w,) = r.wheels
    assert w.name is None and w.version is None and len(w.libraries) == 1
    assert "notes.so is named like a library" in messages(r)
    strict = check_paths([d], policy="manylinux_2_5")
    assert any(
        f.check == "policy" and "manylinux_2_5 (required by --policy)" in f.message for f in strict.findings
    )
