"""Wheel variants (the PEP 825 draft, as ``variantlib`` 0.2.2 reads them) for ROCm targets.

A variant wheel is named ``<name>-<ver>-<py>-<abi>-<plat>-<label>.whl`` and carries
``<dist>.dist-info/variant.json`` naming one variant: ``amd :: gfx_arch :: <owner>``, where
``<owner>`` is the package owner of the one gfx target its code carries.

Where each rule comes from (read, not copied):

* the owner of a target: ``rocm-bootstrap`` 0.3.0, ``rocm_bootstrap/package_metadata.py``
  (``package_owner``/``group_package_targets``): the target without its ``:xnack±`` /
  ``:sramecc±`` (or ``-``-joined) features, then one override, ``gfx1250-strict`` is owned by
  ``gfx1250``. The tests ask rocm-bootstrap itself for each target's owner (the oracle);
* the namespace ``amd``, the feature ``gfx_arch`` and the plugin's import path:
  ``rocm_bootstrap/variant_provider.py`` (``AMDVariantPlugin.namespace``, its feature name)
  and the wheel's ``entry_points.txt`` (``[variant_plugins] amd = ...``);
* the file layout, the label alphabet ``[0-9a-z._]+`` and the JSON form (keys sorted,
  indent 4, ``$schema`` v0.2.0): ``variantlib`` 0.2.2 ``constants.py`` and
  ``variants_json.py`` (``VariantsJson.to_str``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from toolkit.core.errors import UsageError
from toolkit.core.text import escape

NAMESPACE = "amd"
FEATURE = "gfx_arch"
PROVIDER_REQUIRES = ("rocm-bootstrap>=0.3.0,<0.4",)
PLUGIN_API = "rocm_bootstrap.variant_provider:AMDVariantPlugin"
SCHEMA_URL = "https://variants-schema.wheelnext.dev/v0.2.0.json"
DIST_INFO_FILE = "variant.json"

LABEL = re.compile(r"[0-9a-z._]+")
# name-ver[-build]-py-abi-plat[-label].whl (variantlib's VALIDATION_WHEEL_NAME_REGEX shape)
WHEEL_NAME = re.compile(
    r"(?P<base>(?P<namever>(?P<name>[^\s-]+?)-(?P<ver>[^\s-]*?))(?:-(?P<build>\d[^-]*?))?"
    r"-(?P<py>[^\s-]+?)-(?P<abi>[^\s-]+?)-(?P<plat>[^\s-]+?))"
    r"(?:-(?P<label>[0-9a-z._]+))?\.whl")

_FEATURES = re.compile(r"(?:[:-](?:xnack|sramecc)[+-])+$")
_OWNER_OVERRIDES = {"gfx1250-strict": "gfx1250"}


def package_owner(target: str) -> str:
    """The package owner of a gfx target (``gfx90a:xnack-`` -> ``gfx90a``)."""
    canonical = _FEATURES.sub("", target)
    return _OWNER_OVERRIDES.get(canonical, canonical)


def owners(targets: Iterable[str]) -> list[str]:
    """Each target's owner once, in the targets' order."""
    seen: list[str] = []
    for target in targets:
        owner = package_owner(target)
        if owner not in seen:
            seen.append(owner)
    return seen


def label_for(target: str) -> str:
    """The variant label of a wheel built for ``target`` alone: its owner, validated."""
    owner = package_owner(target)
    if not LABEL.fullmatch(owner) or owner == "null":
        raise UsageError(f"{escape(target)}: its owner {escape(owner)!r} is no valid variant "
                         "label (valid: lower-case letters, digits, '.' and '_')")
    return owner


@dataclass(frozen=True)
class VariantName:
    """A wheel file name split as the variant draft reads it."""

    base: str  # name-ver-py-abi-plat
    namever: str
    name: str
    version: str
    py: str
    abi: str
    plat: str
    label: str | None


def parse_name(filename: str) -> VariantName | None:
    """``filename`` split, or None when it is no wheel file name of that shape."""
    m = WHEEL_NAME.fullmatch(filename)
    if m is None:
        return None
    return VariantName(m["base"], m["namever"], m["name"], m["ver"], m["py"], m["abi"],
                       m["plat"], m["label"])


def providers() -> dict[str, dict[str, object]]:
    return {NAMESPACE: {"plugin-api": PLUGIN_API, "requires": list(PROVIDER_REQUIRES)}}


def _document(variants: dict[str, list[str]]) -> str:
    data = {
        "$schema": SCHEMA_URL,
        "default-priorities": {"namespace": [NAMESPACE]},
        "providers": providers(),
        "variants": {label: {NAMESPACE: {FEATURE: values}} for label, values in variants.items()},
    }
    return json.dumps(data, indent=4, sort_keys=True)


def dist_info_json(target: str) -> str:
    """The ``variant.json`` of a wheel built for ``target`` alone."""
    label = label_for(target)
    return _document({label: [label]})


def read_properties(text: bytes) -> tuple[str, list[str]] | None:
    """(label, gfx_arch values) of a ``variant.json`` naming one variant, or None when it is
    not one (malformed JSON, not exactly one variant, values not a list of strings)."""
    try:
        data = json.loads(text)
        (label, props), = data["variants"].items()
        values = props.get(NAMESPACE, {}).get(FEATURE, [])
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError):
        return None
    if not isinstance(label, str) or not isinstance(values, list) or not all(
            isinstance(v, str) for v in values):
        return None
    return label, values
