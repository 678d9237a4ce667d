"""What a plan is made of: the options of a build, the context recipes plan in, the plan."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from toolkit.core.errors import UsageError, suggestion
from toolkit.core.step_names import BUILD_WHEEL
from toolkit.core.steps import PLACEHOLDER_HELP, BuildWheel, Command, ProvideLibrary, Step
from toolkit.core.urls import mask
from toolkit.core.versions import rocm_label
from toolkit.data.matrix import Build
from toolkit.env.buildenv import RocmPaths
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.locks import LockRef


@dataclass(frozen=True)
class Options:
    gfx: tuple[str, ...] = ()  # expanded gfx ids; empty = the ROCm release's default family
    rocm_from: str | None = None  # "pip" | "system"; None = the matrix default
    index_url: str | None = None  # override the SDK index (tests: http://127.0.0.1:PORT/)
    # TheRock's channel to install from (stable|prerelease|nightly|dev); None = the release's
    channel: str | None = None
    find_links: tuple[str, ...] = ()
    family: str | None = None  # SDK family for a per-family index
    source: str | None = None  # a contributor's checkout, used instead of the mirror
    naming: str = "toolkit"  # "toolkit" | "upstream"
    smoke: bool = True
    no_lock: bool = False  # ignore locks/<py>-rocm<rocm>.txt
    allow_insecure_index: bool = False  # plain http:// to a non-loopback index
    allow_rocm_mismatch: bool = False  # system ROCm version differs from the session's
    rocm_sdk_test: bool = False  # run `rocm-sdk test` after installing the pip SDK
    # the recipes' own options, "name=value" ("apex-ops=jit"; toolkit.plan.recipes.base.option)
    recipe_options: tuple[str, ...] = ()
    rebuild: bool = False  # build the wheel even when its build key is unchanged
    locks: tuple[LockRef, ...] = ()  # lock files found by the caller (toolkit.plan.locks.read_locks)
    # build a --source checkout with uncommitted changes (named +...dirty); else exit 12
    allow_dirty: bool = False
    # the caller found uncommitted changes in ``source`` (toolkit.env.project.source_changes):
    # the plan's text names the wheel +...dirty; never recorded (get-sources learns them again)
    dirty: bool = False
    # besides the fat wheel, one wheel variant per target (issue 31: toolkit/plan/variants.py)
    variants: bool = False


_NOT_RECORDED = ("locks", "dirty")  # found by the caller, not given by the user


def options_json(options: Options) -> dict[str, Any]:
    """The options as recorded in a manifest (lock files are recorded on their own)."""
    return {f.name: list(v) if isinstance(v := getattr(options, f.name), tuple) else v
            for f in dataclasses.fields(options) if f.name not in _NOT_RECORDED}


def options_from_json(data: Any) -> Options:
    """``options_json`` read back; unknown or ill-typed fields are a ``UsageError``."""
    if not isinstance(data, dict):
        raise UsageError("recorded options: expected a JSON object")
    known = {f.name: f for f in dataclasses.fields(Options) if f.name not in _NOT_RECORDED}
    values: dict[str, Any] = {}
    data = dict(data)
    if "apex_ops" in data:  # recorded before recipe options existed
        old = data.pop("apex_ops")
        data.setdefault("recipe_options", [f"apex-ops={old}"] if isinstance(old, str) else [])
    for key, value in data.items():
        if key not in known:
            raise UsageError(f"recorded options: unknown field {key!r}; valid: "
                             f"{', '.join(sorted(known))}", nearest=suggestion(key, known))
        values[key] = _recorded_value(key, value)
    return Options(**values)


def _recorded_value(key: str, value: Any) -> Any:
    """One recorded option, checked against the type of its default."""
    default = getattr(Options(), key)
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"recorded options: {key} must be a list of strings")
        return tuple(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise UsageError(f"recorded options: {key} must be true or false")
    elif not (value is None or isinstance(value, str)):
        raise UsageError(f"recorded options: {key} must be a string or null")
    return value


@dataclass(frozen=True)
class Plan:
    build: Build
    targets: tuple[str, ...]
    family: str | None
    steps: tuple[Step, ...]
    source: str | None = None  # a contributor's checkout (copied, never modified)
    options: Options | None = None  # what the plan was made from (recorded in manifests)
    channel: str | None = None  # TheRock's channel the SDK / torch install from (manifest: sdk)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        names = [s.name for s in self.steps]
        raise UsageError(f"unknown step {name!r}; valid: {', '.join(names)}",
                         nearest=suggestion(name, names))

    def as_json(self) -> dict[str, Any]:
        return {
            "build": self.build.as_json(),
            "targets": list(self.targets),
            "family": self.family,
            "steps": [s.as_json() for s in self.steps],
        }

    def to_json(self) -> str:
        return mask(json.dumps(self.as_json(), indent=2, sort_keys=False))


def render(p: Plan) -> str:
    """Human-readable plan: each step's description and what it does, shell-quoted."""
    lines = [f"# plan for {p.build.id}  (targets: {', '.join(p.targets)})"]
    used: set[str] = set()
    helps = dict(PLACEHOLDER_HELP)
    for step in p.steps:
        if isinstance(step.action, ProvideLibrary):
            helps[step.action.placeholder] = (f"the folder holding {step.action.library} "
                                              f"(learned by {step.name})")
    for i, step in enumerate(p.steps, 1):
        lines.append(f"\n[{i}/{len(p.steps)}] {step.name} ({step.kind}): {step.description}")
        lines.extend(step.render())
        text = step.text()
        used.update(ph for ph in helps if ph in text)
    if used:
        lines.append("\n# placeholders filled while running:")
        lines.extend(f"#   {ph} = {helps[ph]}" for ph in helps if ph in used)
    return mask("\n".join(lines))


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
        return rocm_label(self.build.rocm.version) + "git{SHA8}"

    def build_wheel(self, description: str, argv: tuple[str, ...], *, env: Mapping[str, str],
                    cwd: str, unset: tuple[str, ...] = ()) -> Step:
        """The build-wheel step: ``argv`` builds one wheel into ``self.wheelhouse``."""
        return Step(BUILD_WHEEL, description, BuildWheel(
            Command(argv, env=MappingProxyType(dict(env)), unset=unset, cwd=cwd),
            self.wheelhouse, self.source_dir, str(self.layout.env_dir(self.build)),
            sanitize_ldshared=self.env_python if "{LDSHARED}" in env.values() else None,
            force=self.options.rebuild))

    def uv_pip(self, *args: str, cwd: str | None = None) -> Command:
        return Command((self.host.uv, "pip", "install", "--python", self.env_python, *args),
                       cwd=cwd)
