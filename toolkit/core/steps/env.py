"""Typed actions that make the build environment: probe the indexes, reuse or create the
virtual environment, install the ROCm SDK (or use the system ROCm) and torch, provide a library
the build links, and stamp the environment ready."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from toolkit.core.command import Command


def _mismatch_note(allowed: bool) -> str:
    """What ``--allow-rocm-mismatch`` changes, said after the version rule."""
    return " (a mismatch only warns: --allow-rocm-mismatch)" if allowed else ""


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
                + _mismatch_note(self.allow_mismatch)]


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
                + _mismatch_note(self.allow_mismatch)]


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
class ProvideLibrary:
    """A library the build links (shared object and headers): ``install`` it, then check it
    is there before the build starts and learn ``<NAME>_LIB_DIR`` (``{TBB_LIB_DIR}``)."""

    install: Command | None
    source: str  # where it comes from: "pypi tbb-devel==2022.2.0", "system"
    name: str  # "tbb": libtbb.so, placeholder {TBB_LIB_DIR}
    headers: tuple[str, ...]  # any one of them must exist: "tbb/tbb.h", "oneapi/tbb.h"
    lib_dirs: tuple[str, ...]
    include_dirs: tuple[str, ...]
    why: str = ""  # why the build needs it, for the failure message

    @property
    def library(self) -> str:
        return f"lib{self.name}.so"

    @property
    def placeholder(self) -> str:
        return f"{{{self.name.upper()}_LIB_DIR}}"

    def command(self) -> Command | None:
        return self.install

    def explain(self) -> list[str]:
        return [f"then {self.library} must be in one of {', '.join(self.lib_dirs)} and "
                f"{' or '.join(self.headers)} in one of {', '.join(self.include_dirs)} (else "
                f"fail before the build); learn {self.placeholder.strip('{}')}"]
