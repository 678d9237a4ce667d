"""The recipes against the real ROCm/apex and pytorch/FBGEMM, at every ref the matrix names.

Each setup.py runs for real (tests/upstream/harness.py, through setuptools' PEP 517 backend as
``python -m build --no-isolation`` runs it) with the planned build-wheel step's argv and
environment, under recording doubles of torch, scikit-build and setuptools-git-versioning that
stop it at ``setup()``: the options it must accept, the name and version it produces, the
extension modules it declares. The submodules come from each ref's .gitmodules and CMake files.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.upstream.conftest import Upstream
from tests.upstream.setup_runs import SHA, run_setup
from toolkit.core.steps import BuildWheel, ExpectWheel, Step
from toolkit.data.matrix import Build, load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.planner import plan
from toolkit.plan.recipes import recipe_for
from toolkit.plan.recipes.fbgemm_gpu import tbb_source

MATRIX = load_matrix()
LAYOUT = Layout(Path("/work"), Path("/cache"))
HOST = HostFacts(cores=4, mem_available_gib=16.0)


def _first(package: str) -> list[Build]:
    """One build per version of ``package`` (the first pair the matrix lists)."""
    seen: dict[str, Build] = {}
    for b in MATRIX.select(packages=[package]):
        seen.setdefault(b.version, b)
    return list(seen.values())


APEX = _first("apex")
FBGEMM = _first("fbgemm_gpu")


def _plan(build: Build, **opts: object) -> Plan:
    return plan(MATRIX, build, Options(**opts), HOST, LAYOUT)  # type: ignore[arg-type]


def _with(step: Step, *, argv: tuple[str, ...] | None = None,
          drop_env: str | None = None) -> Step:
    """``step`` (a build-wheel) with another argv or without one environment variable."""
    action = step.action
    assert isinstance(action, BuildWheel)
    cmd = action.build
    cmd = dataclasses.replace(cmd, argv=argv if argv is not None else cmd.argv,
                              env={k: v for k, v in cmd.env.items() if k != drop_env})
    return dataclasses.replace(step, action=dataclasses.replace(action, build=cmd))


def _expected(p: Plan) -> tuple[str, str]:
    action = p.step("expect-wheel").action
    assert isinstance(action, ExpectWheel)
    return str(canonicalize_name(action.dist)), action.version.replace("{SHA8}", SHA[:8])


def _source(upstream: Upstream, build: Build, tmp: Path) -> Path:
    """The ref's files, exported (never a checkout of the upstream repository)."""
    sub = build.package.subdir
    root = upstream.export(build.pkg_version.ref, tmp / "src", *([sub] if sub else []))
    return root / sub if sub else root


def _apex(upstream: dict[str, Upstream], build: Build, tmp: Path, **opts: object):
    p = _plan(build, **opts)
    src = _source(upstream["apex"], build, tmp)
    return p, run_setup(build, p.step("build-wheel"), src, tmp)


def _fbgemm(upstream: dict[str, Upstream], build: Build, tmp: Path):
    p = _plan(build)
    src = _source(upstream["FBGEMM"], build, tmp)
    return p, run_setup(build, p.step("build-wheel"), src, tmp, tag=build.pkg_version.ref)


# ----------------------------------------------------------------------------- refs and evidence
@pytest.mark.parametrize("build", APEX + FBGEMM, ids=lambda b: f"{b.package.name}-{b.version}")
def test_ref_exists_and_evidence_names_its_commit(upstream: dict[str, Upstream], build: Build) -> None:
    repo = upstream["apex" if build.package.name == "apex" else "FBGEMM"]
    commit = repo.commit(build.pkg_version.ref)
    slug = "ROCm/apex" if build.package.name == "apex" else "pytorch/FBGEMM"
    m = re.match(rf"{slug}@([0-9a-f]{{7,40}}) ", build.pkg_version.evidence)
    assert m and commit.startswith(m.group(1)), (build.pkg_version.evidence, commit)
    version_file = "version.txt" if build.package.name == "apex" else None
    if version_file:
        assert repo.show(build.pkg_version.ref, version_file).strip() == build.version


# ----------------------------------------------------------------------------- apex
@pytest.mark.parametrize("build", APEX, ids=lambda b: b.version)
def test_apex_setup_accepts_the_recipe_and_declares_the_expected_modules(
    upstream: dict[str, Upstream], build: Build, tmp_path: Path
) -> None:
    p, run = _apex(upstream, build, tmp_path)
    call = run.setup()
    # every option the recipe passed was consumed: only setuptools' own remain
    assert [a for a in call["argv"][1:] if a.startswith("-") and a != "--dist-dir"] == [], call["argv"]
    assert call["name"] == "apex"
    assert (str(canonicalize_name(call["name"])), str(Version(call["version"]))) == _expected(p)
    declared = set(call["ext_modules"])
    expected = set(recipe_for("apex").expected_modules(build.pkg_version))
    assert declared == expected, (sorted(declared - expected), sorted(expected - declared))
    assert call["env"]["PYTORCH_ROCM_ARCH"] == ";".join(p.targets)


@pytest.mark.parametrize("build", APEX, ids=lambda b: b.version)
def test_apex_upstream_naming_is_apexs_own(upstream: dict[str, Upstream], build: Build,
                                          tmp_path: Path) -> None:
    """--naming upstream: DESIRED_CUDA + APEX_COMMIT give +rocmX.Y.git<sha8>, exactly."""
    p, run = _apex(upstream, build, tmp_path, naming="upstream")
    call = run.setup()
    assert call["version"] == f"{build.version}+rocm{build.rocm.version}.git{SHA[:8]}"
    assert (str(canonicalize_name(call["name"])), str(Version(call["version"]))) == _expected(p)


def test_apex_18_jit_only_matches_upstream_ci(upstream: dict[str, Upstream], tmp_path: Path) -> None:
    """Upstream's --cpp_ext --cuda_ext build of 1.8 declares no extension: a JIT-only wheel."""
    build = MATRIX.build("apex-1.8.0-cp312-rocm7.0")
    ci = upstream["apex"].show(build.pkg_version.ref, ".github/workflows/rocm-ci.yml")
    assert "-C--build-option=--cpp_ext -C--build-option=--cuda_ext" in ci
    _p, run = _apex(upstream, build, tmp_path, recipe_options=("apex-ops=jit",))
    call = run.setup()
    assert call["ext_modules"] == []
    assert "--cpp_ext" not in call["argv"] and "--cuda_ext" not in call["argv"]


JIT_APEX = [b for b in APEX if b.pkg_version.build_style == "jit-prebuild"]


@pytest.mark.parametrize("build", JIT_APEX, ids=lambda b: b.version)
def test_apex_takes_rocminfos_gpu_unless_hidden(upstream: dict[str, Upstream], build: Build,
                                                tmp_path: Path) -> None:
    """op_builder/builder.py (get_rocm_gpu_arch, in every jit-prebuild branch) replaces
    PYTORCH_ROCM_ARCH with the first gfx rocminfo prints: the plan hides the GPU."""
    assert "def get_rocm_gpu_arch" in upstream["apex"].show(build.pkg_version.ref,
                                                             "op_builder/builder.py")
    bindir = tmp_path / "gpu-host"
    bindir.mkdir()
    rocminfo = bindir / "rocminfo"
    # stands for a host with one MI210; the real rocminfo lists no GPU agent when
    # ROCR_VISIBLE_DEVICES is set and empty (ROCR-Runtime src/core/util/flag.h)
    rocminfo.write_text('#!/bin/sh\n[ -n "${ROCR_VISIBLE_DEVICES+x}" ] && exit 0\n'
                        "echo '  Name:                    gfx90a'\n")
    rocminfo.chmod(0o755)
    p = _plan(build)
    src = _source(upstream["apex"], build, tmp_path)
    step = p.step("build-wheel")
    env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
    hidden = run_setup(build, step, src, tmp_path / "a", extra_env=env).setup()
    assert hidden["env"]["PYTORCH_ROCM_ARCH"] == ";".join(p.targets) != "gfx90a"
    shown = run_setup(build, _with(step, drop_env="ROCR_VISIBLE_DEVICES"), src, tmp_path / "b",
                      extra_env=env).setup()
    assert shown["env"]["PYTORCH_ROCM_ARCH"] == "gfx90a"


@pytest.mark.parametrize("build", JIT_APEX, ids=lambda b: b.version)
def test_apex_every_op_switch_group_is_enabled_by_the_plan(upstream: dict[str, Upstream],
                                                           build: Build) -> None:
    """Each op builder names its group switch (INCLUDE_FLAG) and its own APEX_BUILD_* switch
    (BUILD_VAR); the prebuilt plan sets every group, and leaves every op's own switch unset
    (setting one to "0" does not disable it)."""
    repo, ref = upstream["apex"], build.pkg_version.ref
    files = [f for f in repo.git("ls-tree", "--name-only", ref, "op_builder/").split()
             if f.endswith(".py")]
    text = "\n".join(repo.show(ref, f) for f in files)
    groups = set(re.findall(r'INCLUDE_FLAG = "(APEX_BUILD_[A-Z_]+)"', text))
    switches = set(re.findall(r"BUILD_VAR = ['\"](APEX_BUILD_[A-Z0-9_]+)['\"]", text))
    env = _plan(build).step("build-wheel").env
    assert groups and all(env.get(g) == "1" for g in groups), (groups, env)
    assert switches and not switches & set(env)
    declared = set(re.findall(r"NAME = ['\"]([A-Za-z0-9_]+)['\"]", text))
    expected = {m.removeprefix("apex.") for m in recipe_for("apex").expected_modules(build.pkg_version)}
    assert expected <= declared


@pytest.mark.parametrize("build", APEX, ids=lambda b: b.version)
def test_apex_needs_no_submodule(upstream: dict[str, Upstream], build: Build, tmp_path: Path) -> None:
    """The submodule updates setup.py runs for the recipe's flags name no recorded submodule."""
    _p, run = _apex(upstream, build, tmp_path)
    links = upstream["apex"].gitlinks(build.pkg_version.ref)
    assert [path for path in run.submodule_updates() if path in links] == []
    assert not build.pkg_version.submodules


# ----------------------------------------------------------------------------- fbgemm_gpu
@pytest.mark.parametrize("build", FBGEMM, ids=lambda b: b.version)
def test_fbgemm_setup_accepts_the_recipe_and_names_the_wheel(
    upstream: dict[str, Upstream], build: Build, tmp_path: Path
) -> None:
    p, run = _fbgemm(upstream, build, tmp_path)
    call = run.setup()
    leftover = [a for a in call["argv"][1:] if a.startswith("-") and not a.startswith("-D")]
    assert [a for a in leftover if a.split("=")[0] not in ("--dist-dir", "--python-tag",
                                                           "--plat-name")] == [], call["argv"]
    assert (str(canonicalize_name(call["name"])), call["version"]) == _expected(p)
    cmake = call["cmake_args"]
    assert f"-DAMDGPU_TARGETS={';'.join(p.targets)}" in cmake
    assert any(a.startswith("-DHIP_ROOT_DIR=") for a in cmake)
    flags = " ".join(a for a in cmake if a.startswith("-DCMAKE_CXX_FLAGS="))
    if build.pkg_version.build_style == "build-variant":  # BUILD_ROCM_VERSION was read
        assert "-DROCM_VERSION=" in flags, flags
    assert ("-ltbb" in flags) == (build.version == "1.3.0")


@pytest.mark.parametrize("build", FBGEMM, ids=lambda b: b.version)
def test_fbgemm_default_channel_would_be_nightly(upstream: dict[str, Upstream], build: Build,
                                                 tmp_path: Path) -> None:
    """Without --package_channel the same setup.py names the wheel nightly, by the date."""
    p = _plan(build)
    step = p.step("build-wheel")
    argv = tuple(a for a in step.argv if "--package_channel" not in a)
    src = _source(upstream["FBGEMM"], build, tmp_path)
    call = run_setup(build, _with(step, argv=argv), src, tmp_path,
                     tag=build.pkg_version.ref).setup()
    assert canonicalize_name(call["name"]) == "fbgemm-gpu-nightly-rocm"
    assert call["version"] != build.version


@pytest.mark.parametrize("build", FBGEMM, ids=lambda b: b.version)
def test_fbgemm_submodules_are_those_the_build_reads(upstream: dict[str, Upstream],
                                                     build: Build) -> None:
    repo, ref = upstream["FBGEMM"], build.pkg_version.ref
    cmake = [path for path in repo.git("ls-tree", "-r", "--name-only", ref).splitlines()
             if (path.endswith((".cmake", "CMakeLists.txt")) and not path.startswith(("test/", "bench"))
                 and "/test/" not in path and "external/" not in path)]
    text = "\n".join(repo.show(ref, path) for path in cmake)
    read = {f"external/{m}" for m in re.findall(r"(?:/external/|\$\{THIRDPARTY\}/)(\w+)", text)}
    modules = repo.show(ref, ".gitmodules")
    urls = dict(re.findall(r"path = (\S+)\s+url = (\S+)", modules))
    links = repo.gitlinks(ref)
    assert set(build.pkg_version.submodules) == read
    for path, url in build.pkg_version.submodules.items():
        assert path in links, path
        assert urls[path] == url, (path, urls[path], url)
    # and the plan fetches exactly those
    subs = _plan(build).step("get-submodules").action
    assert {s.path for s in subs.submodules} == read  # type: ignore[union-attr]


@pytest.mark.parametrize("build", FBGEMM, ids=lambda b: b.version)
def test_fbgemm_targets_and_tbb_are_the_build_scripts(upstream: dict[str, Upstream],
                                                      build: Build) -> None:
    repo, ref = upstream["FBGEMM"], build.pkg_version.ref
    script = repo.show(ref, ".github/scripts/fbgemm_gpu_build.bash")
    lists = set(re.findall(r'arch_list="(gfx[0-9a-z,]+)"', script))
    assert ",".join(_plan(build).targets) in lists, (lists, _plan(build).targets)
    assert "--package_channel=" in script
    gpu_cmake = repo.show(ref, "fbgemm_gpu/FbgemmGpu.cmake") if build.version >= "1.4.0" else ""
    setup = repo.show(ref, "fbgemm_gpu/setup.py")
    links_tbb = '"-ltbb"' in setup or "find_library(DEP_MAYBE_TBB" in gpu_cmake
    assert links_tbb == (tbb_source(build.pkg_version) is not None)
    assert ("tbb not found" in gpu_cmake) == (build.version >= "1.4.0")
