"""The toolkit installed for real: ``pip install .`` (not editable) into a fresh environment.

A fresh clone of this repository (its committed HEAD: what a user clones, untouched by
uncommitted work in this checkout) is installed, non-editable, into a new virtualenv with
``uv pip install`` (its dependencies from the package index, from uv's cache when it can).
That installed toolkit then runs ``nox -s demo`` of the clone (work folder: the clone) and,
from an unrelated folder, ``python -m toolkit smoke --workdir CLONE --gfx gfx90a``: the smoke
suite must come from the installed package (``toolkit.smoke_suite``), not from the clone.

With hipcc the sample carries gfx90a and gfx908 code and the GPU-code test passes; without
it the demo builds the CPU variant and that test skips (a CPU build carries no GPU code), so
``--gfx gfx90a`` passes either way. The KFD topology is pinned to a CPU-only folder, so the
GPU runtime tests skip on any machine and the outcome does not depend on its GPUs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PY = f"{sys.version_info.major}{sys.version_info.minor}"


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: int = 300
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          errors="replace", timeout=timeout, check=False)


def _uv() -> str:
    found = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(found).exists():
        pytest.skip("needs uv (a dependency of the toolkit) to make the fresh environment")
    return found


class Installed:
    def __init__(self, base: Path, clone: Path, venv: Path, env: dict[str, str],
                 demo_output: str) -> None:
        self.base, self.clone, self.venv, self.env = base, clone, venv, env
        self.demo_output = demo_output

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip(f"needs git and a git checkout ({ROOT}) to clone")
    uv = _uv()
    base = tmp_path_factory.mktemp("install")
    clone, venv = base / "clone", base / "venv"
    kfd = base / "kfd" / "nodes" / "0"
    kfd.mkdir(parents=True)
    (kfd / "properties").write_text("cpu_cores_count 8\nsimd_count 0\ngfx_target_version 0\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "GITHUB_ACTIONS", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(TOOLKIT_CACHE_DIR=str(base / "cache"), TOOLKIT_KFD_ROOT=str(kfd.parent),
               PYTHONDONTWRITEBYTECODE="1")

    proc = _run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], base, env)
    assert proc.returncode == 0, proc.stderr
    proc = _run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], base, env)
    assert proc.returncode == 0, proc.stderr
    install = [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
               str(clone)]  # a path, not -e: built into a wheel and installed
    proc = _run([*install, "--offline"], base, env)  # uv's cache first
    if proc.returncode != 0:
        proc = _run(install, base, env)
    assert proc.returncode == 0, f"uv pip install {clone} failed:\n{proc.stdout}{proc.stderr}"

    # the demo, by the installed toolkit (nox is one of its dependencies), in the clone
    proc = _run([str(venv / "bin" / "python"), "-m", "nox", "-f", str(clone / "noxfile.py"),
                 "-s", "demo", "--", "--workdir", str(clone)], base, env, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"nox -s demo failed (exit {proc.returncode}):\n{out[-4000:]}"
    return Installed(base, clone, venv, env, out)


def test_installed_package_holds_the_suite_and_the_sample(installed: Installed) -> None:
    proc = _run([str(installed.python), "-c",
                 "import pathlib, toolkit; print(pathlib.Path(toolkit.__file__).parent)"],
                installed.base, installed.env)
    assert proc.returncode == 0, proc.stderr
    package = Path(proc.stdout.strip())
    assert package.is_relative_to(installed.venv), f"{package} is not the installed copy"
    assert (package / "smoke_suite" / "pytest.ini").is_file()
    assert (package / "smoke_suite" / "conftest.py").is_file()
    assert (package / "examples" / "hip_extension" / "setup.py").is_file()
    assert (package / "data" / "gpus.toml").is_file()


def test_the_demos_own_smoke_step_passed(installed: Installed) -> None:
    """The build's smoke step runs ``python -m toolkit smoke`` in the clone, where the
    clone's source ``toolkit/`` (no ``smoke_suite`` inside) comes first on sys.path: the
    runner then finds the suite as ``smoke_tests/`` of that source tree."""
    (manifest,) = (installed.clone / "artifacts").glob("hip_sample-*/manifest.json")
    data = json.loads(manifest.read_text())
    smoke = next(s for s in data["steps"] if s["name"] == "smoke")
    assert smoke["returncode"] == 0 and data["outcome"] == "ok", installed.demo_output[-4000:]
    assert "test_imports.py" in installed.demo_output


def test_smoke_from_another_folder(installed: Installed, tmp_path: Path) -> None:
    argv = [str(installed.python), "-m", "toolkit", "smoke", "--workdir", str(installed.clone),
            "--gfx", "gfx90a"]
    proc = _run([*argv, "--json"], tmp_path, installed.env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert "Traceback" not in proc.stderr
    assert "site-packages/toolkit/smoke_suite" in proc.stderr  # pytest's output: the installed suite
    result = json.loads(proc.stdout)
    assert result["ok"] and result["build"].startswith(f"hip_sample-0.1.0-cp{PY}-")
    outcomes = {c["name"]: (c["outcome"], c["message"]) for c in result["cases"]}
    assert outcomes["test_imports.py::test_import[hip_sample-0.1.0-hip_sample]"][0] == "passed"
    assert outcomes["test_imports.py::test_import[hip_sample-0.1.0-hip_sample._native]"][0] == "passed"
    gpu_code = outcomes["test_gpu_code.py::test_gpu_code_for_target[hip_sample-0.1.0-gfx90a]"]
    if result["build"].endswith("-cpu"):  # no HIP compiler: the CPU variant
        assert gpu_code == ("skipped", f"{result['build']} is a CPU build: it carries no GPU code")
    else:
        assert gpu_code == ("passed", "")
    runtime = outcomes["test_runtime.py::test_gpu_is_requested_target[hip_sample-0.1.0-gfx90a]"]
    assert runtime[0] == "skipped" and runtime[1].startswith("no AMD GPU found")

    plain = _run(argv, tmp_path, installed.env)
    assert plain.returncode == 0, (plain.stdout + plain.stderr)[-4000:]
    row = next(line for line in plain.stdout.splitlines() if result["build"] in line)
    assert "gfx90a" in row and "ok" in row
    assert "skipped (" in plain.stdout and "Traceback" not in plain.stdout + plain.stderr
