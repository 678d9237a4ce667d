"""The provisioning steps say, in the words a user reads in ``--dry-run``, what they will do,
and carry what execution needs: the system install rocm.toml names, the lock the installs
read, the conventional ROCm root when none was found.

The truths: rocm.toml read with tomllib, the search order of ``toolkit.env.rocm``, the
installs' own ``-r`` argument, and ROCm/apex's setup.py at its release branches."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import tomllib

from toolkit.core.steps import CheckEnv, UseSystemRocm
from toolkit.env.host import HostFacts
from toolkit.env.rocm import system_roots
from toolkit.plan.layout import Layout
from toolkit.plan.locks import LockRef, inputs_hash, lock_name
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.provision import provision_steps, sources_for
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes.sample import demo_build

LAYOUT = Layout(Path("/w"), Path("/c"))
HOST = HostFacts(cores=16, mem_available_gib=64.0)


def _steps(bid: str, options: Options, host: HostFacts = HOST) -> dict[str, object]:
    m = load_matrix()
    return {s.name: s for s in provision_steps(m, m.build(bid), options, host, LAYOUT)[0]}


def test_a_system_install_expects_the_version_rocm_toml_names() -> None:
    from toolkit.data.matrix import data_dir

    releases = tomllib.loads((data_dir() / "rocm.toml").read_text())["releases"]
    m = load_matrix()
    seen = 0
    for b in m.builds:
        sdk = releases[b.rocm.version]["sdk"]
        if sdk["provider"] != "system" or b.python != "3.12":
            continue
        step = _steps(b.id, Options())["install-rocm-sdk"]
        assert isinstance(step.action, UseSystemRocm)  # type: ignore[attr-defined]
        assert step.action.rocm == sdk["version"], b.id  # type: ignore[attr-defined]
        assert f"(expected {sdk['version']}; " in step.description, b.id  # type: ignore[attr-defined]
        seen += 1
    assert seen
    # 6.4's install is 6.4.3, not the release's name: TheRock's 6.4.0 wheels were nightlies
    assert releases["6.4"]["sdk"]["version"] == "6.4.3"


def test_a_multi_arch_sdk_says_so() -> None:
    step = _steps("apex-1.9.0-cp312-rocm7.13", Options(gfx=("gfx942",)))["install-rocm-sdk"]
    # tag therock-7.13: released, so its stable channel (setup_venv.py), releases only
    assert step.description == (  # type: ignore[attr-defined]
        "install the ROCm 7.13 SDK from TheRock's stable channel https://repo.amd.com/rocm/whl/ "
        "(rocm[libraries,devel,device-gfx942]>1.0,>=7.13.0,<7.14; releases only) (multi-arch)")


def test_torch_pinned_from_a_find_links_page_says_why() -> None:
    step = _steps("apex-1.8.0-cp312-rocm7.0", Options(gfx=("gfx942",)))["pin-torch"]
    assert step.description == (  # type: ignore[attr-defined]
        "install torch alone from https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/ (--no-index: "
        "no other source is weighed, so PyPI's CUDA torch can never win)")


def test_without_a_discovered_install_rocm_is_looked_for_at_its_conventional_root() -> None:
    conventional = str(system_roots({}, opt="/opt")[0][1])  # the first place looked at
    assert conventional == "/opt/rocm"
    m = load_matrix()
    system = plan(m, m.build("apex-1.8.0-cp312-rocm6.4"), Options(), HOST, LAYOUT)
    cpu = plan(m, demo_build("3.12", None), Options(rocm_from="system", gfx=("gfx90a",)), HOST, LAYOUT)
    for p in (system, cpu):
        env = dict(p.step("build-wheel").action.build.env)  # type: ignore[union-attr]
        assert env["ROCM_PATH"] == env["HIP_PATH"] == conventional, p.build.id


def test_the_environment_check_reads_the_lock_the_installs_read() -> None:
    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    name = lock_name(m, b)
    nightly = Options(channel="nightly")  # 7.0's pip SDK (its default is a system ROCm)
    ref = LockRef(name, f"/w/locks/{name}", inputs_hash(b, sources_for(m, b, nightly)))
    steps = _steps(b.id, dataclasses.replace(nightly, locks=(ref,)))
    check = steps["check-env"].action  # type: ignore[attr-defined]
    assert isinstance(check, CheckEnv)
    for name in ("install-rocm-sdk", "install-torch"):
        argv = steps[name].argv  # type: ignore[attr-defined]
        assert argv[argv.index("-r") + 1] == check.lock == ref.path
    # so a lock compiled again (new pins, same inputs) is a new environment
    assert f", lock {ref.path})" in check.explain()[1]
    assert _steps(b.id, nightly)["check-env"].action.lock is None  # type: ignore[attr-defined]


# ROCm/apex@215398d00 (release/1.7.0) setup.py defines check_rocm_torch_binary_vs_bare_metal
# and raises on a mismatch naming torch.version.hip; @6596002f9 (release/1.6.0) raises naming
# torch.version.cuda ("compiled with Cuda None" on ROCm); @102ee921a (release/1.8.0) no
# longer has it
@pytest.mark.parametrize(("bid", "why"), [
    ("apex-1.6.0-cp312-rocm6.1",
     "apex refuses to build otherwise, blaming 'Cuda None' (setup.py check_rocm_torch_binary_vs_bare_metal)"),
    ("apex-1.7.0-cp312-rocm6.4",
     "apex refuses to build otherwise (setup.py check_rocm_torch_binary_vs_bare_metal)"),
    ("apex-1.8.0-cp312-rocm6.4", "apex 1.8 no longer checks: a mismatch would build against the wrong HIP"),
])
def test_the_hip_preflight_says_why_it_runs(bid: str, why: str) -> None:
    m = load_matrix()
    p = plan(m, m.build(bid), Options(gfx=("gfx90a",)), HOST, LAYOUT)
    assert p.step("preflight").description == (
        f"hipcc major.minor must equal torch.version.hip major.minor ({why})")
    # the command is the toolkit's own: its parser reads it, with the SDK's hipcc and the env's Python
    from toolkit.cli.main import build_parser

    argv = p.step("preflight").argv  # type: ignore[attr-defined]
    assert argv[1:3] == ("-m", "toolkit")
    args = build_parser().parse_args(list(argv[3:]))
    assert (args.command, args.check, args.hipcc, args.python) == (
        "preflight", "hip-match", "/opt/rocm/bin/hipcc", str(LAYOUT.env_python(p.build)))


def test_a_family_is_chosen_by_processor_and_an_unknown_one_named_with_the_valid_ones() -> None:
    from toolkit.core.errors import UsageError
    from toolkit.plan.provision import choose_family

    m = load_matrix()
    b = m.build("apex-1.10.0-cp312-rocm7.1")  # no served list: gpus.toml's families
    assert not b.rocm.families
    # a target feature (":xnack+", LLVM's AMDGPU target id syntax) does not change the processor;
    # the narrowest family that serves it wins (gfx90a alone, not gfx90X-dcgpu)
    assert choose_family(m, b, ["gfx90a:xnack+"], None) == "gfx90a"
    assert choose_family(m, b, ["gfx906", "gfx90a:xnack-"], None) == "gfx90X-dcgpu"
    with pytest.raises(UsageError) as err:
        choose_family(m, b, ["gfx90a"], "gfx9000")
    # no "by ROCm 7.1's index": the names are gpus.toml's (its families of the release's era)
    valid = ", ".join(sorted(m.release_families(b.rocm)))
    assert err.value.message == f"unknown GPU family 'gfx9000'; valid: {valid}"
    assert "gfx90a" in valid.split(", ") and "gfx94X-all" in valid.split(", ")


def test_asking_for_what_a_release_does_not_have_says_what_to_give_instead() -> None:
    import dataclasses

    from toolkit.core.errors import UsageError

    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm6.4")  # a system install: TheRock has no 6.4 SDK
    with pytest.raises(UsageError) as err:
        sources_for(m, b, Options(rocm_from="pip"))
    assert err.value.message == (
        f"ROCm 6.4 has no pip SDK index in the matrix ({b.rocm.sdk.note}); "
        "give --index-url or use --rocm-from system")
    quiet = dataclasses.replace(b, rocm=dataclasses.replace(
        b.rocm, sdk=dataclasses.replace(b.rocm.sdk, note=None)))
    with pytest.raises(UsageError) as err:
        sources_for(m, quiet, Options(rocm_from="pip"))
    assert err.value.message.startswith("ROCm 6.4 has no pip SDK index in the matrix; give ")
    # either way out works
    assert sources_for(m, b, Options(rocm_from="system")).provider == "system"
    given = sources_for(m, b, Options(rocm_from="pip", index_url="https://sdk.example/v2"))
    assert given.sdk_index == "https://sdk.example/v2/gfx94X-dcgpu/"


@pytest.mark.parametrize("version", ["6.4", "7.1"])
def test_a_pip_sdk_given_on_a_system_release_installs_therocks_rocm_package(
        version: str) -> None:
    """A release without channels still installs from ``--index-url`` with ``--rocm-from
    pip`` (rocm.toml's header); what it installs is TheRock's ``rocm`` package with its
    ``libraries`` and ``devel`` extras (rocm.toml: ``rocm[libraries,devel]``), any version
    of the release (its system install's, e.g. 6.4.3, satisfies it): read with ``packaging``
    as pip reads a requirement (PEP 508)."""
    from packaging.requirements import Requirement

    m = load_matrix()
    b = next(b for b in m.builds if b.rocm.version == version and b.python == "3.12")
    assert not b.rocm.sdk.channels  # the fallback requirement: no channel names one
    got = sources_for(m, b, Options(rocm_from="pip", index_url="https://sdk.example/v2"))
    assert got.sdk_spec is not None
    req = Requirement(got.sdk_spec)
    assert req.name == "rocm" and req.extras == {"libraries", "devel"} and req.marker is None
    assert req.specifier.contains(b.rocm.sdk.version, prereleases=True), got.sdk_spec


def test_a_family_for_a_multi_arch_sdk_is_refused_with_the_flag_that_works() -> None:
    import shlex

    from toolkit.cli.sessions import session_parser
    from toolkit.core.errors import UsageError

    m = load_matrix()
    b = m.build("apex-1.9.0-cp312-rocm7.13")
    with pytest.raises(UsageError) as err:
        sources_for(m, b, Options(family="gfx94X-dcgpu"))
    assert err.value.message == (
        "--family gfx94X-dcgpu: ROCm 7.13's SDK is multi-arch (one index for every GPU, device "
        "code chosen per gfx id), not per-family")
    assert err.value.hint == "use --gfx (a gfx id or family name, e.g. --gfx gfx942)"
    example = shlex.split(err.value.hint.split("e.g. ")[1].rstrip(")"))
    args = session_parser("build-3.12-rocm7.13").parse_args(example)
    src = sources_for(m, b, Options(gfx=m.expand_gfx(args.gfx)))
    assert src.family is None and "device-gfx942" in (src.sdk_spec or "")


def test_an_insecure_find_links_value_is_named_as_such() -> None:
    from toolkit.core.errors import UsageError

    m = load_matrix()
    with pytest.raises(UsageError, match=r"^refusing insecure find-links value http://mirror\.example/"):
        sources_for(m, m.build("apex-1.8.0-cp312-rocm7.0"),
                    Options(find_links=("http://mirror.example/links/",)))


def _notes() -> dict[str, dict[str, object]]:
    from toolkit.data.matrix import data_dir

    releases: dict[str, dict[str, object]] = tomllib.loads((data_dir() / "rocm.toml").read_text())["releases"]
    return releases


def test_each_provisioning_step_says_what_it_installs_from_where() -> None:
    m = load_matrix()
    notes = _notes()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    name = lock_name(m, b)
    opts = Options(gfx=("gfx942", "gfx1100"), rocm_sdk_test=True, channel="nightly")
    ref = LockRef(name, f"/w/locks/{name}", inputs_hash(b, sources_for(m, b, opts)))
    sdk_note = notes["7.0"]["sdk"]["note"]  # type: ignore[index]
    torch_note = notes["7.0"]["torch"]["2.8"]["note"]  # type: ignore[index]
    steps = _steps(b.id, dataclasses.replace(opts, locks=(ref,)))
    assert steps["install-rocm-sdk"].description == (  # type: ignore[attr-defined]
        "install the ROCm 7.0 SDK from TheRock's nightly channel "
        "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/ (rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1; "
        "pre-releases allowed) (family gfx94X-dcgpu; its libraries do not "
        f"serve gfx1100, its compiler builds for them); {sdk_note}, locked by {ref.path}")
    assert steps["install-torch"].description == (  # type: ignore[attr-defined]
        f"install torch 2.8 for ROCm 7.0 (amd build; {torch_note})")
    assert steps["rocm-sdk-test"].description == "TheRock's own SDK self-test (`rocm-sdk test`)"  # type: ignore[attr-defined]
    # another index given: the matrix's note about TheRock's index no longer applies
    other = _steps(b.id, Options(gfx=("gfx942",), index_url="https://sdk.example/v2/",
                                 channel="nightly"))
    assert other["install-rocm-sdk"].description == (  # type: ignore[attr-defined]
        "install the ROCm 7.0 SDK from the index https://sdk.example/v2/gfx94X-dcgpu/ "
        "(rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1) (family gfx94X-dcgpu)")
    split = _steps("apex-1.9.0-cp312-rocm7.13", Options(gfx=("gfx942", "gfx90a")))
    assert split["install-torch"].description == (  # type: ignore[attr-defined]
        "install torch 2.9 for ROCm 7.13 (therock build; split: a host wheel plus the device "
        "packages of device-gfx942, device-gfx90a, with the SDK it pins)")
    plain = _steps("apex-1.8.0-cp312-rocm6.4", Options())
    assert plain["install-torch"].description == "install torch 2.8 for ROCm 6.4 (pytorch build)"  # type: ignore[attr-defined]
    assert plain["install-rocm-sdk"].description == (  # type: ignore[attr-defined]
        "use the system ROCm install at /opt/rocm (expected 6.4.3; toolkit.env.rocm.find_system "
        "looks at ROCM_PATH, /opt/rocm, /opt/rocm-X.Y.Z, hipcc on PATH)")


def test_the_interpreter_is_looked_up_at_execution_only_when_named_not_found() -> None:
    import dataclasses as dc

    looked_up = _steps("apex-1.8.0-cp312-rocm6.4", Options())["check-env"]
    assert looked_up.description == (  # type: ignore[attr-defined]
        "find the Python 3.12 interpreter; reuse the environment for ROCm 6.4 while its stamp "
        "matches; python3.12 is looked up at execution (PATH, pyenv, /opt/python, uv)")
    found = _steps("apex-1.8.0-cp312-rocm6.4", Options(),
                   dc.replace(HOST, interpreters={"3.12": "/usr/bin/python3.12"}))["check-env"]
    assert found.description == (  # type: ignore[attr-defined]
        "find the Python 3.12 interpreter; reuse the environment for ROCm 6.4 while its stamp matches")
