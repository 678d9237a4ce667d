"""Paths in compiler flags (issue 29, class 9): quoted for every tool that splits them.

The independent truths: ``shlex.split`` (POSIX sh, how hipcc's ``system`` and the make/ninja
lines CMake writes are read), setuptools' own ``split_quoted`` (how distutils reads CFLAGS and
CXXFLAGS) and a real ``/bin/sh``.
"""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st
from setuptools._distutils.util import split_quoted

from toolkit.core.errors import UsageError
from toolkit.env.buildenv import (
    RocmPaths,
    build_env,
    flag_path_problem,
    prefix_map,
    quote_flag,
    refuse_unmappable,
)
from toolkit.env.host import HostFacts

HOSTILE = "/tmp/work a'b \"c\" é\\d $x `y` #z;*?"
# any character an environment variable can hold (no NUL, no lone surrogates)
WORDS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"))


@given(WORDS, WORDS)
def test_every_word_is_read_back_whole_by_sh_and_setuptools(a: str, b: str) -> None:
    line = f"-O2 {quote_flag(a)} {quote_flag(b)} -g"
    assert shlex.split(line) == ["-O2", a, b, "-g"]
    assert split_quoted(line) == ["-O2", a, b, "-g"]


def test_plain_words_stay_bare_and_hostile_ones_are_read_back_by_a_real_sh() -> None:
    assert quote_flag("-ffile-prefix-map=/w/build/x-1=/build") == \
        "-ffile-prefix-map=/w/build/x-1=/build"
    flag = prefix_map(HOSTILE, "/build")
    out = subprocess.run(["sh", "-c", f"printf '%s\\n' {flag} -g"], capture_output=True,
                         text=True, check=True).stdout
    assert out == f"-ffile-prefix-map={HOSTILE}=/build\n-g\n"


@pytest.mark.parametrize("path, char", [("/w/a=b", "'='"), ("/w/a\nb", "\\n"),
                                        ("/w/a\x1bb", "\\x1b")])
def test_a_path_no_flag_can_carry_is_refused_in_one_line(path: str, char: str) -> None:
    with pytest.raises(UsageError) as err:
        refuse_unmappable(path, "the build folder")
    message = str(err.value)
    assert err.value.exit_code == 2 and "\n" not in message and "\x1b" not in message
    assert char in message and "valid:" in message


@pytest.mark.parametrize("path, shown", [("/w/a\nb", "\\n"), ("/w/a\x1bb", "\\x1b")])
def test_a_control_character_is_named_with_why_the_build_files_cannot_hold_it(
        path: str, shown: str) -> None:
    """A newline (or any control character) cannot sit in the one line each command takes in
    the Makefiles and ninja files CMake generates; the refusal names the character, escaped,
    and that reason, after the path it is in."""
    problem = flag_path_problem(path)
    assert problem is not None
    assert problem.startswith(f"holds the control character {shown}: CMake's makefiles and ninja")
    assert problem.endswith(" files hold one command a line")
    with pytest.raises(UsageError) as err:
        refuse_unmappable(path, "the build folder")
    assert f" holds the control character {shown}: CMake's " in str(err.value)


def test_spaces_quotes_and_non_ascii_are_carried() -> None:
    assert flag_path_problem(HOSTILE) is None
    refuse_unmappable(HOSTILE, "the build folder")  # no error


def test_the_build_environment_carries_a_hostile_build_folder_as_one_flag() -> None:
    env = build_env(rocm=RocmPaths.system("/usr"), targets=["gfx90a"], rocm_version="6.4.1",
                    env_bin="/e/bin", torch_extensions_dir="/t", host=HostFacts(),
                    build_dir=HOSTILE)
    for var in ("CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"):
        assert shlex.split(env[var]) == [f"-ffile-prefix-map={HOSTILE}=/build"], var
        assert split_quoted(env[var]) == [f"-ffile-prefix-map={HOSTILE}=/build"], var
    with pytest.raises(UsageError):
        build_env(rocm=RocmPaths.system("/usr"), targets=["gfx90a"], rocm_version="6.4.1",
                  env_bin="/e/bin", torch_extensions_dir="/t", host=HostFacts(),
                  build_dir="/w=x/build/a")


def test_a_hostile_interpreter_prefix_is_mapped_and_read_back_by_the_failure_digest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.core.proc import Result
    from toolkit.run import building
    from toolkit.run.failure import _prefixes, _unprefixed

    prefixes = ["/opt/py 3", "/opt/py 3/venv 'x' é", "/opt/a=b"]
    answer = json.dumps(["gcc -shared", "g++ -shared", prefixes])
    monkeypatch.setattr(building, "run_proc",
                        lambda *a, **k: Result(("python",), 0, answer, "", 0.0))
    values = building.interpreter_values("python")
    # each mappable prefix one flag, longest first; the one clang cannot carry left out
    assert shlex.split(values["PYTHON_PREFIX_MAP"]) == [
        "-ffile-prefix-map=/opt/py 3/venv 'x' é=/python", "-ffile-prefix-map=/opt/py 3=/python"]
    assert split_quoted(values["PYTHON_PREFIX_MAP"]) == shlex.split(values["PYTHON_PREFIX_MAP"])

    class FakeRun:
        pass

    run = FakeRun()
    run.values = values  # type: ignore[attr-defined]
    found = _prefixes(run)  # type: ignore[arg-type]
    assert found == ["/opt/py 3/venv 'x' é", "/opt/py 3"]
    line = "g++ -I/opt/py 3/venv 'x' é/include -I/opt/py 3/include/python3.11"
    assert _unprefixed(line, found) == ("g++ -I<python_prefix>/include "
                                        "-I<python_prefix>/include/python3.11")


def test_the_identity_of_a_build_is_the_same_in_a_hostile_and_a_plain_work_folder() -> None:
    from toolkit.run.identity import tokenize

    plain = {"workdir": "/w", "cache": "/c"}
    hostile = {"workdir": "/tmp/it's a \\ é", "cache": "/tmp/c 'x'"}

    def env_text(paths: dict[str, str]) -> str:
        return json.dumps({"CFLAGS": prefix_map(paths["workdir"] + "/build/x-1", "/build")
                           + " " + prefix_map(paths["cache"] + "/envs/e", "/python")})

    assert tokenize(env_text(hostile), hostile) == tokenize(env_text(plain), plain)
    assert "<workdir>" in tokenize(env_text(hostile), hostile)

