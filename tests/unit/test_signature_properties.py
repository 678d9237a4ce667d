"""Properties of the signature and its normalization, over generated output.

The lines are made of the shapes real tools print (gcc, nvcc, ld, CMake, pip, uv, pytest,
Python tracebacks), of arbitrary text, indentation, colour, ``\\r`` rewrites and control
bytes; paths are those of a generated work folder, cache and source copy.
"""

from __future__ import annotations

import re

from hypothesis import assume, example, given
from hypothesis import strategies as st

from toolkit.core.urls import mask
from toolkit.run.signature import MAX_CHARS, RAW_CHARS, compare, normalize, signature

NAME = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)
FOLDER = st.lists(NAME, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts))
# "Q9z" appears nowhere else in a line: a secret found in a signature is a leak
SECRET = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=5,
                 max_size=24).map(lambda s: "Q9z" + s)

# {w}: the work folder, {s}: the source copy, {c}: the cache
SHAPES = [
    "{s}/csrc/bad.cpp:3:3: error: expected ',' or ';' before 'return'",
    "{s}/csrc/k.hip:12:5: fatal error: 'hip/hip_runtime.h' file not found",
    "{s}/csrc/k.cu(7): error: identifier \"y\" is undefined",
    "In file included from {s}/csrc/a.cpp:1:",
    "{c}/envs/py/include/torch/x.h:9:1: error: 'foo' does not name a type",
    "    3 |   return x;",
    "      |   ^~~~~~",
    "{s}/csrc/bad.cpp:2:7: warning: unused variable 'x' [-Wunused-variable]",
    "/usr/bin/ld: /tmp/ccAb12Cd.o: in function `main':",
    "link.cpp:(.text+0x1c): undefined reference to `foo()'",
    "collect2: error: ld returned 1 exit status",
    "CMake Error at {s}/CMakeLists.txt:12 (message):",
    "  Could NOT find HIP (missing: HIP_INCLUDE_DIR)",
    "",
    "Call Stack (most recent call first):",
    "ERROR: Could not find a version that satisfies the requirement torch==9 (from versions: none)",
    "ERROR: No matching distribution found for torch==9",
    "The conflict is caused by:",
    "    aa 1.0 depends on cc==1.0",
    "  × No solution found when resolving dependencies:",
    "  ╰─▶ Because nosuchpkg was not found in the package registry and you",
    "      require nosuchpkg>=1, we can conclude that your requirements are",
    "error: No solution found when resolving dependencies",
    "  cause: Because nosuchpkg was not found in the provided package locations",
    "FAILED smoke_tests/test_ops.py::test_add[gfx942] - AssertionError: assert 1 == 2",
    "ERROR smoke_tests/test_load.py - ModuleNotFoundError: No module named 'torch'",
    "step 'smoke': timed out after 600 s: {w}/.venv/bin/python -m pytest",
    "Traceback (most recent call last):",
    '  File "{w}/setup.py", line 3, in <module>',
    "    raise Boom()",
    "Boom: it broke at 0x7ffc0011aa22 after 1.25s (pid 4242)",
    "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
    "error: command '/usr/bin/g++' failed with exit code 1",
    "ERROR: Failed building wheel for badext",
    "running build_ext",
    "$ {w}/.venv/bin/python -m build --wheel --no-isolation",
]
DECOR = st.sampled_from(["", "\x1b[01;31m\x1b[K", "\x1b[0m", "\r", "\x1b]8;;http://x\x07", "\t"])
LINE = st.one_of(
    st.tuples(st.sampled_from(["", "  ", "      "]), st.sampled_from(SHAPES), DECOR).map(
        lambda t: t[0] + t[2] + t[1] + (t[2] if "\r" not in t[2] else "")),
    st.text(max_size=60),
)
LINES = st.lists(LINE, max_size=40)


def _fill(lines: list[str], work: str) -> list[str]:
    return [line.replace("{w}", work).replace("{s}", f"{work}/build/x-1.0/src")
            .replace("{c}", f"{work}-cache") for line in lines]


def _host(work: str) -> dict[str, str]:
    return {"workdir": work, "cache": f"{work}-cache"}


@given(st.text(), st.dictionaries(st.sampled_from(["workdir", "cache", "interpreter"]), FOLDER),
       st.none() | FOLDER)
@example("\x1b[0m\x1b", {}, None)
def test_normalize_is_idempotent_and_printable(line: str, paths: dict[str, str],
                                               source: str | None) -> None:
    once = normalize(line, paths=paths, source=source)
    assert normalize(once, paths=paths, source=source) == once == normalize(once)
    assert once.isprintable() and len(once) <= MAX_CHARS  # no control byte survives


@given(LINES, FOLDER, st.integers(1, 25))
# a step whose only line is a subprocess wrapper: the fallback must still keep it
@example(["error: command '/usr/bin/g++' failed with exit code 1"], "/0", 1)
def test_signature_is_idempotent_bounded_and_printable(lines: list[str], work: str,
                                                       limit: int) -> None:
    raw = _fill(lines, work)
    sig = signature(raw, paths=_host(work), source=f"{work}/build/x-1.0/src", limit=limit)
    assert len(sig) <= limit and len(set(sig)) == len(sig)
    assert all(s.isprintable() and s for s in sig)
    assert signature(sig, limit=limit) == sig
    assert signature(sig, paths=_host(work), source=f"{work}/build/x-1.0/src", limit=limit) == sig
    if any(normalize(line) not in ("", "Traceback (most recent call last):") for line in raw):
        assert sig  # something always identifies a failure that printed anything


@given(LINES, FOLDER, FOLDER)
def test_the_work_folder_does_not_change_the_signature(lines: list[str], one: str,
                                                       two: str) -> None:
    assume(all(one not in line and two not in line for line in lines))  # only where they go
    first = signature(_fill(lines, one), paths=_host(one), source=f"{one}/build/x-1.0/src")
    second = signature(_fill(lines, two), paths=_host(two), source=f"{two}/build/x-1.0/src")
    assert first == second
    assert compare(first, second).same or not first


@given(SECRET, SECRET, st.sampled_from(["ERROR: Could not find a version that satisfies the "
                                        "requirement x (from versions: none) at {url}",
                                        "Traceback (most recent call last):\n  x\n"
                                        "OSError: cannot reach {url}"]))
def test_credentials_never_reach_a_signature(password: str, token: str, shape: str) -> None:
    url = f"https://user:{password}@pkgs.example/simple/x/?token={token}"
    sig = signature(shape.format(url=url).splitlines())
    assert sig and all(password not in s and token not in s for s in sig)
    assert any(mask(url) in s for s in sig)


@given(st.sampled_from(SHAPES), st.lists(st.sampled_from(["\x1b[1m", "\x1b[01;31m\x1b[K",
                                                          "\x1b[m\x1b[K", "\x1b[39m"]),
                                         min_size=1, max_size=4))
def test_ansi_colour_is_removed_before_matching(shape: str, codes: list[str]) -> None:
    line = shape.replace("{w}", "/w").replace("{s}", "/w/s").replace("{c}", "/c")
    words = line.split(" ")
    coloured = " ".join(codes[i % len(codes)] + w for i, w in enumerate(words)) + "\x1b[0m"
    assert normalize(coloured) == normalize(line)
    assert signature([coloured]) == signature([line])


def test_a_raw_control_byte_is_escaped() -> None:
    (sig,) = signature(["bad.cpp:1:1: error: stray '\x1b' and \x07 bell\x00 in program"])
    assert sig == "bad.cpp:1:1: error: stray '\\x1b' and \\x07 bell\\x00 in program"


def test_host_paths_become_tokens_and_source_paths_relative() -> None:
    paths = {"workdir": "/w/proj", "cache": "/home/al/.cache/rwt", "interpreter": "/opt/py/bin/python3.11",
             "uv": "/usr/local/bin/uv", "rocm_root": "/opt/rocm-6.4.1"}
    line = ("/w/proj/build/x/src/csrc/a.cpp:1:2: error: x /w/proj/dist /home/al/.cache/rwt/envs "
            "/opt/py/bin/python3.11 /opt/rocm-6.4.1/include /w/proj/build/x/src /home/bo/y /root/z "
            "/w/proj2")
    assert normalize(line, paths=paths, source="/w/proj/build/x/src/") == (
        "csrc/a.cpp:1:2: error: x <workdir>/dist <cache>/envs <python> <rocm_root>/include "
        "<source> ~/y ~/z /w/proj2")


def test_temporary_names_are_stable() -> None:
    assert normalize("/usr/bin/ld: /tmp/ccAb12Cd.o: in function `main':") \
        == "/usr/bin/ld: /tmp/cc*.o: in function `main':"
    assert normalize("/tmp/link-a48e6e.o:(main) /tmp/tmpk2j3h4g5/x /var/tmp/pip-build-env-ab12cd34/o "
                     "/tmp/pytest-of-runner/pytest-17/test_a0/x ~/.cache/uv/.tmpAbC123/y") \
        == ("/tmp/link-*.o:(main) /tmp/tmp*/x /var/tmp/pip-build-env-*/o "
            "/tmp/pytest-of-*/pytest-*/test_a0/x ~/.cache/uv/.tmp*/y")
    # pip's and pypa/build's source copies: paths in them are relative to them
    assert normalize("/tmp/pip-req-build-x1y2z3w4/csrc/a.cpp:3:1: error: e") == "csrc/a.cpp:3:1: error: e"
    assert normalize("/tmp/pip-install-ab12cd34/badext_0123456789abcdef0123456789abcdef/csrc/a.cpp"
                     ":3:1: error: e") == "csrc/a.cpp:3:1: error: e"
    # a folder the user named is not random
    assert normalize("/w/src/tmpl_helpers/a.h:1:1: error: e") == "/w/src/tmpl_helpers/a.h:1:1: error: e"
    assert normalize("/tmp/myproject/csrc/a.cpp:1:1: error: e") == "/tmp/myproject/csrc/a.cpp:1:1: error: e"


def test_measured_times_go_but_a_limit_stays() -> None:
    assert normalize("==== 2 failed, 3 passed in 1.15s ====") == "==== 2 failed, 3 passed in <time> ===="
    assert normalize("step 'smoke': timed out after 600 s") == "step 'smoke': timed out after 600 s"
    assert normalize("built at 2025-01-02 03:04:05 in 12 s") == "built at <timestamp> in <time>"


def test_uv_s_graphical_report_wrapped_at_two_widths() -> None:
    # verbatim uv <= 0.4 output on a terminal (uv 0.13 here prints the narrative form, tested
    # with the real uv in test_signature.py); the explanation wraps at the terminal's width
    wide = ["  × No solution found when resolving dependencies:",
            "  ╰─▶ Because nosuchpkg was not found in the package registry and you require",
            "      nosuchpkg>=1, we can conclude that your requirements are unsatisfiable.",
            "", "      hint: ..."]
    narrow = ["  × No solution found when resolving dependencies:",
              "  ╰─▶ Because nosuchpkg was not found in the package",
              "      registry and you require nosuchpkg>=1, we can",
              "      conclude that your requirements are",
              "      unsatisfiable."]
    want = ["× No solution found when resolving dependencies: ╰─▶ Because nosuchpkg was not found "
            "in the package registry and you require nosuchpkg>=1, we can conclude that your "
            "requirements are unsatisfiable."]
    assert signature(wide) == signature(narrow) == want


def test_nvcc_style_line_with_an_error_number() -> None:
    # nvcc --display-error-number: verbatim shape (the real nvcc runs in tests/integration)
    assert signature(["k.cu(7): error #20-D: identifier \"y\" is undefined", "",
                      "1 error detected in the compilation of \"k.cu\"."]) \
        == ["k.cu(7): error #20-D: identifier \"y\" is undefined"]


def test_errors_go_before_summaries_over_the_limit() -> None:
    lines = [f"a.cpp:(.text): undefined reference to `f{i}()'" for i in range(3)]
    lines += ["collect2: error: ld returned 1 exit status"]
    assert signature(lines, limit=3) == lines[:3]
    assert signature(lines, limit=4) == lines
    assert signature(lines, limit=0) == []


def test_wrappers_are_not_the_last_exception() -> None:
    lines = ["Traceback (most recent call last):", '  File "setup.py", line 1', "    x",
             "ValueError: no HIP", "error: subprocess-exited-with-error",
             "ERROR: Failed building wheel for badext"]
    assert signature(lines) == ["ValueError: no HIP"]
    assert re.fullmatch(r"[^\x00-\x1f]*", signature(["\x1bc"])[0])


def test_a_huge_line_is_cut_before_a_secret_could_slip_through() -> None:
    long_password = "Q9z" + "p" * RAW_CHARS
    line = f"ERROR: No matching distribution found for x at https://u:{long_password}@h.example/s"
    (sig,) = signature([line])
    assert "ppp" not in sig and sig.startswith("ERROR: No matching distribution found for x at")
    assert normalize("x" * (3 * RAW_CHARS)) == "…"
    many = " ".join(["pid 7 0x7ffc0011aa22 /tmp/ccAb12Cd.o a://b"] * 20000)
    assert len(normalize(many)) == MAX_CHARS
