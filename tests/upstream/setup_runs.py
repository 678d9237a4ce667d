"""Run an upstream setup.py under the recording doubles with a planned build-wheel step's
argv and environment (placeholders filled with stand-in values)."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.steps import Step
from toolkit.data.matrix import Build

HERE = Path(__file__).parent
SHA = "0123abcd" + "9" * 32  # the source commit a build learns (stand-in)


@dataclass
class SetupRun:
    events: list[dict[str, Any]] = field(default_factory=list)

    def phase(self, name: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        current = None
        for e in self.events:
            if e["kind"] == "phase":
                current = e["phase"]
            elif current == name:
                out.append(e)
        return out

    def setup(self, phase: str = "wheel") -> dict[str, Any]:
        calls = [e for e in self.phase(phase) if e["kind"] == "setup"]
        problems = [e for e in self.phase(phase) if e["kind"] in ("error", "exit")]
        assert len(calls) == 1, f"setup() was not reached ({phase}): {problems or self.events}"
        return calls[0]

    def submodule_updates(self) -> list[str]:
        return [e["argv"][-1].rstrip("/") for e in self.events
                if e["kind"] == "subprocess" and e["argv"][:2] == ["git", "submodule"]]


def config_settings(argv: tuple[str, ...]) -> dict[str, list[str]]:
    """What ``python -m build`` makes of ``-CKEY=VALUE`` / ``--config-setting=KEY=VALUE``:
    each key maps to the list of its values, in order."""
    out: dict[str, list[str]] = {}
    for arg in argv:
        for prefix in ("--config-setting=", "-C"):
            if arg.startswith(prefix):
                key, _, value = arg[len(prefix):].partition("=")
                out.setdefault(key, []).append(value)
                break
    return out


def fake_rocm(root: Path, hip: str) -> Path:
    """A ROCm root whose bin/hipcc reports HIP ``hip`` (apex parses `hipcc --version`)."""
    hipcc = root / "bin" / "hipcc"
    hipcc.parent.mkdir(parents=True, exist_ok=True)
    hipcc.write_text(f"#!/bin/sh\necho 'HIP version: {hip}.51831-0000000'\n")
    hipcc.chmod(hipcc.stat().st_mode | stat.S_IEXEC)
    return root


def fill(value: str, values: Mapping[str, str]) -> str:
    for key, val in values.items():
        value = value.replace("{" + key + "}", val)
    return value


def run_setup(build: Build, step: Step, setup_dir: Path, tmp: Path, *, tag: str = "",
              extra_env: Mapping[str, str] | None = None) -> SetupRun:
    """Run ``setup_dir``'s setup.py as ``step`` (a planned build-wheel) would, to setup()."""
    rocm = fake_rocm(tmp / "rocm", build.rocm.hip)
    values = {"ROCM_ROOT": str(rocm), "ROCM_BIN": str(rocm / "bin"),
              "ROCM_CMAKE": str(rocm / "lib" / "cmake"), "PATH": os.environ.get("PATH", ""),
              "SHA": SHA, "SHA8": SHA[:8], "SOURCE_DATE_EPOCH": "0",
              "TBB_LIB_DIR": str(tmp / "tbb" / "lib")}
    env = {k: v for k, v in os.environ.items() if k not in step.unset}
    for key, value in step.env.items():
        if key != "LDSHARED":
            env[key] = fill(value, values)
    torch = build.pkg_version.torch
    env.update({
        "PYTHONPATH": str(HERE / "doubles"),
        "UPSTREAM_RECORD": str(tmp / "record.jsonl"),
        "UPSTREAM_ROCM_HOME": str(rocm),
        "UPSTREAM_TORCH_VERSION": f"{torch}{'.0' if torch.count('.') == 1 else ''}"
                                  f"+rocm{build.rocm.version}",
        "UPSTREAM_TORCH_HIP": f"{build.rocm.hip}.51831",
        "UPSTREAM_GIT_TAG": tag,
        **(extra_env or {}),
    })
    cfg = {"dir": str(setup_dir), "outdir": str(tmp / "out"),
           "config_settings": config_settings(step.argv),
           "unimportable": ["apex"] if build.package.name == "apex" else []}
    res = subprocess.run([sys.executable, str(HERE / "harness.py"), json.dumps(cfg)], env=env,
                         capture_output=True, text=True, timeout=600, check=False)
    record = tmp / "record.jsonl"
    events = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    assert res.returncode == 0, f"harness failed: {shlex.join(step.argv)}\n{res.stderr[-3000:]}"
    return SetupRun(events)
