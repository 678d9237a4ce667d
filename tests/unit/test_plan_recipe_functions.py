"""toolkit/plan/recipes, function by function (issue 19, part 8, session 25): apex against
ROCm/apex's setup.py and pyproject.toml at its release branches, fbgemm_gpu against
pytorch/FBGEMM's build script and requirements.txt, the generic recipe against PEP 503 and
pypa/build's default backend, the sample against its own sources, and the registry."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import tomllib

from tests.unit.plan_truths import (
    HOST,
    LAYOUT,
    PROJECT,
    SHA,
    get_apex_version,
    install_names,
)
from toolkit.core.errors import UsageError
from toolkit.data.matrix import data_dir
from toolkit.data.specs import RESERVED_FILES
from toolkit.env.buildenv import RocmPaths
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix, standalone_build
from toolkit.plan.recipes import load_matrix as load_checked_matrix
from toolkit.plan.recipes.fbgemm_gpu import tbb_source
from toolkit.plan.recipes.sample import demo_build


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
    made = get_apex_version(build.version, env, reads_build_version=minor >= 7)
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
    assert sorted(install_names(install.argv)) == ["build", "ninja", "packaging", "setuptools", "wheel"]
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
    tbb = ["provide-tbb"] if tbb_source(build.pkg_version) is not None else []
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
    assert sorted(install_names(argv)) == ["build", "setuptools", "wheel"]
    env = p.step("build-wheel").env
    if tbb:  # -ltbb (v1.3) and find_library (v1.4 on) look where provide-tbb found libtbb
        assert env["LIBRARY_PATH"] == env["CMAKE_LIBRARY_PATH"] == "{TBB_LIB_DIR}"
    else:
        assert "LIBRARY_PATH" not in env and "CMAKE_LIBRARY_PATH" not in env


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


def test_a_recipe_is_found_by_name_and_an_unknown_one_named_with_the_valid_ones() -> None:
    from toolkit.plan.recipes import REGISTRY, recipe_for

    assert {"apex", "fbgemm_gpu", "sample", "generic"} <= set(REGISTRY)
    for name in REGISTRY:
        assert recipe_for(name).name == name
    with pytest.raises(UsageError) as err:
        recipe_for("fbgemm")
    head, _, valid = err.value.message.partition("; valid: ")
    assert head == "unknown recipe 'fbgemm'"
    assert valid.split(", ") == sorted(REGISTRY)  # every recipe, sorted
    assert err.value.exit_code == 2


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


@pytest.mark.parametrize("req", ["torch", "Torch>=2", "  torch ; python_version >= '3.9'",
                                 "TORCH[cuda]==2.8", "torch_x.Y>=1", "Scikit_Build.Core",
                                 "ninja", "a"])
def test_a_requirements_name_is_its_pep_503_name(req: str) -> None:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from toolkit.plan.recipes.generic import _requirement_name

    assert _requirement_name(req) == canonicalize_name(Requirement(req.strip()).name)


@pytest.mark.parametrize("req", ["", "   ", ">=2.0", "-e ./local", "# torch"])
def test_a_line_that_names_no_distribution_has_no_name(req: str) -> None:
    from packaging.requirements import InvalidRequirement, Requirement

    from toolkit.plan.recipes.generic import _requirement_name

    with pytest.raises(InvalidRequirement):  # packaging agrees: no PEP 508 name in it
        Requirement(req)
    assert _requirement_name(req) == ""


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
        assert install_names(install.argv) == names
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
    assert install_names(p.step("install-requirements").argv) == ["build", "setuptools"]


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


def test_the_build_styles_are_those_the_data_files_name() -> None:
    from toolkit.plan.recipes import REGISTRY, build_styles

    styles = build_styles()
    packages = [p.stem for p in data_dir().glob("*.toml") if p.name not in RESERVED_FILES]
    assert {"apex", "fbgemm_gpu"} <= set(packages)
    for package in packages:
        doc = tomllib.loads((data_dir() / f"{package}.toml").read_text())
        named = {v["build_style"] for v in doc["versions"]}
        assert set(styles[doc["package"]["recipe"]]) == named  # every one used, none beyond
    assert styles["sample"] == styles["generic"] == ("setuptools",)
    assert set(styles) == set(REGISTRY) >= {"apex", "fbgemm_gpu", "sample", "generic"}


def test_the_samples_build_names_every_target() -> None:
    b = demo_build("3.12", ("/opt/rocm", "5.2"))
    p = plan(load_matrix(), b, Options(gfx=("gfx90a", "gfx908"), rocm_from="system"), HOST, LAYOUT)
    wheel = p.step("build-wheel")
    assert wheel.description == "build hip_sample for gfx90a;gfx908"
    assert wheel.env["PYTORCH_ROCM_ARCH"] == "gfx90a;gfx908"  # the list the sample's setup.py reads


def test_the_sample_installs_the_build_front_end_and_says_so() -> None:
    p = plan(load_matrix(), demo_build("3.12", None), Options(gfx=("gfx90a",), rocm_from="system"),
             HOST, LAYOUT)
    install = p.step("install-requirements")
    assert install.description == "install the build front-end"
    # python -m build --no-isolation needs build, and the sample's setuptools backend
    assert install_names(install.argv) == ["build", "wheel", "setuptools"]


def test_submodules_are_fetched_into_the_sources_worktree() -> None:
    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan

    matrix, layout = load_checked_matrix(), Layout(Path("/w"), Path("/c"))
    build = matrix.build("fbgemm_gpu-1.3.0-cp312-rocm6.4")
    steps = {s["name"]: s for s in plan(matrix, build, Options(), HostFacts(), layout).as_json()["steps"]}
    # the submodules go into the very checkout get-sources made
    assert steps["get-submodules"]["action"]["worktree"] == steps["get-sources"]["action"]["worktree"]
    assert steps["get-submodules"]["action"]["worktree"] == str(layout.worktree(build))
