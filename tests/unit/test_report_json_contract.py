"""The ``check --json`` document the report model writes, judged in process by its published
JSON Schema (``toolkit/inspect/check.schema.json``, draft 2020-12, every object closed with
``additionalProperties: false`` and every key required) and by hand-computed values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import toolkit.inspect
from toolkit.inspect.report import Finding, LibraryResult, Report, TargetCode, WheelResult

SCHEMA = json.loads((Path(toolkit.inspect.__file__).parent / "check.schema.json").read_text())


def _validate(doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def _wheel() -> WheelResult:
    gpu = LibraryResult("demo/_gpu.so", "shared-library", {"GLIBC": "2.17", "GLIBCXX": "3.4.19"},
                        policy="manylinux_2_17", gpu_targets=["gfx90a"],
                        gpu_code={"gfx90a": TargetCode(["demo/_gpu.so"], 3, 4096)},
                        gpu_where=["3 code objects in .hip_fatbin (bundle)"],
                        unresolved=[{"symbol": "_Z3foov", "demangled": "foo()", "version": None}],
                        needed=["libc.so.6"],
                        missing=["libamdhip64.so.6"])
    cpu = LibraryResult("demo/_cpu.so", "shared-library")
    bad = LibraryResult("demo/_bad.so", "unreadable")
    obj = LibraryResult("demo/k.hsaco", "gpu-code-object",
                        gpu_code={"gfx90a": TargetCode(["demo/k.hsaco"], 1, 10)})
    findings = [
        Finding("missing-library", "error", "demo/_gpu.so", "libamdhip64.so.6 is not found",
                cause="not found"),
        Finding("gpu-targets", "error", None, "gfx942 is missing"),
        Finding("missing-library", "error", None, "two libraries miss one",
                libraries=("demo/_gpu.so", "demo/_cpu.so"), symbols=("a", "b")),
        Finding("rpath", "warning", "demo/_cpu.so", "RPATH /tmp"),
        Finding("metadata", "info", None, "a note"),
    ]
    return WheelResult("dist/demo-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", "demo", "1.0",
                       ["cp312-cp312-manylinux_2_17_x86_64"], "manylinux_2_17", "demo/_gpu.so",
                       findings, [gpu, cpu, bad, obj],
                       {"gfx90a": TargetCode(["demo/_gpu.so"], 3, 4096)},
                       {"torch": True, "rocm_major": 6}, 5, ["torch"], "key")


def test_a_full_report_is_valid_against_the_published_schema() -> None:
    doc = Report([_wheel(), WheelResult("dist/empty.whl")]).to_json()
    _validate(doc)
    assert doc["schema_version"] == 3 and doc["ok"] is False
    w = doc["wheels"][0]
    # errors per check, most first, then by name
    assert list(w["failed_checks"].items()) == [("missing-library", 2), ("gpu-targets", 1)]
    assert w["gpu_libraries"] == {"demo/_gpu.so": ["3 code objects in .hip_fatbin (bundle)"]}
    assert w["cpu_only_libraries"] == ["demo/_cpu.so"]  # neither unreadable nor a code object
    assert w["requires_dist"] == ["torch"] and w["policy_library"] == "demo/_gpu.so"
    assert w["gpu"] == {"gfx90a": {"libraries": ["demo/_gpu.so"], "code_objects": 3, "bytes": 4096}}
    lib = w["libraries"][0]
    assert lib["max_versions"] == {"GLIBC": "2.17", "GLIBCXX": "3.4.19"}
    assert lib["max_symbol_versions"] == {"GLIBC": "GLIBC_2.17", "GLIBCXX": "GLIBCXX_3.4.19"}
    assert lib["gpu_why"] == ["3 code objects in .hip_fatbin (bundle)"]
    assert doc["wheels"][1]["ok"] is True and doc["wheels"][1]["failed_checks"] == {}


def test_a_finding_names_its_library_in_libraries_unless_it_lists_several() -> None:
    one, general, several, warning, _ = (f.to_json() for f in _wheel().findings)
    for f in (one, general, several, warning):
        _validate({"schema_version": 3, "ok": True, "wheels": [
            {**WheelResult("w").to_json(), "findings": [f]}]})
    assert one == {"check": "missing-library", "severity": "error", "library": "demo/_gpu.so",
                   "message": "libamdhip64.so.6 is not found", "cause": "not found",
                   "libraries": ["demo/_gpu.so"], "symbols": []}
    assert general["libraries"] == [] and general["library"] is None and general["cause"] is None
    assert several["libraries"] == ["demo/_gpu.so", "demo/_cpu.so"] and several["symbols"] == ["a", "b"]


@pytest.mark.parametrize("key", ["check", "severity", "library", "message", "cause", "libraries",
                                 "symbols"])
def test_the_schema_rejects_a_finding_without_any_of_its_keys(key: str) -> None:
    f = Finding("record", "error", None, "m").to_json()
    del f[key]
    with pytest.raises(jsonschema.ValidationError):
        _validate({"schema_version": 3, "ok": False, "wheels": [
            {**WheelResult("w").to_json(), "findings": [f]}]})


def test_warnings_and_notes_leave_a_wheel_ok() -> None:
    w = WheelResult("w", findings=[Finding("rpath", "warning", None, "m"),
                                   Finding("metadata", "info", None, "n")])
    assert w.ok and w.failed_checks == {}
    assert Report([w]).ok and not Report([w, _wheel()]).ok
    assert [f.message for f in Report([w, _wheel()]).findings][:2] == ["m", "n"]
