"""The manifest's JSON schema (``schema_version`` 5; 4 added ``identity`` and ``host.paths``,
5 adds ``failure``): a manifest comes back from CI artifacts, so it is untrusted input.
``validate`` turns the first violation into one line naming the field and what is allowed.

Manifests of schema 4 are read too (``READS``): they are schema 5 without ``failure``, which a
schema-5 manifest must carry (null unless the build failed)."""

from __future__ import annotations

import json
import re
from typing import Any

from toolkit.core.errors import UsageError
from toolkit.core.text import escape, quoted

SCHEMA_VERSION = 5
READS = (4, 5)  # the schema versions this toolkit reads (4: no ``failure``)
SIGNATURE_LINES = 20  # at most this many lines in ``failure.signature``
# a build id, a package name, a version: the characters a wheel name and a folder name share
# (no "/", no "..", no shell characters, no spaces)
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_+-]*(\.[A-Za-z0-9_+-]+)*$"
NAME_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$"
VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9.+!_-]*$"

_STR = {"type": "string"}
_OPT_STR = {"type": ["string", "null"]}
_STRS = {"type": "array", "items": _STR}
_STR_MAP = {"type": "object", "additionalProperties": _STR}


def _obj(props: dict[str, Any], *, required: list[str] | None = None,
         extra: bool = False) -> dict[str, Any]:
    return {"type": "object", "properties": props,
            "required": list(props) if required is None else required,
            "additionalProperties": extra}


def _options_schema() -> dict[str, Any]:
    """The recorded options (``toolkit.plan.model.options_json``), one property per field of
    ``Options``: a list of strings, a boolean, or a string or null, as its default is."""
    import dataclasses

    from toolkit.plan.model import Options

    props: dict[str, Any] = {"apex_ops": _OPT_STR}  # recorded before recipe options existed
    for f in dataclasses.fields(Options):
        if f.name == "locks":  # recorded on their own (sdk.lock)
            continue
        default = getattr(Options(), f.name)
        props[f.name] = (_STRS if isinstance(default, tuple) else {"type": "boolean"}
                         if isinstance(default, bool) else _OPT_STR)
    return _obj(props, required=[])


SCHEMA: dict[str, Any] = _obj({
    "schema_version": {"enum": list(READS)},
    "toolkit_version": _STR,
    "build": _obj({"id": {"type": "string", "pattern": ID_PATTERN},
                   "package": {"type": "string", "pattern": NAME_PATTERN},
                   "version": {"type": "string", "pattern": VERSION_PATTERN},
                   "python": {"type": "string", "pattern": r"^[0-9]+\.[0-9]+t?$"},
                   "rocm": {"type": "string", "pattern": r"^(cpu|[0-9]+(\.[0-9]+){0,3})$"},
                   "torch": _OPT_STR,
                   # one py_limited_api wheel (tagged <abi3>-abi3) for the Pythons it serves
                   "abi3": {"type": "string", "pattern": "^cp3[0-9]+$"},
                   "serves": {"type": "array", "minItems": 1, "items": {
                       "type": "string", "pattern": r"^[0-9]+\.[0-9]+$"}}},
                  required=["id", "package", "version", "python", "rocm", "torch"]),
    "recipe": _STR,
    "dist": _STR,
    "targets": {"type": "array", "items": {"type": "string", "pattern": "^gfx[0-9a-f]+(:.*)?$"}},
    "expected_modules": _STRS,
    "required_symbols": _STRS,
    "options": {"anyOf": [{"type": "null"}, _options_schema()]},
    "family": _OPT_STR,
    "source": _obj({"repo": _STR, "ref": _STR, "path": _OPT_STR,
                    "sha": {"type": ["string", "null"], "pattern": "^[0-9a-f]{40}$"},
                    "tree": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
                    # a build of uncommitted changes (--allow-dirty): their sha256; only then
                    "diff": {"type": "string", "pattern": "^[0-9a-f]{64}$"}},
                   required=["repo", "ref", "path", "sha", "tree"]),
    "workdir": _STR,
    "env_dir": _STR,
    "wheel": _OPT_STR,
    "wheel_sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
    # --variants (issue 31): each wheel variant by label; absent before
    "variants": {"type": "object", "additionalProperties": _obj({
        "wheel": _STR, "sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"}},
        required=[])},
    "sdk": _obj({"provider": _OPT_STR, "index_urls": _STRS, "channel": _OPT_STR,
                 "version": _OPT_STR, "root": _OPT_STR,
                 "lock": {"type": ["object", "null"],
                          "properties": {"path": _OPT_STR, "sha256": _OPT_STR}}},
                required=[], extra=True),
    "installed": {"type": "array", "items": _obj({"name": _STR, "version": _STR})},
    "environment": {"type": "object", "additionalProperties": _STR_MAP},
    "unset": _STRS,
    "tools": {"type": "object", "additionalProperties": _OPT_STR},
    "identity": _obj({
        "build": {"type": "object"}, "python": _STR, "rocm": _STR, "targets": _STRS,
        "family": _OPT_STR, "options": {"type": "object"}, "plan_sha256": _STR,
        "upstream": _OPT_STR, "source": _obj({"sha": _OPT_STR, "tree": _OPT_STR},
                                             required=[], extra=True),
        "interpreter": {"type": ["object", "null"], "additionalProperties": _OPT_STR},
        "sdk_version": _OPT_STR, "torch_version": _OPT_STR, "lock_sha256": _OPT_STR,
        "digest": _OPT_STR}, required=[], extra=True),
    "host": _obj({"os": _OPT_STR, "machine": _OPT_STR, "glibc": _OPT_STR,
                  "cores": {"type": ["integer", "null"]},
                  "mem_available_gib": {"type": ["number", "null"]}, "gpus": _STRS,
                  "paths": _STR_MAP, "workdir": _OPT_STR, "env_dir": _OPT_STR},
                 required=[], extra=True),
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
    # a failed build: its step, the toolkit's exit code, the lines that identify the failure
    # (toolkit.run.signature: host paths as tokens, masked, escaped) and the log they are from
    "failure": {"anyOf": [{"type": "null"}, _obj({
        "step": _STR, "exit_code": {"type": "integer", "minimum": 1, "maximum": 255},
        "signature": {"type": "array", "items": _STR, "maxItems": SIGNATURE_LINES},
        "log": _OPT_STR})]},
}, required=None)
# schema 4 has no ``failure``; schema 5 requires it (``validate``)
SCHEMA["required"].remove("failure")
SCHEMA["required"].remove("variants")


# a known failure the run was judged against (toolkit.data.known): what it expected and the
# verdict, xfail (failed where expected) or xpass (did not fail: remove the entry); optional
SCHEMA["properties"]["known_failure"] = _obj({
    "id": _STR, "result": {"enum": ["xfail", "xpass", "failed", "not reached"]},
    "fails": _STR, "test": _OPT_STR, "reason": _STR, "evidence": _STR, "line": _STR})


def validate(data: Any, where: str) -> None:
    """``UsageError`` (exit 2) naming the first violation: its JSON path and the rule."""
    import jsonschema

    check_values(data, where)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        if data.get("schema_version") == SCHEMA_VERSION and "failure" not in data:
            raise UsageError(f"{where}: manifest field failure: missing (a schema "
                             f"{SCHEMA_VERSION} manifest records it, null unless the build "
                             "failed)")
        return
    path = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    if error.validator == "enum" and list(error.absolute_path) == ["schema_version"]:
        if not isinstance(error.instance, int) or isinstance(error.instance, bool):
            raise UsageError(f"{where}: manifest schema_version {_value(error.instance)} is "
                             f"{_JSON_TYPE.get(type(error.instance), 'a value')}, expected the "
                             f"integer {SCHEMA_VERSION}")
        raise UsageError(f"{where}: manifest schema_version {error.instance}; this toolkit "
                         f"reads {' and '.join(map(str, READS))}")
    raise UsageError(f"{where}: manifest field {path}: {_describe(error)}")


def _describe(error: Any) -> str:
    """What was found and what is valid, the value cut (``escape``) so that the rule is
    always said, however long the value."""
    found = _value(error.instance)
    rule, allowed = error.validator, error.validator_value
    if rule == "type":
        return f"{type_error(error.instance)}, expected {_expected(allowed)}"
    if rule == "anyOf" and all("type" in s for s in allowed):
        return f"{type_error(error.instance)}, expected {_expected([s['type'] for s in allowed])}"
    if rule == "pattern":
        return f"{found} does not match {escape(allowed)}"
    if rule == "enum":
        return f"{found} is not one of {escape(', '.join(json.dumps(v) for v in allowed))}"
    if rule in ("minimum", "maximum", "maxItems"):
        return f"{found} is beyond the {rule} {allowed}"
    return escape(error.message)


_JSON_TYPE = {str: "a string", int: "an integer", float: "a number", bool: "a boolean",
              list: "an array", dict: "an object", type(None): "null"}


def type_error(value: Any) -> str:
    """``5 is an integer``: a value of the wrong JSON type, named (cut when long)."""
    return f"{_value(value)} is {_JSON_TYPE.get(type(value), 'a value')}"


def _expected(types: Any) -> str:
    names = {"string": "a string", "integer": "an integer", "number": "a number",
             "boolean": "a boolean", "array": "an array", "object": "an object", "null": "null"}
    items = types if isinstance(types, list) else [types]
    flat = [t for item in items for t in (item if isinstance(item, list) else [item])]
    return " or ".join(names.get(str(t), str(t)) for t in flat)


def _value(value: Any) -> str:
    return quoted(value) if isinstance(value, str) else escape(json.dumps(value))


_UNSAFE_PATH = re.compile(r"[\x00-\x1f\x7f]")


def _path_rule(value: Any, key: str, where: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        return  # the schema names the type
    if not value.startswith("/") or ".." in value.split("/") or _UNSAFE_PATH.search(value):
        raise UsageError(f"{where}: manifest field {key}: {quoted(value)} is not an absolute "
                         "path without '..' or control characters (a tampered manifest?)")


def check_values(data: Any, where: str) -> None:
    """The rules a schema cannot say: the build id is the one its fields make (package,
    version, Python tag, ROCm label) and matches the id pattern; the folders and the source
    path a manifest records are absolute, without ``..`` or control characters. A violation
    is a tampered manifest: ``UsageError`` (exit 2)."""
    if not isinstance(data, dict):
        return
    build = data.get("build")
    if isinstance(build, dict):
        _check_build_id(build, where)
    host = data.get("host")
    if not isinstance(host, dict):
        host = {}
    for key in ("workdir", "env_dir"):
        if key in data:
            _path_rule(data[key], key, where, optional=key == "env_dir")
        elif key in host:
            _path_rule(host[key], f"host.{key}", where, optional=True)
    source = data.get("source")
    if isinstance(source, dict) and "path" in source:
        _path_rule(source["path"], "source.path", where, optional=True)


def _check_build_id(build: dict[str, Any], where: str) -> None:
    """The build id matches the id pattern and is the one its fields make; an empty or missing
    field is the schema's to name (build.package ...), not a wrong id."""
    if not all(isinstance(build.get(k), str) and build.get(k)
               for k in ("id", "package", "version", "python", "rocm")):
        return
    bid = build["id"]
    if not re.match(ID_PATTERN, bid) or ".." in bid:
        raise UsageError(f"{where}: manifest field build.id: {quoted(bid)} is not a build id "
                         "(letters, digits, . _ + -; e.g. apex-1.8.0-cp312-rocm7.0; a "
                         "tampered manifest?)")
    made = _build_id(build)
    if made is not None and made != bid:
        raise UsageError(f"{where}: manifest field build.id: {quoted(bid)} is not the build "
                         f"its fields name ({quoted(made)}; a tampered manifest?)")


def _build_id(build: dict[str, Any]) -> str | None:
    from toolkit.core.versions import rocm_label
    from toolkit.data.matrix import python_tag

    try:
        tag = python_tag(build["python"])
    except ValueError:
        return None
    if isinstance(build.get("abi3"), str):  # one wheel for every Python it serves
        tag = f"{build['abi3']}-abi3"
    return f"{build['package']}-{build['version']}-{tag}-{rocm_label(build['rocm'])}"
