"""TheRock's multi-arch SDK in the plan, release eras, and session names of any version.

Expectations from TheRock's own words (ROCm/TheRock@89553ce37): RELEASES.md ("rocm[libraries,
devel,device-gfx942]" from https://rocm.nightlies.amd.com/whl-multi-arch/, one device-* extra
per GPU; torch[device-gfx942] installs amd-torch-device-gfx942 beside a host torch; re-run
`rocm-sdk init` after adding a device wheel), docs/packaging/legacy_per_family_releases.md
(per-family releases are legacy), cmake/therock_amdgpu_targets.cmake (the gfx ids and
families), and the version.json history (7.13 ... 7.15, 10.0, 10.1).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement

from tests.fixtures.data import package_toml, pkg_version
from toolkit.core.errors import UsageError
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.planner import plan
from toolkit.plan.provision import with_extras
from toolkit.plan.recipes import load_matrix

HOST = HostFacts(cores=8, mem_available_gib=32.0)
LAYOUT = Layout(Path("/w"), Path("/c"))
MULTI_ARCH_INDEX = "https://rocm.nightlies.amd.com/whl-multi-arch/"


def _with_builds(data: Path) -> Path:
    """A package version building on TheRock's multi-arch releases (7.14, 10.0) and on a
    system release, so the real rocm.toml and gpus.toml are what is planned."""
    (data / "demo.toml").write_text(package_toml(
        "demo", repo="https://example.invalid/demo.git", recipe="apex", versions=[
            pkg_version("1.8.0", torch="2.12", rocm=["7.14", "10.0"], python=["3.12", "3.13"],
                    build_style="jit-prebuild",
                    evidence="TEST DOUBLE: a package on TheRock's multi-arch releases"),
            pkg_version("1.7.0", torch="2.9", rocm=["6.4"], python=["3.12"],
                    build_style="ext-flags")]))
    return data


def _plan(data: Path, build_id: str, **opts: object) -> Plan:
    m = load_matrix(data)
    return plan(m, m.build(build_id), Options(**opts), HOST, LAYOUT)  # type: ignore[arg-type]


def test_sdk_has_one_device_extra_per_target_features_stripped(data_copy: Path) -> None:
    p = _plan(_with_builds(data_copy), "demo-1.8.0-cp313-rocm7.14",
              gfx=("gfx942", "gfx90a:xnack+", "gfx90a:xnack-"), channel="nightly")
    sdk = p.step("install-rocm-sdk")
    assert sdk.argv[-1] == "rocm[libraries,devel,device-gfx942,device-gfx90a]>1.0,>=7.14.0a0,<7.15"
    assert sdk.argv[sdk.argv.index("--index-url") + 1] == MULTI_ARCH_INDEX
    assert "ROCM_SDK_TARGET_FAMILY" not in sdk.env  # no family on a multi-arch index
    # rocm-sdk targets lists every installed device: the build names its own
    assert p.step("build-wheel").env["PYTORCH_ROCM_ARCH"] == "gfx942;gfx90a:xnack+;gfx90a:xnack-"
    assert p.family is None


def test_split_torch_with_the_device_packages_and_the_sdk_pinned(data_copy: Path) -> None:
    p = _plan(_with_builds(data_copy), "demo-1.8.0-cp312-rocm10.0", gfx=("gfx950",),
              channel="nightly")
    torch = p.step("install-torch")
    assert "torch[device-gfx950]>=2.12,<2.13" in torch.argv
    # the device package named too: an extra torch lacks is only a warning to pip and uv
    # (TheRock builds no device package for a family its torch excludes)
    assert "amd-torch-device-gfx950>=2.12,<2.13" in torch.argv  # at torch's version
    assert "rocm[libraries,devel,device-gfx950]>1.0,>=10.0.0a0,<10.1" in torch.argv
    assert MULTI_ARCH_INDEX in torch.argv
    names = [s.name for s in p.steps]
    assert names.index("install-torch") < names.index("rocm-sdk-init") < names.index("mark-env-ready")
    assert p.step("rocm-sdk-init").argv[-3:] == ("-m", "rocm_sdk", "init")


def test_default_targets_are_the_release_default_family(data_copy: Path) -> None:
    p = _plan(_with_builds(data_copy), "demo-1.8.0-cp312-rocm7.14")
    assert p.targets == ("gfx942",)  # gfx94X-dcgpu: gfx942 (therock_amdgpu_targets.cmake)
    assert "device-gfx942]" in p.step("install-rocm-sdk").argv[-1]


def test_family_on_a_multi_arch_release_is_refused_with_a_hint(data_copy: Path) -> None:
    with pytest.raises(UsageError) as err:
        _plan(_with_builds(data_copy), "demo-1.8.0-cp312-rocm7.14", family="gfx94X-dcgpu")
    assert err.value.exit_code == 2
    assert "multi-arch" in str(err.value) and "--gfx" in str(err.value)


def test_targets_the_compilers_cannot_build_are_refused(data_copy: Path) -> None:
    data = _with_builds(data_copy)
    # gfx1250: added to TheRock's targets by 1cc8ec570 (2026-06-16), in tag therock-7.14's list
    # (7.13's tag lacks it: tests/unit/test_channels.py)
    assert _plan(data, "demo-1.8.0-cp312-rocm7.14", gfx=("gfx1250",)).targets == ("gfx1250",)
    assert _plan(data, "demo-1.8.0-cp312-rocm10.0", gfx=("gfx1250",)).targets == ("gfx1250",)
    with pytest.raises(UsageError) as err:
        _plan(data, "demo-1.8.0-cp312-rocm7.14", gfx=("gfx1300",))
    assert err.value.exit_code == 2
    assert "do not build gfx1300" in str(err.value) and "valid: gfx900," in str(err.value)
    # gfx940: removed from LLVM (TheRock 1a8660424, llvm-project#126763); ROCm 6 still has it
    assert _plan(data, "demo-1.7.0-cp312-rocm6.4", gfx=("gfx940",)).targets == ("gfx940",)
    with pytest.raises(UsageError, match="do not build gfx940"):
        _plan(data, "demo-1.8.0-cp312-rocm10.0", gfx=("gfx940",))
    # gfx1251: the compilers accept it, but TheRock publishes no rocm-sdk-device-gfx1251
    with pytest.raises(UsageError, match="no rocm-sdk-device package for gfx1251"):
        _plan(data, "demo-1.8.0-cp312-rocm10.0", gfx=("gfx1251",))


def test_session_names_of_any_version(data_copy: Path) -> None:
    m = load_matrix(_with_builds(data_copy))
    sessions = {b.session for b in m.builds if b.package.name == "demo"}
    assert {"build-3.13-rocm7.14", "build-3.12-rocm10.0", "build-3.12-rocm6.4"} <= sessions
    pairs = [(py, r) for py, r in m.pairs() if r in ("6.4", "7.14", "10.0")]
    assert [r for _, r in pairs] == sorted((r for _, r in pairs),
                                           key=lambda v: [int(x) for x in v.split(".")])
    assert m.build("demo-1.8.0-cp312-rocm10.0").id.endswith("-rocm10.0")


def test_families_of_a_release_are_those_of_its_era() -> None:
    m = load_matrix()
    # cmake/therock_amdgpu_targets.cmake at ce80990fd (7.0.0): gfx103X-all was 1030, 1032,
    # 1035, 1036 (1031, 1033, 1034 came with 8e29db6cc)
    old = m.release_families(m.rocm["7.0"])
    assert old["gfx103X-all"] == ("gfx1030", "gfx1032", "gfx1035", "gfx1036")
    assert "gfx125X-dcgpu" not in old and "gfx900" not in old
    new = m.release_families(m.rocm["10.1"])
    assert new["gfx125X-dcgpu"] == ("gfx1250",)
    assert new["gfx110X-dgpu"] == ("gfx1100", "gfx1101", "gfx1102")
    assert new["gfx110X-igpu"] == ("gfx1103",)


def test_multi_arch_releases_are_theirs_and_per_family_ones_legacy() -> None:
    m = load_matrix()
    for rel in m.rocm.values():
        if rel.sdk.provider == "pip":
            assert rel.sdk.legacy == (rel.sdk.layout == "per-family")
            if rel.sdk.layout == "multi-arch":
                # each multi-arch release has a nightly channel (the ref's own word: the
                # upstream rule compares it), and its TheRock torch is split by device extras
                assert rel.sdk.channels["nightly"].startswith("https://"), rel.version
                assert all(t.kind != "therock" or t.device_extras for t in rel.torch.values())
    # 7.14's tag names RELEASES.md's unified index as its nightly channel
    # (ROCm/TheRock@418cd5f63 build_tools/github_actions/publish_pytorch_to_release_bucket.py)
    assert m.rocm["7.14"].sdk.channels["nightly"] == MULTI_ARCH_INDEX
    # version.json: 10.1.0 at 89553ce37, TheRock's newest SDK
    assert m.rocm["10.1"].sdk.layout == "multi-arch"


_EXTRA = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)


@given(have=st.lists(_EXTRA, max_size=3), add=st.lists(_EXTRA, max_size=4),
       spec=st.sampled_from(["", ">1.0", ">1.0,>=7.14.0a0,<7.15", "==2.12.*"]))
@example(have=["libraries", "devel"], add=["device-gfx942"], spec=">1.0")
@settings(deadline=None)  # a shared 2-core machine; correctness, not speed
def test_with_extras_is_the_union_read_back_by_packaging(have: list[str], add: list[str],
                                                         spec: str) -> None:
    """packaging (pip's own requirement parser) reads back the name, every extra once, and
    the version specifier unchanged."""
    given_req = f"rocm[{','.join(have)}]{spec}" if have else f"rocm{spec}"
    req = Requirement(with_extras(given_req, add))
    assert req.name == "rocm"
    assert req.extras == set(have) | set(add)
    assert req.specifier == Requirement(f"rocm{spec}").specifier
