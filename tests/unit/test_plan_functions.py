"""Whole functions of toolkit/plan pinned against truths outside the code (issue 19, part 8,
session 25): gpus.toml and rocm.toml read with tomllib, TheRock's index layout
(ROCm/TheRock@89553ce37 docs/packaging/legacy_per_family_releases.md), ROCm/apex's setup.py
``get_apex_version``, pytorch/FBGEMM's build script, and values worked out by hand.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import tomllib

from tests.fixtures.data import edit
from toolkit.core.errors import UsageError
from toolkit.data.matrix import data_dir
from toolkit.env.buildenv import RocmPaths
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan, rocm_provider
from toolkit.plan.provision import buildable, sources_for
from toolkit.plan.recipes import load_matrix, standalone_build
from toolkit.plan.recipes.sample import demo_build

LAYOUT = Layout(Path("/w"), Path("/c"))
HOST = HostFacts(cores=16, mem_available_gib=64.0)

# gpus.toml's "rocm-6" era (targets and extra_targets), ordered by hand: family by family
# (gfx9, gfx10, gfx11), within one by the hex digits of its minor and stepping
ROCM6_SORTED = ("gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx1010", "gfx1011",
                "gfx1012", "gfx1013", "gfx1030", "gfx1032", "gfx1035", "gfx1036", "gfx1100",
                "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151")


# ------------------------------------------------------------------ provision.buildable
def test_targets_a_releases_compilers_cannot_build_are_named_with_every_valid_id() -> None:
    era = tomllib.loads((data_dir() / "gpus.toml").read_text())["eras"]["rocm-6"]
    assert set(ROCM6_SORTED) == {*era["targets"], *era["extra_targets"]}
    build = load_matrix().build("apex-1.8.0-cp312-rocm6.4")  # rocm.toml: 6.4 is era rocm-6
    with pytest.raises(UsageError) as err:
        buildable(build, ["gfx950", "gfx90a", "gfx1200:xnack+", "gfx942"])
    assert err.value.message == (
        "ROCm 6.4's compilers do not build gfx950, gfx1200:xnack+ (release era rocm-6, "
        f"gpus.toml); valid: {', '.join(ROCM6_SORTED)}")
    assert err.value.hint == "pick targets with --gfx, or a ROCm release whose era builds them"
    assert err.value.exit_code == 2
    # one bad target: no separator at all
    with pytest.raises(UsageError) as one:
        buildable(build, ["gfx90a", "gfx1250"])
    assert "do not build gfx1250 (release era" in one.value.message
    # a target feature (LLVM's `:xnack+`) does not change the processor; the order is kept
    assert buildable(build, ["gfx942:xnack-", "gfx90a", "gfx1013"]) == (
        "gfx942:xnack-", "gfx90a", "gfx1013")
    assert buildable(build, []) == ()


def test_a_release_without_an_era_builds_whatever_is_asked() -> None:
    demo = demo_build("3.12", ("/opt/rocm", "5.2"))  # the host's own ROCm: no era in gpus.toml
    assert demo.rocm.era is None
    assert buildable(demo, ["gfx9999", "gfx90a"]) == ("gfx9999", "gfx90a")


# ------------------------------------------------------------------ provision.sources_for
def _therock_torch_on_a_system_sdk(data: Path, index: str) -> None:
    """ROCm 7.1 (a system SDK: no per-family index, so no SDK family) with torch 2.10 from a
    TheRock-style per-family index (rocm.toml: `kind = "therock"`, `<index>/<family>/`)."""
    edit(data / "rocm.toml",
         'torch."2.10" = { kind = "pytorch", index_url = "https://download.pytorch.org/whl/rocm7.1/"',
         f'torch."2.10" = {{ kind = "therock", index_url = "{index}"')


@pytest.mark.parametrize(("gfx", "family", "want"), [
    # legacy_per_family_releases.md: `pip install --index-url
    # https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/ torch torchaudio torchvision`
    (("gfx942",), None, "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"),
    (("gfx1151",), None, "https://rocm.nightlies.amd.com/v2/gfx1151/"),
    (("gfx942",), "gfx950-dcgpu", "https://rocm.nightlies.amd.com/v2/gfx950-dcgpu/"),
])
def test_a_per_family_torch_beside_a_system_sdk_takes_the_family_of_its_targets(
        data_copy: Path, gfx: tuple[str, ...], family: str | None, want: str) -> None:
    _therock_torch_on_a_system_sdk(data_copy, "https://rocm.nightlies.amd.com/v2/")
    m = load_matrix(data_copy)
    build = m.build("apex-1.10.0-cp312-rocm7.1")
    assert build.rocm.sdk.provider == "system" and build.torch_source.per_family
    src = sources_for(m, build, Options(gfx=gfx, family=family))
    assert src.family is None and src.sdk_index is None  # the SDK is the system's
    # TheRock's index serves torch alone; its dependencies come from PyPI
    assert src.torch_args == ("--index-url", want, "--extra-index-url", "https://pypi.org/simple/")
    assert src.system_version == "7.1.0"


@pytest.mark.parametrize(("index", "want"), [
    ("https://mirror.example/torchX", "https://mirror.example/torchX/gfx94X-dcgpu/"),
    ("https://mirror.example/torchX//", "https://mirror.example/torchX/gfx94X-dcgpu/"),
])
def test_a_per_family_torch_index_keeps_its_own_path(data_copy: Path, index: str, want: str) -> None:
    _therock_torch_on_a_system_sdk(data_copy, index)
    m = load_matrix(data_copy)
    src = sources_for(m, m.build("apex-1.10.0-cp312-rocm7.1"), Options(gfx=("gfx942",)))
    assert src.torch_args[:2] == ("--index-url", want)


# ------------------------------------------------------------------ planner.rocm_provider
@pytest.mark.parametrize(("root", "want"), [
    ("/opt/rocm", ("/opt/rocm/lib",)),
    ("/opt/rocm/", ("/opt/rocm/lib",)),
    ("/opt/rocm-6.4.3//", ("/opt/rocm-6.4.3/lib",)),
    ("/srv/X", ("/srv/X/lib",)),  # a folder ending in X keeps it
    ("/usr", ()), ("/usr/", ()), ("/usr/local", ()), ("/usr/local/", ()), ("/", ()), ("//", ()),
    ("{ROCM_ROOT}", ("{ROCM_ROOT}/lib",)),  # the pip SDK's root, learned at execution
])
def test_the_rocm_library_folder_the_check_counts_as_a_provider(root: str, want: tuple[str, ...]) -> None:
    build = load_matrix().build("apex-1.8.0-cp312-rocm6.4")
    assert rocm_provider(build, RocmPaths.system(root)) == want


def test_a_cpu_build_has_no_rocm_provider() -> None:
    cpu = demo_build("3.12", None)
    assert rocm_provider(cpu, RocmPaths.system("/opt/rocm")) == ()
    gpu = demo_build("3.12", ("/opt/rocm", "5.2"))
    assert rocm_provider(gpu, RocmPaths.system("/opt/rocm")) == ("/opt/rocm/lib",)


# ------------------------------------------------------------------ ApexRecipe.build_steps
def _get_apex_version(version_txt: str, env: dict[str, str], reads_build_version: bool) -> str:
    """ROCm/apex setup.py get_apex_version, as written at every release branch 1.4-1.13
    (@5567275d 1.4.0 ... @68f9dc9e3 1.13.0): BUILD_VERSION replaces version.txt (1.7 on), then
    ``+$DESIRED_CUDA`` and, with it, ``.git`` and APEX_COMMIT's first 8 characters."""
    version = version_txt
    if reads_build_version and env.get("BUILD_VERSION"):
        version = env["BUILD_VERSION"]
    if env.get("DESIRED_CUDA"):
        version += "+" + env["DESIRED_CUDA"]
        if env.get("APEX_COMMIT"):
            version += ".git" + env["APEX_COMMIT"][:8]
    return version


SHA = "0123abcd4567ef890123abcd4567ef890123abcd"


@pytest.mark.parametrize("naming", ["toolkit", "upstream"])
@pytest.mark.parametrize("build_id", ["apex-1.4.0-cp310-rocm6.1", "apex-1.6.0-cp312-rocm6.1",
                                      "apex-1.7.0-cp312-rocm6.4", "apex-1.8.0-cp312-rocm7.0",
                                      "apex-1.13.0-cp312-rocm7.2"])
def test_the_wheel_apex_names_is_the_one_expected(build_id: str, naming: str) -> None:
    m = load_matrix()
    build = m.build(build_id)
    p = plan(m, build, Options(naming=naming), HOST, LAYOUT)
    env = {k: v.replace("{SHA8}", SHA[:8]).replace("{SHA}", SHA)
           for k, v in p.step("build-wheel").env.items()}
    minor = int(build.version.split(".")[1])
    made = _get_apex_version(build.version, env, reads_build_version=minor >= 7)
    expect = p.step("expect-wheel").action
    assert expect.version.replace("{SHA8}", SHA[:8]) == made  # type: ignore[union-attr]
    rocm = build.rocm.version
    if naming == "upstream":  # upstream's own label: +rocm<ver>.git<sha8>
        assert made == f"{build.version}+rocm{rocm}.git{SHA[:8]}"
        assert "BUILD_VERSION" not in env
    elif minor >= 7:
        assert made == f"{build.version}+rocm{rocm}git{SHA[:8]}"
    else:  # apex 1.4-1.6 read no BUILD_VERSION: version.txt's own
        assert made == build.version and "BUILD_VERSION" not in env


# ------------------------------------------------------------------ FbgemmGpuRecipe
@pytest.mark.parametrize(("python", "tag"), [("3.9", "py39"), ("3.13", "py313"), ("3.13t", "py313"),
                                             ("3.14t", "py314")])
def test_fbgemm_gpus_python_tag_is_major_and_minor_alone(python: str, tag: str) -> None:
    """pytorch/FBGEMM@v1.8.0 .github/scripts/fbgemm_gpu_build.bash
    __build_fbgemm_gpu_set_python_tag: ``py`` + the major and minor of ``python --version``
    (which never says "t": a free-threaded 3.13 prints "Python 3.13.x")."""
    m = load_matrix()
    build = dataclasses.replace(m.build("fbgemm_gpu-1.5.0-cp313-rocm7.1"), python=python)
    argv = plan(m, build, Options(gfx=("gfx942",)), HOST, LAYOUT).step("build-wheel").argv
    tags = [a for a in argv if "--python-tag" in a]
    assert tags == [f"--config-setting=--build-option=--python-tag={tag}"]


# ------------------------------------------------------------------ GenericRecipe.standalone
PROJECT = Path(__file__).parent.parent / "projects" / "own_flat"


def test_a_recorded_project_built_against_torch_gets_that_torch_again(tmp_path: Path) -> None:
    recorded: dict[str, Any] = {
        "recipe": "generic", "dist": "flat-ext",
        "build": {"id": "flat-ext-0.2.0-cp312-rocm7.1", "version": "0.2.0", "python": "3.12",
                  "rocm": "7.1", "torch": "2.10"},
        "sdk": {"provider": "system", "root": "/opt/rocm"}}
    build = standalone_build("flat-ext-0.2.0-cp312-rocm7.1", recorded, str(PROJECT),
                             tmp_path / "meta.log")
    assert build is not None and build.pkg_version.torch == "2.10"
    raw = tomllib.loads((data_dir() / "rocm.toml").read_text())["releases"]["7.1"]
    p = plan(load_matrix(), build, Options(gfx=("gfx942",)), HOST, LAYOUT)
    torch = p.step("install-torch")
    assert torch.argv[-1] == raw["torch"]["2.10"]["spec"] == "torch==2.10.0+rocm7.1"


def _names(argv: tuple[str, ...]) -> list[str]:
    """The PEP 503 names of the requirements `uv pip install` is given (after --python X),
    an ``-r`` file left out."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    args = list(argv[argv.index("--python") + 2:])
    if "-r" in args:
        del args[args.index("-r"):args.index("-r") + 2]
    return [canonicalize_name(Requirement(a).name) for a in args]


@pytest.mark.parametrize(("build_id", "opts", "what"), [
    ("apex-1.6.0-cp312-rocm6.1", (), "--cpp_ext --cuda_ext"),
    ("apex-1.8.0-cp312-rocm7.0", (), "JIT ops prebuilt; ROCR_VISIBLE_DEVICES='' hides any GPU "
     "from rocminfo, which would replace PYTORCH_ROCM_ARCH"),
    ("apex-1.8.0-cp312-rocm7.0", ("apex-ops=jit",),
     "JIT-only, as upstream CI and TheRock build it: ops compile at first use"),
    ("apex-1.13.0-cp312-rocm7.2", ("apex-ops=prebuilt",), "JIT ops prebuilt; ROCR_VISIBLE_DEVICES='' "
     "hides any GPU from rocminfo, which would replace PYTORCH_ROCM_ARCH"),
])
def test_apex_steps_say_how_it_is_built_and_install_its_build_requirements(
        build_id: str, opts: tuple[str, ...], what: str) -> None:
    m = load_matrix()
    p = plan(m, m.build(build_id), Options(gfx=("gfx90a", "gfx942"), recipe_options=opts), HOST, LAYOUT)
    names = [s.name for s in p.steps]
    at = names.index("install-requirements")
    assert names[at:at + 3] == ["install-requirements", "preflight", "build-wheel"]
    version = build_id.split("-")[1]
    assert p.step("build-wheel").description == f"build apex {version} ({what}) for gfx90a;gfx942"
    install = p.step("install-requirements")
    assert install.description == ("install the build front-end apex's setup.py needs (torch is "
                                   "already there)")
    # apex's pyproject.toml [build-system] requires setuptools and wheel (release/1.4.0 ...
    # 1.13.0); setup.py imports packaging (1.5 on); pypa/build is the front-end; torch's
    # cpp_extension builds with ninja
    assert sorted(_names(install.argv)) == ["build", "ninja", "packaging", "setuptools", "wheel"]
    assert install.argv[:5] == (HOST.uv, "pip", "install", "--python", str(LAYOUT.env_python(p.build)))


@pytest.mark.parametrize(("build_id", "gfx"), [("fbgemm_gpu-1.2.0-cp312-rocm6.3", ("gfx90a",)),
                                               ("fbgemm_gpu-1.3.0-cp312-rocm6.4", ("gfx942", "gfx90a")),
                                               ("fbgemm_gpu-1.8.0-cp314-rocm7.1", ("gfx950",))])
def test_fbgemm_gpus_steps_install_its_requirements_then_tbb_then_build(
        build_id: str, gfx: tuple[str, ...]) -> None:
    m = load_matrix()
    build = m.build(build_id)
    p = plan(m, build, Options(gfx=gfx), HOST, LAYOUT)
    names = [s.name for s in p.steps]
    at = names.index("install-requirements")
    tbb = ["provide-tbb"] if build.pkg_version.tbb is not None else []
    assert names[at:at + 2 + len(tbb)] == ["install-requirements", *tbb, "build-wheel"]
    assert p.step("build-wheel").description == (
        f"build fbgemm_gpu {build.version} (ROCm variant, release channel) for {';'.join(gfx)}")
    install = p.step("install-requirements")
    assert install.description == "install fbgemm_gpu's build requirements"
    pkg_dir = f"{LAYOUT.worktree(build)}/fbgemm_gpu"
    argv = install.argv
    assert argv[argv.index("-r") + 1] == f"{pkg_dir}/requirements.txt" and install.cwd == pkg_dir
    # requirements.txt lists build and setuptools (pytorch/FBGEMM@72430430 v1.1.0 ... @99a76f4e
    # v1.8.0) but not wheel, which setuptools' bdist_wheel needs before setuptools 70.1
    assert sorted(_names(argv)) == ["build", "setuptools", "wheel"]
    env = p.step("build-wheel").env
    if tbb:  # -ltbb (v1.3) and find_library (v1.4 on) look where provide-tbb found libtbb
        assert env["LIBRARY_PATH"] == env["CMAKE_LIBRARY_PATH"] == "{TBB_LIB_DIR}"
    else:
        assert "LIBRARY_PATH" not in env and "CMAKE_LIBRARY_PATH" not in env


# ------------------------------------------------------------------ provision.choose_family
# rocm.toml [releases."7.0".families] (TheRock@de9728b3d): what its per-family index served;
# ordered narrowest first (members, then name), after the default family gfx94X-dcgpu
SERVED_70 = {"gfx94X-dcgpu": ["gfx942"], "gfx950-dcgpu": ["gfx950"],
             "gfx110X-dgpu": ["gfx1100", "gfx1101", "gfx1102"], "gfx1151": ["gfx1151"],
             "gfx120X-all": ["gfx1200", "gfx1201"]}


@pytest.mark.parametrize(("targets", "family"), [
    (["gfx942"], "gfx94X-dcgpu"),                      # the default covers them
    (["gfx950:xnack-"], "gfx950-dcgpu"),               # a feature does not change the processor
    (["gfx1102", "gfx1100"], "gfx110X-dgpu"),          # one family covers them all
    (["gfx1200", "gfx1201"], "gfx120X-all"),
    (["gfx942", "gfx1100", "gfx1101"], "gfx110X-dgpu"),  # none covers all: the one serving most
    (["gfx942", "gfx1100"], "gfx94X-dcgpu"),           # a tie: the default
    (["gfx1100", "gfx1200"], "gfx120X-all"),           # a tie without it: the narrower
    (["gfx1151", "gfx1200"], "gfx1151"),
    (["gfx90a"], "gfx94X-dcgpu"),                      # none serves it: the default
    (["gfx90a", "gfx908"], "gfx94X-dcgpu"),
])
def test_the_family_of_a_per_family_index_is_the_one_serving_most_targets(
        targets: list[str], family: str) -> None:
    from toolkit.plan.provision import choose_family

    raw = tomllib.loads((data_dir() / "rocm.toml").read_text())["releases"]["7.0"]
    assert raw["families"]["served"] == SERVED_70 and raw["default_family"] == "gfx94X-dcgpu"
    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    assert choose_family(m, b, targets, None) == family
    # a family asked for is taken as it is; one the index did not serve is named with those it did
    assert choose_family(m, b, targets, "gfx1151") == "gfx1151"
    with pytest.raises(UsageError) as err:
        choose_family(m, b, targets, "gfx90a")
    assert err.value.message == ("unknown GPU family 'gfx90a' by ROCm 7.0's index; valid: "
                                 "gfx110X-dgpu, gfx1151, gfx120X-all, gfx94X-dcgpu, gfx950-dcgpu")


# ------------------------------------------------------------------ provision._lock_for
@pytest.mark.parametrize("build_id", ["apex-1.8.0-cp312-rocm7.0", "apex-1.7.0-cp312-rocm6.4",
                                      "apex-1.8.0-cp313t-rocm6.4"])
def test_a_lock_is_used_when_current_and_refused_naming_the_session_that_remakes_it(build_id: str) -> None:
    from toolkit.cli.noxsupport import matrix_pairs
    from toolkit.plan.locks import LockRef, inputs_hash, lock_name
    from toolkit.plan.provision import _lock_for

    m = load_matrix()
    b = m.build(build_id)
    opts = Options(gfx=("gfx942",))
    src = sources_for(m, b, opts)
    name = lock_name(m, b)
    path = f"/w/locks/{name}"
    current = LockRef(name, path, inputs_hash(b, src))
    other = LockRef("9.9-rocm1.0.txt", "/w/locks/9.9-rocm1.0.txt", None)  # another pair's
    with_locks = dataclasses.replace
    assert _lock_for(m, b, with_locks(opts, locks=(other, current)), src) == path
    assert _lock_for(m, b, with_locks(opts, locks=(other,)), src) is None
    assert _lock_for(m, b, opts, src) is None
    # the nox session that compiles this pair's lock (noxfile: lock-<py>-rocm<rocm> per pair)
    session = f"lock-{b.python}-rocm{b.rocm.version}"
    assert session in {f"lock-{py}-rocm{rocm}" for py, rocm, _ in matrix_pairs()}
    for inputs, why in ((None, "has no toolkit header"),
                        ("0" * 64, "is stale (the matrix or options changed)")):
        bad = LockRef(name, path, inputs)
        with pytest.raises(UsageError) as err:
            _lock_for(m, b, with_locks(opts, locks=(bad,)), src)
        assert err.value.message == f"lock {path} {why}"
        assert err.value.hint == f"nox -s {session} to regenerate it, or --no-lock"
        assert err.value.exit_code == 2
        assert _lock_for(m, b, with_locks(opts, locks=(bad,), no_lock=True), src) is None


# ------------------------------------------------------------------ seed 111's survivors
def test_a_wheel_is_named_into_the_staging_folder_the_readme_names() -> None:
    """toolkit/README.md: `name-wheel` into `build/<id>/staged/`, then check and publish."""
    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    p = plan(m, b, Options(gfx=("gfx942",)), HOST, LAYOUT)
    name = p.step("name-wheel").action
    assert name.staging == f"/w/build/{b.id}/staged"  # type: ignore[union-attr]
    assert name.wheelhouse == f"/w/build/{b.id}/wheelhouse"  # type: ignore[union-attr]
    assert p.step("expect-wheel").description == (
        "the built wheel must be apex 1.8.0+rocm7.0git{SHA8}, what apex's setup.py makes for "
        "this command line and environment")


@pytest.mark.parametrize("build_id", ["apex-1.8.0-cp312-rocm6.4", "apex-1.4.0-cp310-rocm6.1"])
def test_an_sdk_from_an_index_records_no_system_version(build_id: str) -> None:
    """``--rocm-from pip`` on a release rocm.toml installs from the system: the SDK comes from
    the index given, so the system install's version (6.4.3) is no input of the lock."""
    m = load_matrix()
    b = m.build(build_id)
    assert b.rocm.sdk.provider == "system" and b.rocm.sdk.version
    pip = sources_for(m, b, Options(rocm_from="pip", index_url="https://sdk.example/v2/"))
    assert (pip.provider, pip.system_version) == ("pip", None)
    assert sources_for(m, b, Options()).system_version == b.rocm.sdk.version
    # the same for a project without torch (the early return)
    from toolkit.plan.recipes.generic import generic_build

    own = generic_build("demo", "demo", "1.0", "/src", "3.12", b.rocm)
    assert sources_for(m, own, Options(rocm_from="pip", index_url="https://sdk.example/v2/"),
                       ).system_version is None
    assert sources_for(m, own, Options()).system_version == b.rocm.sdk.version


def test_every_provisioning_step_but_check_env_is_skipped_in_a_ready_environment() -> None:
    """provision.py: every step but check-env (which decides) is skipped while the
    environment's stamp matches, whatever the SDK's provider; the build's own steps never."""
    m = load_matrix()
    seen: set[str] = set()
    for b in m.builds:
        if b.python != "3.12":
            continue
        for opts in (Options(), Options(rocm_sdk_test=True)):
            p = plan(m, b, opts, HOST, LAYOUT)
            names = [s.name for s in p.steps]
            ready = names.index("mark-env-ready")
            assert names[0] == "check-env" and not p.steps[0].reuse_env
            assert all(s.reuse_env for s in p.steps[1:ready + 1]), b.id
            assert not any(s.reuse_env for s in p.steps[ready + 1:]), b.id
            seen.update(names[1:ready])
    assert {"install-rocm-sdk", "pin-torch", "install-torch", "rocm-sdk-test", "rocm-sdk-init",
            "probe-indexes", "create-env"} <= seen


def test_a_torch_index_is_probed_wherever_it_stands_among_the_options() -> None:
    from toolkit.core.steps import IndexProbe
    from toolkit.plan.provision import _probes
    from toolkit.plan.sources import Sources

    src = Sources("system", None, None, None, None, (), "torch",
                  ("--find-links", "/links", "--extra-index-url", "https://pypi.org/simple/",
                   "--index-url", "https://torch.example/"))
    assert _probes(src, None) == (IndexProbe("https://torch.example/", "torch", "torch index"),
                                  IndexProbe("/links", None, "find-links location"))


@pytest.mark.parametrize(("build_id", "has"), [("apex-1.10.0-cp312-rocm7.1", False),
                                               ("apex-1.11.0-cp312-rocm7.1", True),
                                               ("apex-1.13.0-cp312-rocm7.2", True)])
def test_apex_111_on_builds_fused_conv_bias_relu(build_id: str, has: bool) -> None:
    """ROCm/apex@c0f56f7ec (release/1.11.0) added op_builder/fused_conv_bias_relu.py;
    release/1.10.0 (@e97c6656f) has no such op."""
    from toolkit.plan.recipes.apex import ApexRecipe

    pv = load_matrix().build(build_id).pkg_version
    mods = ApexRecipe().expected_modules(pv, Options())
    assert ("apex.fused_conv_bias_relu" in mods) is has
    assert "apex.fused_layer_norm_cuda" in mods and "apex.fused_bias_swiglu" in mods


def test_a_package_variant_build_never_sees_build_rocm_version() -> None:
    """fbgemm_gpu up to v1.2 (``--package_variant=rocm``) runs without BUILD_ROCM_VERSION,
    whether or not the base environment carries it; v1.3 on keeps it."""
    from types import MappingProxyType

    from toolkit.plan.model import Context
    from toolkit.plan.recipes.fbgemm_gpu import FbgemmGpuRecipe

    m = load_matrix()
    for build_id, base, want in (("fbgemm_gpu-1.2.0-cp312-rocm6.3", {}, None),
                                 ("fbgemm_gpu-1.2.0-cp312-rocm6.3", {"BUILD_ROCM_VERSION": "6.3"}, None),
                                 ("fbgemm_gpu-1.3.0-cp312-rocm6.4", {"BUILD_ROCM_VERSION": "6.4"}, "6.4")):
        ctx = Context(m.build(build_id), Options(), HOST, LAYOUT, ("gfx90a",),
                      RocmPaths.system("/opt/rocm"), MappingProxyType(dict(base)))
        steps = {s.name: s for s in FbgemmGpuRecipe().build_steps(ctx)}
        assert steps["build-wheel"].env.get("BUILD_ROCM_VERSION") == want, build_id


def test_every_version_of_a_build_belongs_to_its_package() -> None:
    from toolkit.plan.recipes.generic import generic_build

    m = load_matrix()
    builds = [*m.builds, demo_build("3.12", None), demo_build("3.13t", ("/opt/rocm", "6.4")),
              generic_build("my_ext", "my-ext", "1.0", "/src", "3.12", m.rocm["7.1"])]
    for b in builds:
        assert b.pkg_version.package == b.package.name, b.id
        assert b.pkg_version in b.package.versions, b.id


def test_torch_sources_are_option_value_pairs() -> None:
    """Every reader of ``Sources.torch_args`` (index_args, _probes, uv_index_args,
    requirements_in) walks it two by two: a dangling option is refused where it is made."""
    from toolkit.plan.sources import Sources

    with pytest.raises(ValueError, match=r"^torch_args must be option-value pairs, got \('--index-url',\)$"):
        Sources("system", None, None, None, None, (), "torch", ("--index-url",))
    with pytest.raises(ValueError, match="option-value pairs"):
        Sources("system", None, None, None, None, (), "torch", ("--find-links", "/l", "--index-url"))
    for args in ((), ("--index-url", "https://t/"), ("--index-url", "https://t/", "--find-links", "/l")):
        assert Sources("system", None, None, None, None, (), "torch", args).torch_args == args


# ------------------------------------------------------------------ provision.provision_steps
@pytest.mark.parametrize(("build_id", "hip"), [("apex-1.6.0-cp312-rocm6.2.4", "6.2"),
                                               ("apex-1.8.0-cp312-rocm7.0", "7.0"),
                                               ("apex-1.9.0-cp312-rocm7.13", "7.13")])
def test_each_provisioning_step_acts_on_the_builds_environment(build_id: str, hip: str) -> None:
    """rocm.toml: ROCm 6.2.4's HIP reports 6.2 (its `hip`), the others their own release;
    install-torch checks torch.version.hip against it, the SDK against the release."""
    from toolkit.core.steps import (
        CheckEnv,
        CreateEnv,
        InstallSdk,
        InstallTorch,
        MarkEnvReady,
        UseSystemRocm,
    )
    from toolkit.plan.provision import provision_steps

    raw = tomllib.loads((data_dir() / "rocm.toml").read_text())["releases"]
    m = load_matrix()
    b = m.build(build_id)
    assert raw[b.rocm.version]["hip"] == hip
    host = dataclasses.replace(HOST, uv="/opt/uv/bin/uv", interpreters={"3.12": "/usr/bin/python3.12"})
    steps, _, _ = provision_steps(m, b, Options(gfx=("gfx942",)), host, LAYOUT)
    by = {s.name: s for s in steps}
    env_dir, env_python = str(LAYOUT.env_dir(b)), str(LAYOUT.env_python(b))
    check = by["check-env"].action
    assert isinstance(check, CheckEnv)
    assert (check.env_dir, check.python, check.interpreter, check.lock) == (
        env_dir, "3.12", "/usr/bin/python3.12", None)
    assert by["create-env"].action == CreateEnv(env_dir, "/opt/uv/bin/uv")
    assert by["create-env"].description == "create the Python 3.12 environment"
    assert by["mark-env-ready"].action == MarkEnvReady(env_dir)
    assert by["mark-env-ready"].description == "mark the environment ready (only after every step above)"
    assert by["probe-indexes"].description == (
        "fail fast when a package index is unreachable or lacks its project (before the "
        "environment is touched)")
    torch = by["install-torch"].action
    assert isinstance(torch, InstallTorch)
    assert (torch.python, torch.hip, torch.rocm) == (env_python, hip, b.rocm.version)
    assert torch.install.argv[:6] == ("/opt/uv/bin/uv", "pip", "install", "--python", env_python,
                                      "--prerelease=allow")
    sdk = by["install-rocm-sdk"].action
    if raw[b.rocm.version]["sdk"]["provider"] == "pip":
        assert isinstance(sdk, InstallSdk) and (sdk.python, sdk.rocm) == (env_python, b.rocm.version)
        assert sdk.install.argv[:8] == ("/opt/uv/bin/uv", "pip", "install", "--python", env_python,
                                        "--prerelease=allow", "--refresh-package", "rocm")
    else:
        want = raw[b.rocm.version]["sdk"]["version"]
        assert sdk == UseSystemRocm("/opt/rocm", want, False)


def test_a_cpu_build_takes_the_hosts_rocm_paths_when_it_has_an_install() -> None:
    from toolkit.env.host import SystemRocm
    from toolkit.plan.provision import provision_steps

    m = load_matrix()
    cpu = demo_build("3.12", None)
    for host, root in ((HOST, "/opt/rocm"),
                       (dataclasses.replace(HOST, system_rocm=SystemRocm("/opt/rocm-6.4.3", "6.4")),
                        "/opt/rocm-6.4.3")):
        # the demo's options (toolkit/cli/commands/demo.py: --rocm-from system)
        steps, paths, family = provision_steps(m, cpu, Options(gfx=("gfx90a",), rocm_from="system"),
                                               host, LAYOUT)
        assert paths == RocmPaths.system(root) and family is None
        # no ROCm to install or use, no torch: the environment alone
        assert [s.name for s in steps] == ["check-env", "create-env", "mark-env-ready"]


# ------------------------------------------------------------------ planner.plan: the tail
@pytest.mark.parametrize("smoke", [True, False])
def test_a_built_wheel_is_checked_smoke_tested_and_published_from_the_work_folder(smoke: bool) -> None:
    from toolkit.core.steps import CheckWheel, Publish, Smoke
    from toolkit.plan.recipes.fbgemm_gpu import SYMBOLS

    m = load_matrix()
    b = m.build("fbgemm_gpu-1.3.0-cp312-rocm6.4")
    p = plan(m, b, Options(gfx=("gfx942", "gfx90a"), smoke=smoke), HOST, LAYOUT,
             toolkit_python="/usr/bin/python3")
    assert (p.targets, p.family, p.source) == (("gfx942", "gfx90a"), None, None)
    names = [s.name for s in p.steps]
    tail = ["expect-wheel", "name-wheel", "check", *(["install-wheel", "smoke"] if smoke else []),
            "publish"]
    assert names[names.index("expect-wheel"):] == tail
    check = p.step("check")
    assert check.description == "symbol, GLIBCXX, GPU-code and hygiene checks (fail on findings)"
    # fbgemm_gpu links torch and tbb; the system ROCm's library folder is /opt/rocm/lib
    assert check.action == CheckWheel("/usr/bin/python3", "{WHEEL}", f"/w/artifacts/{b.id}",
                                      gfx=("gfx942", "gfx90a"),
                                      with_libs=("{TORCH_LIB}", "/opt/rocm/lib", "{TBB_LIB_DIR}"),
                                      require_symbols=SYMBOLS)
    publish = p.step("publish")
    assert publish.action == Publish("{WHEEL}", f"/w/dist/{b.id}")
    assert publish.description == f"publish the checked wheel into /w/dist/{b.id}"
    if smoke:
        install = p.step("install-wheel")
        assert install.description == "install the named wheel into the build's environment"
        assert install.argv[1:] == ("pip", "install", "--python", str(LAYOUT.env_python(b)),
                                    "--no-deps", "--reinstall", "{WHEEL}")
        s = p.step("smoke")
        assert s.action == Smoke("/usr/bin/python3", str(LAYOUT.env_dir(b)), b.id,
                                 ("gfx942", "gfx90a"), "/w", f"/w/artifacts/{b.id}")
        assert s.description == ("smoke tests against the installed wheel (GPU tests skip without "
                                 "a GPU, with the reason)")


def test_a_wheel_without_gpu_code_is_not_asked_for_targets() -> None:
    m = load_matrix()
    jit = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"),
               Options(gfx=("gfx942",), recipe_options=("apex-ops=jit",)), HOST, LAYOUT)
    check = jit.step("check").action
    assert check.gfx == () and check.with_libs == ("{TORCH_LIB}", "{ROCM_ROOT}/lib")  # type: ignore[union-attr]
    cpu = plan(m, demo_build("3.12", None), Options(gfx=("gfx90a",), rocm_from="system"), HOST, LAYOUT)
    check = cpu.step("check").action
    # the sample needs no torch and a CPU build no ROCm
    assert check.gfx == () and check.with_libs == ()  # type: ignore[union-attr]
    assert cpu.family is None and cpu.source is None and cpu.options == Options(
        gfx=("gfx90a",), rocm_from="system")


# ------------------------------------------------------------------ the recipe registry
def test_a_recipe_is_found_by_name_and_an_unknown_one_named_with_the_valid_ones() -> None:
    from toolkit.plan.recipes import recipe_for

    for name in ("apex", "fbgemm_gpu", "sample", "generic"):
        assert recipe_for(name).name == name
    with pytest.raises(UsageError) as err:
        recipe_for("fbgemm")
    assert err.value.message == "unknown recipe 'fbgemm'; valid: apex, fbgemm_gpu, generic, sample"
    assert err.value.exit_code == 2


def test_the_build_styles_are_those_the_data_files_name() -> None:
    from toolkit.plan.recipes import build_styles

    styles = build_styles()
    for package in ("apex", "fbgemm_gpu"):
        doc = tomllib.loads((data_dir() / f"{package}.toml").read_text())
        named = {v["build_style"] for v in doc["versions"]}
        assert set(styles[doc["package"]["recipe"]]) == named  # every one used, none beyond
    assert styles["sample"] == styles["generic"] == ("setuptools",)
    assert set(styles) == {"apex", "fbgemm_gpu", "sample", "generic"}


def test_a_recipe_option_two_recipes_declare_differently_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import MappingProxyType

    from toolkit.plan import recipes
    from toolkit.plan.recipes.apex import APEX_OPS, ApexRecipe
    from toolkit.plan.recipes.base import RecipeOption
    from toolkit.plan.recipes.generic import GenericRecipe

    assert recipes.recipe_options() == {"apex-ops": APEX_OPS}

    class Same(GenericRecipe):
        name = "same"
        options = MappingProxyType({"apex-ops": RecipeOption(APEX_OPS.choices, APEX_OPS.help)})

    class Other(GenericRecipe):
        name = "other"
        options = MappingProxyType({"apex-ops": RecipeOption(("jit", "prebuilt"), APEX_OPS.help)})

    monkeypatch.setattr(recipes, "REGISTRY", {"apex": ApexRecipe(), "same": Same()})
    assert recipes.recipe_options() == {"apex-ops": APEX_OPS}  # the same meaning twice: fine
    monkeypatch.setattr(recipes, "REGISTRY", {"apex": ApexRecipe(), "other": Other()})
    with pytest.raises(UsageError) as err:
        recipes.recipe_options()
    assert err.value.message == "recipe option 'apex-ops' is declared twice, differently"


@pytest.mark.parametrize(("given", "value"), [
    ((), "prebuilt"),                                  # the first choice is the default
    (("apex-ops=jit",), "jit"),
    (("other=x", "apex-ops=prebuilt"), "prebuilt"),    # another recipe's option is not this one
    (("apex-opsx=jit",), "prebuilt"),
])
def test_a_recipe_option_is_read_by_its_name(given: tuple[str, ...], value: str) -> None:
    from toolkit.plan.recipes.apex import ApexRecipe
    from toolkit.plan.recipes.base import option

    assert option(ApexRecipe(), Options(recipe_options=given), "apex-ops") == value


@pytest.mark.parametrize("item", ["apex-ops", "apex-ops=", "apex-ops=JIT", "apex-ops=jit=1"])
def test_a_recipe_option_outside_its_choices_is_refused(item: str) -> None:
    from toolkit.plan.recipes.apex import ApexRecipe
    from toolkit.plan.recipes.base import option

    with pytest.raises(UsageError) as err:
        option(ApexRecipe(), Options(recipe_options=(item,)), "apex-ops")
    value = item.partition("=")[2]
    assert err.value.message == f"unknown apex-ops value {value!r}; valid: prebuilt, jit"


# ------------------------------------------------------------------ provision.sources_for, whole
LINKS = ("https://links.example/",)
GFX = ("gfx942", "gfx90a:xnack+")


def test_the_sources_of_a_per_family_sdk_and_amds_torch() -> None:
    from toolkit.plan.sources import Sources

    m = load_matrix()
    src = sources_for(m, m.build("apex-1.8.0-cp312-rocm7.0"), Options(gfx=GFX, find_links=LINKS))
    # rocm.toml 7.0: TheRock's legacy per-family nightly index; torch 2.8 from AMD's
    # manylinux page; none of the served families covers gfx90a: the default serves gfx942
    assert src == Sources(
        "pip", "per-family", "gfx94X-dcgpu", "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/",
        "rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1", LINKS, "torch>=2.8,<2.9",
        ("--find-links", "https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/"))


@pytest.mark.parametrize(("build_id", "index", "sdk", "torch"), [
    ("apex-1.9.0-cp312-rocm7.13", "https://rocm.nightlies.amd.com/whl-multi-arch/",
     ">1.0,>=7.13.0a0,<7.14", ">=2.9,<2.10"),
    ("apex-1.13.0-cp312-rocm10.1", "https://nightly.repo.amd.com/rocm/whl-next/",
     ">1.0,>=10.1.0a0,<10.2", ">=2.13,<2.14"),
])
def test_the_sources_of_a_multi_arch_sdk_and_its_split_torch(
        build_id: str, index: str, sdk: str, torch: str) -> None:
    """RELEASES.md (TheRock@89553ce37): one index, `rocm[libraries,devel,device-<gfx>]`;
    torch split into a host wheel and amd-torch-device-<gfx> at torch's version."""
    from toolkit.plan.sources import Sources

    m = load_matrix()
    src = sources_for(m, m.build(build_id), Options(gfx=GFX))
    spec = f"rocm[libraries,devel,device-gfx942,device-gfx90a]{sdk}"
    assert src == Sources(
        "pip", "multi-arch", None, index, spec, (), f"torch[device-gfx942,device-gfx90a]{torch}",
        ("--index-url", index, "--extra-index-url", "https://pypi.org/simple/"),
        None, (spec, f"amd-torch-device-gfx942{torch}", f"amd-torch-device-gfx90a{torch}"))
    # an index given replaces the data's, a trailing slash added
    other = sources_for(m, m.build(build_id), Options(gfx=("gfx942",), index_url="https://sdk.example/x"))
    assert other.sdk_index == "https://sdk.example/x/"


def test_the_sources_of_a_system_sdk_and_upstream_pytorch() -> None:
    from toolkit.plan.sources import Sources

    m = load_matrix()
    src = sources_for(m, m.build("apex-1.8.0-cp312-rocm6.4"), Options(gfx=GFX, find_links=LINKS))
    # download.pytorch.org serves torch with its dependencies: no PyPI beside it
    assert src == Sources("system", None, None, None, None, LINKS, "torch==2.8.0+rocm6.4",
                          ("--index-url", "https://download.pytorch.org/whl/rocm6.4/"), "6.4.3")


# ------------------------------------------------------------------ model.render
def test_a_rendered_plan_numbers_its_steps_and_explains_the_placeholders_it_uses() -> None:
    import re

    from toolkit.core.steps import PLACEHOLDER_HELP
    from toolkit.plan.model import render

    m = load_matrix()
    p = plan(m, m.build("fbgemm_gpu-1.3.0-cp312-rocm6.4"), Options(gfx=("gfx90a", "gfx942")),
             HOST, LAYOUT)
    text = render(p)
    lines = text.split("\n")
    assert lines[0] == "# plan for fbgemm_gpu-1.3.0-cp312-rocm6.4  (targets: gfx90a, gfx942)"
    n = len(p.steps)
    heads = [ln for ln in lines if re.match(r"^\[\d+/\d+\] ", ln)]
    assert heads == [f"[{i}/{n}] {s.name} ({s.kind}): {s.description}"
                     for i, s in enumerate(p.steps, 1)]
    for head in heads:  # each step starts after an empty line
        assert lines[lines.index(head) - 1] == ""
    # every placeholder a step uses is explained once, in the order of PLACEHOLDER_HELP, then
    # the library provide-tbb learns
    used = [ph for ph in PLACEHOLDER_HELP if any(ph in s.text() for s in p.steps)]
    tail = lines[lines.index("# placeholders filled while running:"):]
    assert lines[lines.index(tail[0]) - 1] == ""
    assert tail[1:] == [*(f"#   {ph} = {PLACEHOLDER_HELP[ph]}" for ph in used),
                        "#   {TBB_LIB_DIR} = the folder holding libtbb.so (learned by provide-tbb)"]
    assert "{WHEEL}" in used and "{ROCM_ROOT}" not in used  # a system ROCm: nothing learned


# ------------------------------------------------------------------ GenericRecipe
@pytest.mark.parametrize("req", ["torch", "Torch>=2", "  torch ; python_version >= '3.9'",
                                 "TORCH[cuda]==2.8", "torch_x.Y>=1", "Scikit_Build.Core",
                                 "ninja", "a"])
def test_a_requirements_name_is_its_pep_503_name(req: str) -> None:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from toolkit.plan.recipes.generic import _requirement_name

    assert _requirement_name(req) == canonicalize_name(Requirement(req.strip()).name)


def test_a_project_that_asks_for_nothing_installs_the_front_end_alone() -> None:
    from toolkit.plan.recipes.generic import generic_build

    m = load_matrix()
    for requires, said, names in (((), "nothing", ["build"]),
                                  (("torch>=2", "TORCH"), "nothing", ["build"]),
                                  (("torch-x", "setuptools"), "torch-x, setuptools",
                                   ["build", "torch-x", "setuptools"])):
        b = generic_build("my_ext", "my-ext", "1.0", "/src/my_ext", "3.12", m.rocm["6.4"],
                          requires=requires)
        p = plan(m, b, Options(gfx=("gfx90a",), source="/src/my_ext"), HOST, LAYOUT)
        install = p.step("install-requirements")
        assert install.description == (f"install what my-ext's build backend asks for ({said}), "
                                       "and the build front-end")
        assert _names(install.argv) == names
        wheel = p.step("build-wheel")
        assert wheel.cwd == str(LAYOUT.worktree(b))
        expect = p.step("expect-wheel").action
        assert (expect.dist, expect.version) == ("my-ext", "1.0")  # type: ignore[union-attr]
        # a project on a ROCm install carries GPU code for the targets; the modules are read
        # from the installed wheel's RECORD, no symbols are required
        assert p.step("check").action.gfx == ("gfx90a",)  # type: ignore[union-attr]
        assert p.step("check").action.require_symbols == ()  # type: ignore[union-attr]
    from toolkit.plan.recipes.generic import GenericRecipe

    assert GenericRecipe().expected_modules(b.pkg_version) == ()


# ------------------------------------------------------------------ layout
def test_the_default_layout_is_the_current_folder_and_the_cache_resolved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path / "link")
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "link" / "cache"))
    here = Layout.default()
    assert here == Layout(tmp_path / "real", tmp_path / "real" / "cache")  # symlinks resolved
    assert Layout.default(tmp_path / "link" / "w") == Layout(tmp_path / "real" / "w",
                                                             tmp_path / "real" / "cache")
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", "")  # empty: as if unset (XDG, then ~/.cache)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert Layout.default().cache == tmp_path / "xdg" / "rocm-wheel-toolkit"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert Layout.default().cache == tmp_path / "home" / ".cache" / "rocm-wheel-toolkit"


@pytest.mark.parametrize(("build", "name"), [
    ("apex-1.8.0-cp312-rocm7.0", "3.12-rocm7.0-torch2.8"),
    ("apex-1.6.0-cp313t-rocm6.2.4", "3.13t-rocm6.2.4-torch2.6"),
    ("fbgemm_gpu-1.8.0-cp314-rocm7.1", "3.14-rocm7.1-torch2.13"),
])
def test_an_environment_is_named_for_its_python_rocm_and_torch(build: str, name: str) -> None:
    b = load_matrix().build(build)
    assert LAYOUT.env_name(b) == name
    assert LAYOUT.env_dir(b) == Path("/c/envs") / name
    assert LAYOUT.env_python(b) == Path("/c/envs") / name / "bin" / "python"
    assert LAYOUT.mirror(b.package.name) == Path(f"/c/sources/{b.package.name}.git")
    assert (LAYOUT.build_dir(b), LAYOUT.worktree(b), LAYOUT.dist(b), LAYOUT.artifacts(b)) == (
        Path(f"/w/build/{build}"), Path(f"/w/build/{build}/src"), Path(f"/w/dist/{build}"),
        Path(f"/w/artifacts/{build}"))
    # without torch (the sample): no torch part; the CPU variant is labelled cpu
    assert LAYOUT.env_name(demo_build("3.12", None)) == "3.12-cpu"
    assert LAYOUT.env_name(demo_build("3.12", ("/opt/rocm", "5.2"))) == "3.12-rocm5.2"


# ------------------------------------------------------------------ locks.header / lock_name
def test_a_lock_header_says_what_it_was_compiled_from_with_credentials_masked() -> None:
    from toolkit.plan.locks import _INPUTS, header
    from toolkit.plan.sources import Sources

    b = load_matrix().build("apex-1.8.0-cp312-rocm7.0")
    src = Sources("pip", "per-family", "gfx94X-dcgpu", "https://u:secret@sdk.example/v2/gfx94X-dcgpu/",
                  "rocm[libraries,devel]>1.0", (), "torch>=2.8,<2.9",
                  ("--find-links", "https://tok@repo.example/rocm-rel-7.0/"))
    digest = "ab" * 32
    text = header(b, src, "3.12-rocm7.0.txt", digest)
    assert text == (
        "# toolkit-lock: 3.12-rocm7.0 torch 2.8 family gfx94X-dcgpu\n"
        f"# toolkit-lock-inputs: {digest}\n"
        "# sdk: rocm[libraries,devel]>1.0 from https://***@sdk.example/v2/gfx94X-dcgpu/\n"
        "# torch: torch>=2.8,<2.9 --find-links https://***@repo.example/rocm-rel-7.0/\n"
        "# regenerate: nox -s lock-3.12-rocm7.0  (file 3.12-rocm7.0.txt)\n"
        "#\n")
    assert _INPUTS.search(text)[1] == digest  # type: ignore[index]  # read back as read_locks does
    bare = Sources("system", None, None, None, None, (), "torch==2.8.0+rocm6.4", ())
    lines = header(load_matrix().build("apex-1.8.0-cp312-rocm6.4"), bare, "x.txt", digest).splitlines()
    assert lines[0] == "# toolkit-lock: 3.12-rocm6.4 torch 2.8"  # no family
    assert lines[3] == "# torch: torch==2.8.0+rocm6.4"  # no trailing space without options


def test_a_pair_needing_several_torch_releases_has_one_lock_per_torch() -> None:
    from toolkit.plan.locks import lock_name

    m = load_matrix()
    torches = {b.pkg_version.torch_minor for b in m.builds if (b.python, b.rocm.version) == ("3.12", "6.4")}
    assert {"2.7", "2.8"} <= torches  # apex 1.7 -> torch 2.7, apex 1.8 -> torch 2.8 (apex.toml)
    assert lock_name(m, m.build("apex-1.7.0-cp312-rocm6.4")) == "3.12-rocm6.4-torch2.7.txt"
    assert lock_name(m, m.build("apex-1.8.0-cp312-rocm6.4")) == "3.12-rocm6.4-torch2.8.txt"
    # ROCm 6.0 has one torch (rocm.toml: 2.4 only): one lock for the pair
    one = {b.pkg_version.torch_minor for b in m.builds if (b.python, b.rocm.version) == ("3.12", "6.0")}
    assert one == {"2.4"} and lock_name(m, m.build("apex-1.4.0-cp312-rocm6.0")) == "3.12-rocm6.0.txt"


# ------------------------------------------------------------------ seed 112's survivors
def test_a_recorded_project_is_rebuilt_with_what_its_backend_asks_for_again(tmp_path: Path) -> None:
    """own_flat has no pyproject.toml: pypa/build then uses its default backend, whose
    requirements (build._builder._DEFAULT_BACKEND: setuptools >= 40.8.0) install-requirements
    installs again when the recorded build is made again."""
    from build._builder import _DEFAULT_BACKEND

    recorded: dict[str, Any] = {
        "recipe": "generic", "dist": "flat-ext",
        "build": {"id": "flat-ext-0.2.0-cp312-cpu", "version": "0.2.0", "python": "3.12",
                  "rocm": "cpu", "torch": ""},
        "sdk": {"provider": "none", "root": None}}
    build = standalone_build("flat-ext-0.2.0-cp312-cpu", recorded, str(PROJECT), tmp_path / "meta.log")
    assert build is not None and not (PROJECT / "pyproject.toml").exists()
    assert build.pkg_version.build_requires == tuple(_DEFAULT_BACKEND["requires"])
    p = plan(load_matrix(), build, Options(rocm_from="system", source=str(PROJECT)), HOST, LAYOUT)
    assert _names(p.step("install-requirements").argv) == ["build", "setuptools"]


def test_a_package_folder_is_kept_whatever_its_name_ends_with() -> None:
    m = load_matrix()
    b = m.build("fbgemm_gpu-1.3.0-cp312-rocm6.4")
    for subdir, folder in (("gpuX", "gpuX"), ("gpuX/", "gpuX"), ("a/X//", "a/X")):
        odd = dataclasses.replace(b, package=dataclasses.replace(b.package, subdir=subdir))
        p = plan(m, odd, Options(gfx=("gfx90a",)), HOST, LAYOUT)
        pkg_dir = f"{LAYOUT.worktree(odd)}/{folder}"
        assert p.step("build-wheel").cwd == pkg_dir and p.step("build-wheel").argv[-1] == pkg_dir


def test_the_samples_sources_are_the_package_data_it_builds() -> None:
    from toolkit.plan.recipes.sample import EXAMPLE

    for hip in (None, ("/opt/rocm", "5.2")):
        b = demo_build("3.12", hip)
        assert b.package.repo == str(EXAMPLE)
        setup_py = (Path(b.package.repo) / "setup.py").read_text()
        assert 'Extension("hip_sample._native"' in setup_py
        # without --source the plan copies nothing from elsewhere: it fetches that folder
        p = plan(load_matrix(), b, Options(gfx=("gfx90a",), rocm_from="system"), HOST, LAYOUT)
        assert p.step("get-sources").action.repo == str(EXAMPLE)  # type: ignore[union-attr]


# ------------------------------------------------------------------ the install commands, read by pip
def _pip_install(argv: tuple[str, ...]) -> tuple[Any, list[str]]:
    """``uv pip install ARGS`` read by pip's own install parser (uv pip takes pip's index and
    find-links options): (options, requirements). uv's own flags are taken off first."""
    from pip._internal.commands import create_command

    assert argv[1:5] == ("pip", "install", "--python", argv[4]) and argv[5] == "--prerelease=allow"
    args = list(argv[6:])
    for flag in ("--refresh-package", "--index-strategy"):
        if flag in args:
            at = args.index(flag)
            del args[at:at + 2]
    opts, reqs = create_command("install", isolated=True).parse_args(["--isolated", *args])
    return opts, reqs


def test_the_sdk_and_torch_installs_name_their_indexes_and_requirements() -> None:
    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    opts = Options(gfx=("gfx942",), find_links=LINKS)
    steps = {s.name: s for s in plan(m, b, opts, HOST, LAYOUT).steps}
    sdk_opts, sdk_reqs = _pip_install(steps["install-rocm-sdk"].argv)
    assert sdk_opts.index_url == "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"
    assert sdk_opts.find_links == list(LINKS) and not sdk_opts.extra_index_urls
    assert sdk_reqs == ["rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1"]
    # AMD's torch: first alone from its find-links page, no index at all ...
    pin_opts, pin_reqs = _pip_install(steps["pin-torch"].argv)
    assert (pin_opts.no_index, pin_opts.ignore_dependencies) == (True, True)
    assert pin_opts.find_links == ["https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/"]
    assert pin_reqs == ["torch>=2.8,<2.9"]
    # ... then with its dependencies from PyPI (pip's default index), the same page beside it
    t_opts, t_reqs = _pip_install(steps["install-torch"].argv)
    assert t_opts.find_links == ["https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/"]
    assert not t_opts.no_index and t_reqs == ["torch>=2.8,<2.9"]
    # from a lock: hashes required, the lock read, every index of both named
    from toolkit.plan.locks import LockRef, inputs_hash, lock_name

    ref = LockRef(lock_name(m, b), "/w/locks/x.txt", inputs_hash(b, sources_for(m, b, opts)))
    locked = {s.name: s for s in plan(m, b, dataclasses.replace(opts, locks=(ref,)), HOST, LAYOUT).steps}
    assert "pin-torch" not in locked
    for name in ("install-rocm-sdk", "install-torch"):
        argv = locked[name].argv
        assert argv[argv.index("--index-strategy") + 1] == "unsafe-best-match"
        l_opts, l_reqs = _pip_install(argv)
        assert l_opts.require_hashes and l_opts.requirements == ["/w/locks/x.txt"] and l_reqs == []
        assert l_opts.index_url == "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"
        assert l_opts.find_links == [*LINKS, "https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/"]
    assert locked["install-rocm-sdk"].description.endswith(", locked by /w/locks/x.txt")


# ------------------------------------------------------------------ model.options_from_json
@pytest.mark.parametrize(("data", "message"), [
    ([], "recorded options: expected a JSON object"),
    ("gfx=gfx90a", "recorded options: expected a JSON object"),
    ({"smoke": "yes"}, "recorded options: smoke must be true or false"),
    ({"rebuild": 1}, "recorded options: rebuild must be true or false"),
    ({"naming": 3}, "recorded options: naming must be a string or null"),
    ({"index_url": ["https://i/"]}, "recorded options: index_url must be a string or null"),
    ({"find_links": "https://l/"}, "recorded options: find_links must be a list of strings"),
    ({"recipe_options": [1]}, "recorded options: recipe_options must be a list of strings"),
])
def test_recorded_options_of_the_wrong_type_are_refused_by_field(data: Any, message: str) -> None:
    from toolkit.plan.model import options_from_json

    with pytest.raises(UsageError) as err:
        options_from_json(data)
    assert err.value.message == message and err.value.exit_code == 2


def test_recorded_options_read_back_every_field_as_written() -> None:
    import json

    from toolkit.plan.model import options_from_json, options_json

    every = Options(gfx=("gfx90a", "gfx942"), rocm_from="system", index_url="https://i.example/",
                    find_links=("https://l.example/",), family="gfx94X-dcgpu", source="/src",
                    naming="upstream", smoke=False, no_lock=True, allow_insecure_index=True,
                    allow_rocm_mismatch=True, rocm_sdk_test=True, recipe_options=("apex-ops=jit",),
                    rebuild=True)
    written = json.loads(json.dumps(options_json(every)))  # as a manifest stores it
    assert written["gfx"] == ["gfx90a", "gfx942"] and written["smoke"] is False
    assert written["index_url"] == "https://i.example/" and written["family"] == "gfx94X-dcgpu"
    assert options_from_json(written) == every
    assert options_from_json({}) == Options()
    assert options_from_json({"index_url": None, "rocm_from": None}) == Options()


# ------------------------------------------------------------------ planner._sources_steps
def test_sources_are_a_fresh_worktree_of_the_tag_and_its_submodules_from_mirrors() -> None:
    from toolkit.core.steps import FetchSources
    from toolkit.core.steps_more import FetchSubmodules, Submodule

    raw = next(v for v in tomllib.loads((data_dir() / "fbgemm_gpu.toml").read_text())["versions"]
               if v["version"] == "1.3.0")
    m = load_matrix()
    b = m.build("fbgemm_gpu-1.3.0-cp312-rocm6.4")
    p = plan(m, b, Options(gfx=("gfx90a",)), HOST, LAYOUT)
    worktree = f"/w/build/{b.id}/src"
    get = p.step("get-sources")
    assert get.action == FetchSources("https://github.com/pytorch/FBGEMM.git", raw["ref"],
                                      "/c/sources/fbgemm_gpu.git", worktree)
    assert get.description == (f"fresh worktree of https://github.com/pytorch/FBGEMM.git at "
                               f"{raw['ref']} (mirror /c/sources/fbgemm_gpu.git)")
    subs = p.step("get-submodules").action
    assert isinstance(subs, FetchSubmodules)
    assert (subs.worktree, subs.mirrors) == (worktree, "/c/sources/submodules")
    assert [(s.path, s.url) for s in subs.submodules] == list(raw["submodules"].items())
    # each mirror is named after its URL: host, owner, name (".git" once)
    assert subs.submodules[0] == Submodule("external/asmjit", "https://github.com/asmjit/asmjit.git",
                                           "/c/sources/submodules/github.com+asmjit+asmjit.git")
    assert subs.submodules[1] == Submodule("external/cpuinfo", "https://github.com/pytorch/cpuinfo",
                                           "/c/sources/submodules/github.com+pytorch+cpuinfo.git")
    # apex has no submodules: the worktree alone
    a = m.build("apex-1.8.0-cp312-rocm7.0")
    names = [s.name for s in plan(m, a, Options(gfx=("gfx942",)), HOST, LAYOUT).steps]
    assert "get-sources" in names and "get-submodules" not in names
    own = plan(m, a, Options(gfx=("gfx942",), source="/src/apex"), HOST, LAYOUT)
    assert own.step("get-sources").description == (
        "use the contributor's checkout /src/apex (copied, never modified)")
    assert own.source == "/src/apex"


# ------------------------------------------------------------------ model.Context.build_wheel
@pytest.mark.parametrize("rebuild", [False, True])
def test_the_build_wheel_step_carries_what_its_execution_needs(rebuild: bool) -> None:
    from types import MappingProxyType

    from toolkit.core.steps import BuildWheel, Command
    from toolkit.plan.model import Context

    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    opts = Options(gfx=("gfx942",), rebuild=rebuild)
    ctx = Context(b, opts, HOST, LAYOUT, ("gfx942",), RocmPaths.learned(), MappingProxyType({}))
    step = ctx.build_wheel("d", ("py", "-m", "build"), env={"LDSHARED": "{LDSHARED}", "A": "1"},
                           cwd="/somewhere", unset=("BUILD_FROM_NOVA",))
    assert step.name == "build-wheel" and step.description == "d" and not step.reuse_env
    env_python = str(LAYOUT.env_python(b))
    assert step.action == BuildWheel(
        Command(("py", "-m", "build"), env=MappingProxyType({"LDSHARED": "{LDSHARED}", "A": "1"}),
                unset=("BUILD_FROM_NOVA",), cwd="/somewhere"),
        f"/w/build/{b.id}/wheelhouse", f"/w/build/{b.id}/src", str(LAYOUT.env_dir(b)),
        sanitize_ldshared=env_python, force=rebuild)
    # LDSHARED left as it is: nothing to clean
    plain = ctx.build_wheel("d", ("py",), env={"LDSHARED": "gcc -shared"}, cwd="/x")
    assert plain.action.sanitize_ldshared is None  # type: ignore[union-attr]
    assert plain.action.build.unset == ()  # type: ignore[union-attr]
    # the whole plan: --rebuild reaches the build step
    p = plan(m, b, opts, HOST, LAYOUT)
    assert p.step("build-wheel").action.force is rebuild  # type: ignore[union-attr]


# ------------------------------------------------------------------ SampleRecipe.standalone
@pytest.mark.parametrize(("build_id", "python", "rocm"), [
    ("hip_sample-0.1.0-cp312-cpu", "3.12", "cpu"),
    ("hip_sample-0.1.0-cp313t-cpu", "3.13t", "cpu"),
    ("hip_sample-0.1.0-cp310-rocm6.4", "3.10", "6.4"),
    ("hip_sample-0.1.0-cp314t-rocm7.0", "3.14t", "7.0"),
])
def test_the_samples_build_id_names_its_python_and_rocm(build_id: str, python: str, rocm: str) -> None:
    from toolkit.plan.recipes.sample import SampleRecipe

    recorded = {"build": {"rocm": rocm}, "sdk": {"root": "/opt/rocm-x"}}
    b = SampleRecipe().standalone(build_id, recorded)
    assert b is not None and b.id == build_id
    assert (b.python, b.rocm.version, b.version) == (python, rocm, "0.1.0")
    assert b.rocm.sdk.provider == ("none" if rocm == "cpu" else "system")
    assert b.package.recipe == "sample" and b.package.dist == "hip-sample"


@pytest.mark.parametrize("build_id", ["hip_sample-0.2.0-cp312-cpu",  # another version: not ours
                                      "hip_sample-0.1.0-py312-cpu", "hip_sample-0.1.0-cp3-cpu",
                                      "apex-1.8.0-cp312-rocm7.0", "hip_sample-0.1.0-cp312-",
                                      "xhip_sample-0.1.0-cp312-cpu"])
def test_an_id_that_is_not_the_samples_is_no_sample_build(build_id: str) -> None:
    from toolkit.plan.recipes.sample import SampleRecipe

    assert SampleRecipe().standalone(build_id, {"build": {"rocm": "cpu"}, "sdk": {}}) is None


# ------------------------------------------------------------------ seed 113's survivors
def test_pips_index_options_in_uvs_terms_keep_the_torch_source_first() -> None:
    """uv's docs (indexes): `--index` is tried before `--default-index`; pip weighs them alike."""
    from toolkit.plan.provision import PYPI, uv_index_args

    assert uv_index_args(["--index-url", "https://t/", "--extra-index-url", PYPI,
                          "--extra-index-url", "https://more/", "--find-links", "/l"]) == (
        "--index", "https://t/", "--default-index", PYPI, "--index", "https://more/",
        "--find-links", "/l")
    assert uv_index_args([]) == ()
    with pytest.raises(ValueError):  # a dangling option is never dropped in silence
        uv_index_args(["--index-url", "https://t/", "--find-links"])


def test_apex_says_why_rocr_visible_devices_is_set() -> None:
    from toolkit.plan.recipes.apex import ApexRecipe

    note = ("evidence: op_builder/builder.py get_rocm_gpu_arch (rocminfo's first gfx replaces "
            "PYTORCH_ROCM_ARCH); ROCm/ROCR-Runtime src/core/util/flag.h (ROCR_VISIBLE_DEVICES "
            "set, even empty, filters every GPU)")
    assert ApexRecipe().notes({"ROCR_VISIBLE_DEVICES": ""}) == (note,)
    assert ApexRecipe().notes({"PYTORCH_ROCM_ARCH": "gfx942"}) == ()
    m = load_matrix()
    env = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"), Options(gfx=("gfx942",)), HOST, LAYOUT) \
        .step("build-wheel").env
    assert ApexRecipe().notes(env) == (note,)


@pytest.mark.parametrize("hip", [None, ("/opt/rocm", "5.2")])
def test_the_sample_is_built_from_its_worktree(hip: tuple[str, str] | None) -> None:
    b = demo_build("3.12", hip)
    p = plan(load_matrix(), b, Options(gfx=("gfx90a",), rocm_from="system"), HOST, LAYOUT)
    wheel = p.step("build-wheel")
    assert wheel.cwd == str(LAYOUT.worktree(b)) == wheel.argv[-1]


# ------------------------------------------------------------------ provision.device_extras
# gpus.toml's "therock-7.15" era targets (each has a rocm-sdk-device-<gfx> package), ordered by hand
THEROCK_715 = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx90c", "gfx942", "gfx950", "gfx1010",
               "gfx1011", "gfx1012", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034",
               "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
               "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201", "gfx1250")


def test_a_target_without_a_device_package_is_named_with_those_that_have_one() -> None:
    from toolkit.plan.provision import device_extras

    era = tomllib.loads((data_dir() / "gpus.toml").read_text())["eras"]["therock-7.15"]
    assert set(THEROCK_715) == set(era["targets"]) and "gfx1251" in era["extra_targets"]
    b = load_matrix().build("apex-1.13.0-cp312-rocm10.1")
    assert device_extras(b, ["gfx942:xnack+", "gfx90a", "gfx942", "gfx1250"]) == (
        "device-gfx942", "device-gfx90a", "device-gfx1250")  # one per processor, in order
    with pytest.raises(UsageError) as err:
        device_extras(b, ["gfx942", "gfx1251", "gfx1013:xnack-"])
    assert err.value.message == ("ROCm 10.1's multi-arch index has no rocm-sdk-device package for "
                                 f"gfx1251, gfx1013; valid: {', '.join(THEROCK_715)}")
    assert device_extras(demo_build("3.12", ("/opt/rocm", "5.2")), ["gfx9999"]) == ("device-gfx9999",)


def test_the_environments_definition_changes_with_the_interpreter_asked_for() -> None:
    import re

    from toolkit.plan.provision import provision_steps

    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm6.4")
    defs = set()
    for interp in ("python3.12", "/usr/bin/python3.12", "/opt/python/cp312-cp312/bin/python"):
        host = dataclasses.replace(HOST, interpreters={"3.12": interp})
        steps, _, _ = provision_steps(m, b, Options(), host, LAYOUT)
        definition = steps[0].action.definition  # type: ignore[union-attr]
        assert re.fullmatch(r"[0-9a-f]{64}", definition)  # a SHA-256, hex
        defs.add(definition)
    assert len(defs) == 3
