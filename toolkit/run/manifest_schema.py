"""The manifest's JSON schema (``schema_version`` 4; 4 adds ``identity`` and ``host.paths``):
a manifest comes back from CI artifacts, so it is untrusted input. ``validate`` turns the first
violation into one line naming the field and what is allowed."""

from __future__ import annotations

from typing import Any

from toolkit.core.errors import UsageError

SCHEMA_VERSION = 4

_STR = {"type": "string"}
_OPT_STR = {"type": ["string", "null"]}
_STRS = {"type": "array", "items": _STR}
_STR_MAP = {"type": "object", "additionalProperties": _STR}


def _obj(props: dict[str, Any], *, required: list[str] | None = None,
         extra: bool = False) -> dict[str, Any]:
    return {"type": "object", "properties": props,
            "required": list(props) if required is None else required,
            "additionalProperties": extra}


SCHEMA: dict[str, Any] = _obj({
    "schema_version": {"const": SCHEMA_VERSION},
    "toolkit_version": _STR,
    "build": _obj({"id": {"type": "string", "minLength": 1},
                   "package": {"type": "string", "minLength": 1},
                   "version": {"type": "string", "minLength": 1},
                   "python": _STR, "rocm": _STR, "torch": _OPT_STR}),
    "recipe": _STR,
    "dist": _STR,
    "targets": {"type": "array", "items": {"type": "string", "pattern": "^gfx[0-9a-f]+(:.*)?$"}},
    "expected_modules": _STRS,
    "required_symbols": _STRS,
    "options": {"type": ["object", "null"]},
    "family": _OPT_STR,
    "source": _obj({"repo": _STR, "ref": _STR, "path": _OPT_STR,
                    "sha": {"type": ["string", "null"], "pattern": "^[0-9a-f]{40}$"},
                    "tree": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"}}),
    "workdir": _STR,
    "env_dir": _STR,
    "wheel": _OPT_STR,
    "wheel_sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
    "sdk": {"type": "object"},
    "installed": {"type": "array", "items": _obj({"name": _STR, "version": _STR})},
    "environment": {"type": "object", "additionalProperties": _STR_MAP},
    "unset": _STRS,
    "tools": {"type": "object", "additionalProperties": _OPT_STR},
    "identity": {"type": "object"},
    "host": {"type": "object"},
    "learned": _STR_MAP,
    "steps": {"type": "array", "items": _obj({
        "name": _STR, "kind": _STR, "argv": _STRS, "env": _STR_MAP,
        "returncode": {"type": ["integer", "null"]}, "seconds": {"type": "number"},
        "skipped": _OPT_STR})},
    "plan": _obj({"build": {"type": "object"}, "targets": _STRS, "family": _OPT_STR,
                  "steps": {"type": "array", "items": {
                      "type": "object", "required": ["name", "action"],
                      "properties": {"name": _STR,
                                     "action": {"type": "object", "required": ["kind"],
                                                "properties": {"kind": _STR}}}}}}),
    "outcome": {"enum": ["running", "ok", "failed", "interrupted"]},
    "failed_step": _OPT_STR,
    "error": _OPT_STR,
    "repro": _STR,
})


def validate(data: Any, where: str) -> None:
    """``UsageError`` (exit 2) naming the first violation: its JSON path and the rule."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(SCHEMA)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return
    path = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    if error.validator == "const" and list(error.absolute_path) == ["schema_version"]:
        raise UsageError(f"{where}: manifest schema_version {error.instance!r}; this toolkit "
                         f"reads {SCHEMA_VERSION}")
    message = error.message if len(error.message) < 200 else error.message[:200] + "..."
    raise UsageError(f"{where}: manifest field {path}: {message}")
