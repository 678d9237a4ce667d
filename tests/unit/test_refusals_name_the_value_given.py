"""What a refusal names, for the values a user gave: the build folder named as the build
folder when a work folder holds '=' (exit 2 before anything is built), a path option holding
a control character named with the control character escaped, and a nox session's argparse
error shown whole up to 1000 characters (pytest's own long option errors run past the 200
characters one value is cut at)."""

from __future__ import annotations

import argparse

import pytest

from toolkit.cli import sessions
from toolkit.cli.commands.plan import path_value
from toolkit.core.errors import UsageError
from toolkit.env.buildenv import RocmPaths, build_env
from toolkit.env.host import HostFacts


def test_a_build_folder_with_an_equals_sign_is_named_as_the_build_folder() -> None:
    with pytest.raises(UsageError) as caught:
        build_env(rocm=RocmPaths.system("/opt/rocm"), targets=["gfx942"], rocm_version="7.0",
                  env_bin="/e/bin", torch_extensions_dir="/t", host=HostFacts(),
                  build_dir="/w/a=b/build")
    assert caught.value.exit_code == 2
    assert caught.value.message.startswith("the build folder /w/a=b/build holds '='")


def test_a_path_with_a_control_character_is_named_escaped() -> None:
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        path_value("/src/a\x1b[2Jb")
    text = str(caught.value)
    assert "a\\x1b[2Jb" in text and "\x1b" not in text
    assert "holds a control character" in text


def test_a_long_argparse_error_in_a_session_is_shown_whole() -> None:
    message = "argument --k: " + "x" * 600

    def body() -> None:
        raise argparse.ArgumentError(None, message)

    assert sessions._failure(body, 5) == (message, 2)
