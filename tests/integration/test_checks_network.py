"""Opt-in (pytest --run-network): a real manylinux wheel from PyPI against objdump."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.native import objdump_max_versions
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths

pytestmark = [pytest.mark.integration, pytest.mark.network]  # skipped without --run-network
# a small wheel with a C++ extension (links libstdc++: GLIBCXX versions to compare)
SPEC = "kiwisolver==1.4.8"
CACHE = Path.home() / ".cache" / "rocm-wheel-toolkit-tests" / "wheels"


@pytest.fixture(scope="session")
def pypi_wheel() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    found = sorted(CACHE.glob("kiwisolver-1.4.8-*.whl"))
    if not found:
        platform = ["--platform", "manylinux2014_x86_64", "--python-version", "3.11"]
        pip = [sys.executable, "-m", "pip", "download", SPEC, "--no-deps", "--only-binary=:all:"]
        run([*pip, *platform, "-d", str(CACHE)], timeout=300)
        found = sorted(CACHE.glob("kiwisolver-1.4.8-*.whl"))
    assert found, f"pip download {SPEC} left no wheel in {CACHE}"
    return found[0]


def test_max_glibcxx_per_library_matches_objdump(tmp_path: Path, pypi_wheel: Path) -> None:
    report = check_paths([pypi_wheel])
    (wheel,) = report.wheels
    assert wheel.name == "kiwisolver" and wheel.libraries
    with zipfile.ZipFile(pypi_wheel) as zf:
        for lib in wheel.libraries:
            out = tmp_path / Path(lib.path).name
            out.write_bytes(zf.read(lib.path))
            expected = objdump_max_versions(out)
            assert lib.max_versions == expected, lib.path
            assert "GLIBCXX" in lib.max_versions
    # the wheel is tagged manylinux2014 and honours it
    assert not [f for f in report.findings if f.check == "policy"]
