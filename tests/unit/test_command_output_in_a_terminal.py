"""What `check`, `smoke` and `matrix` show in a real terminal (the toolkit's own ``console()``
on a stream that is a tty, ``TERM=xterm``, not CI): the ANSI codes a user sees, per ECMA-48
SGR (1 bold, 31 red), and where each table cell sits in its column. Each check's title is
bold, its error and FAILED lines red, every other line plain; names and numbers from outside
(a wheel's, a test's, pytest's exit code) are never coloured by rich's highlighter; the
matrix's Wheels column is right-aligned (a count), its other columns left-aligned."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from toolkit.cli.commands import check, smoke
from toolkit.cli.main import main
from toolkit.inspect.report import Finding, LibraryResult, Report, WheelResult
from toolkit.verify.smoke import Case, SmokeOutcome

Tty = Callable[[Callable[[], object]], str]
SGR = re.compile(r"\x1b\[([0-9;]*)m")
BOLD, RED = "1", "31"  # ECMA-48 SGR parameters


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def tty(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], object]], str]:
    """What a call writes to sys.stdout when that is a colour terminal 200 columns wide."""
    for var in ("CI", "GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "COLORTERM", "TTY_COMPATIBLE",
                "TTY_INTERACTIVE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("LINES", "50")

    def shown(call: Callable[[], object]) -> str:
        stream = _Tty()
        with contextlib.redirect_stdout(stream):  # in the test's own phase (pytest re-captures)
            call()
        return stream.getvalue()

    return shown


def _styled(text: str) -> list[tuple[set[str], str]]:
    """Each non-empty line: (the SGR parameters it sets, its plain text)."""
    out = []
    for line in text.splitlines():
        codes = {p for m in SGR.finditer(line) for p in m.group(1).split(";") if p not in ("", "0")}
        plain = SGR.sub("", line)
        if plain.strip():
            out.append((codes, plain))
    return out


def _failing_wheel() -> WheelResult:
    lib = LibraryResult("pkg/_C.so", "shared-library", policy="manylinux_2_28")
    return WheelResult(
        "dist/pkg-1.0-cp312-cp312-linux_x86_64.whl", "pkg", "1.0", ["cp312-cp312-linux_x86_64"],
        policy="manylinux_2_28", policy_library="pkg/_C.so", libraries=[lib],
        findings=[Finding("missing-library", "error", "pkg/_C.so", "libamdhip64.so.6 not found 0x1f"),
                  Finding("rpath", "warning", "pkg/_C.so", "RPATH /tmp/build 1234 set")])


def test_check_title_bold_errors_and_verdict_red_the_rest_plain(tty: Tty) -> None:
    lines = _styled(tty(lambda: check.show(Report([_failing_wheel()]))))
    assert lines[0][0] == {BOLD} and lines[0][1] == "pkg 1.0  (dist/pkg-1.0-cp312-cp312-linux_x86_64.whl)"
    by_text = {plain.strip(): codes for codes, plain in lines}
    assert by_text["error [missing-library] libamdhip64.so.6 not found 0x1f"] == {RED}
    assert by_text["warning [rpath] RPATH /tmp/build 1234 set"] == set()  # no number highlighted
    verdict = next(t for t in by_text if t.startswith("FAILED:"))
    assert by_text[verdict] == {RED}
    assert verdict == "FAILED: missing-library 1  policy: manylinux_2_28 (set by pkg/_C.so) ok"
    plain = [(codes, text) for codes, text in lines[1:] if not text.strip().startswith(("error", "FAILED"))]
    assert plain and all(codes == set() for codes, _ in plain), plain


def test_check_of_a_clean_wheel_has_no_red(tty: Tty) -> None:
    w = _failing_wheel()
    w.findings = [f for f in w.findings if f.severity != "error"]
    lines = _styled(tty(lambda: check.show(Report([w]))))
    assert lines[-1] == (set(), "  ok  policy: manylinux_2_28 (set by pkg/_C.so) ok")
    assert all(RED not in codes for codes, _ in lines)


def test_check_shows_rich_markup_in_names_as_written(tty: Tty) -> None:
    w = WheelResult("[red]x[/red] 42.whl")
    lines = _styled(tty(lambda: check.show(Report([w]))))
    assert lines[0] == ({BOLD}, "[red]x[/red] 42.whl")


def test_smoke_summary_lines_are_not_highlighted(tty: Tty) -> None:
    outcomes = [SmokeOutcome("b-1", ("gfx90a",), [Case("t.py::b", "failed", "assert [red]1[/red] == 2"),
                                                  Case("t.py::d", "skipped", "no GPU [bold]0x3[/bold]")]),
                SmokeOutcome("b-2", ("gfx90a",), returncode=5,
                             junit=Path("/ci/[bold]run 7[/bold]/smoke.xml"))]
    lines = _styled(tty(lambda: smoke.show(outcomes)))
    below = {text: codes for codes, text in lines if text.startswith("  ") and "│" not in text
             and text.strip() != "Smoke tests"}
    assert below == {"  FAILED t.py::b: assert [red]1[/red] == 2": set(),
                     "  skipped (1): no GPU [bold]0x3[/bold]": set(),
                     "  b-2: no test ran (pytest exit 5)": set(),
                     "  JUnit XML: /ci/[bold]run 7[/bold]/smoke.xml": set()}


def test_smoke_show_writes_to_the_stream_given(tty: Tty) -> None:
    other = _Tty()
    assert tty(lambda: smoke.show([SmokeOutcome("b-2", ("gfx90a",), returncode=5)], out=other)) == ""
    assert "b-2: no test ran (pytest exit 5)" in SGR.sub("", other.getvalue())


def _cells(line: str, bar: str = "│") -> list[str]:
    """The cells of a table row, spaces kept (rich pads each cell with one space a side)."""
    return line.strip()[1:-1].split(bar)


def test_matrix_notes_under_the_table_are_plain(tty: Tty) -> None:
    """The notes (where each ROCm comes from, the known failures) carry versions and names
    from the data: shown as written, no number coloured, no bracket read as markup."""
    text = tty(lambda: main(["matrix", "--package", "apex"]))
    after = text.split("┘", 1)[1]
    notes = [line for line in after.splitlines() if line.strip()]
    assert any(line.startswith("ROCm 7.0: system install: ") for line in notes)
    assert any(line.startswith("known failure ") for line in notes)
    assert not [line for line in notes if SGR.search(line)]


def test_matrix_wheels_column_right_aligned_the_others_left(tty: Tty) -> None:
    text = SGR.sub("", tty(lambda: main(["matrix", "--package", "apex"])))
    header = _cells(next(line for line in text.splitlines() if line.strip().startswith("┃")), "┃")
    rows = [line for line in text.splitlines() if line.strip().startswith("│")]
    assert [h.strip() for h in header] == ["Package", "Version", "Torch", "ROCm", "Python",
                                            "Wheels", "Known failure"]
    total = next(_cells(r) for r in rows if "grand total" in r)
    wheels = total[5]
    assert len(wheels) > len(wheels.strip()) + 2, header  # wider than the count: room to align
    assert wheels.endswith(wheels.strip() + " ") and wheels.startswith("  ")  # right-aligned
    python = total[4]
    assert python.startswith(" grand total") and python.endswith("  ")  # left-aligned
    for row in rows:
        cells = _cells(row)
        if cells[0].strip():
            assert cells[0].startswith(" " + cells[0].strip()) and cells[0].endswith(" ")
            assert cells[5].endswith(cells[5].strip() + " ")
            if len(cells[5].strip()) < len("Wheels"):
                assert cells[5].startswith("  ")


def test_matrix_totals_are_bold_and_close_their_section(tty: Tty) -> None:
    text = tty(lambda: main(["matrix", "--package", "apex"]))
    lines = _styled(text)
    rows = [(codes, plain) for codes, plain in lines if plain.strip().startswith("│")]
    totals = [(codes, plain) for codes, plain in rows if "total" in plain]
    assert totals and all(BOLD in codes for codes, _ in totals)
    assert all(BOLD not in codes for codes, plain in rows if "total" not in plain)
    plain = [p for _, p in lines]
    for i, line in enumerate(plain):  # a rule under each version's total, none elsewhere
        if line.strip().startswith("├"):
            assert " total " in plain[i - 1] and "grand" not in plain[i - 1]
        elif " total " in line and "grand" not in line:
            assert plain[i + 1].strip().startswith("├")


def test_check_shows_each_input_then_a_blank_line(tty: Tty) -> None:
    text = SGR.sub("", tty(lambda: check.show(Report([WheelResult("libs/a"), WheelResult("libs/b")]))))
    one = ["  files on disk: 0 native libraries (0 with GPU code)",
           "  GPU targets: none (no library carries device code)",
           "  built against: no HIP runtime, torch or ROCm library",
           "  ok  policy: -",
           ""]
    assert text.splitlines() == ["libs/a", *one, "libs/b", *one]
