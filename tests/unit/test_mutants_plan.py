"""Tests for mutants of toolkit/plan and toolkit/data that survived `nox -s mutants` (issue 19).

Each asserts against a truth outside the planner: the tool that will run the command
(pypa/build's and pip's own argument parsers), the sample's own sources, PEP 508, or a value
worked out by hand.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from build.__main__ import main_parser as build_parser
from packaging.requirements import Requirement
from pip._internal.req.req_file import build_parser as pip_req_parser

from toolkit.core.errors import UsageError
from toolkit.core.steps import BuildWheel, CopySources, ExpectWheel
from toolkit.core.steps.env import ProvideLibrary
from toolkit.data.known import _in
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts, SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.locks import header, read_locks, requirements_in
from toolkit.plan.model import Options, Plan, options_from_json, options_json, render
from toolkit.plan.planner import plan
from toolkit.plan.provision import with_extras
from toolkit.plan.recipes.fbgemm_gpu import tbb_source
from toolkit.plan.recipes.generic import generic_build, torch_of_pair
from toolkit.plan.recipes.sample import EXAMPLE, demo_build, demo_rocm
from toolkit.plan.sources import Sources

LAYOUT = Layout(Path("/w"), Path("/c"))


def _demo(hip: tuple[str, str] | None) -> Plan:
    """The plan `python -m toolkit demo` makes (toolkit/cli/commands/demo.py)."""
    host = HostFacts(cores=16, mem_available_gib=64.0, interpreters={"3.12": "/usr/bin/python3.12"},
                     system_rocm=SystemRocm(*hip) if hip else None)
    opts = Options(gfx=("gfx90a",), rocm_from="system", source=str(EXAMPLE))
    return plan(load_matrix(), demo_build("3.12", hip), opts, host, LAYOUT)


@pytest.mark.parametrize("hip", [("/opt/rocm", "5.2"), None])
def test_the_samples_build_command_is_what_pypa_build_accepts(hip: tuple[str, str] | None) -> None:
    p = _demo(hip)
    action = p.step("build-wheel").action
    assert isinstance(action, BuildWheel)
    argv = action.build.argv
    assert argv[1:3] == ("-m", "build")  # `python -m build` runs pypa/build (its README)
    args = build_parser().parse_args(list(argv[3:]))  # build's own parser: unknown flags exit 2
    assert args.distributions == ["wheel"] and args.no_isolation
    assert args.outdir == action.wheelhouse == str(LAYOUT.build_dir(p.build) / "wheelhouse")
    assert args.srcdir == action.worktree
    assert action.env_dir == str(LAYOUT.env_dir(p.build))
    # the CPU variant is chosen by the environment variable the sample's setup.py reads
    setup_py = (EXAMPLE / "setup.py").read_text()
    if hip is None:
        assert dict(action.build.env)["HIP_SAMPLE_VARIANT"] == "cpu"
        assert 'os.environ.get("HIP_SAMPLE_VARIANT") == "cpu"' in setup_py
        assert p.step("build-wheel").description == "build hip_sample's CPU variant (no GPU code)"
    else:
        assert "HIP_SAMPLE_VARIANT" not in dict(action.build.env)
        assert p.step("build-wheel").description == "build hip_sample for gfx90a"
    install = p.step("install-requirements").action.argv  # type: ignore[union-attr]
    assert install[1:3] == ("pip", "install")  # `uv pip install` (uv's docs)
    names = {Requirement(r).name.lower() for r in install[5:]}
    assert names == {"build", "wheel", "setuptools"}  # what python -m build --no-isolation needs


def test_requirements_in_means_to_pip_what_the_sources_say() -> None:
    src = Sources("pip", "per-family", "gfx94X-dcgpu", "https://sdk.example/v2/gfx94X-dcgpu/",
                  "rocm[libraries,devel]>1.0", ("/links",), "torch==2.7.1",
                  ("--index-url", "https://torch.example/whl/", "--find-links", "/more"))
    text = requirements_in(src)
    parser = pip_req_parser()
    default_index = parser.parse_args([])[0].index_url  # pip's own default (PyPI)
    index: str | None = None
    extra: list[str] = []
    links: list[str] = []
    reqs: list[str] = []
    for line in text.splitlines():
        if line.startswith("-"):
            opts, _ = pip_req_parser().parse_args(shlex.split(line))  # fresh: its lists accumulate
            index = opts.index_url if opts.index_url != default_index else index
            extra += opts.extra_index_urls or []
            links += opts.find_links or []
        else:
            reqs.append(line)
    # pip reads one --index-url (the SDK's) and adds the torch index as an extra one
    assert index == "https://sdk.example/v2/gfx94X-dcgpu/"
    assert extra == ["https://torch.example/whl/"] and links == ["/links", "/more"]
    assert reqs == ["rocm[libraries,devel]>1.0", "torch==2.7.1"]


def test_a_lock_header_names_the_pair_the_torch_and_the_family() -> None:
    m = load_matrix()
    build = m.build("apex-1.8.0-cp312-rocm7.0")
    src = Sources("pip", "per-family", "gfx94X-dcgpu", "https://sdk.example/", "rocm>1", (), "torch", ())
    first = header(build, src, "3.12-rocm7.0-gfx94X-dcgpu.txt", "abc").splitlines()[0]
    assert first == f"# toolkit-lock: 3.12-rocm7.0 torch {build.pkg_version.torch_minor} family gfx94X-dcgpu"
    system = Sources("system", None, None, None, None, (), "torch", ())
    lines = header(build, system, "x.txt", "abc").splitlines()
    assert lines[2] == "# sdk: system ROCm"  # no index: nothing after it


def test_extras_are_merged_into_a_requirement_as_pep_508_reads_it() -> None:
    merged = with_extras("rocm[libraries,devel]>1.0", ["device-gfx942", "devel"])
    req = Requirement(merged)
    assert req.name == "rocm" and req.extras == {"libraries", "devel", "device-gfx942"}
    assert str(req.specifier) == ">1.0"
    assert Requirement(with_extras("torch==2.7", [])).extras == set()
    with pytest.raises(UsageError, match="not a requirement"):
        with_extras("[x]", ["a"])


def test_options_recorded_before_recipe_options_still_read() -> None:
    old = options_from_json({"apex_ops": "none", "gfx": ["gfx90a"]})
    assert old.recipe_options == ("apex-ops=none",) and old.gfx == ("gfx90a",)
    assert options_from_json({"apex_ops": 3}).recipe_options == ()
    assert options_from_json(options_json(Options(gfx=("gfx942",), rebuild=True))) == \
        Options(gfx=("gfx942",), rebuild=True)
    with pytest.raises(UsageError, match=r"unknown field 'nope'; valid: .*\bgfx\b"):
        options_from_json({"nope": 1})
    with pytest.raises(UsageError, match="gfx must be a list of strings"):
        options_from_json({"gfx": ["gfx90a", 3]})
    assert "locks" not in options_json(Options())


def test_a_version_that_is_not_pep_440_is_in_no_range() -> None:
    assert _in(">=2.7", "2.7.1") and not _in(">=2.7", "2.6") and _in("", "anything")
    assert not _in(">=0", "not-a-version")


def test_an_unknown_rocm_of_a_pair_is_named_with_the_valid_ones() -> None:
    m = load_matrix()
    with pytest.raises(UsageError) as err:
        m.pair_builds("3.12", "9.9")
    assert str(err.value).startswith("unknown ROCm version '9.9'; valid: ")
    assert "7.0" in str(err.value).split("valid: ")[1].split(", ")


def test_the_sample_is_copied_from_the_contributors_checkout_into_the_worktree() -> None:
    p = _demo(("/opt/rocm", "5.2"))
    get = p.step("get-sources")
    assert isinstance(get.action, CopySources)
    assert (get.action.source, get.action.worktree) == (str(EXAMPLE), str(LAYOUT.worktree(p.build)))
    # the sample has no submodules: nothing is said about them
    assert get.description == f"use the contributor's checkout {EXAMPLE} (copied, never modified)"
    wheel = p.step("build-wheel").action
    assert isinstance(wheel, BuildWheel)
    # the planner asks for LDSHARED to be cleaned: the build step says from which Python
    env_python = str(LAYOUT.env_dir(p.build) / "bin" / "python")
    assert dict(wheel.build.env)["LDSHARED"] == "{LDSHARED}" and wheel.sanitize_ldshared == env_python


@pytest.mark.parametrize(("build_id", "provider"), [("fbgemm_gpu-1.3.0-cp312-rocm6.4", "pypi"),
                                                    ("fbgemm_gpu-1.5.0-cp313-rocm7.0", "pypi"),
                                                    ("fbgemm_gpu-1.5.0-cp313-rocm7.0", "system")])
def test_tbb_is_libtbb_found_where_the_build_looks(build_id: str, provider: str) -> None:
    import dataclasses

    m = load_matrix()
    build = m.build(build_id)
    if provider == "system":  # the data may say so (no shipped entry does today)
        pv = build.pkg_version
        assert tbb_source(pv) is not None
        pv = dataclasses.replace(pv, recipe_data={**pv.recipe_data, "tbb": {"provider": "system"}})
        build = dataclasses.replace(build, pkg_version=pv)
    p = plan(m, build, Options(gfx=("gfx90a",)), HostFacts(cores=16, mem_available_gib=64.0), LAYOUT)
    tbb = p.step("provide-tbb").action
    assert isinstance(tbb, ProvideLibrary)
    # -ltbb makes ld look for libtbb.so (ld(1), -l namespec); either header is TBB's
    assert tbb.library == "libtbb.so" and set(tbb.headers) == {"tbb/tbb.h", "oneapi/tbb.h"}
    spec = tbb_source(p.build.pkg_version)
    assert spec is not None
    if spec.provider == "pypi":
        env_dir = str(LAYOUT.env_dir(p.build))
        assert tbb.source == f"pypi {spec.spec}" and tbb.lib_dirs == (f"{env_dir}/lib",)
        assert tbb.include_dirs == (f"{env_dir}/include",)
    else:
        assert tbb.install is None and tbb.source == "system" and tbb.include_dirs == ("/usr/include",)
        assert "/usr/lib/x86_64-linux-gnu" in tbb.lib_dirs  # Debian's multiarch folder
        assert p.step("provide-tbb").description.startswith("use the system's libtbb;")
    env = dict(p.step("build-wheel").action.build.env)  # type: ignore[union-attr]
    assert env["LIBRARY_PATH"] == env["CMAKE_LIBRARY_PATH"] == tbb.placeholder == "{TBB_LIB_DIR}"
    text = render(p)
    assert "#   {TBB_LIB_DIR} = the folder holding libtbb.so (learned by provide-tbb)" in text
    assert "\n# placeholders filled while running:" in text


def test_a_lock_is_read_whatever_bytes_follow_its_header(tmp_path: Path) -> None:
    digest = "ab" * 32
    (tmp_path / "3.12-rocm7.0.txt").write_bytes(
        f"# toolkit-lock-inputs: {digest}\n".encode() + b"# \xff\xfe not UTF-8\ntorch==2.7\n")
    (tmp_path / "old.txt").write_text("torch==2.6\n")
    refs = read_locks(tmp_path)
    assert [(r.name, r.path, r.inputs) for r in refs] == [
        ("3.12-rocm7.0.txt", str((tmp_path / "3.12-rocm7.0.txt").resolve()), digest),
        ("old.txt", str((tmp_path / "old.txt").resolve()), None)]
    assert Layout(Path("/w"), Path("/c")).locks() == Path("/w/locks")  # README: locks/<pair>.txt


def test_a_project_outside_the_matrix_installs_its_backends_requirements_but_torch() -> None:
    rocm = demo_rocm(("/opt/rocm", "5.2"))
    build = generic_build("my_ext", "my-ext", "1.2.3", "/src/my_ext", "3.12", rocm,
                          requires=("setuptools>=64", "Torch>=2", "ninja"))
    assert build.rocm is rocm and build.package.dist == "my-ext" and build.pkg_version.rocm == ("5.2",)
    host = HostFacts(cores=16, mem_available_gib=64.0, interpreters={"3.12": "/usr/bin/python3.12"},
                     system_rocm=SystemRocm("/opt/rocm", "5.2"))
    opts = Options(gfx=("gfx90a", "gfx908"), rocm_from="system", source="/src/my_ext")
    p = plan(load_matrix(), build, opts, host, LAYOUT)
    install = p.step("install-requirements")
    assert install.description == ("install what my-ext's build backend asks for (setuptools>=64, ninja), "
                                   "and the build front-end")
    # "Torch" is torch (PEP 503 names are compared lower-cased): the environment provides it
    names = [Requirement(r).name for r in install.action.argv[5:]]  # type: ignore[union-attr]
    assert names == ["build", "setuptools", "ninja"]
    wheel = p.step("build-wheel")
    assert wheel.description == "build my-ext 1.2.3 for gfx90a;gfx908"
    args = build_parser().parse_args(list(wheel.action.build.argv[3:]))  # type: ignore[union-attr]
    assert wheel.action.build.argv[1:3] == ("-m", "build") and args.no_isolation  # type: ignore[union-attr]
    assert torch_of_pair([load_matrix().build("apex-1.8.0-cp312-rocm7.0")]) == \
        load_matrix().build("apex-1.8.0-cp312-rocm7.0").pkg_version.torch


ENTRY = """
[failures.apex-demo]
package = "apex"
versions = ">=1.8,<1.9"
rocm = "==7.0"
torch = ">=2.0"
python = ["3.12"]
families = ["gfx94X-dcgpu"]
gfx = ["gfx90a"]
platform = "linux"
fails = "build-wheel"
reason = "a demo entry for the tests"
evidence = "ROCm/TheRock#3413"
"""


def test_a_known_failure_as_json_keeps_the_data_files_field_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import tomllib

    from toolkit.data.matrix import data_dir

    data = tmp_path / "data"
    shutil.copytree(data_dir(), data, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    with (data / "known_failures.toml").open("a") as fh:
        fh.write(ENTRY)
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data))
    raw = tomllib.loads(ENTRY)["failures"]["apex-demo"]
    (e,) = [k for k in load_matrix().known_failures if k.id == "apex-demo"]
    out = e.as_json()
    # every field the TOML entry sets comes out under its own name, with its value
    assert {k: out[k] for k in raw} == raw
    # and the targets they select: gpus.toml's gfx94X-dcgpu is gfx942 alone, then the gfx ids
    assert out["targets"] == ["gfx942", "gfx90a"]
    rows = dict(e.explain())
    assert rows["re-try"].startswith("--include-known-failures") and rows["reason"] == raw["reason"]


PY_NONE = re.compile(r"(?<!'Cuda )\bNone\b")  # apex's own message quotes 'Cuda None'


def _plans() -> list[Plan]:
    m = load_matrix()
    host = HostFacts(cores=16, mem_available_gib=64.0, interpreters={"3.12": "/usr/bin/python3.12"},
                     system_rocm=SystemRocm("/opt/rocm", "7.0"))
    out = [_demo(("/opt/rocm", "5.2")), _demo(None)]
    picked = {(b.package.name, b.version, b.rocm.version): b for b in m.builds}  # one per version/ROCm
    for b in picked.values():
        for opts in (Options(), Options(naming="upstream", gfx=("gfx90a",)), Options(rocm_from="system")):
            try:
                out.append(plan(m, b, opts, host, LAYOUT))
            except UsageError:
                continue  # e.g. a release whose targets cannot be given
    return out


def test_a_dry_run_shows_values_never_pythons_none() -> None:
    """The plan is the truth of what a build does: every path, placeholder and label in its
    text and JSON is a real value (a None that slipped in would print as "None")."""
    plans = _plans()
    assert len(plans) > 60
    for p in plans:
        text = render(p)
        assert not PY_NONE.search(text), (p.build.id, [ln for ln in text.splitlines() if PY_NONE.search(ln)])
        js = p.to_json()
        assert '"None' not in js and "None/" not in js, p.build.id


def test_every_placeholder_of_a_plan_is_one_the_executor_fills() -> None:
    from toolkit.core.steps import PLACEHOLDER_HELP, CheckWheel, Publish

    known = {p for p in PLACEHOLDER_HELP if "<" not in p}
    for p in _plans():
        provided = {s.action.placeholder for s in p.steps if isinstance(s.action, ProvideLibrary)}
        for s in p.steps:
            for ph in re.findall(r"\{[A-Za-z0-9_]+\}", s.text()):
                assert ph in known | provided, (p.build.id, s.name, ph)
        # the wheel name-wheel learns is what check, install and publish are given, as is
        check, publish = p.step("check").action, p.step("publish").action
        assert isinstance(check, CheckWheel) and isinstance(publish, Publish)
        assert check.wheel == publish.wheel == "{WHEEL}"
        assert publish.dest == str(LAYOUT.dist(p.build)) and check.cwd == str(LAYOUT.artifacts(p.build))
        if p.options.smoke:
            assert p.step("install-wheel").action.argv[-3:] == (  # type: ignore[union-attr]
                "--no-deps", "--reinstall", "{WHEEL}")
        if p.build.package.name in ("apex", "fbgemm_gpu"):  # torch extensions resolve against torch
            assert "{TORCH_LIB}" in check.with_libs
        assert set(check.with_libs) >= provided
        env = dict(p.step("build-wheel").action.build.env)  # type: ignore[union-attr]
        assert (env["LDSHARED"], env["LDCXXSHARED"]) == ("{LDSHARED}", "{LDCXXSHARED}")
        # C, C++ and HIP compiles all map the interpreter's prefix away
        for var in ("CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"):
            assert env[var].endswith("{PYTHON_PREFIX_MAP}"), (var, env[var])


def test_upstream_naming_keeps_the_wheels_own_version() -> None:
    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    host = HostFacts(cores=16, mem_available_gib=64.0)
    kept = plan(m, b, Options(naming="upstream", gfx=("gfx942",)), host, LAYOUT)
    ours = plan(m, b, Options(gfx=("gfx942",)), host, LAYOUT)
    expect = kept.step("expect-wheel").action
    assert isinstance(expect, ExpectWheel)  # what apex's setup.py names it
    assert kept.step("name-wheel").description == (
        f"name the wheel apex-{expect.version}-... in the build's staging folder (the upstream name kept)")
    mine = ours.step("name-wheel").description
    assert mine.startswith("name the wheel apex-1.8.0+") and expect.version not in mine and "kept" not in mine


def test_the_cache_follows_the_xdg_base_directory_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.plan.layout import default_cache

    monkeypatch.delenv("TOOLKIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert default_cache() == Path("/x/cache/rocm-wheel-toolkit")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "/home/u")
    assert default_cache() == Path("/home/u/.cache/rocm-wheel-toolkit")  # $HOME/.cache when unset


def test_the_samples_modules_are_the_ones_its_setup_py_builds() -> None:
    from toolkit.plan.recipes.sample import SampleRecipe

    setup_py = (EXAMPLE / "setup.py").read_text()
    mods = SampleRecipe().expected_modules(demo_build("3.12", None).pkg_version)
    assert mods == ("hip_sample", "hip_sample._native")
    assert 'Extension("hip_sample._native"' in setup_py and (EXAMPLE / "src" / "hip_sample").is_dir()
    # a manifest's recorded build is rebuilt for the recorded ROCm
    build = SampleRecipe().standalone("hip_sample-0.1.0-cp312-rocm5.2",
                                      {"sdk": {"root": "/opt/rocm-5.2"}, "build": {"rocm": "5.2"}})
    assert build is not None and build.id == "hip_sample-0.1.0-cp312-rocm5.2"
    # a manifest without an "sdk" record (an older schema) still names the ROCm it built with
    older = SampleRecipe().standalone("hip_sample-0.1.0-cp312-rocm5.2", {"build": {"rocm": "5.2"}})
    assert older is not None and older.rocm.version == "5.2"


def test_sources_record_torch_pins_only_when_there_are_some() -> None:
    base = Sources("pip", "multi-arch", None, "https://sdk.example/", "rocm>1", (), "torch", ())
    assert "torch_pins" not in base.as_json()
    pinned = Sources("pip", "multi-arch", None, "https://sdk.example/", "rocm>1", (), "torch", (),
                     torch_pins=("rocm[libraries]==7.0.2",))
    assert pinned.as_json()["torch_pins"] == ["rocm[libraries]==7.0.2"]


def test_artifacts_are_shown_relative_inside_the_current_folder(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    layout = Layout(tmp_path / "w", tmp_path / "c")
    monkeypatch.chdir(tmp_path)
    assert layout.artifacts_rel("apex-1") == "w/artifacts/apex-1"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert layout.artifacts_rel("apex-1") == str(tmp_path / "w" / "artifacts" / "apex-1")


def test_the_torch_of_a_pair_is_its_newest_by_version_not_by_text() -> None:
    import dataclasses

    b = load_matrix().build("apex-1.8.0-cp312-rocm7.0")
    builds = [dataclasses.replace(b, pkg_version=dataclasses.replace(b.pkg_version, torch=t))
              for t in ("2.9", "2.10", "2.8")]
    assert torch_of_pair(builds) == "2.10" and torch_of_pair([]) == ""


def test_provisioning_runs_in_the_env_with_the_tools_on_path() -> None:
    from toolkit.core.steps import InstallSdk, InstallTorch

    m = load_matrix()
    p = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"), Options(gfx=("gfx942",), channel="nightly"),
             HostFacts(cores=16, mem_available_gib=64.0), LAYOUT)
    env_python = str(LAYOUT.env_dir(p.build) / "bin" / "python")
    sdk, torch = p.step("install-rocm-sdk").action, p.step("install-torch").action
    assert isinstance(sdk, InstallSdk) and isinstance(torch, InstallTorch)
    assert sdk.python == torch.python == env_python and sdk.rocm == "7.0"
    for cmd in (sdk.install, torch.install):
        # POSIX: the search path is the variable PATH; the tools go first, the inherited PATH after
        assert dict(cmd.env)["PATH"] == "{TOOLS_PATH}:{PATH}"
        assert cmd.argv[1:5] == ("pip", "install", "--python", env_python)


def test_every_index_and_find_links_location_is_probed_once() -> None:
    from toolkit.core.steps import IndexProbe
    from toolkit.plan.provision import _probes

    src = Sources("pip", "per-family", "gfx94X-dcgpu", "https://sdk.example/", "rocm>1", ("/links",), "torch",
                  ("--index-url", "https://torch.example/", "--find-links", "/more",
                   "--extra-index-url", "https://sdk.example/", "--find-links", "/links"))
    assert _probes(src, None) == (
        IndexProbe("https://sdk.example/", "rocm", "ROCm SDK index"),
        IndexProbe("https://torch.example/", "torch", "torch index"),
        IndexProbe("/links", None, "find-links location"),
        IndexProbe("/more", None, "find-links location"))
    # with a lock, the projects are pinned by hash: an index need only be reachable
    assert [p.project for p in _probes(src, "locks/x.txt")] == [None, None, None, None]
