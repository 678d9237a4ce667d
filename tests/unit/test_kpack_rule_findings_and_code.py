"""The kpack rule's findings and GPU-code tables, per function, against hand-written
expectations: a split library is an info finding of the ``gpu-targets`` check naming its
search paths and kernel name (README: a split library is "device code in kpack archives",
never CPU-only), with ``--gfx`` and no archive for it one error per target; an input's own
archives missing a ``--gfx`` target is a ``gpu-targets`` error naming what they hold; per
target the archives, code objects and stored bytes, targets in gfx order (gfx90a before
gfx1100, by family, not by the letters)."""

from __future__ import annotations

from toolkit.core.gfx import parse_target
from toolkit.inspect.readers.kpack import Archive, Kernel, KpackRef
from toolkit.inspect.report import Finding, TargetCode
from toolkit.inspect.rules.kpack import (
    archive_code,
    archive_findings,
    json_archives,
    library_code,
    library_findings,
)

REF = KpackRef("torch/lib/libx.so", ("../.kpack/x_@GFXARCH@.kpack", "x.kpack"), hipk=2)
PATHS = "../.kpack/x_@GFXARCH@.kpack, x.kpack"


def _archives() -> list[Archive]:
    a = Archive("dev/a.kpack", "zstd-per-kernel", ("gfx1100", "gfx90a"), [
        Kernel("torch/lib/libx.so#0", "gfx1100", 10, 100),
        Kernel("torch/lib/libx.so#1", "gfx1100", 5, 50),
        Kernel("torch/lib/liby.so#0", "gfx90a", 7, 70)])
    b = Archive("dev/b.kpack", "none", ("gfx90a",), [
        Kernel("torch/lib/libx.so#0", "gfx90a", 3, 3),
        Kernel("torch/lib/libx.so.1#0", "gfx90a", 1000, 1000)])  # another library's key
    return [a, b]


def test_a_split_library_is_an_info_finding_and_an_error_per_target_with_no_archive() -> None:
    where = Finding("gpu-targets", "info", "pkg/libx.so",
                    f"pkg/libx.so: device code in kpack archives (search paths {PATHS}), kernel name "
                    "torch/lib/libx.so", cause="device code in kpack archives")
    targets = [parse_target("gfx90a"), parse_target("gfx942:xnack+")]
    assert library_findings("pkg/libx.so", REF, [], targets) == [where] + [
        Finding("gpu-targets", "error", "pkg/libx.so",
                f"pkg/libx.so keeps its device code in kpack archives (search paths {PATHS}) and no "
                f"archive given holds code for it, so {t} cannot be checked: give its device wheel "
                "(--with)", cause=f"no kpack archive for {t}")
        for t in ("gfx90a", "gfx942:xnack+")]
    # code found in an archive for some target: the missing ones are the gpu rule's errors
    assert library_findings("pkg/libx.so", REF, ["gfx90a"], targets) == [where]
    assert library_findings("pkg/libx.so", REF, [], []) == [where]
    # an unreadable marker: no paths, no kernel name
    assert library_findings("l.so", KpackRef("", ()), ["gfx90a"], targets) == [
        Finding("gpu-targets", "info", "l.so",
                "l.so: device code in kpack archives (search paths unreadable), kernel name ?",
                cause="device code in kpack archives")]


def test_missing_targets_of_an_inputs_own_archives() -> None:
    targets = [parse_target(t) for t in ("gfx90a", "gfx942", "gfx1100", "gfx1030")]
    assert archive_findings(_archives(), targets, "dev.whl") == [
        Finding("gpu-targets", "error", None,
                f"no code object for {t} in dev.whl's kpack archives (they hold gfx90a, gfx1100)",
                cause=f"no code object for {t}")
        for t in ("gfx942", "gfx1030")]
    assert archive_findings([], [parse_target("gfx90a")], "w") == [
        Finding("gpu-targets", "error", None,
                "no code object for gfx90a in w's kpack archives (they hold none)",
                cause="no code object for gfx90a")]
    assert archive_findings(_archives(), [], "dev.whl") == []


def test_code_per_target_of_an_inputs_archives() -> None:
    code = archive_code(_archives())
    assert list(code) == ["gfx90a", "gfx1100"]
    assert code["gfx90a"] == TargetCode(["dev/a.kpack", "dev/b.kpack"], 3, 7 + 3 + 1000)
    assert code["gfx1100"] == TargetCode(["dev/a.kpack"], 2, 15)
    assert archive_code([]) == {}
    js = json_archives(_archives())
    assert js == {"dev/a.kpack": {"gfx90a": {"code_objects": 1, "bytes": 7},
                                  "gfx1100": {"code_objects": 2, "bytes": 15}},
                  "dev/b.kpack": {"gfx90a": {"code_objects": 2, "bytes": 1003}}}
    assert list(js["dev/a.kpack"]) == ["gfx90a", "gfx1100"]


def test_code_of_one_split_library() -> None:
    code, where, used = library_code("pkg/libx.so", REF, _archives())
    # its kernel name, "#", a number: libx.so.1#0 and liby.so#0 are other libraries'
    assert list(code) == ["gfx90a", "gfx1100"]
    assert code == {"gfx90a": TargetCode(["pkg/libx.so"], 1, 3),
                    "gfx1100": TargetCode(["pkg/libx.so"], 2, 15)}
    assert where == f"device code in kpack archives (search paths {PATHS})"
    assert used == ["dev/a.kpack", "dev/b.kpack"]
    # an unreadable marker names no kernel: no archive's code is its
    assert library_code("l.so", KpackRef("", ()), _archives()) == (
        {}, "device code in kpack archives (search paths unreadable)", [])
