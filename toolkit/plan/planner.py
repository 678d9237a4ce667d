"""The build plan: a pure function from (build, options, host facts, layout) to steps.

``plan()`` does no I/O. Each ``Step`` carries the exact argv, the environment variables the
toolkit sets (on top of the inherited environment), the ones it removes, and the working
directory. Values may contain placeholders (``{ROCM_ROOT}``, ``{SHA}``, ``{SHA8}``,
``{TORCH_LIB}``, ``{PATH}``) that earlier steps learn at execution time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolkit.core.errors import UsageError
from toolkit.data.matrix import Build, Matrix
from toolkit.env.buildenv import RocmPaths, build_env
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout

if TYPE_CHECKING:
    from toolkit.plan.locks import LockRef

STEP_NAMES = (
    "create-env",
    "install-rocm-sdk",
    "rocm-sdk-test",
    "install-torch",
    "get-sources",
    "preflight",
    "install-requirements",
    "build-wheel",
    "name-wheel",
    "check",
    "install-wheel",
    "smoke",
)

PLACEHOLDER_HELP = {
    "{ROCM_ROOT}": "python -m rocm_sdk path --root (after install-rocm-sdk)",
    "{ROCM_BIN}": "python -m rocm_sdk path --bin (after install-rocm-sdk)",
    "{ROCM_CMAKE}": "python -m rocm_sdk path --cmake (after install-rocm-sdk)",
    "{SHA}": "the source commit (after get-sources)",
    "{SHA8}": "its first 8 hex digits",
    "{TORCH_LIB}": "the installed torch's lib/ folder (after install-torch)",
    "{WHEEL}": "the named wheel (after name-wheel)",
    "{LDSHARED}": "the env interpreter's LDSHARED minus absolute -Wl,-rpath flags",
    "{PATH}": "the inherited PATH",
}


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]
    description: str
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    unset: tuple[str, ...] = ()
    cwd: str | None = None
    echo: bool = False  # also show the step's output on the console (e.g. smoke results)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "argv": list(self.argv),
            "env": dict(self.env),
            "unset": list(self.unset),
            "cwd": self.cwd,
        }


@dataclass(frozen=True)
class Options:
    gfx: tuple[str, ...] = ()  # expanded gfx ids; empty = the ROCm release's default family
    rocm_from: str | None = None  # "pip" | "system"; None = the matrix default
    index_url: str | None = None  # override the SDK index (tests: http://127.0.0.1:PORT/)
    find_links: tuple[str, ...] = ()
    family: str | None = None  # SDK family for a per-family index
    source: str | None = None  # a contributor's checkout, used instead of the mirror
    naming: str = "toolkit"  # "toolkit" | "upstream"
    smoke: bool = True
    no_lock: bool = False  # ignore locks/<py>-rocm<rocm>.txt
    allow_insecure_index: bool = False  # plain http:// to a non-loopback index
    allow_rocm_mismatch: bool = False  # system ROCm version differs from the session's
    rocm_sdk_test: bool = False  # run `rocm-sdk test` after installing the pip SDK
    locks: tuple[LockRef, ...] = ()  # lock files found by the caller (toolkit.plan.locks.read_locks)


@dataclass(frozen=True)
class Plan:
    build: Build
    targets: tuple[str, ...]
    family: str | None
    steps: tuple[Step, ...]
    source: str | None = None  # a contributor's checkout (copied, never modified)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise UsageError(f"unknown step {name!r}; valid: {', '.join(s.name for s in self.steps)}")

    def as_json(self) -> dict[str, Any]:
        return {
            "build": self.build.as_json(),
            "targets": list(self.targets),
            "family": self.family,
            "steps": [s.as_json() for s in self.steps],
        }

    def to_json(self) -> str:
        from toolkit.core.urls import mask

        return mask(json.dumps(self.as_json(), indent=2, sort_keys=False))


@dataclass(frozen=True)
class Context:
    """What a recipe needs to plan its own steps."""

    build: Build
    options: Options
    host: HostFacts
    layout: Layout
    targets: tuple[str, ...]
    rocm: RocmPaths
    base_env: Mapping[str, str]
    toolkit_python: str = "python"

    @property
    def env_python(self) -> str:
        return str(self.layout.env_python(self.build))

    @property
    def source_dir(self) -> str:
        return str(self.layout.worktree(self.build))

    @property
    def wheelhouse(self) -> str:
        return str(self.layout.build_dir(self.build) / "wheelhouse")

    @property
    def local_version(self) -> str:
        """``+rocm7.0git{SHA8}``: the toolkit's local version label."""
        rocm = self.build.rocm.version
        return ("cpu" if rocm == "cpu" else f"rocm{rocm}") + "git{SHA8}"

    def uv_pip(self, *args: str) -> tuple[str, ...]:
        return (self.host.uv, "pip", "install", "--python", self.env_python, *args)


def plan(
    matrix: Matrix,
    build: Build,
    options: Options,
    host: HostFacts,
    layout: Layout,
    *,
    toolkit_python: str = "python",
) -> Plan:
    from toolkit.plan.recipes import recipe_for

    recipe = recipe_for(build.package.recipe)
    from toolkit.plan.provision import provision_steps

    targets = options.gfx or matrix.family_targets[build.rocm.default_family]
    steps, rocm_paths, family = provision_steps(matrix, build, options, host, layout)
    env_dir = layout.env_dir(build)

    if options.source:
        steps.append(Step("get-sources", ("git", "-C", options.source, "rev-parse", "HEAD"),
                          f"use the contributor's checkout {options.source} (copied, never modified)"))
    else:
        mirror = str(layout.mirror(build.package.name))
        steps.append(Step(
            "get-sources",
            ("git", "-C", mirror, "worktree", "add", "--force", "--detach",
             str(layout.worktree(build)), build.pkg_version.ref),
            f"fresh worktree of {build.package.repo} at {build.pkg_version.ref} "
            f"(mirror {mirror})",
        ))

    base_env = build_env(
        rocm=rocm_paths,
        targets=targets,
        rocm_version=build.rocm.version,
        env_bin=str(env_dir / "bin"),
        torch_extensions_dir=str(layout.build_dir(build) / "torch_extensions"),
        host=host,
    )
    # Never let the interpreter's own build rpath leak into extensions (pyenv Pythons do).
    base_env["LDSHARED"] = "{LDSHARED}"
    ctx = Context(build, options, host, layout, tuple(targets), rocm_paths,
                  MappingProxyType(base_env), toolkit_python)
    if build.rocm.sdk.provider == "none":  # CPU variant: no ROCm at all
        steps = [s for s in steps if s.name != "install-rocm-sdk"]
    steps.extend(recipe.build_steps(ctx))

    dest = str(layout.dist(build))
    label = ("--rocm", build.rocm.version, "--sha", "{SHA}", "--naming", options.naming)
    steps.append(Step(
        "name-wheel",
        (toolkit_python, "-m", "toolkit", "name-wheel", *label, "--dest", dest, ctx.wheelhouse),
        f"name the wheel {build.package.dist}-{build.version}+{ctx.local_version}-... "
        f"and move it atomically into {dest}",
    ))
    check = [toolkit_python, "-m", "toolkit", "check", "{WHEEL}"]
    if recipe.carries_gpu_code(build):
        check += ["--gfx", ",".join(targets)]
    if recipe.needs_torch:
        check += ["--with", "{TORCH_LIB}"]
    for sym in recipe.required_symbols(build.pkg_version):
        check += ["--require-symbol", sym]
    steps.append(Step("check", tuple(check),
                      "symbol, GLIBCXX, GPU-code and hygiene checks (fail on findings)"))
    if options.smoke:
        steps.append(Step(
            "install-wheel",
            ctx.uv_pip("--no-deps", "--reinstall", "{WHEEL}"),
            "install the named wheel into the build's environment",
        ))
        steps.append(Step(
            "smoke",
            (toolkit_python, "-m", "toolkit", "smoke", "--env", str(layout.env_dir(build)),
             "--build", build.id, "--gfx", ",".join(targets), "--workdir", str(layout.root)),
            "smoke tests against the installed wheel (GPU tests skip without a GPU, with the reason)",
            echo=True,
        ))
    return Plan(build, tuple(targets), family, tuple(steps), options.source)


def render(p: Plan) -> str:
    """Human-readable plan: each step's cwd, env assignments and argv, shell-quoted."""
    import shlex

    lines = [f"# plan for {p.build.id}  (targets: {', '.join(p.targets)})"]
    used: set[str] = set()
    for i, step in enumerate(p.steps, 1):
        lines.append(f"\n[{i}/{len(p.steps)}] {step.name}: {step.description}")
        if step.cwd:
            lines.append(f"    cd {shlex.quote(step.cwd)}")
        for var in step.unset:
            lines.append(f"    unset {var}")
        for key, value in step.env.items():
            lines.append(f"    {key}={shlex.quote(value)}")
        lines.append("    " + " ".join(shlex.quote(a) for a in step.argv))
        text = " ".join([*step.argv, *step.env.values()])
        used.update(ph for ph in PLACEHOLDER_HELP if ph in text)
    if used:
        lines.append("\n# placeholders filled while running:")
        lines.extend(f"#   {ph} = {PLACEHOLDER_HELP[ph]}" for ph in PLACEHOLDER_HELP if ph in used)
    from toolkit.core.urls import mask

    return mask("\n".join(lines))
