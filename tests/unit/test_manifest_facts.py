"""What a manifest tells the smoke suite to expect follows how the wheel was built."""

from __future__ import annotations

from toolkit.data.matrix import load_matrix
from toolkit.plan.model import Options
from toolkit.run.manifest import recipe_facts


def test_apex_jit_only_wheel_expects_no_compiled_op() -> None:
    build = load_matrix().build("apex-1.8.0-cp312-rocm7.0")
    prebuilt = recipe_facts(build, ("gfx942",), Options())
    jit = recipe_facts(build, ("gfx942",), Options(recipe_options=("apex-ops=jit",)))
    # apex 1.8 prebuilt: the ops live under apex.<name> (26 of them from 1.5 on)
    assert "apex.fused_layer_norm_cuda" in prebuilt["expected_modules"]
    assert len(prebuilt["expected_modules"]) == 26
    # upstream's JIT-only wheel compiles none: only the package itself must import
    assert jit["expected_modules"] == ["apex"]
    # 1.7 has no JIT mode: the option changes nothing there
    old = load_matrix().build("apex-1.7.0-cp312-rocm6.4")
    assert recipe_facts(old, (), Options(recipe_options=("apex-ops=jit",)))["expected_modules"] == \
        recipe_facts(old, (), Options())["expected_modules"]
