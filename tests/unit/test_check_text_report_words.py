"""`toolkit check`'s option values and the words of its text report, against independent
truths: binary size units (the README's "2 GiB", `--max-member-size 4G` = 4 * 2**30 bytes),
argparse's own refusal (exit 2, README "## Exit codes"), English plurals and hand-counted
lines for hand-built results."""

from __future__ import annotations

import argparse

import pytest

from toolkit.cli.commands import check
from toolkit.cli.main import main
from toolkit.inspect.report import Finding, LibraryResult, TargetCode, WheelResult


@pytest.mark.parametrize(("text", "size"), [
    ("4G", 4 * 2**30), ("512M", 512 * 2**20), ("64K", 64 * 2**10), ("1T", 2**40),
    ("4GiB", 4 * 2**30), ("4gb", 4 * 2**30), ("512Mi", 512 * 2**20), (" 2k ", 2048),
    ("1.5G", 3 * 2**29), ("100", 100), ("0", 0), ("100B", 100),
])
def test_sizes_are_in_binary_units(text: str, size: int) -> None:
    assert check._size(text) == size


@pytest.mark.parametrize("text", ["lots", "", "G", "-1", "-1K", "infG", "nanM", "4X", "1e3"])
def test_a_bad_size_is_refused_naming_it(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as err:
        check._size(text)
    assert repr(text) in str(err.value) or text in str(err.value)
    assert "4G" in str(err.value) and "512M" in str(err.value)


def test_a_negative_size_says_sizes_are_not_negative() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="not negative"):
        check._size("-5M")


@pytest.mark.parametrize(("text", "ratio"), [("200", 200.0), ("0.5", 0.5), ("1e3", 1000.0)])
def test_a_ratio_is_a_positive_number(text: str, ratio: float) -> None:
    assert check._ratio(text) == ratio


@pytest.mark.parametrize("text", ["0", "-1", "inf", "nan", "x", ""])
def test_a_ratio_that_is_not_positive_and_finite_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="positive number"):
        check._ratio(text)


@pytest.mark.parametrize(("text", "jobs"), [("1", 1), ("16", 16)])
def test_jobs_are_one_or_more(text: str, jobs: int) -> None:
    assert check._jobs(text) == jobs


@pytest.mark.parametrize("text", ["0", "-3", "two", "1.5"])
def test_fewer_than_one_job_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="1 or more"):
        check._jobs(text)


def test_bad_option_values_exit_2_before_anything_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    for option, value in (("--max-total-size", "-1"), ("--max-ratio", "0"), ("--jobs", "0")):
        with pytest.raises(SystemExit) as stop:
            main(["check", option, value, "/no/such.whl"])
        assert stop.value.code == 2
        assert option in capsys.readouterr().err


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (2**20, "1.0 MiB"),
    (5 * 2**20 // 2, "2.5 MiB"), (2**30, "1.0 GiB"), (3 * 2**30, "3.0 GiB"),
])
def test_bytes_are_shown_in_binary_units(n: int, text: str) -> None:
    assert check._bytes(n) == text


def test_long_name_lists_are_cut_after_six_unless_verbose() -> None:
    six = [f"lib{i}.so" for i in range(6)]
    assert check._names(six, False) == ", ".join(six)
    seven = [*six, "lib6.so"]
    assert check._names(seven, False) == ", ".join(six) + " and 1 more"
    assert check._names(seven, True) == ", ".join(seven)
    assert check._names([*seven, "x", "y"], False).endswith(" and 3 more")


def test_what_a_wheel_was_built_against_in_words() -> None:
    assert check._built_against({}) == "no HIP runtime, torch or ROCm library"
    assert check._built_against({"hip_runtime": ["libamdhip64.so.6"], "rocm_major": 6}) == \
        "HIP runtime libamdhip64.so.6 (ROCm 6)"
    assert check._built_against({"torch": True}) == "torch"
    assert check._built_against({"torch": True, "torch_hip": True}) == \
        "torch with HIP (libc10_hip/libtorch_hip)"
    both = check._built_against({"hip_runtime": ["a", "b"], "rocm_major": 7, "torch": True,
                                 "rocm_libraries": ["librocblas.so.4", "libhipblas.so.2"]})
    assert both == "HIP runtime a, b (ROCm 7); torch; ROCm libraries librocblas.so.4, libhipblas.so.2"


def _gpu_lib(path: str, targets: dict[str, int],
             where: str = "3 code objects in .hip_fatbin (bundle)") -> LibraryResult:
    return LibraryResult(path, "shared-library", {"GLIBC": "2.17"}, "manylinux_2_17", list(targets),
                         {t: TargetCode([path], n, n * 1024) for t, n in targets.items()}, [where])


def test_the_picture_of_a_wheel_counts_its_libraries_and_code() -> None:
    gpu = _gpu_lib("pkg/libk.so", {"gfx90a": 2, "gfx942": 1})
    cpu = LibraryResult("pkg/libc.so", "shared-library", {}, None)
    obj = LibraryResult("pkg/k.hsaco", "gpu-code-object", gpu_targets=["gfx90a"])
    bad = LibraryResult("pkg/bad.so", "unreadable")
    wheel = WheelResult("w.whl", "pkg", "1.0", ["cp312-cp312-manylinux_2_28_x86_64"],
                        libraries=[gpu, cpu, obj, bad],
                        gpu={"gfx90a": TargetCode(["pkg/libk.so"], 2, 2048),
                             "gfx942": TargetCode(["pkg/libk.so"], 1, 3 * 2**20)})
    hosts = [gpu, cpu]
    assert check._count_line(wheel, hosts, [obj]) == \
        "  cp312-cp312-manylinux_2_28_x86_64: 2 native libraries (1 with GPU code), 1 GPU code object file"
    assert check._count_line(WheelResult("d/"), [cpu], []) == \
        "  files on disk: 1 native library (0 with GPU code)"
    assert check._count_line(wheel, hosts, [obj, obj]).endswith(", 2 GPU code object files")
    targets = check._target_lines(wheel)
    assert targets[0] == "  GPU targets (libraries, code objects, bytes of code):"
    assert targets[1].split() == ["gfx90a", "1", "lib", "2", "obj", "2.0", "KiB"]
    assert targets[2].split() == ["gfx942", "1", "lib", "1", "obj", "3.0", "MiB"]
    assert check._target_lines(WheelResult("w")) == ["  GPU targets: none (no library carries device code)"]
    where = check._gpu_cpu_lines(wheel, False)
    assert where == ["  GPU libraries, device code in .hip_fatbin (bundle): pkg/libk.so",
                     "  CPU-only libraries (1): pkg/libc.so"]
    out = check.lines(wheel, verbose=True)
    assert out[0] == "pkg 1.0  (w.whl)"
    assert "  code object  gfx90a                   pkg/k.hsaco" in out
    assert not any("bad.so" in line for line in out[:2])


def test_kpack_archives_per_target() -> None:
    wheel = WheelResult("w", kpack_archives={
        "pkg/a.kpack": {"gfx90a": {"code_objects": 2, "bytes": 2048},
                        "gfx942": {"code_objects": 1, "bytes": 10}},
        "pkg/empty.kpack": {}})
    assert check._archive_lines(wheel) == [
        "  kpack archive pkg/a.kpack: gfx90a 2 obj 2.0 KiB, gfx942 1 obj 10 B",
        "  kpack archive pkg/empty.kpack: no code objects"]


def test_a_library_row_shows_versions_policy_and_targets() -> None:
    lib = _gpu_lib("pkg/libk.so", {"gfx90a": 2, "gfx942": 1})
    (row,) = check._library_row(lib, False)
    cells = row.split()
    assert cells == ["GLIBC_2.17", "-", "-", "-", "manylinux_2_17", "gfx90a,", "gfx942", "pkg/libk.so"]
    many = _gpu_lib("pkg/libm.so", {"gfx906": 1, "gfx908": 1, "gfx90a": 1})
    assert "3 targets" in check._library_row(many, False)[0]
    none = LibraryResult("pkg/libc.so", "shared-library")
    assert check._library_row(none, False)[0].split() == ["-", "-", "-", "-", "-", "-", "pkg/libc.so"]
    verbose = check._library_row(lib, True)
    assert verbose[1] == "      3 code objects in .hip_fatbin (bundle)"
    assert verbose[2].split() == ["gfx90a", "2", "obj", "2.0", "KiB"] and len(verbose) == 4


def test_the_library_table_shows_errors_first_and_says_how_many_are_hidden() -> None:
    libs = [LibraryResult(f"pkg/lib{i:02d}.so", "shared-library") for i in range(check.ROWS + 3)]
    bad = libs[-1].path
    wheel = WheelResult("w", libraries=libs,
                        findings=[Finding("rpath", "error", None, "m", libraries=(bad,))])
    table = check._table_lines(wheel, libs, False)
    assert table[0].split()[:5] == ["GLIBC", "GLIBCXX", "CXXABI", "GCC", "policy"]
    assert table[1].endswith(bad)  # a library with an error comes first
    assert table[-1] == "  ... 3 more libraries (--verbose)"
    assert len(table) == 1 + check.ROWS + 1
    assert len(check._table_lines(wheel, libs, True)) == 1 + len(libs)
    assert check._table_lines(wheel, [], False) == []


def test_findings_are_grouped_by_check_and_cause() -> None:
    grouped = [Finding("undefined-symbol", "error", f"l{i}.so", f"m{i}", cause="needs libX")
               for i in range(8)]
    single = Finding("rpath", "warning", "a.so", "an RPATH", symbols=("s1", "s2"))
    out = check._finding_lines([*grouped, single], False)
    assert out[0] == "  error [undefined-symbol] needs libX: 8 findings, 8 libraries"
    assert out[1] == "      " + ", ".join(f"l{i}.so" for i in range(6)) + " and 2 more"
    assert out[2] == "  warning [rpath] an RPATH"
    assert len(out) == 3
    verbose = check._finding_lines([*grouped[:2], single], True)
    assert verbose == ["  error [undefined-symbol] m0", "  error [undefined-symbol] m1",
                       "  warning [rpath] an RPATH", "      s1", "      s2"]
    unlocated = [Finding("metadata", "error", None, "x", cause="c"),
                 Finding("metadata", "error", None, "y", cause="c")]
    assert check._finding_lines(unlocated, False) == ["  error [metadata] c: 2 findings, 0 libraries"]


def test_the_verdict_line_names_the_policys_library() -> None:
    ok = WheelResult("w", policy="manylinux_2_28", policy_library="pkg/a.so")
    assert check.verdict_line(ok) == "  ok  policy: manylinux_2_28 (set by pkg/a.so) ok"
    failed = WheelResult("w", policy="manylinux_2_17", findings=[Finding("policy", "error", None, "m")])
    assert check.verdict_line(failed) == "  FAILED: policy 1  policy: manylinux_2_17 FAILED"
    assert check.verdict_line(WheelResult("w")) == "  ok  policy: -"


def test_the_table_heads_gpu_targets_and_library_over_their_columns() -> None:
    """The header names the last two columns, each word starting where its cells start: the
    targets (``gfx90a, gfx942``) under ``GPU targets``, the path under ``library``."""
    lib = _gpu_lib("pkg/libk.so", {"gfx90a": 2, "gfx942": 1})
    head, row = check._table_lines(WheelResult("w", libraries=[lib]), [lib], False)
    assert head.index("policy") == row.index("manylinux_2_17")
    assert head.index("  GPU targets ") + 2 == row.index("gfx90a, gfx942")
    assert head.endswith(" library") and head.index(" library") + 1 == row.index("pkg/libk.so")
