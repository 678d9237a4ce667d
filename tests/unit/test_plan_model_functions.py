"""toolkit/plan's planner, model, layout, locks and sources, function by function (issue 19,
part 8, session 25): against toolkit/README.md (folders), fbgemm_gpu.toml and upstream's
submodule URLs, json and pip, and values worked out by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomllib

from tests.unit.plan_truths import (
    HOST,
    LAYOUT,
)
from toolkit.core.errors import UsageError
from toolkit.data.matrix import data_dir
from toolkit.env.buildenv import RocmPaths
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, options_from_json, options_json
from toolkit.plan.planner import plan, rocm_provider
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes.sample import demo_build


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
               Options(gfx=("gfx942",), recipe_options=("apex-ops=jit",), channel="nightly"),
               HOST, LAYOUT)
    check = jit.step("check").action
    assert check.gfx == () and check.with_libs == ("{TORCH_LIB}", "{ROCM_ROOT}/lib")  # type: ignore[union-attr]
    cpu = plan(m, demo_build("3.12", None), Options(gfx=("gfx90a",), rocm_from="system"), HOST, LAYOUT)
    check = cpu.step("check").action
    # the sample needs no torch and a CPU build no ROCm
    assert check.gfx == () and check.with_libs == ()  # type: ignore[union-attr]
    assert cpu.family is None and cpu.source is None and cpu.options == Options(
        gfx=("gfx90a",), rocm_from="system")


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


def test_sources_are_a_fresh_worktree_of_the_tag_and_its_submodules_from_mirrors() -> None:
    from toolkit.core.steps import FetchSources
    from toolkit.core.steps.sources import FetchSubmodules, Submodule

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


def test_every_compiler_maps_the_builds_own_folder_away() -> None:
    """Reproducible builds: gcc's and clang's ``-ffile-prefix-map=OLD=NEW`` keeps the build
    folder (the worktree under it) out of debug info and ``__FILE__``; the interpreter's
    prefix map is learned at execution."""
    m = load_matrix()
    for b, opts in ((m.build("apex-1.8.0-cp312-rocm7.0"), Options(gfx=("gfx942",))),
                    (demo_build("3.12", None), Options(gfx=("gfx90a",), rocm_from="system"))):
        env = plan(m, b, opts, HOST, LAYOUT).step("build-wheel").env
        for var in ("CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"):
            assert env[var] == f"-ffile-prefix-map=/w/build/{b.id}=/build {{PYTHON_PREFIX_MAP}}", var


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


def test_recorded_options_never_carry_locks() -> None:
    # locks belong to the running process, not to what a build recorded
    with pytest.raises(UsageError) as info:
        options_from_json({"locks": True})
    msg = str(info.value)
    assert msg.startswith("recorded options: unknown field 'locks'; valid: ")
    assert "locks" not in msg.split("valid: ")[1].split(", ")
