"""The check judges wheel variants (issue 31): the ``amd :: gfx_arch`` owners a variant's
``variant.json`` names must be the owners of the GPU code it carries (code objects built by
hand from LLVM AMDGPUUsage's note layout; the label written by ``make_variant`` and accepted by
the real ``variantlib``)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.fixtures.handmade_elf import code_object_v2
from tests.fixtures.wheels import make_wheel
from toolkit.cli.main import main
from toolkit.inspect.checks import check_paths
from toolkit.inspect.report import TargetCode, WheelResult
from toolkit.inspect.rules.variant_labels import variant_findings
from toolkit.run.variant_wheels import make_variant

# EF_AMDGPU_MACH values and the v4 xnack bits, as LLVM's AMDGPUUsage lists them
MACH = {"gfx908": 0x30, "gfx90a": 0x3F, "gfx90a:xnack-": 0x3F | 0x200}


def _co(target: str) -> bytes:
    """A code object v4 (ABI version 2) whose e_flags name ``target``."""
    data = bytearray(code_object_v2(b""))
    data[8] = 2
    struct.pack_into("<I", data, 48, MACH[target])
    return bytes(data)


def _wheel(tmp: Path, targets: list[str]) -> Path:
    files: dict[str, bytes | str] = {"hip_sample/__init__.py": "x = 1\n"}
    files |= {f"hip_sample/kernels_{t.replace(':', '_')}.hsaco": _co(t) for t in targets}
    return make_wheel(tmp / "in" / "-".join(targets or ["none"]), "hip_sample", "1.0",
                      "cp312-cp312-linux_x86_64", files)


def _variant_errors(path: Path) -> list[str]:
    (res,) = check_paths([str(path)]).wheels
    return [f.message for f in res.findings if f.check == "variant-label"]


def test_a_variant_backed_by_its_code_passes(tmp_path: Path) -> None:
    out = make_variant(_wheel(tmp_path, ["gfx90a:xnack-"]), tmp_path / "out", "gfx90a")
    (res,) = check_paths([str(out)]).wheels
    assert [f.check for f in res.findings if f.severity == "error"] == []
    assert res.name == "hip-sample" and "cp312-cp312-linux_x86_64" in res.tags
    assert list(res.gpu) == ["gfx90a:xnack-"]


def test_a_missing_target_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = make_variant(_wheel(tmp_path, ["gfx908"]), tmp_path / "out", "gfx90a")
    errors = _variant_errors(out)
    assert len(errors) == 2
    assert any("names amd :: gfx_arch :: gfx90a but the wheel carries no GPU code for it" in e
               for e in errors), errors
    assert any("carries GPU code for gfx908, which its label" in e for e in errors), errors
    assert main(["check", str(out)]) == 1  # the real command fails on it
    assert "variant" in capsys.readouterr().out


def test_an_extra_targets_code_is_an_error(tmp_path: Path) -> None:
    fat = _wheel(tmp_path, ["gfx90a", "gfx908"])
    errors = _variant_errors(make_variant(fat, tmp_path / "out", "gfx90a"))
    assert len(errors) == 1 and "carries GPU code for gfx908" in errors[0]
    assert _variant_errors(fat) == []  # the fat wheel, without a label, is not judged here


def test_a_variant_without_gpu_code_is_an_error(tmp_path: Path) -> None:
    errors = _variant_errors(make_variant(_wheel(tmp_path, []), tmp_path / "out", "gfx908"))
    assert len(errors) == 1 and "(carries: none)" in errors[0]


@pytest.mark.parametrize(("doc", "cause"), [
    (None, "variant without variant.json"),
    (b"{not json", "malformed variant.json"),
    (b'{"variants": {"gfx908": {"amd": {"gfx_arch": ["gfx908"]}}}}', "malformed variant.json"),
])
def test_a_label_without_its_json_is_an_error(doc: bytes | None, cause: str) -> None:
    res = WheelResult("x", gpu={"gfx90a": TargetCode()})
    (found,) = variant_findings(res, "x-1.0-cp312-cp312-linux_x86_64-gfx90a.whl", doc)
    assert (found.check, found.severity, found.cause) == ("variant-label", "error", cause)
    assert variant_findings(res, "x-1.0-cp312-cp312-linux_x86_64.whl", doc) == []
