"""Where a system ROCm is looked for and how its version is read (README: ``--rocm-from
system`` finds ``ROCM_PATH``, ``/opt/rocm``, ``/opt/rocm-X.Y.Z``, ``hipcc`` on PATH).

The version comes from the install's own files (``.info/version``, ``hip/hip_version.h``) or
from the real ``hipconfig --version`` (Debian's hipcc package, ROCm 5.2: its header says
5.2.21153, its ``--version`` prints ``5.2.21153-0``); the expectations are hand-written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.core.errors import EnvironmentProblem
from toolkit.env import rocm
from toolkit.env.host import HostFacts, SystemRocm

HIPCONFIG = shutil.which("hipconfig")
needs_hipconfig = pytest.mark.skipif(
    HIPCONFIG is None or not Path("/usr/include/hip/hip_version.h").is_file(),
    reason="Debian's hipcc (hipconfig) is not installed")


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def _wrapping_real_hipconfig(root: Path) -> Path:
    """``root/bin/hipconfig`` handing its arguments to the real one (a symlink would not do:
    the real one runs the ``hipconfig.pl`` beside the path it was started as)."""
    return _script(root / "bin" / "hipconfig", f'exec {HIPCONFIG} "$@"')


@needs_hipconfig
def test_the_real_hipconfig_gives_its_version_without_the_build_suffix(tmp_path: Path) -> None:
    # the header of the same package says MAJOR 5, MINOR 2, PATCH 21153
    assert rocm._version_from_hipconfig(str(_wrapping_real_hipconfig(tmp_path))) == "5.2.21153"


@needs_hipconfig
def test_an_install_known_only_by_its_hipconfig_is_found_with_that_version(tmp_path: Path) -> None:
    root = tmp_path / "rocm"
    _wrapping_real_hipconfig(root)
    found = rocm.find_system({"ROCM_PATH": str(root)}, opt=tmp_path / "noopt")
    assert found == SystemRocm(str(root), "5.2.21153")


@needs_hipconfig
def test_the_real_header_gives_major_dot_minor() -> None:
    # /usr has include/hip/hip_version.h (5, 2) but no .info/version
    assert rocm._version_from_file(Path("/usr")) == "5.2"


def test_a_hipconfig_that_fails_or_prints_nothing_gives_no_version(tmp_path: Path) -> None:
    failing = _script(tmp_path / "a" / "hipconfig", "echo 6.4.1-55; exit 3")
    silent = _script(tmp_path / "b" / "hipconfig", "exit 0")
    assert rocm._version_from_hipconfig(str(failing)) is None
    assert rocm._version_from_hipconfig(str(silent)) is None
    assert rocm._version_from_hipconfig(str(tmp_path / "absent" / "hipconfig")) is None


def test_hipconfig_is_asked_for_its_version_only(tmp_path: Path) -> None:
    # answers only to exactly one argument "--version", as the real one prints only the
    # version then
    asked = _script(tmp_path / "hipconfig",
                    '[ "$#" = 1 ] && [ "$1" = --version ] && printf "6.3.2-77\\n" && exit 0; exit 1')
    assert rocm._version_from_hipconfig(str(asked)) == "6.3.2"


def test_the_info_file_wins_over_the_header_and_loses_its_build_number(tmp_path: Path) -> None:
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("  6.4.1-120  \n")
    (tmp_path / "include" / "hip").mkdir(parents=True)
    (tmp_path / "include" / "hip" / "hip_version.h").write_text(
        "#define HIP_VERSION_MAJOR 5\n#define HIP_VERSION_MINOR 7\n")
    assert rocm._version_from_file(tmp_path) == "6.4.1"


def test_an_empty_info_file_falls_back_to_the_header(tmp_path: Path) -> None:
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("\n")
    (tmp_path / "include" / "hip").mkdir(parents=True)
    (tmp_path / "include" / "hip" / "hip_version.h").write_text(
        "#define HIP_VERSION_MAJOR   6\n#define HIP_VERSION_MINOR\t12\n#define HIP_VERSION_PATCH 3\n")
    assert rocm._version_from_file(tmp_path) == "6.12"


@pytest.mark.parametrize("header", ["#define HIP_VERSION_MAJOR 6\n", "#define HIP_VERSION_MINOR 2\n", ""])
def test_a_header_without_both_numbers_gives_no_version(tmp_path: Path, header: str) -> None:
    (tmp_path / "include" / "hip").mkdir(parents=True)
    (tmp_path / "include" / "hip" / "hip_version.h").write_text(header)
    assert rocm._version_from_file(tmp_path) is None
    assert rocm._version_from_file(tmp_path / "nothing-here") is None


def test_the_places_are_searched_in_the_documented_order(tmp_path: Path) -> None:
    opt = tmp_path / "opt"
    for name in ("rocm-6.3.2", "rocm-6.10.0", "rocm-6.4.1"):
        (opt / name).mkdir(parents=True)
    (opt / "rocm-7.0.0").write_text("a file, not an install")
    (opt / "rocm-beta").mkdir()
    sdk = tmp_path / "sdk"
    hipcc = _script(sdk / "bin" / "hipcc", "exit 0")
    env = {"HIP_PATH": "/h", "ROCM_HOME": "/r/home", "ROCM_PATH": "/r/path", "PATH": str(hipcc.parent)}
    assert rocm.system_roots(env, opt=opt) == [
        ("$ROCM_PATH", Path("/r/path")), ("$ROCM_HOME", Path("/r/home")), ("$HIP_PATH", Path("/h")),
        ("/opt/rocm", opt / "rocm"),
        (str(opt / "rocm-6.10.0"), opt / "rocm-6.10.0"), (str(opt / "rocm-6.4.1"), opt / "rocm-6.4.1"),
        (str(opt / "rocm-6.3.2"), opt / "rocm-6.3.2"),
        ("hipcc on PATH", sdk.resolve()),
    ]


def test_empty_variables_and_a_missing_opt_add_nothing(tmp_path: Path) -> None:
    env = {"ROCM_PATH": "", "ROCM_HOME": "", "HIP_PATH": "", "PATH": str(tmp_path)}
    assert rocm.system_roots(env, opt=tmp_path / "none") == [("/opt/rocm", tmp_path / "none" / "rocm")]


def test_hipcc_found_through_a_symlink_names_the_real_install(tmp_path: Path) -> None:
    real = _script(tmp_path / "real" / "rocm-6.4.1" / "bin" / "hipcc", "exit 0")
    (tmp_path / "path").mkdir()
    os.symlink(real, tmp_path / "path" / "hipcc")
    env = {"PATH": str(tmp_path / "path")}
    assert rocm.system_roots(env, opt=tmp_path / "none")[-1] == (
        "hipcc on PATH", (tmp_path / "real" / "rocm-6.4.1").resolve())


def _install(root: Path, version: str) -> Path:
    return rocm_at(root, version)


def test_the_first_readable_install_is_taken_without_a_wanted_version(tmp_path: Path) -> None:
    opt = tmp_path / "opt"
    (opt / "rocm").mkdir(parents=True)  # no bin/ nor include/hip: not an install
    _install(opt / "rocm-6.3.2", "6.3.2")
    _install(opt / "rocm-6.4.1", "6.4.1")
    _script(opt / "rocm-6.5.0" / "bin" / "hipconfig", "exit 1")  # no version anywhere
    assert rocm.find_system({}, opt=opt) == SystemRocm(str(opt / "rocm-6.4.1"), "6.4.1")


def test_an_install_with_only_a_header_folder_is_considered(tmp_path: Path) -> None:
    root = tmp_path / "rocm"
    (root / "include" / "hip").mkdir(parents=True)
    (root / "include" / "hip" / "hip_version.h").write_text(
        "#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 2\n")
    assert rocm.find_system({"ROCM_PATH": str(root)}, opt=tmp_path / "none") == SystemRocm(str(root), "6.2")


def test_without_the_wanted_minor_the_first_readable_install_is_taken(tmp_path: Path) -> None:
    opt = tmp_path / "opt"
    _install(opt / "rocm-6.3.2", "6.3.2")
    _install(opt / "rocm-6.4.1", "6.4.1")
    assert rocm.find_system({}, opt=opt, want="7.0") == SystemRocm(str(opt / "rocm-6.4.1"), "6.4.1")
    assert rocm.find_system({}, opt=opt, want="6.3.9") == SystemRocm(str(opt / "rocm-6.3.2"), "6.3.2")


def test_no_install_names_every_place_looked_at_and_how_to_give_one(tmp_path: Path) -> None:
    opt = tmp_path / "opt"
    (opt / "rocm-6.4.1").mkdir(parents=True)
    with pytest.raises(EnvironmentProblem) as caught:
        rocm.find_system({"ROCM_PATH": "/no/such/rocm", "PATH": ""}, opt=opt)
    assert caught.value.message == (
        f"no system ROCm install found (looked at: $ROCM_PATH (/no/such/rocm); "
        f"/opt/rocm ({opt / 'rocm'}); {opt / 'rocm-6.4.1'})")
    assert caught.value.hint == "set ROCM_PATH=/opt/rocm-X.Y.Z, or use --rocm-from pip"
    assert caught.value.exit_code == 4


def test_with_system_rocm_adds_the_install_or_leaves_the_host(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    host = HostFacts(cores=3)
    root = _install(tmp_path / "rocm", "6.4.1-77")
    monkeypatch.setenv("ROCM_PATH", str(root))
    monkeypatch.delenv("ROCM_HOME", raising=False)
    monkeypatch.delenv("HIP_PATH", raising=False)
    assert rocm.with_system_rocm(host, "6.4") == HostFacts(cores=3,
                                                           system_rocm=SystemRocm(str(root), "6.4.1"))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(rocm, "find_system", lambda **_: (_ for _ in ()).throw(EnvironmentProblem("none")))
    assert rocm.with_system_rocm(host, None) is host


@pytest.mark.parametrize(("version", "expected"), [
    ("6.4.1", "6.4"), ("v7.0.2-rc1", "7.0"), ("  6.10", "6.10"), ("6", "6"), (" rocm \n", "rocm")])
def test_major_minor(version: str, expected: str) -> None:
    assert rocm.major_minor(version) == expected


def test_a_mismatch_is_named_in_full() -> None:
    with pytest.raises(EnvironmentProblem) as caught:
        rocm.check_version(what="the pip SDK", found="6.3.2", session="6.4", allow=False)
    assert caught.value.message == ("the pip SDK is version 6.3.2 but this session builds for ROCm 6.4 (6.3 "
                                    "!= 6.4)")
    assert caught.value.hint == "use the matching ROCm, or pass --allow-rocm-mismatch"
    assert rocm.check_version(what="ROCm", found="6.3.2", session="6.4", allow=True, flag="--x") == (
        "warning: ROCm is version 6.3.2 but this session builds for ROCm 6.4 (6.3 != 6.4); "
        "continuing because of --x")
