"""A wheel's GPU code per target is the sum of what its libraries carry and what its kpack
archives carry: libraries listed in order, code objects and bytes added (hand-computed
below); a target only one side has keeps its own counts; targets come out in gfx order."""

from __future__ import annotations

from toolkit.inspect.checks import _merged
from toolkit.inspect.report import TargetCode


def test_libraries_and_archives_add_up_per_target() -> None:
    libs = {"gfx942": TargetCode(["a/_C.so"], 2, 1000), "gfx90a": TargetCode(["a/_C.so"], 1, 300)}
    packs = {"gfx942": TargetCode(["a/k.kpack"], 3, 50), "gfx1100": TargetCode(["a/k.kpack"], 1, 7)}
    got = {t: tc.to_json() for t, tc in _merged(libs, packs).items()}
    assert got == {
        "gfx90a": {"libraries": ["a/_C.so"], "code_objects": 1, "bytes": 300},
        "gfx942": {"libraries": ["a/_C.so", "a/k.kpack"], "code_objects": 5, "bytes": 1050},
        "gfx1100": {"libraries": ["a/k.kpack"], "code_objects": 1, "bytes": 7},
    }
    assert list(got) == ["gfx90a", "gfx942", "gfx1100"]  # gfx9 before gfx11, 90a before 942


def test_merging_leaves_its_inputs_as_they_were() -> None:
    libs = {"gfx942": TargetCode(["a/_C.so"], 2, 1000)}
    packs = {"gfx942": TargetCode(["a/k.kpack"], 3, 50)}
    _merged(libs, packs)
    assert libs["gfx942"].to_json() == {"libraries": ["a/_C.so"], "code_objects": 2, "bytes": 1000}
    assert _merged(libs, {})["gfx942"].to_json() == libs["gfx942"].to_json()
    assert _merged({}, packs)["gfx942"].to_json() == packs["gfx942"].to_json()
