"""Redundant accelerator variants (TorchAO's ``+rocm``/``+xpu`` pure-Python wheels): the local
version label is read as PEP 440 defines it (after ``+``, dot-separated parts, compared
lower-case), and wheels are twins when the project, the public version (PEP 440: without
the local label) and the content key agree."""

from __future__ import annotations

import pytest

from toolkit.inspect.report import LibraryResult, WheelResult
from toolkit.inspect.rules.variants import accelerator_label, identical_findings, redundant_variant


@pytest.mark.parametrize(("version", "label"), [
    ("0.7.0+rocm6.2", "rocm6.2"), ("0.7.0+rocm", "rocm"), ("0.7.0+ROCm6.2", "rocm6.2"),
    ("1.0+xpu", "xpu"), ("1.0+cu126", "cu126"), ("1.0+cuda12.1", "cuda12.1"), ("1.0+hip6", "hip6"),
    ("1.0+gpu", "gpu"), ("1.0+git1234.rocm7.0", "rocm7.0"), ("1.0+cpu", None), ("1.0", None),
    ("not a version", None), (None, None), ("1.0+curl", None), ("1.0+custom", None),
    ("1.0+hipster", None), ("1.0+cu", None),
    ("1.0+rocm6.2.abc", "rocm6.2"), ("1.0+rocm-6.2", "rocm.6.2"),
])
def test_the_accelerator_label_of_a_local_version(version: str | None, label: str | None) -> None:
    assert accelerator_label(version) == label


def test_a_labelled_wheel_without_native_code_is_redundant() -> None:
    res = WheelResult("dist/torchao-0.7.0+rocm6.2-py3-none-any.whl", "torchao", "0.7.0+rocm6.2")
    found = redundant_variant(res)
    assert [(f.check, f.severity, f.library, f.cause, f.message) for f in found] == [(
        "redundant-variant", "warning", None, "redundant accelerator variant",
        "torchao 0.7.0+rocm6.2 is labelled +rocm6.2 but carries no native or GPU code: a redundant "
        "accelerator variant (the plain py3-none-any wheel is the same; CI can drop this build)")]
    res.libraries.append(LibraryResult("torchao/_C.so", "shared-library"))
    assert redundant_variant(res) == []
    assert redundant_variant(WheelResult("w", "torchao", "0.7.0")) == []


def _w(name: str, version: str, key: str | None) -> WheelResult:
    return WheelResult(f"dist/{name}", "demo", version, content_key=key)


def test_twins_name_each_other() -> None:
    a, b, c = _w("a.whl", "1.0+rocm", "k"), _w("b.whl", "1.0+xpu", "k"), _w("c.whl", "1.0", "k")
    other_version, other_key = _w("d.whl", "1.1+rocm", "k"), _w("e.whl", "1.0+cpu", "j")
    unknown = _w("f.whl", "1.0", None)
    identical_findings([a, b, c, other_version, other_key, unknown])
    assert [f.message for f in a.findings] == [
        "a.whl is identical to b.whl, c.whl apart from the name and version label: one build is enough"]
    assert [(f.check, f.severity, f.cause) for f in b.findings] == [
        ("identical", "warning", "identical wheels")]
    assert "c.whl is identical to a.whl, b.whl" in c.findings[0].message
    assert other_version.findings == other_key.findings == unknown.findings == []


def test_identical_wheels_name_each_other_by_file_name() -> None:
    a = WheelResult("out/x/apex-1.0+rocm7.0-cp312-cp312-linux_x86_64.whl", version="1.0+rocm7.0",
                    content_key="k")
    b = WheelResult("out/y/apex-1.0+rocm7.1-cp312-cp312-linux_x86_64.whl", version="1.0+rocm7.1",
                    content_key="k")
    identical_findings([a, b])
    (fa,) = a.findings
    assert fa.message.startswith("apex-1.0+rocm7.0-cp312-cp312-linux_x86_64.whl is identical to "
                                 "apex-1.0+rocm7.1-cp312-cp312-linux_x86_64.whl apart from")
