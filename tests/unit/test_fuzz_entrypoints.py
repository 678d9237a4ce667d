"""A fuzz harness for the entry points (issue 20): ``python -m toolkit`` subcommands, invoke
tasks and nox session option parsing, driven by Hypothesis with generated arguments and
file kinds (regular, FIFO, symlink to /dev/zero, folder, unreadable, huge, a 5,000-char
path, a name with control characters).

Each example asserts: no traceback (an exception escaping the entry point fails the test),
an exit code in the documented set, and output free of raw control bytes. In-process where
possible (fast); a few examples in a subprocess, with a time limit, show a FIFO or a device
never hangs.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolkit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXIT_CODES = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 130}  # README "Exit codes"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")), deadline=None,
                derandomize="FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])

KINDS = ("regular", "json", "fifo", "zero", "folder", "unreadable", "huge", "long", "missing",
         "control", "wheel-named-fifo")
# what a regression would make hang (a FIFO) or eat memory (a device, a huge file): only
# ever given to a subprocess with a time limit and an address-space limit
DANGEROUS = {"fifo", "zero", "huge", "wheel-named-fifo"}
SAFE_KINDS = tuple(k for k in KINDS if k not in DANGEROUS)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("kinds")
    out: dict[str, str] = {}
    (d / "regular.txt").write_text("hello\n")
    out["regular"] = str(d / "regular.txt")
    (d / "m.json").write_text('{"build": {"id": "x\\u001b[2J", "package": "p", "version": "1"}}')
    out["json"] = str(d / "m.json")
    os.mkfifo(d / "fifo")
    out["fifo"] = str(d / "fifo")
    os.symlink("/dev/zero", d / "zero")
    out["zero"] = str(d / "zero")
    (d / "folder").mkdir()
    out["folder"] = str(d / "folder")
    (d / "unreadable").write_text("secret")
    os.chmod(d / "unreadable", 0)
    out["unreadable"] = str(d / "unreadable")
    with open(d / "huge", "wb") as fh:  # sparse: larger than every cap, costs no disk
        fh.truncate(20 << 30)
    out["huge"] = str(d / "huge")
    out["long"] = str(d / ("x" * 5000))
    out["missing"] = str(d / "missing")
    name = d / "a\x1b[2J\nforged::error::b.whl"
    name.write_bytes(b"PK\x03\x04 not really")
    out["control"] = str(name)
    os.mkfifo(d / "demo-1.0-py3-none-any.whl")
    out["wheel-named-fifo"] = str(d)  # a folder holding a FIFO named like a wheel
    return out


texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(max_codepoint=0x9f), max_size=40),
    st.sampled_from(["gfx90a", "gfx942:xnack+", "gfx94X-dcgpu", "x" * 10_003, "\x1b[2J",
                     "a\nb", "-5", "4G", "nan", "inf", "1e400", "../..", "alice:SECRET9@h.example/s",
                     "https://h.example/s?token=SECRET9", "ftp://u:SECRET9@h/", "apex-1.8.0-cp312-rocm7.0"]),
)
kinds = st.sampled_from(KINDS)
safe_kinds = st.sampled_from(SAFE_KINDS)


@st.composite
def cli_argv(draw: st.DrawFn, files: dict[str, str], kinds: st.SearchStrategy[str]) -> list[str]:
    f = files[draw(kinds)]
    t = draw(texts)
    forms = [
        ["check", f], ["check", f, "--max-member-size", t], ["check", f, "--max-ratio", t],
        ["check", f, "--gfx", t], ["check", f, "--json"], ["check", f, "--jobs", t],
        ["index", f], ["index", f, "--strict"],
        ["report", "--junit", f], ["report", "--nox-report", f],
        ["repro", f, "--dry-run"], ["smoke", "--workdir", f, "--gfx", "gfx90a"],
        ["smoke", "--build", t, "--workdir", f],
        ["plan", t], ["plan", "apex-1.8.0-cp312-rocm7.0", "--gfx", t],
        ["plan", "apex-1.8.0-cp312-rocm7.0", "--index-url", t],
        ["plan", "apex-1.8.0-cp312-rocm7.0", "--find-links", f],
        ["plan", "apex-1.8.0-cp312-rocm7.0", "--workdir", f],
        ["matrix", "--package", t], ["matrix", "--explain", t],
        [t], [draw(st.sampled_from(["check", "index", "plan", "report"])), "--" + t],
    ]
    return draw(st.sampled_from(forms))


@contextlib.contextmanager
def captured() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def _judge(code: object, out: str, err: str) -> None:
    assert code in EXIT_CODES, (code, err[-500:])
    assert "Traceback" not in out + err
    assert not RAW_CONTROL.search(out), out[-500:]
    assert not RAW_CONTROL.search(err), err[-500:]
    assert "SECRET9" not in out + err  # credentials masked, in every form
    lines = err.strip().splitlines()
    if code not in (0, 1):  # a refusal ends with the one line that says what was wrong
        assert lines and "error: " in lines[-1] and len(lines[-1]) < 1200, err[-500:]
    else:
        assert not any(line.startswith("error: ") for line in lines), err[-500:]


def _limits() -> None:  # in the child: 4 GiB of address space at most
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _run_sub(argv: list[str]) -> tuple[object, str, str]:
    """``python -m toolkit ARGV`` in a subprocess, 30 s and 4 GiB at most: a regression
    that blocks on a FIFO or reads a device forever fails the test, not the machine."""
    try:
        res = subprocess.run([sys.executable, "-m", "toolkit", *argv], capture_output=True,
                             text=True, timeout=30, cwd=ROOT, preexec_fn=_limits,
                             env={**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired:
        pytest.fail(f"python -m toolkit {argv!r} did not end within 30 s")
    return res.returncode, res.stdout, res.stderr


def _run_main(argv: list[str]) -> tuple[object, str, str]:
    with captured() as (out, err):
        try:
            code: object = main(argv)
        except SystemExit as exc:  # argparse: usage, exit 2
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@FUZZ
@given(data=st.data())
@example(data=None)
def test_cli(files: dict[str, str], data: st.DataObject | None,
             monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("CI", "true")
    argv = ["check", files["long"]] if data is None else data.draw(cli_argv(files, safe_kinds))
    code, out, err = _run_main(argv)
    _judge(code, out, err)


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cli_in_a_subprocess(files: dict[str, str], data: st.DataObject) -> None:
    """Every file kind, FIFOs and devices too: a few examples, each in a subprocess."""
    code, out, err = _run_sub(data.draw(cli_argv(files, kinds)))
    _judge(code, out, err)


@pytest.mark.parametrize("kind, words", [
    ("fifo", ["not a regular file"]), ("zero", ["not a regular file"]),
    ("huge", ["larger than"]), ("folder", ["no ELF files", "not a regular file"]),
])
def test_check_names_the_kind_never_no_such_file(files: dict[str, str], kind: str,
                                                 words: list[str]) -> None:
    code, out, err = _run_sub(["check", files[kind]])
    assert code == 2 and "no such file" not in err and any(w in err for w in words), err
    _judge(code, out, err)


@pytest.mark.parametrize("argv, words", [
    (["report", "--junit", "{fifo}"], "not a regular file"),
    (["report", "--nox-report", "{zero}"], "not a regular file"),
    (["report", "--junit", "{huge}"], "larger than 64 MiB"),
    (["repro", "{fifo}", "--dry-run"], "not a regular file"),
    (["repro", "{zero}"], "not a regular file"),
    (["repro", "{huge}"], "larger than 32 MiB"),
    (["smoke", "--workdir", "{wheel-named-fifo}"], "no build"),
    (["index", "{wheel-named-fifo}"], "not a regular file"),
])
def test_readers_refuse_what_is_not_a_regular_file(files: dict[str, str], argv: list[str],
                                                   words: str) -> None:
    code, out, err = _run_sub([a.format(**files) for a in argv])
    assert words in out + err, (out, err)
    _judge(code, out, err)


def test_data_file_that_is_a_fifo_or_a_device(files: dict[str, str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    data = tmp_path / "data"
    shutil.copytree(ROOT / "toolkit" / "data", data)
    for kind, why in (("fifo", "not a regular file"), ("zero", "not a regular file"),
                      ("huge", "larger than 4 MiB")):
        (data / "gpus.toml").unlink()
        os.symlink(files[kind], data / "gpus.toml")
        monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data))  # the subprocess inherits it
        code, out, err = _run_sub(["matrix"])
        assert code == 3 and why in err, err
        _judge(code, out, err)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.lists(st.one_of(texts, st.sampled_from(
    ["--gfx", "--index-url", "--find-links", "--workdir", "--package", "--version", "--source",
     "--rocm-from", "--naming", "--family", "--json"])), max_size=5))
def test_nox_session_option_parsing(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``nox -s build-… -- ARGS``: the session body's parsing, with ``--dry-run`` last so
    nothing runs."""
    from tests.fixtures.nox_runs import aborted, in_nox
    from toolkit.cli import sessions

    monkeypatch.setenv("CI", "true")
    with captured() as (out, err):
        result = in_nox(lambda s: sessions.build(s, "3.12", "7.0", [*args, "--dry-run"]))
    code: object = 0
    said = err.getvalue()
    if not result:  # nox records the toolkit's line as the reason and prints it last
        code = aborted(result)[1]
        said += f"{result.reason}\n"
    _judge(code, out.getvalue(), said)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=st.sampled_from(["check", "index", "report --junit", "plan", "repro"]),
       kind=safe_kinds, extra=texts)
def test_invoke_tasks(files: dict[str, str], task: str, kind: str, extra: str,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    """invoke's own parsing, then the task body, in-process."""
    from invoke import Collection, Program

    import tasks

    monkeypatch.setenv("CI", "true")
    words = task.split()
    argv = ["invoke", *words, files[kind]]
    if task == "check":
        argv += ["--gfx", extra or "gfx90a"]
    if task == "plan":
        argv = ["invoke", "plan", extra or "x"]
    program = Program(namespace=Collection.from_module(tasks), name="invoke", binary="invoke")
    with captured() as (out, err):
        try:
            program.run(argv, exit=True)
            code: object = 0
        except SystemExit as exc:
            code = exc.code
    _judge(code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize("argv", [
    ["check", "{fifo}"], ["index", "{wheel-named-fifo}", "--strict"], ["repro", "{zero}"],
])
def test_subprocess_never_hangs_on_a_fifo_or_device(files: dict[str, str],
                                                    argv: list[str]) -> None:
    code, out, err = _run_sub([a.format(**files) for a in argv])
    _judge(code, out, err)
    assert code == 2 and "not a regular file" in err, err


@pytest.mark.parametrize("argv", [
    # found by the harness: a plan printed a find-links path with its escape sequence raw
    ["plan", "apex-1.8.0-cp312-rocm7.0", "--find-links", "{control}"],
    ["check", "--max-member-size", "alice:SECRET9@h.example/s", "{regular}"],
    ["plan", "apex-1.8.0-cp312-rocm7.0", "--gfx", "gfx9" + "x" * 10_003],
    ["check", "{control}"],
    ["index", "{long}"],
    ["check", "{long}"],
])
def test_cli_pinned(files: dict[str, str], argv: list[str]) -> None:
    code, out, err = _run_main([a.format(**files) if "{" in a else a for a in argv])
    _judge(code, out, err)
    assert code == (0 if "--find-links" in argv else 2), err
    assert all(len(line) < 1200 for line in err.splitlines()), err
