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
    options = Options(**opts)  # type: ignore[arg-type]
    return plan(m, m.build(build_id), options, HOST, LAYOUT)


def test_steps_are_ordered_and_known() -> None:
    p = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942",))
    names = [s.name for s in p.steps]
    assert names == ["check-env", "probe-indexes", "create-env", "install-rocm-sdk", "install-torch",
                     "mark-env-ready", "get-sources", "install-requirements", "preflight",
                     "build-wheel", "name-wheel", "check", "install-wheel", "smoke", "publish"]
    kinds = [s.kind for s in p.steps]
    assert kinds == ["check-env", "probe-indexes", "create-env", "install-sdk", "install-torch",
                     "mark-env-ready", "fetch-sources", "run", "run", "build-wheel",
                     "name-wheel", "check", "run", "smoke", "publish"]


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


def test_plan_is_pure_and_deterministic() -> None:
    a = make("apex-1.7.0-cp310-rocm6.3", gfx=("gfx90a",))
    b = make("apex-1.7.0-cp310-rocm6.3", gfx=("gfx90a",))
    assert a == b and a.to_json() == b.to_json()


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


def test_targets_spanning_families_are_refused_on_a_per_family_index() -> None:
    with pytest.raises(UsageError, match="no single GPU family covers gfx942, gfx1100"):
        make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942", "gfx1100"))


def test_system_sdk_and_index_override() -> None:
    p = make("apex-1.7.0-cp312-rocm6.4", gfx=("gfx90a",))
    assert p.step("install-rocm-sdk").argv == ("/opt/rocm/bin/hipconfig", "--version")
    p = make("apex-1.8.0-cp312-rocm7.0", gfx=("gfx942",), index_url="http://127.0.0.1:9/idx/")
    assert "http://127.0.0.1:9/idx/gfx94X-dcgpu/" in p.step("install-rocm-sdk").argv


def test_unpublished_torch_pair_uses_its_recorded_source() -> None:
    argv = make("apex-1.7.0-cp312-rocm6.4", gfx=("gfx90a",)).step("install-torch").argv
    assert "https://repo.radeon.com/rocm/manylinux/rocm-rel-6.4/" in argv
    assert not any("download.pytorch.org" in a for a in argv)
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
