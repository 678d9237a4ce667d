"""Small rules users meet, each against a hand-written truth: a signature line of exactly
``MAX_CHARS`` is kept whole; the TOOLS_PATH check-env learns (uv's folder, the interpreter's,
the toolkit's, each once, ``:``-separated as PATH is); a command's ``{PATH}`` when the base
environment has none; build-wheel learning LDSHARED from a command that is no Python; a
renamed wheel's member order (package, .data, .dist-info) and its files left alone on a new
platform; and the empty find-links page."""

from __future__ import annotations

import io
import os
import sys
import zipfile
from pathlib import Path

import pytest

from toolkit.core.command import Command
from toolkit.core.steps import BuildWheel, CheckEnv, Step
from toolkit.env.interpreters import find_uv
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import building, provisioning
from toolkit.run.context import Run, command_environment
from toolkit.run.findlinks import render
from toolkit.run.signature import MAX_CHARS, normalize
from toolkit.run.wheels import retag


def a_run(tmp_path: Path) -> Run:
    plan = Plan(load_matrix().build("apex-1.8.0-cp311-rocm7.0"), ("gfx942",), None, ())
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def test_a_line_of_exactly_the_limit_is_kept_whole() -> None:
    assert MAX_CHARS == 400
    assert normalize("x" * 400) == "x" * 400
    assert normalize("x" * 401) == "x" * 399 + "…"


@pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="no /usr/bin/python3")
def test_tools_path_is_uvs_then_the_interpreters_then_the_toolkits_folder(
        tmp_path: Path) -> None:
    run = a_run(tmp_path)
    step = Step("check-env", "c", CheckEnv(str(tmp_path / "env"), "3.11", "/usr/bin/python3",
                                           "d" * 64))
    provisioning.check_env(step, run)
    uv = find_uv()
    want = [os.path.dirname(uv)] if uv else []
    want += ["/usr/bin", os.path.dirname(sys.executable)]
    assert run.values["TOOLS_PATH"] == ":".join(dict.fromkeys(want))
    assert run.values["TOOLS_PATH"].count(":") == len(dict.fromkeys(want)) - 1


def test_a_path_placeholder_without_a_base_path_is_empty(tmp_path: Path) -> None:
    cmd = Command(("x",), env={"PATH": "/t/bin:{PATH}"})
    assert command_environment(cmd, a_run(tmp_path), {}) == {"PATH": "/t/bin:"}
    assert command_environment(cmd, a_run(tmp_path), {"PATH": "/usr/bin"}) == {
        "PATH": "/t/bin:/usr/bin"}


def test_build_wheel_learns_the_link_commands_of_the_interpreter_it_names(
        tmp_path: Path) -> None:
    house = tmp_path / "house"
    step = Step("build-wheel", "b", BuildWheel(
        Command(("sh", "-c", f"mkdir -p {house}")), str(house), str(tmp_path),
        str(tmp_path / "env"), sanitize_ldshared="/bin/false"))
    run = a_run(tmp_path)
    building.build_wheel(step, run)
    assert (run.values["LDSHARED"], run.values["LDCXXSHARED"]) == ("gcc -shared", "g++ -shared")


def wheel_with_data(folder: Path) -> Path:
    folder.mkdir(parents=True)
    wheel = folder / "demo_pkg-1.8.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo_pkg-1.8.0.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.8.0\n")
        zf.writestr("demo_pkg-1.8.0.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: false\n"
                    "Tag: py3-none-linux_x86_64\n")
        zf.writestr("demo_pkg-1.8.0.data/scripts/run", "#!/bin/sh\n")
        zf.writestr("demo_pkg/tags.txt", "Tag: py3-none-linux_x86_64\n")  # the project's text
        zf.writestr("demo_pkg-1.8.0.dist-info/RECORD", "")
    return wheel


def test_a_renamed_wheel_orders_package_data_dist_info_and_keeps_package_files(
        tmp_path: Path) -> None:
    out = retag(wheel_with_data(tmp_path / "in"), tmp_path / "out",
                platform="manylinux_2_28_x86_64")
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["demo_pkg/tags.txt", "demo_pkg-1.8.0.data/scripts/run",
                                 "demo_pkg-1.8.0.dist-info/METADATA",
                                 "demo_pkg-1.8.0.dist-info/WHEEL",
                                 "demo_pkg-1.8.0.dist-info/RECORD"]
        assert zf.read("demo_pkg/tags.txt") == b"Tag: py3-none-linux_x86_64\n"


def test_the_page_of_no_wheels() -> None:
    assert render([]) == (b'<!DOCTYPE html>\n<html>\n  <head>\n    <meta charset="utf-8">\n'
                          b"    <title>Wheels</title>\n  </head>\n  <body>\n  </body>\n"
                          b"</html>\n")
