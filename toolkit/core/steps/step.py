"""A ``Step``: a name, a description and one action (``toolkit.core.steps``), with the table
of action kinds the executor and the manifest read."""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolkit.core.command import EMPTY, Command
from toolkit.core.command import quote_argv as _q
from toolkit.core.steps.env import (
    CheckEnv,
    CreateEnv,
    InstallSdk,
    InstallTorch,
    MarkEnvReady,
    ProbeIndexes,
    ProvideLibrary,
    UseSystemRocm,
)
from toolkit.core.steps.sources import CopySources, FetchSources, FetchSubmodules
from toolkit.core.steps.variants import BuildVariant, MakeVariant, PublishVariant
from toolkit.core.steps.wheel import BuildWheel, CheckWheel, ExpectWheel, NameWheel, Publish, Smoke

Action = (Command | CheckEnv | ProbeIndexes | CreateEnv | InstallSdk | UseSystemRocm | InstallTorch
          | MarkEnvReady | FetchSources | FetchSubmodules | CopySources | ProvideLibrary | BuildWheel
          | ExpectWheel | NameWheel | CheckWheel | Smoke | Publish | BuildVariant | MakeVariant
          | PublishVariant)

KIND: dict[type, str] = {
    Command: "run", CheckEnv: "check-env", ProbeIndexes: "probe-indexes",
    CreateEnv: "create-env",
    InstallSdk: "install-sdk", UseSystemRocm: "use-system-rocm", InstallTorch: "install-torch",
    MarkEnvReady: "mark-env-ready", FetchSources: "fetch-sources", CopySources: "copy-sources",
    FetchSubmodules: "fetch-submodules", ProvideLibrary: "provide-library", ExpectWheel: "expect-wheel",
    BuildWheel: "build-wheel", NameWheel: "name-wheel", CheckWheel: "check", Smoke: "smoke",
    Publish: "publish", BuildVariant: "build-variant", MakeVariant: "make-variant",
    PublishVariant: "publish-variant",
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
