"""`check --verbose`: the README says undefined symbols are grouped per library with 5
examples, "all with `--verbose`": the verbose text report lists every symbol of a group, and
every finding of a group of several; the plain one does neither."""

from __future__ import annotations

from toolkit.cli.commands.check import lines
from toolkit.inspect.report import Finding, WheelResult

SYMBOLS = tuple(f"_Z4sym{i}v" for i in range(7))


def _wheel() -> WheelResult:
    return WheelResult("ext-1.0-cp312-cp312-linux_x86_64.whl", findings=[
        Finding("undefined-symbol", "error", "ext/_C.so", "7 undefined symbols (5 shown)",
                cause="undefined symbols", symbols=SYMBOLS),
        Finding("rpath", "warning", "ext/a.so", "a.so: RPATH /build/a", cause="build path"),
        Finding("rpath", "warning", "ext/b.so", "b.so: RPATH /build/b", cause="build path")])


def test_verbose_lists_every_symbol_and_every_grouped_finding() -> None:
    text = lines(_wheel(), verbose=True)
    assert all(any(line.strip() == sym for line in text) for sym in SYMBOLS)
    assert any("a.so: RPATH /build/a" in line for line in text)
    assert any("b.so: RPATH /build/b" in line for line in text)


def test_plain_output_groups_and_lists_no_symbols() -> None:
    text = lines(_wheel())
    assert not any(line.strip() in SYMBOLS for line in text)
    assert not any("RPATH /build/a" in line for line in text)
    assert any("build path: 2 findings, 2 libraries" in line for line in text)
