"""Where the check finds kpack archives and what it says of one it cannot read: a folder's
``.kpack`` files (recursively, sorted, symlinks left out), a wheel's ``.kpack`` members (named
``<wheel file>:<member>`` under ``--with``), one archive given by path. An unreadable one is
a ``gpu-code`` error of the checked input (README: GPU code present but unreadable, exit 1)
or, from ``--with``, one line of bad input naming ``--with``, the location and the reason
(exit 2). Archives built by tests/fixtures/kpack.py (msgpack, zstandard, struct)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.fixtures import kpack as K
from tests.fixtures.wheels import make_wheel
from toolkit.core.errors import UsageError
from toolkit.inspect.inputs import Input, collect_archives, open_input
from toolkit.inspect.readers.kpackfiles import with_archives
from toolkit.inspect.report import Finding

GOOD = K.archive([("lib/x.so#0", "gfx90a", K.code_object("gfx90a", 3000))])
BAD = GOOD[:8] + struct.pack("<Q", len(GOOD) + 5) + GOOD[16:]  # its table of contents past the end
WHY = f"its table of contents offset {len(GOOD) + 5} lies outside the archive (16..{len(GOOD) - 1})"


def _folder(root: Path, bad: bool = False) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "b.kpack").write_bytes(BAD if bad else GOOD)
    (root / "a.kpack").write_bytes(GOOD)
    (root / "notes.txt").write_text("not an archive")
    (root / "link.kpack").symlink_to(root / "a.kpack")
    return root


def test_with_reads_folders_files_and_wheels(tmp_path: Path) -> None:
    root = _folder(tmp_path / "f")
    assert [a.path for a in with_archives([root])] == [str(root / "a.kpack"), str(root / "sub" / "b.kpack")]
    assert [a.path for a in with_archives([root / "a.kpack", root / "notes.txt"])] == [str(root / "a.kpack")]
    whl = make_wheel(tmp_path, "dev", "1.0", "py3-none-any",
                     {".kpack/x_gfx90a.kpack": GOOD, "dev/__init__.py": ""})
    got = with_archives([whl])
    assert [a.path for a in got] == [f"{whl.name}:.kpack/x_gfx90a.kpack"]
    assert got[0].per_target() == {"gfx90a": (1, K.frame_sizes(GOOD)[0])}


def test_an_unreadable_archive_under_with_is_one_line_of_bad_input(tmp_path: Path) -> None:
    root = _folder(tmp_path / "f", bad=True)
    with pytest.raises(UsageError) as err:
        with_archives([root])
    bad = root / "sub" / "b.kpack"
    assert str(err.value) == f"--with {root}: unreadable kpack archive: {bad}: {WHY}"
    assert err.value.exit_code == 2
    whl = make_wheel(tmp_path, "dev", "1.0", "py3-none-any", {".kpack/x_gfx90a.kpack": BAD})
    with pytest.raises(UsageError) as err:
        with_archives([whl])
    assert str(err.value) == (
        f"--with {whl}: unreadable kpack archive: {whl.name}:.kpack/x_gfx90a.kpack: {WHY}")


def test_an_unreadable_archive_of_a_checked_input_is_a_gpu_code_error(tmp_path: Path) -> None:
    root = _folder(tmp_path / "f", bad=True)
    inp = Input(root, None)
    collect_archives(inp)
    bad = str(root / "sub" / "b.kpack")
    assert [a.path for a in inp.archives] == [str(root / "a.kpack")]
    assert inp.result.findings == [Finding("gpu-code", "error", bad,
                                           f"unreadable kpack archive: {bad}: {WHY}",
                                           cause="GPU code present but unreadable")]
    whl = make_wheel(tmp_path, "dev", "1.0", "py3-none-any",
                     {".kpack/a.kpack": GOOD, ".kpack/b.kpack": BAD, "dev/x.kpack.txt": "no"})
    w = open_input(whl)
    try:
        collect_archives(w)
    finally:
        w.close()
    assert [a.path for a in w.archives] == [".kpack/a.kpack"]
    assert w.result.findings == [Finding("gpu-code", "error", ".kpack/b.kpack",
                                         f"unreadable kpack archive: .kpack/b.kpack: {WHY}",
                                         cause="GPU code present but unreadable")]
