"""The variant-label rule's findings as whole lines, per case: a label without its
``.dist-info/variant.json``, a ``variant.json`` naming another label, an owner named without
code for it, code for an owner the label does not name (each owner once, features dropped:
``gfx90a:xnack-`` is gfx90a's code, as rocm-bootstrap's owner rule says); a label naming
no ``amd :: gfx_arch`` is not judged. The label's JSON is written here by hand in the variant
draft's shape (``{"variants": {label: {"amd": {"gfx_arch": [...]}}}}``)."""

from __future__ import annotations

import json

from toolkit.inspect.report import Finding, TargetCode, WheelResult
from toolkit.inspect.rules.variant_labels import variant_findings

NAME = "x-1.0-cp312-cp312-linux_x86_64-gfx90a.whl"


def _doc(label: str, values: list[str] | None) -> bytes:
    props = {"amd": {"gfx_arch": values}} if values is not None else {"other": {}}
    return json.dumps({"variants": {label: props}}).encode()


def _res(*targets: str) -> WheelResult:
    return WheelResult("x", gpu={t: TargetCode() for t in targets})


def _error(msg: str, cause: str) -> Finding:
    return Finding("variant-label", "error", None, msg, cause=cause)


def test_a_label_needs_its_variant_json_naming_it() -> None:
    assert variant_findings(_res("gfx90a"), NAME, None) == [_error(
        f"{NAME} is named as variant gfx90a but carries no .dist-info/variant.json: installers "
        "cannot read what it is for", "variant without variant.json")]
    assert variant_findings(_res("gfx90a"), NAME, _doc("gfx942", ["gfx942"])) == [_error(
        f"{NAME}: its .dist-info/variant.json does not name exactly one variant labelled gfx90a",
        "malformed variant.json")]
    assert variant_findings(_res("gfx90a"), "x-1.0-cp312-cp312-linux_x86_64.whl", None) == []
    assert variant_findings(_res("gfx90a"), "not a wheel name", None) == []
    assert variant_findings(_res("gfx90a"), NAME, _doc("gfx90a", None)) == []  # nothing to judge


def test_owners_named_and_carried_must_agree() -> None:
    assert variant_findings(_res("gfx90a:xnack-", "gfx90a:xnack+"), NAME, _doc("gfx90a", ["gfx90a"])) == []
    assert variant_findings(_res("gfx908", "gfx942:sramecc+", "gfx908:xnack-"), NAME,
                            _doc("gfx90a", ["gfx90a", "gfx908"])) == [
        _error("variant gfx90a names amd :: gfx_arch :: gfx90a but the wheel carries no GPU code for "
               "it (carries: gfx908, gfx942); it would fail with hipErrorNoBinaryForGpu on that GPU",
               "variant label without its code"),
        _error("variant gfx90a carries GPU code for gfx942, which its label (amd :: gfx_arch :: "
               "gfx90a, amd :: gfx_arch :: gfx908) does not name: installers never pick it for that GPU",
               "code the variant label does not name")]
    assert variant_findings(_res(), NAME, _doc("gfx90a", ["gfx90a"])) == [
        _error("variant gfx90a names amd :: gfx_arch :: gfx90a but the wheel carries no GPU code for "
               "it (carries: none); it would fail with hipErrorNoBinaryForGpu on that GPU",
               "variant label without its code")]
