"""The findings/report model of ``toolkit check``: what the checks found, as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
# The JSON contract (``toolkit/inspect/check.schema.json``). 2: first versioned output; adds
# schema_version, failed_checks, policy_library, requires_dist, findings' symbols, and
# restores the libraries' max_versions next to max_symbol_versions. 3: a check that cannot run
# (bad input) prints an error document, {"schema_version", "ok": false, "error": {"message",
# "exit_code"}}, in place of the report (:func:`error_document`).
SCHEMA_VERSION = 3


@dataclass(frozen=True)
class Finding:
    check: str  # policy, platform-tag, undefined-symbol, missing-library, symbol-version,
    # required-symbol, gpu-targets, gpu-code, rpath, bundled-library, metadata, record,
    # archive, elf, redundant-variant, identical, variant-label
    severity: Severity
    library: str | None
    message: str
    cause: str | None = None  # findings with the same check and cause are shown as one group
    libraries: tuple[str, ...] = ()  # every library one finding is about (when several)
    symbols: tuple[str, ...] = ()  # every symbol a grouped undefined-symbol finding is about

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "library": self.library,
            "message": self.message,
            "cause": self.cause,
            "libraries": list(self.libraries or ((self.library,) if self.library else ())),
            "symbols": list(self.symbols),
        }


@dataclass
class TargetCode:
    """The GPU code one target has in a wheel: where, how many objects, how many bytes."""

    libraries: list[str] = field(default_factory=list)
    code_objects: int = 0
    bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"libraries": self.libraries, "code_objects": self.code_objects, "bytes": self.bytes}


@dataclass
class LibraryResult:
    path: str
    kind: str  # shared-library, executable, object, gpu-code-object, unreadable
    max_versions: dict[str, str] = field(default_factory=dict)  # prefix -> highest number
    policy: str | None = None
    gpu_targets: list[str] = field(default_factory=list)
    gpu_code: dict[str, TargetCode] = field(default_factory=dict)  # target -> objects, bytes
    gpu_where: list[str] = field(default_factory=list)  # "3 code objects in .hip_fatbin (bundle)"
    unresolved: list[dict[str, str | None]] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    # a kpack-split library: {"kernel_name", "search_paths", "hipk", "hipf", "archives" holding its code}
    kpack: dict[str, Any] | None = None

    @property
    def symbol_versions(self) -> dict[str, str]:
        """The highest symbol-version *node* needed per prefix: ``{"GLIBCXX": "GLIBCXX_3.4.30"}``."""
        return {p: f"{p}_{v}" for p, v in self.max_versions.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "max_versions": dict(self.max_versions),
            "max_symbol_versions": self.symbol_versions,
            "policy": self.policy,
            "gpu_targets": self.gpu_targets,
            "gpu_code": {t: c.to_json() for t, c in self.gpu_code.items()},
            "gpu_why": self.gpu_where,
            "unresolved": self.unresolved,
            "needed": self.needed,
            "missing": self.missing,
        } | ({"kpack": self.kpack} if self.kpack is not None else {})


@dataclass
class WheelResult:
    path: str
    name: str | None = None
    version: str | None = None
    tags: list[str] = field(default_factory=list)
    policy: str | None = None
    policy_library: str | None = None  # the library whose symbol versions set ``policy``
    findings: list[Finding] = field(default_factory=list)
    libraries: list[LibraryResult] = field(default_factory=list)
    gpu: dict[str, TargetCode] = field(default_factory=dict)  # target -> code, sorted by family
    built_against: dict[str, Any] = field(default_factory=dict)
    members: int = 0
    requires: list[str] = field(default_factory=list)  # Requires-Dist names, canonical
    content_key: str | None = None  # equal for wheels identical apart from name and version
    kpack_archives: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # per target

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    @property
    def failed_checks(self) -> dict[str, int]:
        """Error findings per check, most first: ``{"missing-library": 2, "gpu-targets": 1}``."""
        counts: dict[str, int] = {}
        for f in self.findings:
            if f.severity == "error":
                counts[f.check] = counts.get(f.check, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def gpu_libraries(self) -> list[LibraryResult]:
        return [lib for lib in self.libraries
                if (lib.gpu_code or lib.kpack is not None) and lib.kind != "gpu-code-object"]

    @property
    def cpu_only(self) -> list[LibraryResult]:
        return [
            lib for lib in self.libraries
            if not lib.gpu_code and lib.kpack is None and lib.kind not in ("gpu-code-object", "unreadable")
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "name": self.name,
            "version": self.version,
            "tags": self.tags,
            "policy": self.policy,
            "policy_library": self.policy_library,
            "requires_dist": self.requires,
            "ok": self.ok,
            "failed_checks": self.failed_checks,
            "gpu": {t: c.to_json() for t, c in self.gpu.items()},
            "gpu_libraries": {lib.path: lib.gpu_where for lib in self.gpu_libraries},
            "cpu_only_libraries": [lib.path for lib in self.cpu_only],
            "built_against": self.built_against,
            "findings": [f.to_json() for f in self.findings],
            "libraries": [lib.to_json() for lib in self.libraries],
        } | ({"kpack_archives": self.kpack_archives} if self.kpack_archives else {})


@dataclass
class Report:
    wheels: list[WheelResult]
    schema_version: int = SCHEMA_VERSION

    @property
    def ok(self) -> bool:
        return all(w.ok for w in self.wheels)

    @property
    def findings(self) -> list[Finding]:
        return [f for w in self.wheels for f in w.findings]

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "ok": self.ok,
                "wheels": [w.to_json() for w in self.wheels]}


def error_document(message: str, exit_code: int) -> dict[str, Any]:
    """What ``check --json`` prints when the check cannot run: the error document of
    ``check.schema.json`` (the one line stderr shows, and the exit code)."""
    return {"schema_version": SCHEMA_VERSION, "ok": False,
            "error": {"message": message, "exit_code": exit_code}}
