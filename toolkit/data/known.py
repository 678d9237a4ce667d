"""Known failures: builds upstream says cannot work, as data, each with its reason and evidence.

``known_failures.toml`` (beside the matrix data; optional) holds one table per entry,
``[failures.<id>]``: a selector (package, and optionally version/ROCm/torch ranges as PEP 440
specifiers, Pythons, GPU families or gfx ids, platform), what fails (a plan step, e.g.
``build-wheel``, or ``smoke`` with a named ``test``), a one-line ``reason`` and the upstream
``evidence`` (``owner/repo#123`` or ``owner/repo@<commit> <file>``). It is strict like every
data file: an unknown key, a malformed range, an entry without evidence, or a selector that
matches no build of the matrix is a ``DataError`` (exit 3) naming the file and the entry.

What the rest of the toolkit does with an entry:

- ``invoke matrix`` shows it next to the builds it selects (``--format json`` carries it;
  ``--explain ID`` prints it);
- CI selection stays positive: ``github_matrix`` leaves known failures out on every trigger;
  ``workflow_dispatch`` and ``schedule`` take ``--include-known-failures`` (``RETRY_TRIGGERS``)
  to see whether upstream fixed them;
- a session or ``invoke plan`` of a selected build refuses it in one line (``KnownFailure``,
  exit 7) unless ``--include-known-failures``; run, ``verdict()`` judges the outcome like
  pytest's strict xfail: a failure at the expected step is ``xfail`` (exit 0), a success is
  ``xpass`` ("known failure no longer fails: remove the entry", exit 1).

For ``invoke upstream`` (toolkit.verify.upstream.known): ``upstream_refs()`` lists each
entry's evidence as (entry id, kind, repository, issue number or commit, file). An entry
citing ``owner/repo@<commit> <file>`` says in ``holds`` (a regular expression) what that file
says; once the newest commit of that commit's line (HEAD, or the release branch holding
it) no longer says it, the entry is reported, to re-try
with ``--include-known-failures`` and then remove. An issue cannot be read offline: it is
reported as a note to check by hand.

Imported by ``toolkit.data.matrix`` at load time: no import of it here (no cycle); the
matrix's types are only named for the type checker.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from toolkit.core.errors import UsageError
from toolkit.core.step_names import PUBLISH, STEP_NAMES
from toolkit.data.schema import Map, Ref, Table, Text, Texts, check, fail, read_toml
from toolkit.data.specs import PYTHONS


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class _Versioned(Protocol):
    @property
    def version(self) -> str: ...


class _TorchPinned(Protocol):
    @property
    def torch(self) -> str: ...


class Build(Protocol):
    """What an entry reads of a build (``toolkit.data.matrix.Build``, which imports this module)."""

    @property
    def package(self) -> _Named: ...
    @property
    def pkg_version(self) -> _TorchPinned: ...
    @property
    def version(self) -> str: ...
    @property
    def python(self) -> str: ...
    @property
    def rocm(self) -> _Versioned: ...

KNOWN_FILE = "known_failures.toml"
# the GitHub events that may re-try known failures (every other trigger leaves them out)
RETRY_TRIGGERS = ("workflow_dispatch", "schedule")
# the platforms an upstream flag may name; the toolkit builds Linux wheels only, so an entry
# for another platform selects nothing (a data error)
PLATFORMS = ("linux", "windows")
BUILD_PLATFORM = "linux"
# the plan steps a failure may be expected at (every step but publish, which only moves a
# checked wheel)
STEPS = tuple(name for name in STEP_NAMES if name != PUBLISH)
XFAIL, XPASS, FAILED, NOT_REACHED = "xfail", "xpass", "failed", "not reached"
ID = r"[a-z0-9][a-z0-9._-]*"
_EVIDENCE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+"  # owner/repo
    r"(#(?P<issue>[0-9]+)|@(?P<commit>[0-9a-f]{7,40}) (?P<file>\S.*))")


def _specifier(value: str) -> str | None:
    try:
        SpecifierSet(value)
    except InvalidSpecifier:
        return "is not a version range like >=1.4,<1.7 or ==7.0 (PEP 440 specifiers)"
    return None


def _pattern(value: str) -> str | None:
    try:
        re.compile(value)
    except re.error as exc:
        return f"is not a regular expression ({exc})"
    return None


def _evidence(value: str) -> str | None:
    for part in value.split("; "):
        if not _EVIDENCE.fullmatch(part):
            return (f"has evidence {part!r} that is not owner/repo#ISSUE or "
                    "owner/repo@COMMIT FILE (several: separated by '; ')")
    return None


_RANGE = Text(check=_specifier)
ENTRY = Table(
    {
        "package": Text(choices=Ref("packages")),
        "versions": _RANGE,
        "rocm": _RANGE,
        "torch": _RANGE,
        "python": Texts(Text(choices=PYTHONS)),
        "families": Texts(Text(choices=Ref("families"))),
        "gfx": Texts(Text(choices=Ref("targets"))),
        "platform": Text(choices=PLATFORMS),
        "fails": Text(choices=STEPS, note="a plan step; `smoke` may name a `test`"),
        "test": Text(pattern=r"[A-Za-z0-9_./\[\]:-]+", like="a smoke test id like "
                     "test_runtime.py::test_apex_fused_layer_norm"),
        "reason": Text(pattern=r"[^\n]+", like="one line"),
        "evidence": Text(check=_evidence),
        "holds": Text(check=_pattern),
    },
    optional=("versions", "rocm", "torch", "python", "families", "gfx", "platform", "test",
              "holds"),
)
SCHEMA = Table({"failures": Map(ENTRY, key=Text(pattern=ID, like="an id like apex-hip-minor"))},
               optional=("failures",))


@dataclass(frozen=True)
class KnownFailure:
    id: str
    package: str
    fails: str  # the plan step expected to fail
    reason: str
    evidence: str
    versions: str = ""  # PEP 440 ranges; "" = any
    rocm: str = ""
    torch: str = ""
    python: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    gfx: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()  # families expanded, plus gfx; empty = every target
    platform: str = BUILD_PLATFORM
    test: str | None = None  # with fails = "smoke": the smoke test expected to fail
    # what each ``owner/repo@commit file`` of the evidence says, as a regular expression: the
    # file holds it at that commit; when the newest commit of its line (HEAD or a release
    # branch) no longer does, the evidence is gone (``invoke upstream`` says to re-try)
    holds: str = ""

    def selects(self, build: Build) -> bool:
        """Does the entry select this build (for some targets)?"""
        return (self.platform == BUILD_PLATFORM and build.package.name == self.package
                and _in(self.versions, build.version) and _in(self.rocm, build.rocm.version)
                and _in(self.torch, build.pkg_version.torch)
                and (not self.python or build.python in self.python))

    def applies(self, build: Build, targets: Iterable[str]) -> bool:
        """Does it select this build for these gfx targets (any of them)?"""
        return self.selects(build) and (not self.targets or bool(set(targets) & set(self.targets)))

    @property
    def what(self) -> str:
        return f"smoke test {self.test}" if self.test else f"step {self.fails}"

    @property
    def scope(self) -> str:
        """The selector, as words: ``apex >=1.4,<1.7 on ROCm >=7.10, Python 3.12``."""
        parts = [f"{self.package}{' ' + self.versions if self.versions else ''}"]
        parts += [f"ROCm {self.rocm}"] if self.rocm else []
        parts += [f"torch {self.torch}"] if self.torch else []
        parts += [f"Python {', '.join(self.python)}"] if self.python else []
        parts += [f"targets {', '.join(self.families + self.gfx)}"] if self.targets else []
        return ", ".join(parts)

    def line(self) -> str:
        """One line: what fails, why, and where upstream says so."""
        return f"known failure {self.id}: {self.what} fails: {self.reason} (evidence: {self.evidence})"

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "package": self.package, "versions": self.versions or None,
                "rocm": self.rocm or None, "torch": self.torch or None,
                "python": list(self.python), "families": list(self.families),
                "gfx": list(self.gfx), "targets": list(self.targets), "platform": self.platform,
                "fails": self.fails, "test": self.test, "reason": self.reason,
                "evidence": self.evidence, "holds": self.holds or None}

    def explain(self) -> list[tuple[str, str]]:
        """(fact, value) rows for ``invoke matrix --explain ID``."""
        rows = [("selects", self.scope + (f" ({self.platform})" if self.platform else "")),
                ("fails", self.what), ("reason", self.reason), ("evidence", self.evidence),
                *([("holds", self.holds)] if self.holds else []),
                ("re-try", "--include-known-failures (sessions, invoke plan; CI: "
                 + ", ".join(RETRY_TRIGGERS) + ")")]
        return rows


@functools.lru_cache(maxsize=4096)  # pure; asked for every entry x build x field of a matrix
def _in(spec: str, version: str) -> bool:
    if not spec:
        return True
    try:
        return Version(version) in SpecifierSet(spec)
    except InvalidVersion:
        return False


# ----------------------------------------------------------------------------- loading
def load(file: Path, builds: Sequence[Build], packages: Sequence[str],
         family_targets: Mapping[str, tuple[str, ...]],
         known_targets: Sequence[str]) -> tuple[KnownFailure, ...]:
    """The entries of ``file`` (none when it does not exist), checked against the matrix."""
    if not file.is_file():
        return ()
    doc = read_toml(file)
    check(SCHEMA, doc, file, {"packages": sorted(packages), "families": sorted(family_targets),
                              "targets": list(known_targets)})
    out: list[KnownFailure] = []
    for name, t in doc.get("failures", {}).items():
        where = f'failures."{name}"'
        if "test" in t and t["fails"] != "smoke":
            fail(file, f"{where}.test", "names a smoke test; valid only with fails = \"smoke\"")
        if "@" in t["evidence"] and "holds" not in t:
            fail(file, f"{where}.holds", "is missing: evidence owner/repo@COMMIT FILE needs "
                 "`holds`, a regular expression of what FILE says (invoke upstream re-reads it)")
        fams, gfx = tuple(t.get("families", ())), tuple(t.get("gfx", ()))
        targets = tuple(dict.fromkeys([g for f in fams for g in family_targets[f]] + list(gfx)))
        entry = KnownFailure(
            name, t["package"], t["fails"], t["reason"], t["evidence"], t.get("versions", ""),
            t.get("rocm", ""), t.get("torch", ""), tuple(t.get("python", ())), fams, gfx,
            targets, t.get("platform", BUILD_PLATFORM), t.get("test"), t.get("holds", ""))
        if entry.platform != BUILD_PLATFORM:
            fail(file, f"{where}.platform", f"{entry.platform!r} selects no build: the matrix "
                 f"builds {BUILD_PLATFORM} wheels only (keep such an entry out of this file)")
        if not any(entry.selects(b) for b in builds):
            fail(file, where, f"its selector ({entry.scope}) matches no build of the matrix; "
                 "`invoke matrix --format json` lists them")
        out.append(entry)
    return tuple(out)


# ----------------------------------------------------------------------------- using
def for_build(entries: Iterable[KnownFailure], build: Build,
              targets: Iterable[str] | None = None) -> list[KnownFailure]:
    """The entries selecting ``build``; with ``targets``, only those for these targets."""
    if targets is None:
        return [e for e in entries if e.selects(build)]
    wanted = tuple(targets)
    return [e for e in entries if e.applies(build, wanted)]


def check_trigger(trigger: str, include: bool) -> None:
    """``--include-known-failures`` is for the triggers that re-try (a ``UsageError`` else)."""
    if include and trigger not in RETRY_TRIGGERS:
        raise UsageError(f"--include-known-failures applies to the triggers "
                         f"{', '.join(RETRY_TRIGGERS)}, not {trigger!r}: CI selection stays "
                         "positive on every other trigger")


def verdict(entry: KnownFailure, planned: Sequence[str], failed_step: str | None,
            error: str | None, test_outcome: str | None = None) -> str:
    """A run of a known failure, judged: ``xfail`` (it failed where expected), ``xpass`` (it
    did not fail), ``failed`` (it failed elsewhere) or ``not reached`` (the expected step was
    not planned, e.g. smoke with --no-smoke, and nothing failed).

    An entry naming a smoke ``test`` is judged by that test's outcome in the smoke run's JUnit
    (``test_outcome``: passed, failed, error, skipped; None when the run did not report it):
    failed or error is ``xfail``, passed is ``xpass``, skipped or unreported is ``not
    reached`` (a GPU test skips without a GPU: it did not pass) unless the run failed."""
    if entry.test and entry.fails in planned:
        if test_outcome in ("failed", "error"):
            return XFAIL
        if test_outcome == "passed":
            return XPASS
        if test_outcome is None and error is not None and failed_step == entry.fails \
                and entry.test in error:
            return XFAIL  # no JUnit, but the smoke step named the test that failed
        return NOT_REACHED if error is None else FAILED
    if error is None:
        return XPASS if entry.fails in planned else NOT_REACHED
    if failed_step != entry.fails:
        return FAILED
    return XFAIL


def upstream_refs(entries: Iterable[KnownFailure]) -> list[tuple[str, str, str, str, str]]:
    """(entry id, "issue" | "commit", owner/repo, number or commit, file or "") of every
    piece of evidence: what ``invoke upstream`` re-reads to report stale entries."""
    out: list[tuple[str, str, str, str, str]] = []
    for e in entries:
        for part in e.evidence.split("; "):
            m = _EVIDENCE.fullmatch(part)
            if m is None:  # pragma: no cover - load() checked it
                continue
            repo = part.split("#")[0] if m.group("issue") else part.split("@")[0]
            if m.group("issue"):
                out.append((e.id, "issue", repo, m.group("issue"), ""))
            else:
                out.append((e.id, "commit", repo, m.group("commit"), m.group("file")))
    return out
