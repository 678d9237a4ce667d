"""A renamed wheel's METADATA changes only its ``Version:`` header (``toolkit.run.wheels.retag``:
a description line that starts the same way is the project's text), its WHEEL tags change
only the platform; the variants index JSON files are written beside the variant wheels, and a
folder in the way is refused in one line naming it (README: an output path that is a folder,
exit 2). The expected texts are written by hand."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.run.variant_wheels import make_variant, write_index_documents
from toolkit.run.wheels import retag

META = ("Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.8.0\n\n"
        "Changes\n=======\nVersion: 1.7.0 fixed the build\n")


def a_wheel(folder: Path, plat: str = "any") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"demo_pkg-1.8.0-py3-none-{plat}.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo_pkg/__init__.py", "X = 1\n")
        zf.writestr("demo_pkg-1.8.0.dist-info/METADATA", META)
        zf.writestr("demo_pkg-1.8.0.dist-info/WHEEL",
                    f"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\n"
                    f"Tag: py3-none-{plat}\n")
        zf.writestr("demo_pkg-1.8.0.dist-info/RECORD", "")
    return wheel


def test_only_the_version_header_changes(tmp_path: Path) -> None:
    out = retag(a_wheel(tmp_path / "in"), tmp_path / "out", version="1.8.0+rocm7.0git8d873bb6")
    assert out.name == "demo_pkg-1.8.0+rocm7.0git8d873bb6-py3-none-any.whl"
    with zipfile.ZipFile(out) as zf:
        meta = zf.read("demo_pkg-1.8.0+rocm7.0git8d873bb6.dist-info/METADATA").decode()
        names = zf.namelist()
    assert meta == META.replace("Version: 1.8.0\n", "Version: 1.8.0+rocm7.0git8d873bb6\n")
    assert "Version: 1.7.0 fixed the build" in meta
    # package files first, then .dist-info, RECORD last
    assert names == ["demo_pkg/__init__.py",
                     "demo_pkg-1.8.0+rocm7.0git8d873bb6.dist-info/METADATA",
                     "demo_pkg-1.8.0+rocm7.0git8d873bb6.dist-info/WHEEL",
                     "demo_pkg-1.8.0+rocm7.0git8d873bb6.dist-info/RECORD"]


def test_a_new_platform_changes_the_wheel_tag_and_keeps_the_version(tmp_path: Path) -> None:
    out = retag(a_wheel(tmp_path / "in", "linux_x86_64"), tmp_path / "out",
                platform="manylinux_2_28_x86_64")
    assert out.name == "demo_pkg-1.8.0-py3-none-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(out) as zf:
        assert zf.read("demo_pkg-1.8.0.dist-info/WHEEL").decode().endswith(
            "Tag: py3-none-manylinux_2_28_x86_64\n")
        assert zf.read("demo_pkg-1.8.0.dist-info/METADATA").decode() == META


def test_a_wheel_being_renamed_is_staged_where_an_index_does_not_look(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The renamed wheel is written whole in a staging folder inside the destination, then
    moved into place; the find-links index ignores hidden folders, "where builds stage their
    wheels" (``toolkit.run.findlinks``). An index of the destination made at that moment (the
    race played by running it from the rename, ``os.replace``, the one call patched) lists
    nothing and skips nothing; made after, it lists the renamed wheel alone."""
    import os

    from toolkit.run import wheels
    from toolkit.run.findlinks import Scan, scan

    out_dir = tmp_path / "out"
    seen: list[Scan] = []
    real_replace = os.replace

    def replace_after_a_scan(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        seen.append(scan(out_dir))
        real_replace(src, dst)

    monkeypatch.setattr(wheels.os, "replace", replace_after_a_scan)
    out = retag(a_wheel(tmp_path / "in"), out_dir, version="1.8.0+rocm7.0git8d873bb6")
    monkeypatch.undo()
    [during] = seen
    assert (during.links, during.skipped) == ((), ())
    assert [link.filename for link in scan(out_dir).links] == [out.name]
    assert sorted(p.name for p in out_dir.iterdir()) == [out.name]


def test_a_zip_without_metadata_is_refused_naming_the_file(tmp_path: Path) -> None:
    """A wheel is a zip with a ``.dist-info/METADATA`` (PEP 427); a zip named like a wheel
    without one is refused in one line naming the file (README: exit 2), and nothing is
    written."""
    src = tmp_path / "in" / "demo_pkg-1.8.0-py3-none-any.whl"
    src.parent.mkdir()
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr("demo_pkg/__init__.py", "X = 1\n")
    with pytest.raises(UsageError) as caught:
        retag(src, tmp_path / "out", version="1.8.0+rocm7.0git8d873bb6")
    assert caught.value.message.startswith(src.name) and "METADATA" in caught.value.message
    assert caught.value.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_no_zip_is_refused_naming_the_file(tmp_path: Path) -> None:
    """A wheel is a zip archive (PEP 427); a file named like a wheel that is no zip (a
    truncated download, an HTML error page) is refused in one line naming the file as no
    readable wheel (README: exit 2), and nothing is written."""
    src = tmp_path / "in" / "demo_pkg-1.8.0-py3-none-any.whl"
    src.parent.mkdir()
    src.write_bytes(b"<html><body>502 Bad Gateway</body></html>\n")
    with pytest.raises(UsageError) as caught:
        retag(src, tmp_path / "out", version="1.8.0+rocm7.0git8d873bb6")
    message = caught.value.message
    assert message.startswith(src.name) and "wheel" in message and "\n" not in message
    assert caught.value.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_variants_indexes_are_written_beside_their_wheels_and_a_folder_is_refused(
        tmp_path: Path) -> None:
    src = a_wheel(tmp_path / "src")
    out = tmp_path / "dist" / "b"
    make_variant(src, out, "gfx942")
    make_variant(src, out / ".tmp-x", "gfx90a")  # a hidden folder: never indexed
    written, warnings = write_index_documents(tmp_path / "dist")
    assert written == [out / "demo_pkg-1.8.0-variants.json"] and warnings == []
    assert '"gfx942"' in written[0].read_text() and "gfx90a" not in written[0].read_text()
    written[0].unlink()
    written[0].mkdir()
    with pytest.raises(UsageError) as caught:
        write_index_documents(tmp_path / "dist")
    assert caught.value.message.startswith(f"variants index {written[0]}: a folder")
    assert caught.value.exit_code == 2
