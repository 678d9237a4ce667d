"""publish (toolkit.run.building.publish) and what repro says differs between two wheels
(toolkit.verify.compare.wheel_differences)."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.native import compile_shared
from toolkit.core.steps import Publish, Step
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes.sample import demo_build
from toolkit.run.building import publish
from toolkit.run.context import Run
from toolkit.verify.compare import MAX_SHOWN, wheel_differences


def a_run(tmp: Path) -> Run:
    layout = Layout(tmp / "work", tmp / "cache")
    p = plan(load_matrix(), demo_build("3.11", None), Options(gfx=("gfx90a",), rocm_from="system"),
             HostFacts(),
             layout)
    return Run(p, layout, io.StringIO())


def staged_run(tmp: Path) -> tuple[Run, Path]:
    """A run whose WHEEL is a staged wheel ``x-1.0`` holding b"new wheel"."""
    staged = tmp / "staged" / "x-1.0-py3-none-any.whl"
    staged.parent.mkdir()
    staged.write_bytes(b"new wheel")
    run = a_run(tmp)
    run.values["WHEEL"] = str(staged)
    return run, staged


def test_publish_moves_the_staged_wheel_and_drops_earlier_ones(tmp_path: Path) -> None:
    dest = tmp_path / "dist" / "b"
    dest.mkdir(parents=True)
    (dest / "x-0.9-py3-none-any.whl").write_bytes(b"old")
    run, staged = staged_run(tmp_path)
    publish(Step("publish", "", Publish("{WHEEL}", str(dest))), run)
    assert sorted(p.name for p in dest.iterdir()) == ["x-1.0-py3-none-any.whl"]
    assert (dest / "x-1.0-py3-none-any.whl").read_bytes() == b"new wheel"
    assert not staged.exists()
    assert run.values["WHEEL"] == str(dest / "x-1.0-py3-none-any.whl")


def test_a_killed_publish_leftover_is_removed_by_the_next(tmp_path: Path) -> None:
    """Issue 29: a SIGKILL during the copy into dist/ left `.<wheel>.<pid>.tmp` there for
    ever. The next publish of that build removes it and says so; other files stay."""
    dest = tmp_path / "dist" / "b"
    dest.mkdir(parents=True)
    left = dest / ".x-1.0-py3-none-any.whl.4242.tmp"
    left.write_bytes(b"half a wheel")
    keep = dest / ".notes.txt"
    keep.write_text("mine")
    run, _ = staged_run(tmp_path)
    publish(Step("publish", "", Publish("{WHEEL}", str(dest))), run)
    assert sorted(p.name for p in dest.iterdir()) == [".notes.txt", "x-1.0-py3-none-any.whl"]
    assert f"# removed {left}: a half copy a killed earlier publish left" in run.log.getvalue()


def test_a_failed_publish_leaves_the_earlier_wheel(tmp_path: Path) -> None:
    dest = tmp_path / "dist"
    dest.mkdir()
    (dest / "x-0.9-py3-none-any.whl").write_bytes(b"old")
    run = a_run(tmp_path)
    run.values["WHEEL"] = str(tmp_path / "gone" / "x-1.0-py3-none-any.whl")
    # the OSError reaches the executor, which makes it one line naming path and cause (exit 5;
    # tests/integration/test_faults.py)
    with pytest.raises(FileNotFoundError):
        publish(Step("publish", "", Publish("{WHEEL}", str(dest))), run)
    assert [p.name for p in dest.iterdir()] == ["x-0.9-py3-none-any.whl"]
    assert (dest / "x-0.9-py3-none-any.whl").read_bytes() == b"old"


def wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_members_only_on_one_side_and_changed_contents(tmp_path: Path) -> None:
    a = wheel(tmp_path / "a.whl", {"p/a.py": b"1", "p/b.py": b"2", "p/c.py": b"3"})
    b = wheel(tmp_path / "b.whl", {"p/a.py": b"1", "p/b.py": b"two", "p/d.py": b"4"})
    assert wheel_differences(a, b) == ["p/b.py: contents", "p/c.py: only in the original",
                                       "p/d.py: only in the rebuild"]


def test_same_members_in_another_order(tmp_path: Path) -> None:
    a = wheel(tmp_path / "a.whl", {"x": b"1", "y": b"2"})
    b = wheel(tmp_path / "b.whl", {"y": b"2", "x": b"1"})
    assert wheel_differences(a, b) == ["same members and contents; the archive differs (member "
                                       "order differs, times or modes)"]


def test_long_lists_are_cut(tmp_path: Path) -> None:
    a = wheel(tmp_path / "a.whl", {f"m{i:02}": b"a" for i in range(MAX_SHOWN + 5)})
    b = wheel(tmp_path / "b.whl", {f"m{i:02}": b"b" for i in range(MAX_SHOWN + 5)})
    lines = wheel_differences(a, b)
    assert len(lines) == MAX_SHOWN + 1 and lines[-1] == "... and 5 more"


def test_elf_members_name_the_sections_that_differ(tmp_path: Path) -> None:
    """Two real libraries differing only in an initialised global: .data differs (and what
    depends on its bytes), never .text."""
    one = compile_shared(tmp_path / "1", "libk.so", "int k = 1; int f() { return 7; }")
    two = compile_shared(tmp_path / "2", "libk.so", "int k = 2; int f() { return 7; }")
    a = wheel(tmp_path / "a.whl", {"p/libk.so": one.read_bytes()})
    b = wheel(tmp_path / "b.whl", {"p/libk.so": two.read_bytes()})
    (line,) = wheel_differences(a, b)
    assert line.startswith("p/libk.so: sections ")
    sections = line.removeprefix("p/libk.so: sections ").split(", ")
    assert ".data" in sections and ".text" not in sections


def test_an_interpreters_rpath_never_reaches_the_link_command() -> None:
    """pyenv's LDSHARED (as its sysconfig holds it here) keeps -L but loses -Wl,-rpath."""
    from toolkit.run.building import _strip_rpath

    pyenv = ("gcc -shared -L/root/.pyenv/versions/3.11.7/lib "
             "-Wl,-rpath,/root/.pyenv/versions/3.11.7/lib -Wl,-rpath=/opt/x/lib -Wl,-R/y "
             "-Wl,-rpath,$ORIGIN")
    # read back as setuptools reads LDSHARED (split_quoted), "$ORIGIN" kept literal for sh; in a
    # Python of its own: setuptools refuses to load once another test imported the stdlib's
    # distutils (pip's pkg_resources does), so in-process the result would depend on test order
    reader = ("import json, sys; from setuptools._distutils.util import split_quoted; "
              "print(json.dumps(split_quoted(sys.argv[1])))")
    read = subprocess.run([sys.executable, "-c", reader, _strip_rpath(pyenv, "gcc -shared")],
                          capture_output=True, text=True, check=True, timeout=60)

    kept = ["gcc", "-shared", "-L/root/.pyenv/versions/3.11.7/lib", "-Wl,-rpath,$ORIGIN"]
    assert json.loads(read.stdout) == kept
    assert shlex.split(_strip_rpath(pyenv, "gcc -shared")) == kept
    assert _strip_rpath("", "g++ -shared") == "g++ -shared"


def test_the_interpreters_prefixes_are_mapped_away() -> None:
    import os
    import sys

    from toolkit.run.building import interpreter_values

    values = interpreter_values(sys.executable)
    flags = values["PYTHON_PREFIX_MAP"].split()
    for prefix in {sys.prefix, sys.base_prefix, os.path.realpath(sys.base_prefix)}:
        assert f"-ffile-prefix-map={prefix}=/python" in flags
    assert "-Wl,-rpath" not in values["LDSHARED"] and "-Wl,-rpath" not in values["LDCXXSHARED"]
