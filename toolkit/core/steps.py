"""Typed steps: what a build does, every input a field, nothing left to guess.

A ``Step`` is a name, a description and one *action*. Each action is a frozen dataclass
carrying every input its execution needs; the executor (``toolkit.run.executor``) dispatches
on the action's type through one explicit table. What an action does beyond running its
command (reusing an environment, probing an index, removing a stale folder, learning a path)
is part of its definition and shown by ``explain()``, so ``--dry-run`` is the whole truth.

Values may hold placeholders (``{ROCM_ROOT}``, ``{SHA8}``, ``{WHEEL}`` ...) that an earlier
action *learns* at execution time (``PLACEHOLDER_HELP`` names the step that learns each).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolkit.core.command import EMPTY as EMPTY
from toolkit.core.command import Command as Command
from toolkit.core.command import quote_argv as _q
from toolkit.core.steps_more import ExpectWheel as ExpectWheel
from toolkit.core.steps_more import FetchSubmodules as FetchSubmodules
from toolkit.core.steps_more import ProvideLibrary as ProvideLibrary
from toolkit.core.steps_more import Submodule as Submodule

PLACEHOLDER_HELP = {
    "{ROCM_ROOT}": "python -m rocm_sdk path --root (learned by install-rocm-sdk)",
    "{ROCM_BIN}": "python -m rocm_sdk path --bin (learned by install-rocm-sdk)",
    "{ROCM_CMAKE}": "python -m rocm_sdk path --cmake (learned by install-rocm-sdk)",
    "{SHA}": "the source commit (learned by get-sources)",
    "{SHA8}": "its first 8 hex digits",
    "{SOURCE_DATE_EPOCH}": "the source commit's time (learned by get-sources; 0 outside git)",
    "{TORCH_LIB}": "the installed torch's lib/ folder (learned by install-torch)",
    "{WHEEL}": "the named wheel in the build's staging folder (learned by name-wheel)",
    "{LDSHARED}": "the env interpreter's LDSHARED minus absolute -Wl,-rpath flags (build-wheel)",
    "{LDCXXSHARED}": "the env interpreter's LDCXXSHARED minus absolute -Wl,-rpath flags "
                     "(build-wheel)",
    "{PYTHON_PREFIX_MAP}": "-ffile-prefix-map=<the interpreter's prefix>=/python, quoted for "
                           "setuptools, hipcc and CMake (build-wheel)",
    "{TOOLS_PATH}": "the folders of the interpreter and uv (learned by check-env)",
    "{INTERPRETER}": "the Python interpreter found for the build (learned by check-env)",
    "{<NAME>_LIB_DIR}": "the folder holding lib<name>.so (learned by a ProvideLibrary step)",
    "{PATH}": "the inherited PATH",
    "{MANIFEST}": "the manifest this run writes (artifacts/<id>/manifest.json; a repro's "
                  "repro-manifest.json)",
}


@dataclass(frozen=True)
class IndexProbe:
    url: str
    project: str | None  # the project the index must serve (None: only reachable)
    what: str  # "ROCm SDK index", "torch index", "find-links location"


@dataclass(frozen=True)
class ProbeIndexes:
    """Fail fast, in one line, when an index is unreachable or lacks its project."""

    probes: tuple[IndexProbe, ...]
    timeout: float = 10.0

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        return [f"probe {p.what} {p.url}" + (f" for project {p.project!r}" if p.project else "")
                for p in self.probes]


@dataclass(frozen=True)
class CheckEnv:
    """Decide whether the build environment can be reused.

    The interpreter is resolved (PATH, pyenv, /opt/python, uv) unless it is a path. The
    environment's digest is ``definition`` (the planned provisioning steps) plus the
    interpreter really used plus the lock file's content; when ``env_dir``'s stamp holds that
    digest (and the ROCm root it recorded still exists), every step marked ``reuse_env`` is
    skipped and the values the stamp recorded are learned again.
    """

    env_dir: str
    python: str  # "3.12", "3.13t"
    interpreter: str  # a path, or a name looked up at execution
    definition: str  # sha256 of the planned provisioning steps
    lock: str | None = None

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        return [f"resolve {self.interpreter}; learn INTERPRETER and TOOLS_PATH",
                f"reuse {self.env_dir} when its stamp .toolkit-env.json matches (definition "
                f"{self.definition[:12]}, interpreter"
                + (f", lock {self.lock}" if self.lock else "") + ")"]


@dataclass(frozen=True)
class CreateEnv:
    """Remove the environment (stamp first) and create it with ``uv venv --seed``."""

    env_dir: str
    uv: str

    def command(self) -> Command:
        return Command((self.uv, "venv", "--seed", "--python", "{INTERPRETER}", self.env_dir),
                       env=MappingProxyType({"UV_PYTHON_DOWNLOADS": "never"}))

    def explain(self) -> list[str]:
        return [f"rm {self.env_dir}/.toolkit-env.json; rm -rf {self.env_dir}"]


@dataclass(frozen=True)
class InstallSdk:
    """Install TheRock's ROCm SDK with ``install``, then learn its paths through its CLI."""

    install: Command
    python: str  # the environment's python (runs `-m rocm_sdk path/version/targets`)
    rocm: str  # the session's ROCm release (the SDK version must match it)
    allow_mismatch: bool = False

    def command(self) -> Command:
        return self.install

    def explain(self) -> list[str]:
        return [f"then {self.python} -m rocm_sdk path --root/--bin/--cmake, version, targets; "
                f"its version must be ROCm {self.rocm}"
                + (" (a mismatch only warns: --allow-rocm-mismatch)" if self.allow_mismatch else "")]


@dataclass(frozen=True)
class UseSystemRocm:
    """Use a ROCm install on the host: verify ``root`` exists and its version matches."""

    root: str
    rocm: str
    allow_mismatch: bool = False

    def command(self) -> Command:
        return Command((f"{self.root}/bin/hipconfig", "--version"))

    def explain(self) -> list[str]:
        return [f"read the version of {self.root} (.info/version, hip_version.h, hipconfig); "
                f"its major.minor must match {self.rocm}"
                + (" (a mismatch only warns: --allow-rocm-mismatch)" if self.allow_mismatch else "")]


@dataclass(frozen=True)
class InstallTorch:
    """Install torch with ``install``; torch.version.hip must be ``hip``; learn TORCH_LIB."""

    install: Command
    python: str
    hip: str
    rocm: str
    allow_mismatch: bool = False

    def command(self) -> Command:
        return self.install

    def explain(self) -> list[str]:
        return [f"then torch.version.hip major.minor must be {self.hip}; learn TORCH_LIB"]


@dataclass(frozen=True)
class MarkEnvReady:
    """Write ``env_dir``'s stamp (atomically) with what provisioning learned."""

    env_dir: str

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        return [f"write {self.env_dir}/.toolkit-env.json (the environment is ready)"]


@dataclass(frozen=True)
class FetchSources:
    """A fresh worktree of ``repo`` at ``ref`` from a shared mirror (cloned once, locked)."""

    repo: str
    ref: str
    mirror: str
    worktree: str

    def command(self) -> Command:
        return Command(("git", "-C", self.mirror, "worktree", "add", "--force", "--detach",
                        self.worktree, self.ref))

    def explain(self) -> list[str]:
        return [f"git clone --mirror {self.repo} {self.mirror} unless it exists; "
                f"git fetch --prune when {self.ref} is missing",
                f"git worktree remove --force {self.worktree}; rm -rf {self.worktree}; "
                "git worktree prune",
                "learn SHA (git rev-parse HEAD) and SOURCE_DATE_EPOCH (its commit time)"]


@dataclass(frozen=True)
class CopySources:
    """Copy a contributor's checkout (never modified) into the build's worktree."""

    source: str
    worktree: str

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        return [f"rm -rf {self.worktree}; copy {self.source} there (without .git, build, dist, "
                "*.egg-info, __pycache__, .nox)",
                f"learn SHA and SOURCE_DATE_EPOCH from git -C {self.source} (0 outside git) "
                "and TREE, the hash of the copied files",
                "uncommitted changes there (git diff HEAD, untracked files not ignored): "
                "refused (exit 12) unless --allow-dirty, then learn DIFF, their sha256 (the "
                "wheel is named +...dirty)"]


@dataclass(frozen=True)
class BuildWheel:
    """Build the wheel into ``wheelhouse`` with ``build``, unless nothing it depends on changed.

    The build key hashes the worktree, the resolved command and environment, the
    environment's stamp and the earlier steps; it is kept in ``wheelhouse/.build-key``.
    """

    build: Command
    wheelhouse: str
    worktree: str
    env_dir: str
    sanitize_ldshared: str | None = None  # the python whose LDSHARED fills {LDSHARED}
    force: bool = False

    def command(self) -> Command:
        return self.build

    def explain(self) -> list[str]:
        lines = []
        if self.sanitize_ldshared:
            lines.append(f"{{LDSHARED}}, {{LDCXXSHARED}} = LDSHARED, LDCXXSHARED of "
                         f"{self.sanitize_ldshared} without absolute -Wl,-rpath flags; "
                         "{PYTHON_PREFIX_MAP} maps its prefix to /python")
        if self.force:
            lines.append(f"rm -rf {self.wheelhouse} (--rebuild)")
        else:
            lines.append(f"skipped when {self.wheelhouse}/.build-key matches (sources, command, "
                         f"environment unchanged); otherwise rm -rf {self.wheelhouse}")
        return lines


@dataclass(frozen=True)
class NameWheel:
    """Rename the one wheel in ``wheelhouse`` (+rocm<r>git<sha8>) into ``staging``."""

    wheelhouse: str
    staging: str
    rocm: str
    naming: str  # "toolkit" | "upstream"

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        label = ("the upstream name kept" if self.naming == "upstream"
                 else f"local label +{'cpu' if self.rocm == 'cpu' else 'rocm' + self.rocm}git{{SHA8}}")
        return [f"rm -rf {self.staging}; write the wheel of {self.wheelhouse} there "
                f"({label}; METADATA, dist-info and RECORD rewritten; members sorted, "
                "times SOURCE_DATE_EPOCH, modes 0644/0755); learn WHEEL"]


@dataclass(frozen=True)
class CheckWheel:
    """The wheel checks (``python -m toolkit check``): any finding fails the build."""

    toolkit_python: str
    wheel: str
    cwd: str  # outside any source checkout: the installed toolkit is the one that runs
    gfx: tuple[str, ...] = ()
    with_libs: tuple[str, ...] = ()
    require_symbols: tuple[str, ...] = ()

    def command(self) -> Command:
        argv = [self.toolkit_python, "-m", "toolkit", "check", self.wheel]
        if self.gfx:
            argv += ["--gfx", ",".join(self.gfx)]
        for lib in self.with_libs:
            argv += ["--with", lib]
        for sym in self.require_symbols:
            argv += ["--require-symbol", sym]
        return Command(tuple(argv), cwd=self.cwd)

    def explain(self) -> list[str]:
        return []


SMOKE_JUNIT = "smoke-junit.xml"  # in the build's artifacts folder


@dataclass(frozen=True)
class Smoke:
    """The smoke suite in the build's environment against the installed wheel."""

    toolkit_python: str
    env_dir: str
    build_id: str
    gfx: tuple[str, ...]
    workdir: str
    cwd: str  # outside any source checkout: the installed toolkit is the one that runs

    def command(self) -> Command:
        # the JUnit XML beside the manifest: a smoke-level known failure is judged by its test
        return Command((self.toolkit_python, "-m", "toolkit", "smoke", "--env", self.env_dir,
                        "--build", self.build_id, "--manifest", "{MANIFEST}",
                        "--gfx", ",".join(self.gfx),
                        "--workdir", self.workdir, "--junit", f"{self.cwd}/{SMOKE_JUNIT}"),
                       cwd=self.cwd, echo=True)

    def explain(self) -> list[str]:
        return []


@dataclass(frozen=True)
class Publish:
    """Move the checked wheel into ``dest`` atomically; then remove earlier wheels there."""

    wheel: str
    dest: str

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        return [f"rename {self.wheel} into {self.dest}/ (atomic), then remove the other wheels "
                f"of {self.dest}/ (a +...dirty wheel: only the earlier dirty ones); learn WHEEL"]


Action = (Command | CheckEnv | ProbeIndexes | CreateEnv | InstallSdk | UseSystemRocm | InstallTorch
          | MarkEnvReady | FetchSources | FetchSubmodules | CopySources | ProvideLibrary | BuildWheel
          | ExpectWheel | NameWheel | CheckWheel | Smoke | Publish)

KIND: dict[type, str] = {
    Command: "run", CheckEnv: "check-env", ProbeIndexes: "probe-indexes",
    CreateEnv: "create-env",
    InstallSdk: "install-sdk", UseSystemRocm: "use-system-rocm", InstallTorch: "install-torch",
    MarkEnvReady: "mark-env-ready", FetchSources: "fetch-sources", CopySources: "copy-sources",
    FetchSubmodules: "fetch-submodules", ProvideLibrary: "provide-library", ExpectWheel: "expect-wheel",
    BuildWheel: "build-wheel", NameWheel: "name-wheel", CheckWheel: "check", Smoke: "smoke",
    Publish: "publish",
}

@dataclass(frozen=True)
class Step:
    name: str
    description: str
    action: Action
    reuse_env: bool = False  # skipped when create-env found the environment ready

    @property
    def kind(self) -> str:
        return KIND[type(self.action)]

    @property
    def provisions(self) -> bool:
        """Part of making the build environment (check-env and the steps it may skip)."""
        return self.reuse_env or isinstance(self.action, CheckEnv)

    @property
    def cmd(self) -> Command | None:
        return self.action.command()

    @property
    def argv(self) -> tuple[str, ...]:
        c = self.cmd
        return c.argv if c else ()

    @property
    def env(self) -> Mapping[str, str]:
        c = self.cmd
        return c.env if c else EMPTY

    @property
    def unset(self) -> tuple[str, ...]:
        c = self.cmd
        return c.unset if c else ()

    @property
    def cwd(self) -> str | None:
        c = self.cmd
        return c.cwd if c else None

    def explain(self) -> list[str]:
        return self.action.explain()

    def as_json(self) -> dict[str, Any]:
        fields = {f.name: _plain(getattr(self.action, f.name))
                  for f in dataclasses.fields(self.action)}
        return {
            "name": self.name,
            "description": self.description,
            "action": {"kind": self.kind, **fields},
            "does": self.explain(),
            "reuse_env": self.reuse_env,
            "argv": list(self.argv),
            "env": dict(self.env),
            "unset": list(self.unset),
            "cwd": self.cwd,
        }

    def render(self) -> list[str]:
        """Shell-like lines: what this step does, in the order it does it."""
        lines = [f"    # {line}" for line in self.explain() if not line.startswith("then ")]
        c = self.cmd
        if c is not None:
            if c.cwd:
                lines.append(f"    cd {shlex.quote(c.cwd)}")
            lines.extend(f"    unset {var}" for var in c.unset)
            lines.extend(f"    {k}={shlex.quote(v)}" for k, v in c.env.items())
            lines.append("    " + _q(c.argv))
        lines += [f"    # {line}" for line in self.explain() if line.startswith("then ")]
        if self.reuse_env:
            lines.append("    # skipped while the environment is reused")
        return lines

    def text(self) -> str:
        """Every string of the step (for placeholder and credential scans)."""
        c = self.cmd
        parts = [*self.explain()]
        if c is not None:
            parts += [*c.argv, *c.env.values(), c.cwd or ""]
        return " ".join(parts)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value
