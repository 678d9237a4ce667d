"""The text report of `toolkit check`: the library that sets the policy is always shown, and the
last line names the failed checks with counts, then the policy's own verdict."""

from __future__ import annotations

from toolkit.cli.commands.check import ROWS, lines, verdict_line
from toolkit.inspect.report import Finding, LibraryResult, WheelResult


def _wheel(n: int) -> WheelResult:
    libs = [LibraryResult(f"pkg/lib{i:03d}.so", "shared-library", policy="manylinux_2_17") for i in range(n)]
    libs[-1].policy = "manylinux_2_34"
    return WheelResult("w.whl", "pkg", "1.0", ["cp311-cp311-linux_x86_64"], policy="manylinux_2_34",
                       policy_library=libs[-1].path, libraries=libs)


def test_the_policy_library_is_shown_among_many() -> None:
    w = _wheel(ROWS + 15)
    out = lines(w)
    rows = [x for x in out if x.rstrip().endswith(".so") and "manylinux" in x]
    assert len(rows) == ROWS and rows[-1].endswith(f"pkg/lib{ROWS + 14:03d}.so")
    assert any("15 more libraries" in x for x in out)
    assert out[-1] == f"  ok  policy: manylinux_2_34 (set by pkg/lib{ROWS + 14:03d}.so) ok"


def test_the_last_line_counts_failed_checks_and_keeps_the_policy_verdict_apart() -> None:
    w = _wheel(3)
    w.findings += [Finding("missing-library", "error", "a", "m1"), Finding("gpu-targets", "error", "a", "m2"),
                   Finding("missing-library", "error", "b", "m3"), Finding("rpath", "warning", "a", "m4")]
    assert verdict_line(w) == ("  FAILED: missing-library 2, gpu-targets 1  policy: manylinux_2_34 "
                               "(set by pkg/lib002.so) ok")
    w.findings.append(Finding("policy", "error", "a", "m5"))
    assert verdict_line(w).endswith("(set by pkg/lib002.so) FAILED")
    assert "policy 1" in verdict_line(w)
    assert verdict_line(WheelResult("d")) == "  ok  policy: -"
