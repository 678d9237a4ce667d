"""``matrix``'s table (the default format) against ``matrix --format json``, the same builds as
one object each: a row per package, version and ROCm release counting that release's builds,
its Python tags (the lowest to the highest plain Python, then each free-threaded one:
``cp39-cp313 + cp313t``), a total per package version and a grand total, ROCm releases in
version order (7.2 before 7.13, 10.0 last), under columns named as the JSON fields are."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter, defaultdict

import pytest

from toolkit.cli.main import main


def _numeric(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _tag(python: str) -> str:
    return "cp" + python.replace(".", "")


@pytest.fixture(scope="module")
def outputs() -> tuple[list[list[str]], list[str], list[dict[str, str]]]:
    text, doc = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(["matrix"]) == 0
    with contextlib.redirect_stdout(doc):
        assert main(["matrix", "--format", "json"]) == 0
    lines = text.getvalue().splitlines()
    rows = [[c.strip() for c in ln.strip("│").split("│")] for ln in lines if ln.startswith("│")]
    header = next(ln for ln in lines if ln.startswith("┃"))
    return rows, [lines[0].strip(), *(c.strip() for c in header.strip("┃").split("┃"))], \
        json.loads(doc.getvalue())


def test_the_title_and_columns(outputs: tuple[list[list[str]], list[str], list[dict[str, str]]]) -> None:
    _, header, _ = outputs
    assert header == ["Build matrix", "Package", "Version", "Torch", "ROCm", "Python", "Wheels",
                      "Known failure"]


def test_each_row_counts_the_builds_of_its_release(
        outputs: tuple[list[list[str]], list[str], list[dict[str, str]]]) -> None:
    rows, _, builds = outputs
    counted = Counter((b["package"], b["version"], b["rocm"]) for b in builds)
    pythons: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for b in builds:
        pythons[b["package"], b["version"], b["rocm"]].append(b["python"])
    release_rows = [r for r in rows if r[3]]
    assert {(r[0], r[1], r[3]): int(r[5]) for r in release_rows} == dict(counted)
    for pkg, ver, _torch, rocm, cell, _n, _known in release_rows:
        if cell.endswith(")"):
            continue  # an abi3 wheel: its tag, then the Pythons it serves
        plain = sorted({p for p in pythons[pkg, ver, rocm] if not p.endswith("t")}, key=_numeric)
        threaded = sorted({p for p in pythons[pkg, ver, rocm] if p.endswith("t")},
                          key=lambda p: _numeric(p[:-1]))
        low, high = _tag(plain[0]), _tag(plain[-1])
        want = [low if low == high else f"{low}-{high}", *(_tag(p) for p in threaded)]
        assert cell == " + ".join(want), (pkg, ver, rocm)
    assert any(" + cp3" in r[4] for r in release_rows)  # free-threaded builds are in the data


def test_totals_and_release_order(outputs: tuple[list[list[str]], list[str], list[dict[str, str]]]) -> None:
    rows, _, builds = outputs
    assert rows[-1][4:6] == ["grand total", str(len(builds))]
    per_version = Counter((b["package"], b["version"]) for b in builds)
    totals = {(r[0], r[1]): int(r[5]) for r in rows if r[4] == "total"}
    assert totals == dict(per_version)
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in rows:
        if r[3]:
            groups[r[0], r[1]].append(r[3])
    for releases in groups.values():
        assert releases == sorted(releases, key=_numeric)
    # the data holds a version whose releases sort apart as text (7.13 < 7.2, 10.0 < 7.x)
    assert any(releases != sorted(releases) for releases in groups.values())
