"""Typed actions on the wheel: build it, check its name and version, name it, check it, smoke-
test it and publish it."""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.core.command import Command


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


@dataclass(frozen=True)
class ExpectWheel:
    """The one wheel in ``wheelhouse`` must be distribution ``dist`` at ``version``."""

    wheelhouse: str
    dist: str  # normalized (PEP 503), e.g. fbgemm_gpu_rocm
    version: str  # e.g. 1.5.0, or 1.8.0+rocm7.0.git{SHA8}
    # the Python and ABI tags it must carry ("cp39-abi3": one wheel for many Pythons); "" any
    tags: str = ""

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        tagged = f", tagged {self.tags}" if self.tags else ""
        return [f"the one wheel in {self.wheelhouse} must be {self.dist} {self.version}{tagged}"]
