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
import functools
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
EXIT_CODES = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 130}  # README "Exit codes"
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


# ----------------------------------------------------------- manifest fields, wrong-typed
# Every field the manifest schema names, found by walking the schema (a new field is covered
# without a word here), given each JSON type it may not hold; ``repro --dry-run`` must refuse
# in one line naming the field's path, what it found and what is valid (exit 2).
WRONG: dict[str, object] = {"integer": 7, "number": 1.5, "boolean": True, "null": None,
                            "array": [], "object": {}, "string": "x" * 100_000}


def _types(schema: dict[str, object]) -> set[str] | None:
    """The JSON types ``schema`` allows; None: any."""
    if "type" in schema:
        t = schema["type"]
        found = set(t) if isinstance(t, list) else {str(t)}
        return found | ({"integer"} if "number" in found else set())
    if "anyOf" in schema:
        out: set[str] = set()
        for branch in schema["anyOf"]:  # type: ignore[attr-defined]
            more = _types(branch)
            if more is None:
                return None
            out |= more
        return out
    if "enum" in schema:  # only the enum's values: a string that is none of them is wrong too
        return {"enum"}
    return None


def _fields(schema: dict[str, object], path: tuple[str, ...] = ()
            ) -> Iterator[tuple[tuple[str, ...], dict[str, object]]]:
    """(path, schema) of every field: properties, the items of arrays, the values of maps."""
    for branch in schema.get("anyOf", ()):  # type: ignore[attr-defined]
        yield from _fields(branch, path)
    for key, sub in (schema.get("properties") or {}).items():  # type: ignore[attr-defined]
        yield (*path, key), sub
        yield from _fields(sub, (*path, key))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield (*path, "x"), extra
        yield from _fields(extra, (*path, "x"))
    items = schema.get("items")
    if isinstance(items, dict):
        yield (*path, "0"), items
        yield from _fields(items, (*path, "0"))


def _wrong_values(schema: dict[str, object]) -> list[object]:
    allowed = _types(schema)
    if allowed is None:
        return []
    out = []
    for kind, value in WRONG.items():
        if kind in allowed or (kind == "string" and "string" in allowed and
                               "pattern" not in schema):
            continue  # a valid type (a long free string is a string)
        out.append(value)
    return out


@functools.lru_cache(maxsize=1)
def _manifest_json() -> str:
    import json

    return json.dumps(_manifest())


def _manifest() -> dict[str, object]:
    """A complete manifest as a build writes it (tests.fixtures.manifests), with every
    optional object filled, so that each field of the schema is there to be spoiled."""
    from tests.fixtures.manifests import HOST, for_plan
    from toolkit.data.matrix import load_matrix
    from toolkit.env.host import HostFacts
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan

    m = load_matrix()
    p = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"), Options(gfx=("gfx942",)),
             HostFacts(uv="/usr/bin/uv"), HOST, toolkit_python="/usr/bin/python3")
    data = for_plan(p)
    sha = "0" * 64
    data.update({
        "sdk": {"provider": "pip", "index_urls": ["https://h.example/s/"], "channel": None,
                "version": "7.0.1", "root": "/r", "lock": {"path": "/l.txt", "sha256": sha}},
        "installed": [{"name": "torch", "version": "2.8.0"}],
        "environment": {"build-wheel": {"A": "1"}}, "tools": {"gcc": "gcc 12"},
        "steps": [{"name": "build-wheel", "kind": "build", "argv": ["x"], "env": {"A": "1"},
                   "returncode": 0, "seconds": 1.0, "skipped": None}],
        "failure": {"step": "build-wheel", "exit_code": 5, "signature": ["e"], "log": None},
        "known_failure": {"id": "k", "result": "xfail", "fails": "build-wheel", "test": None,
                          "reason": "r", "evidence": "e", "line": "l"},
    })
    data["host"].update({"os": "Debian", "machine": "x86_64", "glibc": "2.36", "cores": 2,  # type: ignore[attr-defined]
                         "mem_available_gib": 3.5, "gpus": ["gfx90a"]})
    data["identity"].update({"interpreter": {"implementation": "cpython", "version": "3.12",  # type: ignore[attr-defined]
                                             "abi": "cpython-312"}})
    return data


def _put(data: object, path: tuple[str, ...], value: object) -> None:
    """Set ``path`` to ``value``, making the objects and one-element arrays on the way."""
    node = data
    for key, nxt in zip(path, path[1:], strict=False):
        child = node[int(key)] if isinstance(node, list) else node.get(key)  # type: ignore[attr-defined]
        if not isinstance(child, (dict, list)) or (isinstance(child, list) and not child):
            child = [{}] if nxt == "0" else {}
            if isinstance(node, list):
                node[int(key)] = child
            else:
                node[key] = child  # type: ignore[index]
        node = child
    last = path[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value  # type: ignore[index]


def _schema_fields() -> list[tuple[tuple[str, ...], dict[str, object]]]:
    from toolkit.run.manifest_schema import SCHEMA

    return [(path, sub) for path, sub in _fields(SCHEMA) if _wrong_values(sub)]


def test_the_schema_walk_finds_the_fields_repro_reads() -> None:
    """The walk is no empty loop: it reaches the nested fields repro reads (sdk.version was a
    traceback), the recorded options and the failure object."""
    paths = {".".join(p) for p, _ in _schema_fields()}
    assert {"sdk.version", "sdk.root", "sdk.provider", "host.gpus", "host.paths.x",
            "options.smoke", "options.find_links", "failure.exit_code", "steps.0.argv.0",
            "build.id", "schema_version", "identity.interpreter"} <= paths
    assert len(paths) > 80
    from toolkit.run.manifest_schema import validate

    validate(_manifest(), "m")  # the unspoiled manifest is valid: each refusal is the field's


@pytest.mark.parametrize("path, schema", _schema_fields(),
                         ids=[".".join(p) for p, _ in _schema_fields()])
def test_every_manifest_field_wrong_typed_is_one_line(path: tuple[str, ...],
                                                      schema: dict[str, object],
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    monkeypatch.setenv("CI", "true")
    shown = ".".join(path)
    for value in _wrong_values(schema):
        data = json.loads(_manifest_json())
        _put(data, path, value)
        f = tmp_path / "manifest.json"
        f.write_text(json.dumps(data))
        code, out, err = _run_main(["repro", str(f), "--dry-run"])
        _judge(code, out, err)
        last = err.strip().splitlines()[-1]
        assert code == 2, (shown, value if value != WRONG["string"] else "long", err[-400:])
        assert f"manifest field {shown}" in last or (
            path == ("schema_version",) and "schema_version" in last), (shown, last[:400])
        assert any(w in last for w in ("expected", "does not match", "is not one of",
                                       "reads")), last[:400]
        assert len(last) < 1200, len(last)


# ------------------------------------------------- control characters from outside input
# Every control character (C0 but NUL, which no argv or file name can hold; DEL, C1), the
# line and paragraph separators and the bidi overrides, each followed by a forged line, in a
# path or a variable the entry points take: none may reach the terminal raw (a newline would
# print a forged "error: ..." line of its own).
CONTROLS = [chr(c) for c in (*range(1, 0x20), *range(0x7f, 0xa0), 0x2028, 0x2029,
                             *range(0x202a, 0x202f), *range(0x2066, 0x206a)) if chr(c) != "/"]
FORGED = "error: forged"
RAW_BEFORE_FORGED = re.compile("[" + "".join(re.escape(c) for c in CONTROLS) + "]"
                               + re.escape(FORGED))


def _hostile_path(base: Path, chars: list[str], *, make: bool) -> str:
    """``base`` / components of a few ``<control>error: forged`` each (a file name holds
    255 bytes at most); ``make``: the folders exist."""
    parts = ["".join(f"{c}{FORGED}" for c in chars[i:i + 8]) for i in range(0, len(chars), 8)]
    path = base.joinpath(*parts)
    if make:
        path.mkdir(parents=True)
    return str(path)


@pytest.mark.parametrize("form", ["check-missing", "check-folder", "index", "plan-workdir",
                                  "demo-workdir", "demo-source", "smoke-workdir", "repro",
                                  "report", "cwd", "cache-env", "index-url-env"])
def test_no_control_character_from_outside_reaches_the_terminal(
        form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        chars: list[str] | None = None) -> None:
    monkeypatch.setenv("CI", "true")
    chars = chars or CONTROLS
    made = _hostile_path(tmp_path, chars, make=True)
    missing = _hostile_path(tmp_path / "nothing", chars, make=False)
    build = "apex-1.8.0-cp312-rocm7.0"
    argv = {
        "check-missing": ["check", missing + ".whl"], "check-folder": ["check", made],
        "index": ["index", made], "plan-workdir": ["plan", build, "--workdir", made],
        "demo-workdir": ["demo", "--dry-run", "--workdir", made],
        "demo-source": ["demo", "--dry-run", "--source", made],
        "smoke-workdir": ["smoke", "--workdir", made], "repro": ["repro", missing, "--dry-run"],
        "report": ["report", "--junit", missing],
    }.get(form, ["plan", build])
    if form == "cwd":
        monkeypatch.chdir(made)
    elif form == "cache-env":
        monkeypatch.setenv("TOOLKIT_CACHE_DIR", made)
    elif form == "index-url-env":
        monkeypatch.setenv("TOOLKIT_ROCM_INDEX_URL",
                           "https://h.example/s" + "".join(f"{c}{FORGED}" for c in chars))
    code, out, err = _run_main(argv)
    assert code in EXIT_CODES and "Traceback" not in out + err, (code, err[-500:])
    assert not RAW_BEFORE_FORGED.search(out + err), (form, (out + err)[-800:])
    assert not any(line.startswith(FORGED) for line in (out + err).splitlines())


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(char=st.sampled_from(CONTROLS),
       form=st.sampled_from(["check-missing", "plan-workdir", "cwd", "index-url-env"]))
def test_each_control_character_alone(char: str, form: str,
                                      tmp_path_factory: pytest.TempPathFactory,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """One character at a time: no other character's escape hides it."""
    with monkeypatch.context() as m:
        test_no_control_character_from_outside_reaches_the_terminal(
            form, tmp_path_factory.mktemp("c"), m, [char])


@pytest.mark.parametrize("path, value", [(("sdk", "version"), 7.0), (("host", "gpus"), "gfx90a"),
                                         (("options", "find_links"), "x")])
def test_pinned_wrong_types_repro_once_read(path: tuple[str, ...], value: object,
                                           tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the issue: ``sdk.version`` a number was a traceback in ``repro --dry-run``."""
    import json

    monkeypatch.setenv("CI", "true")
    data = json.loads(_manifest_json())
    _put(data, path, value)
    (tmp_path / "m.json").write_text(json.dumps(data))
    code, out, err = _run_main(["repro", str(tmp_path / "m.json"), "--dry-run"])
    _judge(code, out, err)
    assert code == 2 and f"manifest field {'.'.join(path)}: " in err, err[-500:]
