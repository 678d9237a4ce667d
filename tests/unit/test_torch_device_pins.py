"""Why install-torch names TheRock's device packages beside torch's device-* extras, with uv as
the independent truth: an extra a torch lacks (TheRock built no device package for that gfx) is
only a warning, so ``torch[device-gfx90c]`` alone installs a torch that cannot run there; the
named ``amd-torch-device-gfx90c`` at torch's version fails the resolution, even when a device
package for another torch exists. The requirements are the plan's own (sources_for)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from toolkit.core.proc import run
from toolkit.data.matrix import load_matrix
from toolkit.env.host import find_uv
from toolkit.plan.model import Options
from toolkit.plan.provision import sources_for


def _wheel(folder: Path, name: str, version: str, *meta: str) -> None:
    dist = f"{name.replace('-', '_')}-{version}"
    with zipfile.ZipFile(folder / f"{dist}-py3-none-any.whl", "w") as zf:
        zf.writestr(f"{dist}.dist-info/METADATA", "\n".join(
            ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *meta]) + "\n")
        zf.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\n"
                    "Root-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist}.dist-info/RECORD", "")


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """TheRock's shape: torch 2.13 split for gfx942 only; a gfx90c device package exists for
    torch 2.12 (which TheRock builds for gfx90c), none for 2.13."""
    links = tmp_path / "links"
    links.mkdir()
    _wheel(links, "torch", "2.13.0", "Provides-Extra: device-gfx942",
           'Requires-Dist: amd-torch-device-gfx942==2.13.0; extra == "device-gfx942"')
    _wheel(links, "amd-torch-device-gfx942", "2.13.0")
    _wheel(links, "amd-torch-device-gfx90c", "2.12.0")
    return links


def _resolve(index: Path, tmp_path: Path, gfx: str, with_pins: bool) -> tuple[int, str]:
    m = load_matrix()
    src = sources_for(m, m.build("apex-1.13.0-cp312-rocm10.1"), Options(gfx=(gfx,)))
    device = [p for p in src.torch_pins if p.startswith("amd-torch-device-")]
    assert len(device) == 1
    req = tmp_path / "req.in"
    req.write_text("\n".join([src.torch_spec, *(device if with_pins else [])]) + "\n")
    res = run([find_uv(), "pip", "compile", "--offline", "--no-index", "--find-links", str(index),
               "--python-version", "3.12", "--no-header", "--quiet", str(req)],
              check=False, timeout=120)
    return res.returncode, res.stdout + res.stderr


def test_the_extra_alone_resolves_a_torch_without_the_device_code(index: Path,
                                                                   tmp_path: Path) -> None:
    code, out = _resolve(index, tmp_path, "gfx90c", with_pins=False)
    assert code == 0, out
    assert "torch==2.13.0" in out and "amd-torch-device-gfx90c==" not in out


def test_the_named_device_package_fails_when_torch_has_none(index: Path, tmp_path: Path) -> None:
    code, out = _resolve(index, tmp_path, "gfx90c", with_pins=True)
    assert code != 0 and "amd-torch-device-gfx90c" in out


def test_the_named_device_package_resolves_when_torch_has_it(index: Path, tmp_path: Path) -> None:
    code, out = _resolve(index, tmp_path, "gfx942", with_pins=True)
    assert code == 0, out
    assert "amd-torch-device-gfx942==2.13.0" in out and "torch==2.13.0" in out
