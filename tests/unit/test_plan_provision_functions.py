"""toolkit/plan/provision.py, function by function (issue 19, part 8, session 25): buildable,
choose_family, device_extras, sources_for, _lock_for, _probes, uv_index_args and
provision_steps pinned against rocm.toml and gpus.toml read with tomllib, TheRock's index
layout (ROCm/TheRock@89553ce37 docs/packaging/legacy_per_family_releases.md, RELEASES.md),
pip's own install parser, and values worked out by hand."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from tests.unit.plan_truths import (
    GFX,
    HOST,
    LAYOUT,
    LINKS,
    ROCM6_SORTED,
    SERVED_70,
    THEROCK_715,
    pip_install_reads,
    therock_torch_on_a_system_sdk,
)
from toolkit.core.errors import DataError, UsageError
from toolkit.data.matrix import data_dir
from toolkit.data.matrix import load_matrix as load_data_matrix
from toolkit.env.buildenv import RocmPaths
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.provision import buildable, sources_for, with_extras
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes import load_matrix as load_checked_matrix
from toolkit.plan.recipes.generic import generic_build
from toolkit.plan.recipes.sample import demo_build
from toolkit.plan.sources import Sources


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


@pytest.mark.parametrize(("gfx", "family", "want"), [
    # legacy_per_family_releases.md: `pip install --index-url
    # https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/ torch torchaudio torchvision`
    (("gfx942",), None, "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"),
    (("gfx1151",), None, "https://rocm.nightlies.amd.com/v2/gfx1151/"),
    (("gfx942",), "gfx950-dcgpu", "https://rocm.nightlies.amd.com/v2/gfx950-dcgpu/"),
])
def test_a_per_family_torch_beside_a_system_sdk_takes_the_family_of_its_targets(
        data_copy: Path, gfx: tuple[str, ...], family: str | None, want: str) -> None:
    therock_torch_on_a_system_sdk(data_copy, "https://rocm.nightlies.amd.com/v2/")
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
    therock_torch_on_a_system_sdk(data_copy, index)
    m = load_matrix(data_copy)
    src = sources_for(m, m.build("apex-1.10.0-cp312-rocm7.1"), Options(gfx=("gfx942",)))
    assert src.torch_args[:2] == ("--index-url", want)


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
    # 7.0 from its pip channel (TheRock's per-family nightlies), 7.13 from its default (stable)
    opts = Options(gfx=("gfx942",), channel="nightly" if hip == "7.0" else None)
    steps, _, _ = provision_steps(m, b, opts, host, LAYOUT)
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
    # a stable channel (7.13, released) resolves releases only; the others allow pre-releases
    pre = () if "line" in raw[b.rocm.version] else ("--prerelease=allow",)
    assert torch.install.argv[:5 + len(pre)] == ("/opt/uv/bin/uv", "pip", "install", "--python",
                                                 env_python, *pre)
    sdk = by["install-rocm-sdk"].action
    if raw[b.rocm.version]["sdk"]["provider"] == "pip" or opts.channel:
        assert isinstance(sdk, InstallSdk) and (sdk.python, sdk.rocm) == (env_python, b.rocm.version)
        assert sdk.install.argv[:7 + len(pre)] == (
            "/opt/uv/bin/uv", "pip", "install", "--python", env_python, *pre,
            "--refresh-package", "rocm")
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


def test_the_sources_of_a_per_family_sdk_and_amds_torch() -> None:
    from toolkit.plan.sources import Sources

    m = load_matrix()
    src = sources_for(m, m.build("apex-1.8.0-cp312-rocm7.0"),
                      Options(gfx=GFX, find_links=LINKS, channel="nightly"))
    # rocm.toml 7.0's nightly channel: TheRock's legacy per-family nightly index; torch 2.8
    # from AMD's manylinux page; none of the served families covers gfx90a: the default
    # serves gfx942. AMD's torch is no TheRock torch: only the SDK is from the channel
    assert src == Sources(
        "pip", "per-family", "gfx94X-dcgpu", "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/",
        "rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1", LINKS, "torch>=2.8,<2.9",
        ("--find-links", "https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/"),
        channel="nightly")


# rocm.toml: 7.13 is released (tag therock-7.13: its stable channel, releases only); 10.1 is a
# BKC branch (its prerelease channel, pre-releases of 10.1.0 and up)
@pytest.mark.parametrize(("build_id", "index", "sdk", "torch", "channel"), [
    ("apex-1.9.0-cp312-rocm7.13", "https://repo.amd.com/rocm/whl/",
     ">1.0,>=7.13.0,<7.14", ">=2.9,<2.10", "stable"),
    ("apex-1.13.0-cp312-rocm10.1", "https://rocm.prereleases.amd.com/whl-multi-arch/",
     ">1.0,>=10.1.0a0,<10.2", ">=2.13,<2.14", "prerelease"),
])
def test_the_sources_of_a_multi_arch_sdk_and_its_split_torch(
        build_id: str, index: str, sdk: str, torch: str, channel: str) -> None:
    """RELEASES.md (TheRock@89553ce37): one index, `rocm[libraries,devel,device-<gfx>]`;
    torch split into a host wheel and amd-torch-device-<gfx> at torch's version."""
    from toolkit.plan.sources import Sources

    m = load_matrix()
    src = sources_for(m, m.build(build_id), Options(gfx=GFX))
    spec = f"rocm[libraries,devel,device-gfx942,device-gfx90a]{sdk}"
    assert src == Sources(
        "pip", "multi-arch", None, index, spec, (), f"torch[device-gfx942,device-gfx90a]{torch}",
        ("--index-url", index, "--extra-index-url", "https://pypi.org/simple/"),
        None, (spec, f"amd-torch-device-gfx942{torch}", f"amd-torch-device-gfx90a{torch}"),
        channel)
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


def test_the_sdk_and_torch_installs_name_their_indexes_and_requirements() -> None:
    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    opts = Options(gfx=("gfx942",), find_links=LINKS, channel="nightly")
    steps = {s.name: s for s in plan(m, b, opts, HOST, LAYOUT).steps}
    sdk_opts, sdk_reqs = pip_install_reads(steps["install-rocm-sdk"].argv)
    assert sdk_opts.index_url == "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"
    assert sdk_opts.find_links == list(LINKS) and not sdk_opts.extra_index_urls
    assert sdk_reqs == ["rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1"]
    # AMD's torch: first alone from its find-links page, no index at all ...
    pin_opts, pin_reqs = pip_install_reads(steps["pin-torch"].argv)
    assert (pin_opts.no_index, pin_opts.ignore_dependencies) == (True, True)
    assert pin_opts.find_links == ["https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/"]
    assert pin_reqs == ["torch>=2.8,<2.9"]
    # ... then with its dependencies from PyPI (pip's default index), the same page beside it
    t_opts, t_reqs = pip_install_reads(steps["install-torch"].argv)
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
        l_opts, l_reqs = pip_install_reads(argv)
        assert l_opts.require_hashes and l_opts.requirements == ["/w/locks/x.txt"] and l_reqs == []
        assert l_opts.index_url == "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"
        assert l_opts.find_links == [*LINKS, "https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/"]
    assert locked["install-rocm-sdk"].description.endswith(", locked by /w/locks/x.txt")


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


def test_a_project_without_torch_still_installs_the_sdk_from_its_family_index() -> None:
    """legacy_per_family_releases.md: `pip install --index-url
    https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/ "rocm[libraries,devel]"`."""
    from toolkit.plan.recipes.generic import generic_build

    m = load_matrix()
    own = generic_build("demo", "demo", "1.0", "/src", "3.12", m.rocm["7.0"])
    src = sources_for(m, own, Options(gfx=("gfx942",), channel="nightly"))
    assert src.sdk_index == "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"
    assert src.torch_args == () and src.torch_spec == ""


def test_extras_are_merged_into_a_requirement_as_pep_508_reads_it() -> None:
    merged = with_extras("rocm[libraries,devel]>1.0", ["device-gfx942", "devel"])
    req = Requirement(merged)
    assert req.name == "rocm" and req.extras == {"libraries", "devel", "device-gfx942"}
    assert str(req.specifier) == ">1.0"
    assert Requirement(with_extras("torch==2.7", [])).extras == set()
    with pytest.raises(UsageError, match="not a requirement"):
        with_extras("[x]", ["a"])


def test_sources_record_torch_pins_only_when_there_are_some() -> None:
    base = Sources("pip", "multi-arch", None, "https://sdk.example/", "rocm>1", (), "torch", ())
    assert "torch_pins" not in base.as_json()
    pinned = Sources("pip", "multi-arch", None, "https://sdk.example/", "rocm>1", (), "torch", (),
                     torch_pins=("rocm[libraries]==7.0.2",))
    assert pinned.as_json()["torch_pins"] == ["rocm[libraries]==7.0.2"]


def test_provisioning_runs_in_the_env_with_the_tools_on_path() -> None:
    from toolkit.core.steps import InstallSdk, InstallTorch

    m = load_data_matrix()
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


@pytest.mark.parametrize(("release", "sdk"), [
    ("7.1", 'provider = "system", version = "7.1.0"'),  # not pip
    ("7.13", 'provider = "pip", layout = "multi-arch", evidence'),  # pip, not per-family
])
def test_served_families_outside_a_per_family_index_are_refused_naming_where_they_are_valid(
        data_copy: Path, release: str, sdk: str) -> None:
    rocm = data_copy / "rocm.toml"
    text = rocm.read_text()
    assert f'[releases."{release}"]\n' in text and sdk in text
    assert f'[releases."{release}".families]' not in text
    rocm.write_text(text + f'\n[releases."{release}".families]\n'
                    'evidence = "ROCm/TheRock@de9728b3d x"\nserved."gfx94X-dcgpu" = ["gfx942"]\n')
    with pytest.raises(DataError) as err:
        load_data_matrix(data_copy)
    assert str(err.value) == (
        f'{rocm}: releases."{release}".families: lists the families of a per-family SDK index; '
        'valid only with sdk.layout = "per-family"')


CI_TOML = Path(__file__).resolve().parents[2] / "toolkit" / "data" / "ci.toml"


def test_a_project_without_torch_gets_the_releases_sdk_requirement_or_none() -> None:
    """A setuptools project that needs no torch still installs the SDK rocm.toml names for its
    release (7.0's nightly channel: TheRock's per-family index, the line's pre-releases
    ``rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1``);
    from a system ROCm there is no SDK requirement at all, and no torch either."""
    m = load_data_matrix()
    raw = tomllib.loads((CI_TOML.parent / "rocm.toml").read_text())["releases"]
    pip = generic_build("demo", "demo", "1.0", "/src", "3.12", m.rocm["7.0"])
    src = sources_for(m, pip, Options(gfx=("gfx942",), channel="nightly"))
    assert (src.provider, src.layout, src.family) == ("pip", "per-family", "gfx94X-dcgpu")
    assert src.sdk_spec == "rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1"
    assert src.sdk_index == raw["7.0"]["channels"]["nightly"] + "gfx94X-dcgpu/"
    assert Requirement(src.sdk_spec).name == "rocm"
    assert (src.torch_spec, src.torch_args, src.torch_pins, src.system_version) == ("", (), (), None)
    system = generic_build("demo", "demo", "1.0", "/src", "3.12", m.rocm["7.1"])
    sys_src = sources_for(m, system, Options(gfx=("gfx942",)))
    assert (sys_src.provider, sys_src.sdk_spec, sys_src.sdk_index, sys_src.family) == (
        "system", None, None, None)
    assert sys_src.system_version == raw["7.1"]["sdk"]["version"]
    assert "sdk_spec" in sys_src.as_json() and sys_src.as_json()["sdk_spec"] is None


def test_allow_rocm_mismatch_reaches_the_sdk_and_torch_install_checks() -> None:
    import dataclasses

    from toolkit.core.steps import InstallSdk, InstallTorch
    from toolkit.env.host import HostFacts
    from toolkit.plan.model import Options
    from toolkit.plan.provision import provision_steps

    matrix = load_checked_matrix()
    build = matrix.build("apex-1.11.0-cp312-rocm7.14")  # a TheRock pip SDK and torch
    for allow in (True, False):
        steps, _, _ = provision_steps(matrix, build, dataclasses.replace(
            Options(), allow_rocm_mismatch=allow), HostFacts(), Layout(Path("/w"), Path("/c")))
        actions = {s.name: s.action for s in steps}
        sdk, torch = actions["install-rocm-sdk"], actions["install-torch"]
        assert isinstance(sdk, InstallSdk) and isinstance(torch, InstallTorch)
        assert (sdk.allow_mismatch, torch.allow_mismatch) == (allow, allow)
