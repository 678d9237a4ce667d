"""A library the build links, checked before it starts (``toolkit.run.prereqs.provide_library``),
the one wheel a build must make (``expect_wheel``) and hipcc's version (``toolkit.run.preflight``,
Debian's real hipcc when installed): each failure one line naming both sides, exit 5 (a build
step failed) or 4 (an environment problem), the words written here by hand."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from toolkit.core.command import Command
from toolkit.core.errors import EnvironmentProblem, StepFailed
from toolkit.core.steps import ExpectWheel, ProvideLibrary, Step
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import preflight, prereqs
from toolkit.run.context import Run


def a_run(tmp_path: Path) -> Run:
    plan = Plan(load_matrix().build("apex-1.8.0-cp311-rocm7.0"), ("gfx942",), None, ())
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def tbb(tmp_path: Path, install: Command | None = None, why: str = "") -> Step:
    return Step("provide-tbb", "tbb", ProvideLibrary(
        install, "pypi tbb-devel==2022.2.0", "tbb", ("tbb/tbb.h", "oneapi/tbb.h"),
        (str(tmp_path / "lib64"), "{ROOT}/lib"), (str(tmp_path / "inc"), "{ROOT}/include"),
        why))


def test_the_library_found_is_learned_from_the_first_folder_holding_it(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    run.values["ROOT"] = str(tmp_path / "root")
    # the install runs first (real sh) and puts the library and a header in place
    install = Command(("sh", "-c", f"mkdir -p {tmp_path}/root/lib {tmp_path}/root/include/oneapi"
                                   f" && : > {tmp_path}/root/lib/libtbb.so"
                                   f" && : > {tmp_path}/root/include/oneapi/tbb.h"))
    result = prereqs.provide_library(tbb(tmp_path, install), run)
    assert not isinstance(result, str) and result.returncode == 0
    assert result.argv == list(install.argv)
    assert run.values["TBB_LIB_DIR"] == str(tmp_path / "root" / "lib")
    assert f"# libtbb.so found in {tmp_path}/root/lib\n" in run.log.getvalue()  # type: ignore[attr-defined]


def test_a_missing_library_names_where_it_looked_and_why(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    run.values["ROOT"] = "/r"
    with pytest.raises(StepFailed) as caught:
        prereqs.provide_library(tbb(tmp_path, why="fbgemm links it"), run)
    assert caught.value.message == (f"libtbb.so (pypi tbb-devel==2022.2.0) is in none of "
                                    f"{tmp_path}/lib64, /r/lib; fbgemm links it")
    assert caught.value.exit_code == 5


def test_missing_headers_name_each_header_and_folder(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    run.values["ROOT"] = "/r"
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / "libtbb.so").write_bytes(b"")
    (tmp_path / "inc" / "tbb" / "tbb.h").mkdir(parents=True)  # a folder is no header
    with pytest.raises(StepFailed) as caught:
        prereqs.provide_library(tbb(tmp_path), run)
    assert caught.value.message == (f"the tbb headers (pypi tbb-devel==2022.2.0: tbb/tbb.h or "
                                    f"oneapi/tbb.h) are in none of {tmp_path}/inc, /r/include")


# ---------------------------------------------------------------------------- expect-wheel
def expect(tmp_path: Path, *names: str, version: str = "1.8.0+rocm7.0.git{SHA8}",
           tags: str = "") -> str:
    house = tmp_path / "house"
    house.mkdir(exist_ok=True)
    for n in names:
        (house / n).write_bytes(b"")
    run = a_run(tmp_path)
    run.values["SHA8"] = "8d873bb6"
    step = Step("expect-wheel", "w", ExpectWheel(str(house), "apex", version, tags))
    try:
        prereqs.expect_wheel(step, run)
    except StepFailed as err:
        assert err.exit_code == 5
        return err.message
    return run.log.getvalue()  # type: ignore[attr-defined,no-any-return]


def test_the_expected_wheel_is_said_so(tmp_path: Path) -> None:
    assert expect(tmp_path, "apex-1.8.0+rocm7.0.git8d873bb6-cp311-cp311-linux_x86_64.whl") == (
        "# apex-1.8.0+rocm7.0.git8d873bb6-cp311-cp311-linux_x86_64.whl is apex "
        "1.8.0+rocm7.0.git8d873bb6 as expected\n")


def test_none_or_two_wheels_are_named(tmp_path: Path) -> None:
    assert expect(tmp_path) == f"expected exactly one wheel in {tmp_path}/house, found: none"
    assert expect(tmp_path, "b-1-py3-none-any.whl", "a-1-py3-none-any.whl") == (
        f"expected exactly one wheel in {tmp_path}/house, found: a-1-py3-none-any.whl, "
        "b-1-py3-none-any.whl")


def test_no_wheelhouse_at_all_is_none_found(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    step = Step("expect-wheel", "w", ExpectWheel(str(tmp_path / "gone"), "apex", "1"))
    with pytest.raises(StepFailed) as caught:
        prereqs.expect_wheel(step, run)
    assert caught.value.message == f"expected exactly one wheel in {tmp_path}/gone, found: none"


def test_another_distribution_or_version_names_both(tmp_path: Path) -> None:
    assert expect(tmp_path, "Apex-1.8.0-py3-none-any.whl") == (
        "the build made apex 1.8.0 (Apex-1.8.0-py3-none-any.whl); the recipe expects apex "
        "1.8.0+rocm7.0.git8d873bb6")


def test_an_invalid_wheel_name_is_said(tmp_path: Path) -> None:
    assert expect(tmp_path, "apex.whl").startswith("apex.whl: not a valid wheel file name (")


def test_a_wheel_without_the_stable_abi_tag_names_the_tag(tmp_path: Path) -> None:
    name = "apex-1.8.0-cp311-cp311-linux_x86_64.whl"
    assert expect(tmp_path, name, version="1.8.0", tags="cp39-abi3") == (
        f"the build made {name}, not tagged cp39-abi3: the one wheel for every Python it "
        "serves needs py_limited_api (cp39-abi3) in its build")
    (tmp_path / "x").mkdir()
    good = "apex-1.8.0-cp39-abi3-linux_x86_64.whl"
    assert expect(tmp_path / "x", good, version="1.8.0", tags="cp39-abi3") == (
        f"# {good} is apex 1.8.0 as expected\n")


# ------------------------------------------------------------------------------- preflight
def test_hipcc_that_does_not_run_or_says_no_version_is_an_environment_problem(
        tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem) as caught:
        preflight.hipcc_version(str(tmp_path / "no-hipcc"))
    assert caught.value.message.startswith(f"cannot run {tmp_path}/no-hipcc --version: ")
    assert caught.value.exit_code == 4
    with pytest.raises(EnvironmentProblem) as caught:
        preflight.hipcc_version(shutil.which("true") or "/bin/true")
    assert caught.value.message.endswith(" --version printed no 'HIP version: X.Y' line")


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="no hipcc")
def test_the_real_hipccs_major_minor(monkeypatch: pytest.MonkeyPatch) -> None:
    import re
    import subprocess

    said = subprocess.run(["hipcc", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"HIP version: (\d+)\.(\d+)", said)
    assert m is not None
    assert preflight.hipcc_version("hipcc") == f"{m[1]}.{m[2]}"
