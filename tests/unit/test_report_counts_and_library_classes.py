"""The report model's derived views, against hand-built results: the error findings per check
(most first, then by name; warnings and notes not counted), which libraries are GPU libraries
(device code or a kpack marker; never a standalone code object) and which are CPU-only (no
code, no marker; not a code object, not an unreadable file), the symbol-version nodes, and
the keys present only when they have something to say (``kpack``, ``kpack_archives``)."""

from __future__ import annotations

from toolkit.inspect.report import Finding, LibraryResult, Report, TargetCode, WheelResult


def _f(check: str, severity: str = "error") -> Finding:
    return Finding(check, severity, None, "m")  # type: ignore[arg-type]


def test_failed_checks_most_first_then_by_name() -> None:
    w = WheelResult("w.whl", findings=[_f("rpath"), _f("elf"), _f("rpath"), _f("abi3"), _f("elf"),
                                       _f("rpath"), _f("zzz", "warning"), _f("zzz", "info"), _f("abi3")])
    assert list(w.failed_checks.items()) == [("rpath", 3), ("abi3", 2), ("elf", 2)]
    assert not w.ok and not Report([w, WheelResult("ok.whl")]).ok
    quiet = WheelResult("q.whl", findings=[_f("rpath", "warning"), _f("elf", "info")])
    assert quiet.ok and quiet.failed_checks == {} and Report([quiet]).ok
    assert Report([w, quiet]).findings == w.findings + quiet.findings


def test_gpu_and_cpu_only_libraries() -> None:
    code = {"gfx90a": TargetCode(["a.so"], 1, 10)}
    where = ["1 code object in .hip_fatbin"]
    libs = [LibraryResult("gpu.so", "shared-library", gpu_code=code, gpu_where=where),
            LibraryResult("split.so", "shared-library", kpack={"kernel_name": "k"}, gpu_where=["kpack"]),
            LibraryResult("k.hsaco", "gpu-code-object", gpu_code=code),
            LibraryResult("bad.so", "unreadable"),
            LibraryResult("cpu.so", "shared-library"),
            LibraryResult("tool", "executable")]
    w = WheelResult("w.whl", libraries=libs)
    assert [lib.path for lib in w.gpu_libraries] == ["gpu.so", "split.so"]
    assert [lib.path for lib in w.cpu_only] == ["cpu.so", "tool"]
    js = w.to_json()
    assert js["gpu_libraries"] == {"gpu.so": ["1 code object in .hip_fatbin"], "split.so": ["kpack"]}
    assert js["cpu_only_libraries"] == ["cpu.so", "tool"]
    assert "kpack_archives" not in js
    assert [("kpack" in lib) for lib in js["libraries"]] == [False, True, False, False, False, False]
    assert js["libraries"][1]["kpack"] == {"kernel_name": "k"}
    archives = {"a.kpack": {"gfx90a": {"code_objects": 1, "bytes": 5}}}
    assert WheelResult("d.whl", kpack_archives=archives).to_json()["kpack_archives"] == archives


def test_symbol_version_nodes() -> None:
    lib = LibraryResult("x.so", "shared-library", max_versions={"GLIBC": "2.28", "GLIBCXX": "3.4.30"})
    assert lib.symbol_versions == {"GLIBC": "GLIBC_2.28", "GLIBCXX": "GLIBCXX_3.4.30"}
    js = lib.to_json()
    assert (js["max_versions"], js["max_symbol_versions"]) == (
        {"GLIBC": "2.28", "GLIBCXX": "3.4.30"}, {"GLIBC": "GLIBC_2.28", "GLIBCXX": "GLIBCXX_3.4.30"})
