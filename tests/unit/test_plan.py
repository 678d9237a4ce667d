from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan, render
from toolkit.plan.planner import plan

LAYOUT = Layout(Path("/w"), Path("/c"))
HOST = HostFacts(cores=16, mem_available_gib=64.0)


def make(build_id: str, **opts: object) -> Plan:
    m = load_matrix()
    if build_id.endswith("-rocm7.0") and "rocm_from" not in opts:
        # ROCm 7.0's pip SDK: TheRock's legacy per-family nightlies (rocm.toml: its nightly
        # channel; the release's default is a system ROCm 7.0)
        opts.setdefault("channel", "nightly")
    options = Options(**opts)  # type: ignore[arg-type]
    return plan(m, m.build(build_id), options, HOST, LAYOUT)


def test_steps_are_ordered_and_known() -> None:
    p = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942",))
    names = [s.name for s in p.steps]
    assert names == ["check-env", "probe-indexes", "create-env", "install-rocm-sdk", "pin-torch",
                     "install-torch", "mark-env-ready", "get-sources", "install-requirements",
                     "preflight", "build-wheel", "expect-wheel", "name-wheel", "check",
                     "install-wheel", "smoke", "publish"]
    kinds = [s.kind for s in p.steps]
    assert kinds == ["check-env", "probe-indexes", "create-env", "install-sdk", "run",
                     "install-torch", "mark-env-ready", "fetch-sources", "run", "run",
                     "build-wheel", "expect-wheel", "name-wheel", "check", "run", "smoke",
                     "publish"]
    p = make("fbgemm_gpu-1.5.0-cp313-rocm7.0")
    names = [s.name for s in p.steps]
    assert names[names.index("get-sources"):names.index("expect-wheel")] == [
        "get-sources", "get-submodules", "install-requirements", "provide-tbb", "build-wheel"]


def test_wheel_reaches_dist_only_in_the_last_step() -> None:
    p = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942",))
    dist = str(LAYOUT.dist(p.build))
    touching = [s.name for s in p.steps if dist in s.text()]
    assert touching == ["publish"]
    assert p.steps[-1].name == "publish"
    staged = p.step("name-wheel").as_json()["action"]["staging"]
    assert staged.startswith(str(LAYOUT.build_dir(p.build)))


def test_every_side_effect_is_in_the_dry_run() -> None:
    text = render(make("fbgemm_gpu-1.3.0-cp312-rocm6.4", gfx=("gfx90a",)))
    for what in ("git clone --mirror", "git worktree remove", "probe torch index",
                 "rm -rf", ".toolkit-env.json", ".build-key", "rename"):
        assert what in text, what


def _forbid_io(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way plan() could touch the machine raises: files, folders, processes, sockets;
    the process environment holds values that would show if it were read."""
    import builtins
    import io
    import os
    import socket
    import subprocess

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"plan() did I/O: {args[:1]}")

    for mod, name in ((builtins, "open"), (io, "open"), (os, "stat"), (os, "lstat"), (os, "scandir"),
                      (os, "listdir"), (os, "access"), (os, "open"), (subprocess, "Popen"),
                      (socket, "socket")):
        monkeypatch.setattr(mod, name, forbidden)
    for var in ("PATH", "HOME", "ROCM_PATH", "PYTORCH_ROCM_ARCH", "TOOLKIT_ROCM_INDEX_URL",
                "TOOLKIT_ROCM_FAMILY", "TOOLKIT_CACHE_DIR", "UV_CACHE_DIR"):
        monkeypatch.setenv(var, f"/from-the-environment/{var}")


@pytest.mark.parametrize("build_id", ["apex-1.7.0-cp310-rocm6.3", "fbgemm_gpu-1.5.0-cp313-rocm7.0"])
def test_plan_is_pure(build_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No I/O and nothing from the environment: the plan is what its inputs say (the
    targets given, the layout's folders, the placeholders execution fills)."""
    m = load_matrix()
    build = m.build(build_id)
    make(build_id, gfx=("gfx90a",))  # function-level imports happen once, outside the guard
    _forbid_io(monkeypatch)
    p = plan(m, build, Options(gfx=("gfx90a",)), HOST, LAYOUT)
    text = p.to_json()
    monkeypatch.undo()
    assert "/from-the-environment/" not in text
    step = p.step("build-wheel")
    assert step.env["PYTORCH_ROCM_ARCH"] == "gfx90a"
    assert step.cwd is not None and step.cwd.startswith(f"/w/build/{build_id}/src")
    assert step.argv[0] == f"/c/envs/{build.python}-rocm{build.rocm.version}-torch" \
        f"{build.pkg_version.torch_minor}/bin/python"


def test_build_env_carries_arch_and_rocm_paths() -> None:
    step = make("apex-1.8.0-cp312-rocm6.4", gfx=("gfx942", "gfx90a")).step("build-wheel")
    assert step.env["PYTORCH_ROCM_ARCH"] == "gfx942;gfx90a"
    assert step.env["ROCM_PATH"] == "/opt/rocm"
    step = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942",)).step("build-wheel")
    assert step.env["ROCM_PATH"] == step.env["ROCM_HOME"] == "{ROCM_ROOT}"
    assert step.env["PATH"].startswith("{ROCM_BIN}:/c/envs/3.12-rocm7.0-torch2.8/bin:")
    assert step.env["TORCH_EXTENSIONS_DIR"] == "/w/build/apex-1.8.0-cp312-rocm7.0/torch_extensions"
    assert step.env["MAX_JOBS"] == "16"


def test_default_targets_come_from_the_release_family() -> None:
    p = make("apex-1.4.0-cp38-rocm6.0")
    assert p.targets == ("gfx906", "gfx908", "gfx90a")
    assert p.step("build-wheel").env["PYTORCH_ROCM_ARCH"] == "gfx906;gfx908;gfx90a"


def test_pip_sdk_uses_the_family_index_and_skips_placeholders() -> None:
    step = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942",)).step("install-rocm-sdk")
    assert "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/" in step.argv
    assert any(a.startswith("rocm[libraries,devel]>1.0") for a in step.argv)
    assert step.env["ROCM_SDK_TARGET_FAMILY"] == "gfx94X-dcgpu"


def test_targets_spanning_families_take_the_default_familys_sdk_and_say_so() -> None:
    """The per-family SDK's compiler builds for any target; its libraries serve one family."""
    step = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942", "gfx1100")).step("install-rocm-sdk")
    assert step.env["ROCM_SDK_TARGET_FAMILY"] == "gfx94X-dcgpu"
    assert "its libraries do not serve gfx1100, its compiler" in step.description
    # a target with features is its processor's: gfx942's family serves gfx942:sramecc+
    step = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942:sramecc+", "gfx1100")).step("install-rocm-sdk")
    assert step.env["ROCM_SDK_TARGET_FAMILY"] == "gfx94X-dcgpu"
    assert "its libraries do not serve gfx1100, its compiler" in step.description
    step = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx1100", "gfx1101")).step("install-rocm-sdk")
    assert step.env["ROCM_SDK_TARGET_FAMILY"] == "gfx110X-dgpu"


def test_rocm_70_family_names_are_those_of_its_era() -> None:
    """TheRock's 7.0-era index served gfx110X-dgpu (gfx1100-1102), not today's gfx110X-all."""
    with pytest.raises(UsageError, match=r"unknown GPU family 'gfx110X-all' by ROCm 7\.0's index; "
                       "valid: gfx110X-dgpu, gfx1151, gfx120X-all, gfx94X-dcgpu, gfx950-dcgpu"):
        make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx1100",), family="gfx110X-all")
    step = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx1103",)).step("install-rocm-sdk")
    assert step.env["ROCM_SDK_TARGET_FAMILY"] == "gfx94X-dcgpu"  # no 7.0 family served gfx1103
    assert "do not serve gfx1103" in step.description


def test_system_sdk_and_index_override() -> None:
    p = make("apex-1.7.0-cp312-rocm6.4", gfx=("gfx90a",))
    assert p.step("install-rocm-sdk").argv == ("/opt/rocm/bin/hipconfig", "--version")
    p = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942",), index_url="http://127.0.0.1:9/idx/")
    assert "http://127.0.0.1:9/idx/gfx94X-dcgpu/" in p.step("install-rocm-sdk").argv


def test_unpublished_torch_pair_uses_its_recorded_source() -> None:
    p = make("apex-1.7.0-cp312-rocm6.4", gfx=("gfx90a",))
    argv = p.step("install-torch").argv
    assert "https://repo.radeon.com/rocm/manylinux/rocm-rel-6.4/" in argv
    assert not any("download.pytorch.org" in a for a in argv)
    # torch alone from AMD's page first, no index weighed in; PyPI never outranks it
    pin = p.step("pin-torch").argv
    assert pin[-5:] == ("--no-deps", "--no-index", "--find-links",
                        "https://repo.radeon.com/rocm/manylinux/rocm-rel-6.4/", "torch>=2.7,<2.8")
    assert "unsafe-best-match" not in argv and "unsafe-best-match" not in pin
    names = [s.name for s in p.steps]
    assert names.index("pin-torch") == names.index("install-torch") - 1
    argv = make("apex-1.7.0-cp312-rocm6.3", gfx=("gfx90a",)).step("install-torch").argv
    assert argv[-1] == "torch==2.7.0+rocm6.3"
    assert "https://download.pytorch.org/whl/rocm6.3/" in argv


def test_render_shows_env_and_placeholders() -> None:
    text = render(make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942",)))
    assert "PYTORCH_ROCM_ARCH=gfx942" in text
    assert "{ROCM_ROOT} = python -m rocm_sdk path --root" in text


def test_unknown_provider_is_refused() -> None:
    with pytest.raises(UsageError, match="unknown ROCm SDK provider 'conda'; valid: pip, system"):
        make("apex-1.8.0-cp312-rocm7.0", rocm_from="conda")


def test_must_work_sources_of_issue_12() -> None:
    """No TheRock pip SDK for 7.1; 2.9 x 6.3 from PyTorch's index; apex 1.8 x 7.0 not TheRock's."""
    for build in load_matrix().select(rocm=["7.1"]):
        p = plan(load_matrix(), build, Options(), HOST, LAYOUT)
        assert p.step("install-rocm-sdk").kind == "use-system-rocm", build.id
        assert not any("rocm.nightlies.amd.com" in s.text() for s in p.steps)
    argv = make("fbgemm_gpu-1.4.0-cp313-rocm6.3").step("install-torch").argv
    assert argv[-1] == "torch==2.9.0+rocm6.3"
    assert argv[argv.index("--index") + 1] == "https://download.pytorch.org/whl/rocm6.3/"
    p = make("apex-1.8.0-cp312-rocm7.0")
    for name in ("pin-torch", "install-torch"):
        assert not any("rocm.nightlies.amd.com" in a for a in p.step(name).argv)
    with pytest.raises(UsageError, match="never published a 7.1 pip SDK"):
        make("fbgemm_gpu-1.5.0-cp313-rocm7.1", rocm_from="pip")


def test_fbgemm_default_targets_without_gfx() -> None:
    assert make("fbgemm_gpu-1.5.0-cp313-rocm7.0").targets == ("gfx908", "gfx90a", "gfx942", "gfx950")
    assert make("fbgemm_gpu-1.3.0-cp312-rocm6.4").targets == ("gfx908", "gfx90a", "gfx942")
    assert make("fbgemm_gpu-1.5.0-cp313-rocm7.0", gfx=("gfx942",)).targets == ("gfx942",)
    env = make("fbgemm_gpu-1.5.0-cp313-rocm7.0").step("build-wheel").env
    assert env["PYTORCH_ROCM_ARCH"] == "gfx908;gfx90a;gfx942;gfx950"


def test_every_fbgemm_plan_has_channel_submodules_and_tbb() -> None:
    m = load_matrix()
    for build in m.select(packages=["fbgemm_gpu"]):
        p = plan(m, build, Options(), HOST, LAYOUT).as_json()
        steps = {s["name"]: s for s in p["steps"]}
        assert "--config-setting=--build-option=--package_channel=release" in \
            steps["build-wheel"]["argv"], build.id
        subs = steps["get-submodules"]["action"]["submodules"]
        assert {"external/asmjit", "external/cpuinfo", "external/hipify_torch", "external/json",
                "external/cutlass"} <= {s["path"] for s in subs}
        assert all(s["mirror"].startswith("/c/sources/submodules/") for s in subs)
        newer = build.version not in ("1.1.0", "1.2.0")
        assert ("provide-tbb" in steps) == newer, build.id
        if newer:
            assert steps["provide-tbb"]["argv"][-1] == "tbb-devel==2022.2.0"
            assert steps["build-wheel"]["env"]["CMAKE_LIBRARY_PATH"] == "{TBB_LIB_DIR}"
            assert "{TBB_LIB_DIR}" in steps["check"]["argv"]
        assert steps["expect-wheel"]["action"]["dist"] == "fbgemm_gpu-rocm"
        assert steps["expect-wheel"]["action"]["version"] == build.version


def test_apex_naming_expectations() -> None:
    """get_apex_version: BUILD_VERSION (1.7, 1.8) or DESIRED_CUDA + .git<sha8> (upstream)."""
    exp = make("apex-1.8.0-cp312-rocm7.0").step("expect-wheel").action
    assert exp.version == "1.8.0+rocm7.0git{SHA8}"  # type: ignore[union-attr]
    exp = make("apex-1.8.0-cp312-rocm7.0", naming="upstream").step("expect-wheel").action
    assert exp.version == "1.8.0+rocm7.0.git{SHA8}"  # type: ignore[union-attr]
    p = make("apex-1.6.0-cp312-rocm6.2.4")
    assert p.step("expect-wheel").action.version == "1.6.0"  # type: ignore[union-attr]
    assert "1.6.0+rocm6.2.4git{SHA8}" in p.step("name-wheel").description


def test_apex_18_hides_gpus_from_rocminfo_and_jit_only_is_an_option() -> None:
    step = make("apex-1.8.0-cp312-rocm7.0").step("build-wheel")
    assert step.env["ROCR_VISIBLE_DEVICES"] == ""
    assert step.env["APEX_BUILD_CPP_OPS"] == step.env["APEX_BUILD_CUDA_OPS"] == "1"
    p = make("apex-1.8.0-cp312-rocm7.0", recipe_options=("apex-ops=jit",))
    step = p.step("build-wheel")
    assert "APEX_BUILD_CPP_OPS" not in step.env and "ROCR_VISIBLE_DEVICES" not in step.env
    assert "-C--build-option=--cpp_ext" in step.argv  # as upstream CI and TheRock pass it
    assert "--gfx" not in p.step("check").argv  # a JIT-only wheel carries no GPU code
    assert "ROCR_VISIBLE_DEVICES" not in make("apex-1.7.0-cp312-rocm6.4").step("build-wheel").env
    with pytest.raises(UsageError, match="unknown apex-ops value 'some'; valid: prebuilt, jit"):
        make("apex-1.8.0-cp312-rocm7.0", recipe_options=("apex-ops=some",))


def test_preflight_says_which_apex_refuses() -> None:
    assert "'Cuda None'" in make("apex-1.6.0-cp312-rocm6.2.4").step("preflight").description
    assert "no longer checks" in make("apex-1.8.0-cp312-rocm7.0").step("preflight").description


def test_the_source_steps_say_which_commit_and_which_submodules() -> None:
    """fbgemm_gpu.toml lists the submodules its CMake build reads (read here with tomllib):
    a fresh worktree fetches them at the commits the version's ref records; a contributor's
    checkout (--source) must hold them itself (README: --source is copied, never modified)."""
    import tomllib

    from toolkit.data.matrix import data_dir

    build_id = "fbgemm_gpu-1.5.0-cp313-rocm7.0"
    doc = tomllib.loads((data_dir() / "fbgemm_gpu.toml").read_text())
    (version,) = [v for v in doc["versions"] if v["version"] == "1.5.0"]
    subs = ", ".join(version["submodules"])
    fetched = make(build_id).step("get-submodules").description
    assert fetched.startswith(f"the submodules the build needs ({subs}) at the commits "), fetched
    assert fetched.endswith(f"at the commits {version['ref']} records, each from a cached mirror"), \
        fetched
    copied = make(build_id, source="/src/FBGEMM").step("get-sources").description
    assert copied.startswith("use the contributor's checkout /src/FBGEMM (copied"), copied
    assert copied.endswith(f"never modified; it must hold its submodules: {subs})"), copied
    assert "submodules" not in make("apex-1.8.0-cp312-rocm7.0", source="/src/apex").step(
        "get-sources").description  # apex.toml lists none


def test_a_dirty_source_is_named_in_the_wheel_name_step() -> None:
    """--allow-dirty on a checkout with uncommitted changes: the wheel is named +...dirty
    (PEP 440 local label) and the step says why."""
    clean = make("apex-1.8.0-cp312-rocm7.0", source="/src/apex").step("name-wheel").description
    dirty = make("apex-1.8.0-cp312-rocm7.0", source="/src/apex", allow_dirty=True,
                 dirty=True).step("name-wheel").description
    assert "dirty" not in clean and "--allow-dirty" not in clean
    assert dirty.endswith("in the build's staging folder (the source has uncommitted changes: "
                          "--allow-dirty)"), dirty
    assert ".dirty-..." in dirty, dirty
