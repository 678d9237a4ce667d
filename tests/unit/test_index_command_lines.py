"""`python -m toolkit index DIR`, in process: the lines it prints (stdout: the page and how
many wheels it lists, "written" or "unchanged"; stderr: one ``warning:`` line per thing left
off, and for an empty folder that the page lists nothing) and, for a wheel variant
(``<name>-<ver>-<py>-<abi>-<plat>-<label>.whl``, which pip cannot select: the module's
docstring), no warning but the variants JSON written beside it and named. Expected lines are
hand-written from the words the command's docstring and docs/command-line.md use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_findlinks import build_wheel
from tests.unit.test_renamed_wheels_and_variant_indexes import a_wheel
from toolkit.cli.main import main
from toolkit.run.variant_wheels import make_variant


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GITHUB_ACTIONS", "CI"):
        monkeypatch.delenv(var, raising=False)


def test_an_empty_folder_gets_an_empty_page_and_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "dist"
    folder.mkdir()
    assert main(["index", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{folder}/index.html: 0 wheels (written)\n"
    assert err == f"warning: no wheels under {folder}: the page lists nothing\n"
    assert main(["index", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{folder}/index.html: 0 wheels (unchanged)\n" and "lists nothing" in err


def test_two_wheels_are_counted_in_the_plural(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "dist"
    build_wheel(folder / "a", version="0.1.0")
    build_wheel(folder / "b", version="0.2.0")
    assert main(["index", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{folder}/index.html: 2 wheels (written)\n" and err == ""


def test_a_variant_is_not_warned_about_and_its_json_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "dist"
    src = a_wheel(tmp_path / "src")
    make_variant(src, folder / "b", "gfx942")
    (variant,) = (folder / "b").glob("*.whl")
    assert variant.name.count("-") == 5  # name-ver-py-abi-plat-label
    assert main(["index", str(folder)]) == 0
    out, err = capsys.readouterr()
    doc = folder / "b" / "demo_pkg-1.8.0-variants.json"
    assert doc.is_file()
    assert out.splitlines() == [f"{doc}: the variants index (variantlib's JSON)",
                                f"{folder}/index.html: 0 wheels (written)"]
    assert err == f"warning: no wheels under {folder}: the page lists nothing\n"


def test_strict_counts_what_cannot_be_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "dist"
    build_wheel(folder / "ok")
    (folder / "bad-1.0-py3-none-any.whl").write_bytes(b"junk")
    (folder / "worse-1.0-py3-none-any.whl").write_bytes(b"junk")
    assert main(["index", "--strict", str(folder)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (f"error: 2 file(s) under {folder} cannot be listed (see above); "
                       "nothing written")
    assert len([x for x in err if x.startswith("warning: ")]) == 2


def test_an_invalid_requires_python_is_listed_and_warned_about_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A wheel whose Requires-Python is no PEP 440 specifier set ("three point ten" has no
    operator) is still listed (it is a valid wheel), and one ``warning:`` line says which
    wheel and which value; the page names no requirement for it."""
    folder = tmp_path / "dist"
    build_wheel(folder / "a", "odd", "1.0", requires_python="three point ten")
    assert main(["index", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert out == f"{folder}/index.html: 1 wheel (written)\n"
    (line,) = err.splitlines()
    assert line.startswith("warning: ") and "odd-1.0-py3-none-any.whl" in line, line
    assert "three point ten" in line and "Requires-Python" in line, line
    assert "data-requires-python" not in (folder / "index.html").read_text()
