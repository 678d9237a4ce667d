"""A fresh runner: rebuild a build's environment from its manifest, then install its wheel.

A CI test job (or a contributor) has ``dist/<id>/`` and ``artifacts/<id>/`` and an empty
cache. The environment is planned again from the manifest's recorded inputs (its commands are
never run), here, under this machine's work folder and cache: the provisioning steps (with
the lock files of the work folder, as the build used them), then the published wheel, whose
sha256 must be the recorded one, installed without dependencies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolkit.core.errors import UsageError
from toolkit.core.files import sha256_file
from toolkit.core.reporter import Reporter
from toolkit.core.steps import Command, Step
from toolkit.plan.layout import Layout


def published_wheel(data: dict[str, Any], layout: Layout, build_id: str) -> Path:
    """The wheel the manifest records, in this work folder's ``dist/<id>/``, unchanged."""
    name = data.get("wheel")
    if not isinstance(name, str) or not name:
        raise UsageError(f"the manifest of {build_id} records no wheel (outcome "
                         f"{data.get('outcome')}): nothing to smoke-test")
    wheel = layout.root / "dist" / build_id / Path(name).name
    if not wheel.is_file():
        raise UsageError(f"{wheel} is not here; the manifest of {build_id} names it",
                         hint="download the build's dist/ artifact next to artifacts/")
    if sha256_file(wheel) != data.get("wheel_sha256"):
        raise UsageError(f"{wheel} is not the wheel the manifest records (sha256 differs)")
    return wheel


def usable_manifest(path: Path, layout: Layout, build_id: str) -> dict[str, Any] | None:
    """The manifest at ``path`` when it is complete and its published wheel is in this work
    folder's ``dist/<id>/`` (an environment can be made for it), else None."""
    from toolkit.core.errors import ToolkitError
    from toolkit.run.manifest import load

    try:
        data = load(path)
    except ToolkitError:
        return None
    name = data.get("wheel")
    dist = layout.root / "dist" / build_id
    return data if isinstance(name, str) and (dist / Path(name).name).is_file() else None


def prepare(data: dict[str, Any], manifest_path: Path, layout: Layout,
            reporter: Reporter) -> Path:
    """Provision the build's environment here and install its wheel; the environment."""
    from toolkit.plan.model import Plan
    from toolkit.run import executor, jobs
    from toolkit.verify.repro import reconstruct

    plan, _ = reconstruct(data, layout=layout)  # this machine's work folder and cache
    wheel = published_wheel(data, layout, plan.build.id)
    env_python = str(layout.env_python(plan.build))
    steps = [s for s in plan.steps if s.provisions]
    uv = next((getattr(s.action, "uv", None) for s in steps if s.kind == "create-env"), "uv")
    steps.append(Step("install-wheel", f"install the published wheel {wheel.name}",
                      Command((str(uv), "pip", "install", "--python", env_python, "--no-deps",
                               "--reinstall", str(wheel)))))
    reporter.info(f"smoke: no environment for {plan.build.id} here: provisioning it from "
                  f"{manifest_path} (its inputs, not its commands)")
    provision = Plan(plan.build, plan.targets, plan.family, tuple(steps), plan.source,
                     plan.options, plan.channel)
    with jobs.build_locks(provision, layout, reporter):
        executor.execute(provision, layout, reporter=reporter, log_name="smoke-provision.log")
    return layout.env_dir(plan.build)
