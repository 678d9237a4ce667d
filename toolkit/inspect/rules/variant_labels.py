"""Wheel variants judged against their code (issue 31): a variant wheel
(``<name>-<ver>-<py>-<abi>-<plat>-<label>.whl``) whose ``variant.json`` names
``amd :: gfx_arch :: <owner>`` must carry GPU code for exactly those owners.

The owners of the code are read from the GPU-code facts the check already collects (each
target of the wheel's device code, ``WheelResult.gpu``), each mapped to its package owner
by the rule ``toolkit.core.variants`` reads from rocm-bootstrap. An owner the label names
with no code for it would install a wheel that fails on that GPU (hipErrorNoBinaryForGpu);
code for an owner the label does not name is a target the installer never picks this wheel
for (a fat wheel under a variant's name, or a mixed-up build): both are errors.
"""

from __future__ import annotations

from toolkit.core import variants
from toolkit.core.text import escape
from toolkit.inspect.report import Finding, WheelResult

CHECK = "variant-label"


def _error(msg: str, cause: str) -> Finding:
    return Finding(CHECK, "error", None, msg, cause=cause)


def variant_findings(res: WheelResult, filename: str, variant_json: bytes | None) -> list[Finding]:
    """The findings about a wheel's variant label (none for a wheel without one)."""
    name = variants.parse_name(filename)
    if name is None or name.label is None:
        return []
    label = escape(name.label)
    where = f".dist-info/{variants.DIST_INFO_FILE}"
    if variant_json is None:
        return [_error(f"{escape(filename)} is named as variant {label} but carries no {where}: "
                       "installers cannot read what it is for", "variant without variant.json")]
    read = variants.read_properties(variant_json)
    if read is None or read[0] != name.label:
        return [_error(f"{escape(filename)}: its {where} does not name exactly one variant "
                       f"labelled {label}", "malformed variant.json")]
    declared = read[1]
    if not declared:
        return []  # no amd :: gfx_arch property: nothing about GPU code to judge
    carried = variants.owners(res.gpu)
    prop = f"{variants.NAMESPACE} :: {variants.FEATURE}"
    out = [_error(f"variant {label} names {prop} :: {escape(owner)} but the wheel carries no GPU "
                  f"code for it (carries: {', '.join(carried) or 'none'}); it would fail with "
                  "hipErrorNoBinaryForGpu on that GPU", "variant label without its code")
           for owner in declared if owner not in carried]
    out += [_error(f"variant {label} carries GPU code for {escape(owner)}, which its label "
                   f"({', '.join(f'{prop} :: {escape(d)}' for d in declared)}) does not name: "
                   "installers never pick it for that GPU", "code the variant label does not name")
            for owner in carried if owner not in declared]
    return out
