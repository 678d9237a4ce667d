"""The apex and fbgemm_gpu recipes run end to end through `nox -s build-...`.

Fixture projects (tests/projects) accept the same command lines as apex and fbgemm_gpu and
build a small real HIP extension. A test matrix points the real recipes at git repositories
made from them; the ROCm SDK is the system's (Debian's hipcc, ROCm 5.2) and torch is the
test double from the local index (torch.version.hip = 5.2).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.doubles.fixtures import local_index, uv_cache, write_data  # noqa: F401
from tests.doubles.index import LocalIndex
from tests.fixtures.data import package_toml, pkg_version
from tests.fixtures.nox_runs import toolkit_code

pytestmark = [pytest.mark.integration, pytest.mark.hipcc]
ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "tests" / "projects"

if not shutil.which("hipcc"):
    pytest.skip("no hipcc: the fixture projects compile HIP code (apt-get install hipcc)",
                allow_module_level=True)


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


# The extension modules ROCm/apex 1.5-1.8 build with --cpp_ext --cuda_ext (read in its
# setup.py; listed in shared/reference/facts.md), written out here so that the fixture does
# not take its modules from the recipe it tests.
APEX_MODULES = (
    "apex_C", "amp_C", "syncbn", "fused_layer_norm_cuda", "mlp_cuda", "fused_dense_cuda",
    "scaled_upper_triang_masked_softmax_cuda", "scaled_masked_softmax_cuda",
    "fused_rotary_positional_embedding", "distributed_adam_cuda", "distributed_lamb_cuda",
    "bnp", "xentropy_cuda", "focal_loss_cuda", "fused_index_mul_2d", "fused_adam_cuda",
    "fused_lamb_cuda", "fast_multihead_attn", "transducer_joint_cuda", "transducer_loss_cuda",
    "peer_memory_cuda", "nccl_p2p_cuda", "fused_weight_gradient_mlp_cuda",
    "generic_scaled_masked_softmax_cuda", "scaled_softmax_cuda", "fused_bias_swiglu",
)


def apex_repo(dest: Path) -> Path:
    """Branches release/1.6.0 (ext-flags) and release/1.8.0 (jit-prebuild), like ROCm/apex."""
    shutil.copytree(PROJECTS / "apex_like", dest)
    git("init", "-q", "-b", "main", cwd=dest)
    for version, style in (("1.6.0", "ext-flags"), ("1.8.0", "jit-prebuild")):
        mods = APEX_MODULES  # what ROCm/apex 1.5+ builds on ROCm (facts.md), not the recipe's list
        git("checkout", "-q", "-B", f"release/{version}", cwd=dest)
        (dest / "version.txt").write_text(version + "\n")
        (dest / "style.txt").write_text(style + "\n")
        (dest / "modules.txt").write_text(" ".join(mods) + "\n")
        git("add", "-A", cwd=dest)
        git("commit", "-q", "-m", f"apex-like {version}", cwd=dest)
    return dest


def fbgemm_repo(dest: Path) -> Path:
    shutil.copytree(PROJECTS / "fbgemm_like", dest)
    git("init", "-q", "-b", "main", cwd=dest)
    for version, style in (("1.2.0", "package-variant"), ("1.3.0", "build-variant")):
        (dest / "fbgemm_gpu" / "version.txt").write_text(version + "\n")
        (dest / "fbgemm_gpu" / "style.txt").write_text(style + "\n")
        git("add", "-A", cwd=dest)
        git("commit", "-q", "-m", f"fbgemm-like {version}", cwd=dest)
        git("tag", f"v{version}", cwd=dest)
    return dest


def _packages(apex: str) -> str:
    ev = "TEST DOUBLE: tests/projects/apex_like"
    return package_toml("apex", repo=apex, recipe="apex", versions=[
        pkg_version(v, ref=f"release/{v}", torch="2.8.0", rocm=["5.2"], python=["3.11"],
                build_style=style, evidence=ev)
        for v, style in (("1.6.0", "ext-flags"), ("1.8.0", "jit-prebuild"))])


def _fbgemm(fbgemm: str) -> str:
    ev = "TEST DOUBLE: tests/projects/fbgemm_like"
    return package_toml("fbgemm_gpu", dist="fbgemm_gpu-rocm", repo=fbgemm, subdir="fbgemm_gpu",
                        recipe="fbgemm_gpu", versions=[
        pkg_version("1.2.0", ref="v1.2.0", torch="2.8.0", rocm=["5.2"], python=["3.11"],
                build_style="package-variant", evidence=ev),
        pkg_version("1.3.0", ref="v1.3.0", torch="2.8.0", rocm=["5.2"], python=["3.11"],
                build_style="build-variant", evidence=ev,
                tbb={"provider": "pypi", "spec": "tbb-devel==2022.2.0"})])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, local_index: LocalIndex,  # noqa: F811
          uv_cache: Path) -> dict[str, str]:  # noqa: F811
    tmp = tmp_path_factory.mktemp("e2e")
    data = write_data(tmp / "data", local_index.url)
    (data / "sample.toml").unlink()
    (data / "apex.toml").write_text(_packages(str(apex_repo(tmp / "apex-src"))))
    (data / "fbgemm_gpu.toml").write_text(_fbgemm(str(fbgemm_repo(tmp / "fbgemm-src"))))
    (tmp / "work").mkdir()
    return {"TOOLKIT_DATA_DIR": str(data), "TOOLKIT_CACHE_DIR": str(tmp / "cache"),
            "UV_CACHE_DIR": str(uv_cache), "WORK": str(tmp / "work"), "CI": "true"}


def nox_build(world: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **world}
    env.pop("BUILD_FROM_NOVA", None)
    return subprocess.run(
        [sys.executable, "-m", "nox", "-s", "build-3.11-rocm5.2", "--", "--rocm-from", "system",
         "--workdir", world["WORK"], *extra],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=1200)


def manifest(world: dict[str, str], build_id: str) -> dict[str, object]:
    path = Path(world["WORK"]) / "artifacts" / build_id / "manifest.json"
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def check_json(wheel: Path, *args: str) -> dict[str, object]:
    res = subprocess.run([sys.executable, "-m", "toolkit", "check", str(wheel), "--json", *args],
                         capture_output=True, text=True)
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_apex_builds_names_checks_and_smokes(world: dict[str, str]) -> None:
    res = nox_build(world, "--package", "apex", "--gfx", "gfx90a,gfx908")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    for version in ("1.6.0", "1.8.0"):
        build_id = f"apex-{version}-cp311-rocm5.2"
        m = manifest(world, build_id)
        assert m["outcome"] == "ok"
        sha8 = str(m["source"]["sha"])[:8]  # type: ignore[index]
        wheel = Path(world["WORK"]) / "dist" / build_id / (
            f"apex-{version}+rocm5.2git{sha8}-cp311-cp311-linux_x86_64.whl")
        assert wheel.exists(), sorted(p.name for p in wheel.parent.iterdir())
        report = check_json(wheel, "--gfx", "gfx90a,gfx908")
        assert report["ok"] is True
        libs = report["wheels"][0]["libraries"]  # type: ignore[index]
        assert libs and all(lib["gpu_targets"] == ["gfx908", "gfx90a"] for lib in libs)
        steps = {s["name"]: s for s in m["steps"]}  # type: ignore[union-attr]
        build_step = steps["build-wheel"]
        assert build_step["env"]["PYTORCH_ROCM_ARCH"] == "gfx90a;gfx908"
        if version == "1.8.0":
            assert build_step["env"]["APEX_BUILD_CPP_OPS"] == "1"
            assert "-C--build-option=--cpp_ext" not in build_step["argv"]
        else:
            assert "-C--build-option=--cuda_ext" in build_step["argv"]
        assert steps["smoke"]["returncode"] == 0
    assert "Builds" in res.stdout  # the final table


def test_fbgemm_both_flag_styles_and_required_symbols(world: dict[str, str]) -> None:
    res = nox_build(world, "--package", "fbgemm_gpu", "--gfx", "gfx90a", "--no-smoke")
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    for version in ("1.2.0", "1.3.0"):
        build_id = f"fbgemm_gpu-{version}-cp311-rocm5.2"
        m = manifest(world, build_id)
        wheel = Path(str(m["wheel"]))
        assert wheel.name.startswith(f"fbgemm_gpu_rocm-{version}+rocm5.2git")
        assert wheel.name.endswith("-manylinux_2_28_x86_64.whl")
        report = check_json(wheel, "--require-symbol", "fbgemm_gpu::jagged_2d_to_dense")
        assert report["ok"] is True, report
        steps = {st["name"]: st for st in m["steps"]}  # type: ignore[union-attr]
        assert "--config-setting=--build-option=--package_channel=release" in \
            steps["build-wheel"]["argv"]
        assert steps["expect-wheel"]["returncode"] == 0
        # v1.3 on: libtbb from PyPI's tbb-devel, checked before the build (the fixture, like
        # fbgemm_gpu 1.4's CMake, fails with "tbb not found" without it)
        assert ("provide-tbb" in steps) == (version == "1.3.0")


def test_failed_build_leaves_earlier_wheel_untouched(world: dict[str, str], tmp_path: Path) -> None:
    res = nox_build(world, "--package", "apex", "--version", "1.8.0", "--gfx", "gfx90a", "--no-smoke")
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    dist = Path(world["WORK"]) / "dist" / "apex-1.8.0-cp311-rocm5.2"
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in dist.glob("*.whl")}
    assert before
    broken = tmp_path / "broken"
    shutil.copytree(PROJECTS / "apex_like", broken)
    (broken / "kernel.hip").write_text("this is not C++\n")
    for name, text in (("version.txt", "1.8.0"), ("style.txt", "jit-prebuild"), ("modules.txt", "amp_C")):
        (broken / name).write_text(text + "\n")
    git("init", "-q", cwd=broken)
    git("add", "-A", cwd=broken)
    git("commit", "-q", "-m", "broken", cwd=broken)
    res = nox_build(world, "--package", "apex", "--version", "1.8.0", "--gfx", "gfx90a",
                    "--source", str(broken), "--no-smoke")
    out = res.stdout + res.stderr
    assert toolkit_code(res.returncode, res.stderr) == 5, out[-4000:]
    assert "step 'build-wheel' failed" in out and "last" in out and "lines of output" in out
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in dist.glob("*.whl")}
    assert after == before
    assert not list(dist.glob(".tmp-*"))


def test_own_project_builds_in_the_pairs_environment(world: dict[str, str],
                                                     tmp_path: Path) -> None:
    """`--source` of a project that is neither apex nor fbgemm_gpu: the generic recipe, in the
    pair's environment (the torch double of the local index), the pair's packages untouched."""
    source = tmp_path / "own_pyproject"
    shutil.copytree(PROJECTS / "own_pyproject", source)
    dist = Path(world["WORK"]) / "dist"
    before = {p: p.stat().st_mtime_ns for p in dist.glob("*/*.whl")} if dist.exists() else {}
    res = nox_build(world, "--source", str(source), "--gfx", "gfx90a")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    build_id = "pyproj_ext-1.4.0rc1-cp311-rocm5.2"
    m = manifest(world, build_id)
    assert m["outcome"] == "ok" and m["build"]["torch"] == "2.8.0"  # type: ignore[index]
    assert "torch" in {d["name"] for d in m["installed"]}  # type: ignore[union-attr]
    assert "apex-" not in res.stdout and "fbgemm_gpu-" not in res.stdout
    after = {p: p.stat().st_mtime_ns for p in dist.glob("*/*.whl") if build_id not in str(p)}
    assert after == before  # the pair's own wheels are left alone
    (wheel,) = (dist / build_id).glob("*.whl")
    report = check_json(wheel, "--gfx", "gfx90a")
    assert report["ok"] is True


# ----------------------------------------------------------------------------- known failures
# An entry of known_failures.toml selecting the fixture apex 1.8.0: run with
# --include-known-failures, a real build-wheel failure is an expected failure (exit 0, xfail)
# and a real success is "known failure no longer fails" (exit 1, like pytest's strict xpass).
# The evidence names the fixture project (a TEST DOUBLE), in the format the data requires.
KNOWN = """\
[failures.apex-like-build]
package = "apex"
versions = "==1.8.0"
fails = "build-wheel"
reason = "TEST DOUBLE: the fixture's kernel does not compile"
evidence = "tests/projects#1"
"""


def broken_apex(dest: Path) -> Path:
    """The apex-like 1.8.0 fixture with a kernel that does not compile (a real failure)."""
    shutil.copytree(PROJECTS / "apex_like", dest)
    (dest / "kernel.hip").write_text("this is not C++\n")
    for name, text in (("version.txt", "1.8.0"), ("style.txt", "jit-prebuild"), ("modules.txt", "amp_C")):
        (dest / name).write_text(text + "\n")
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "broken", cwd=dest)
    return dest


def test_known_failure_refused_expected_and_no_longer_failing(world: dict[str, str],
                                                              tmp_path: Path) -> None:
    entry = Path(world["TOOLKIT_DATA_DIR"]) / "known_failures.toml"
    entry.write_text(KNOWN)
    args = ("--package", "apex", "--version", "1.8.0", "--gfx", "gfx90a", "--no-smoke")
    try:
        refused = nox_build(world, *args)
        out = refused.stdout + refused.stderr
        assert toolkit_code(refused.returncode, refused.stderr) == 7, out[-3000:]
        assert "error: apex-1.8.0-cp311-rocm5.2 is not run: known failure " \
               "apex-like-build: step build-wheel fails" in out
        assert "[1/" not in out, "nothing ran"

        junit_xml = tmp_path / "xfail.xml"
        res = nox_build(world, *args, "--include-known-failures", "--source",
                        str(broken_apex(tmp_path / "broken")), "--junit", str(junit_xml))
        out = res.stdout + res.stderr
        assert res.returncode == 0, out[-4000:]
        assert "step 'build-wheel' failed" in out, "the build really failed"
        assert "apex-1.8.0-cp311-rocm5.2: xfail: step build-wheel failed as expected" in out
        assert "xfail (known failure)" in out
        skipped = ET.parse(junit_xml).getroot().find("testsuite/testcase/skipped")
        assert skipped is not None and skipped.get("type") == "pytest.xfail"

        junit_xml = tmp_path / "xpass.xml"
        res = nox_build(world, *args, "--include-known-failures", "--junit", str(junit_xml))
        out = res.stdout + res.stderr
        assert toolkit_code(res.returncode, res.stderr) == 1, out[-4000:]
        assert "apex-1.8.0-cp311-rocm5.2: known failure no longer fails: remove the entry " \
               "apex-like-build from known_failures.toml" in out
        assert (Path(world["WORK"]) / "dist" / "apex-1.8.0-cp311-rocm5.2").is_dir(), "it built"
        failure = ET.parse(junit_xml).getroot().find("testsuite/testcase/failure")
        assert failure is not None and failure.get("message", "").startswith("[XPASS(strict)]")
    finally:
        entry.unlink()
