"""The findings/report model of ``toolkit check``: what the checks found, as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    check: str  # policy, undefined-symbol, missing-library, symbol-version, required-symbol,
    # gpu-targets, rpath, bundled-library, metadata, platform-tag, elf, archive
    severity: Severity
    library: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "library": self.library,
            "message": self.message,
        }


@dataclass
class LibraryResult:
    path: str
    kind: str  # shared-library, executable, object, gpu-code-object, unreadable
    max_versions: dict[str, str] = field(default_factory=dict)
    policy: str | None = None
    gpu_targets: list[str] = field(default_factory=list)
    unresolved: list[dict[str, str | None]] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "max_versions": self.max_versions,
            "policy": self.policy,
            "gpu_targets": self.gpu_targets,
            "unresolved": self.unresolved,
            "needed": self.needed,
            "missing": self.missing,
        }


@dataclass
class WheelResult:
    path: str
    name: str | None = None
    version: str | None = None
    tags: list[str] = field(default_factory=list)
    policy: str | None = None
    findings: list[Finding] = field(default_factory=list)
    libraries: list[LibraryResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "name": self.name,
            "version": self.version,
            "tags": self.tags,
            "policy": self.policy,
            "ok": self.ok,
            "findings": [f.to_json() for f in self.findings],
            "libraries": [lib.to_json() for lib in self.libraries],
        }


@dataclass
class Report:
    wheels: list[WheelResult]

    @property
    def ok(self) -> bool:
        return all(w.ok for w in self.wheels)

    @property
    def findings(self) -> list[Finding]:
        return [f for w in self.wheels for f in w.findings]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "wheels": [w.to_json() for w in self.wheels]}
