"""A fresh runner end to end (``toolkit.verify.fresh.prepare``): the bundled sample's
environment planned again from its manifest, its provisioning steps run for real (uv makes
the environment), then the published wheel installed into it without dependencies; the
environment's own Python imports it from its site-packages. The wheel is made by hand per
the wheel spec (``*.dist-info`` with METADATA, WHEEL, RECORD)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.manifests import for_plan, sample_plan
from toolkit.core.errors import UsageError
from toolkit.core.reporter import ListReporter
from toolkit.verify.fresh import prepare

NAME = "freshpkg-1.0-py3-none-any.whl"


def _wheel(path: Path) -> None:
    path.parent.mkdir(parents=True)
    info = "freshpkg-1.0.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("freshpkg.py", "X = 1\n")
        zf.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: freshpkg\nVersion: 1.0\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\n"
                                     "Root-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", f"freshpkg.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n"
                                      f"{info}/RECORD,,\n")


def test_the_environment_is_provisioned_and_the_published_wheel_installed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    the_plan, layout, build = sample_plan(tmp_path, monkeypatch)
    wheel = layout.root / "dist" / build.id / NAME
    _wheel(wheel)
    data = for_plan(the_plan, layout, wheel=NAME)
    manifest = layout.artifacts(build) / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps(data))
    with pytest.raises(UsageError):  # the recorded sha256 is not this wheel's: nothing runs
        prepare(data, manifest, layout, ListReporter())
    assert not layout.env_dir(build).exists()
    data["wheel_sha256"] = hashlib.sha256(wheel.read_bytes()).hexdigest()
    reporter = ListReporter()
    env = prepare(data, manifest, layout, reporter)
    assert env == layout.env_dir(build)
    assert reporter.lines[0] == (f"smoke: no environment for {build.id} here: provisioning it "
                                 f"from {manifest} (its inputs, not its commands)")
    assert [ln.split()[:3] for ln in reporter.lines[1:]] == [
        ["[1/4]", "check-env", "ok"], ["[2/4]", "create-env", "ok"],
        ["[3/4]", "mark-env-ready", "ok"], ["[4/4]", "install-wheel", "ok"]]
    found = subprocess.run([str(layout.env_python(build)), "-c",
                            "import freshpkg; print(freshpkg.__file__)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(found).parent.name == "site-packages" and Path(found).is_relative_to(env)
    log = (manifest.parent / "smoke-provision.log").read_text()
    assert f"pip install --python {layout.env_python(build)} --no-deps --reinstall {wheel}" in log
