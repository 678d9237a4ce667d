"""A library whose wrappers are partly split (some still HIPF, reading ``.hip_fatbin``, some
HIPK, reading kpack archives) carries GPU code in both places: per target, its code is the
sum of what its own fat binary holds and what the archives hold for it (hand-computed below),
targets in gfx order, and where each part was found is listed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolkit.inspect import checks
from toolkit.inspect.inputs import Input
from toolkit.inspect.readers.kpack import KpackRef
from toolkit.inspect.report import LibraryResult, TargetCode
from toolkit.inspect.rules import kpack as kpack_rule


def test_embedded_and_kpack_code_add_up_per_target(monkeypatch: pytest.MonkeyPatch) -> None:
    path = "pkg/_C.so"
    archive_code = {"gfx942": TargetCode(["pkg/k.kpack"], 3, 50),
                    "gfx90a": TargetCode(["pkg/k.kpack"], 1, 7)}

    def library_code(lib: str, ref: KpackRef, archives: Any) -> Any:
        assert lib == path and ref.kernel_name == "_C"
        return archive_code, "4 code objects in pkg/k.kpack", ["pkg/k.kpack"]

    monkeypatch.setattr(kpack_rule, "library_code", library_code)  # what checks calls
    lr = LibraryResult(path, "shared-library",
                       gpu_code={"gfx942": TargetCode([path], 2, 1000),
                                 "gfx1100": TargetCode([path], 1, 300)},
                       gpu_where=["3 code objects in .hip_fatbin (bundle)"])
    ref = KpackRef("_C", ("pkg",), hipk=1, hipf=1)
    checks._split_library(Input(Path("w.whl"), None), lr, ref)
    assert {t: (tc.code_objects, tc.bytes) for t, tc in lr.gpu_code.items()} == {
        "gfx90a": (1, 7), "gfx942": (5, 1050), "gfx1100": (1, 300)}
    assert lr.gpu_targets == ["gfx90a", "gfx942", "gfx1100"]
    assert lr.gpu_where == ["3 code objects in .hip_fatbin (bundle)", "4 code objects in pkg/k.kpack"]
    assert lr.kpack is not None and lr.kpack["archives"] == ["pkg/k.kpack"]
    assert (lr.kpack["hipk"], lr.kpack["hipf"]) == (1, 1)
