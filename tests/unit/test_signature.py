"""A failed step's signature, read from the real output of the real tools.

Each test makes a tool fail here (gcc, g++, clang, cmake, uv, python; the slower ones, pip,
pytest, nvcc and hipcc, are in tests/integration/test_signature_tools.py), captures its
output as the toolkit does (stdout and stderr in one stream) and checks the signature
against the line the tool prints, written here by hand as gcc 12, clang 15, cmake 3.25 and
uv print it. The same failure in another work folder, source copy, temporary folder, locale
or terminal gives the same signature.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.core.errors import CommandFailed
from toolkit.core.proc import run as run_proc
from toolkit.run.signature import FALLBACK_LINES, MAX_CHARS, MAX_LINES, compare, signature

# gcc 12 on this line pair (int x = 1 / return x;), in the C locale and in C.UTF-8
SYNTAX = "int f() {\n  int x = 1\n  return x;\n}\n"
GCC_SYNTAX = "csrc/bad.cpp:3:3: error: expected ',' or ';' before 'return'"


def output(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None,
           fails: bool = True) -> list[str]:
    """The merged output of a real command, which must fail (the failing path is the one
    under test)."""
    full = {**os.environ, "LC_ALL": "C", **(env or {})}
    full.pop("PIP_FIND_LINKS", None)  # this machine's pip default: not part of a test
    proc = subprocess.run(list(argv), cwd=cwd, env=full, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    assert (proc.returncode != 0) == fails, proc.stdout
    return proc.stdout.splitlines()


def copy_of(tmp_path: Path, workdir: str, files: Mapping[str, str]) -> tuple[Path, Path]:
    """A work folder and, in it, a build's source copy (``build/<id>/src``) holding
    ``files``: (workdir, source)."""
    root = tmp_path / workdir
    src = root / "build" / "badext-0.1-py3.11-rocm6.4" / "src"
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    return root, src


def compile_in(tmp_path: Path, workdir: str, compiler: str, *flags: str,
               files: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None,
               ) -> tuple[list[str], dict[str, str], Path]:
    """Compile ``csrc/bad.cpp`` by absolute path (as torch's ninja builds do) in a source
    copy under ``workdir``: (output lines, host paths, source folder)."""
    root, src = copy_of(tmp_path, workdir, files or {"csrc/bad.cpp": SYNTAX})
    lines = output([compiler, *flags, "-c", str(src / "csrc" / "bad.cpp"), "-o",
                    str(root / "bad.o")], cwd=root, env=env)
    return lines, {"workdir": str(root), "cache": str(tmp_path / f"cache-{workdir}")}, src


def clang() -> str:
    found = shutil.which("clang++") or next(iter(sorted(glob.glob("/usr/lib/llvm-*/bin/clang++"),
                                                        reverse=True)), None)
    if not found:
        pytest.skip("clang++ is not installed")
    return found


@pytest.mark.parametrize("compiler", ["gcc", "g++"])
def test_a_compile_error_is_its_line_relative_to_the_source(tmp_path: Path, compiler: str) -> None:
    lines, paths, src = compile_in(tmp_path, "w", compiler)
    assert any(str(src) in line for line in lines)  # gcc named the file by its absolute path
    assert any("warning:" in line for line in lines) and any("^" in line for line in lines)
    assert signature(lines, paths=paths, source=str(src)) == [GCC_SYNTAX]


def test_the_same_error_in_two_work_folders_is_the_same_signature(tmp_path: Path) -> None:
    one, paths1, src1 = compile_in(tmp_path, "ci-runner/_work/proj", "g++")
    two, paths2, src2 = compile_in(tmp_path, "home/alice/proj", "g++")
    assert one != two  # the raw output differs (the folders)...
    assert signature(one, paths=paths1, source=str(src1)) \
        == signature(two, paths=paths2, source=str(src2)) == [GCC_SYNTAX]  # ...the failure not


def test_pip_s_source_copies_in_the_temporary_folder(tmp_path: Path) -> None:
    """pip copies a source tree to /tmp/pip-req-build-<random>/; torch's ninja builds name
    its files by absolute path."""
    sigs = []
    for _ in range(2):
        copy = Path(tempfile.mkdtemp(prefix="pip-req-build-"))
        try:
            (copy / "csrc").mkdir()
            (copy / "csrc" / "bad.cpp").write_text(SYNTAX)
            lines = output(["g++", "-c", str(copy / "csrc" / "bad.cpp"), "-o", "/dev/null"],
                           cwd=tmp_path)
            assert any(line.startswith(f"{copy}/csrc/bad.cpp:3:3: error:") for line in lines)
            sigs.append(signature(lines))
        finally:
            shutil.rmtree(copy)
    assert sigs[0] == sigs[1] == [GCC_SYNTAX]


def test_colour_and_locale_do_not_change_the_signature(tmp_path: Path) -> None:
    plain, paths, src = compile_in(tmp_path, "w", "g++")
    colour, _, _ = compile_in(tmp_path, "w", "g++", "-fdiagnostics-color=always",
                              env={"LC_ALL": "C.UTF-8"})
    assert any("\x1b[" in line for line in colour) and any("‘" in line for line in colour)
    assert signature(colour, paths=paths, source=str(src)) == [GCC_SYNTAX]
    assert signature(plain, paths=paths, source=str(src)) == [GCC_SYNTAX]


def test_clang_error_line(tmp_path: Path) -> None:
    lines, paths, src = compile_in(tmp_path, "w", clang())
    assert "1 error generated." in lines
    assert signature(lines, paths=paths, source=str(src)) \
        == ["csrc/bad.cpp:2:12: error: expected ';' at end of declaration"]


@pytest.mark.parametrize("which", ["g++", "clang"])
def test_a_missing_header_is_a_fatal_error_line(tmp_path: Path, which: str) -> None:
    lines, paths, src = compile_in(tmp_path, "w", clang() if which == "clang" else which,
                                   files={"csrc/bad.cpp": '#include "nosuch.h"\n'})
    want = {"g++": "csrc/bad.cpp:1:10: fatal error: nosuch.h: No such file or directory",
            "clang": "csrc/bad.cpp:1:10: fatal error: 'nosuch.h' file not found"}[which]
    assert signature(lines, paths=paths, source=str(src)) == [want]


def test_an_error_in_a_header_of_the_cache_is_named_by_its_token(tmp_path: Path) -> None:
    cache = tmp_path / "cache-w" / "envs" / "py311" / "include"
    cache.mkdir(parents=True)
    (cache / "broken.h").write_text("struct S { int a }\n;\n")
    lines, paths, src = compile_in(tmp_path, "w", "g++", f"-I{cache}",
                                   files={"csrc/bad.cpp": '#include "broken.h"\nint g();\n'})
    assert any(line.startswith("In file included from") for line in lines)
    assert signature(lines, paths=paths, source=str(src)) \
        == ["<cache>/envs/py311/include/broken.h:1:16: error: expected ';' at end of member "
            "declaration"]


def test_a_long_error_line_is_cut(tmp_path: Path) -> None:
    name = "undeclared_" + "a" * 3000
    lines, paths, src = compile_in(tmp_path, "w", "g++",
                                   files={"csrc/bad.cpp": f"int f() {{ return {name}; }}\n"})
    (sig,) = signature(lines, paths=paths, source=str(src))
    assert any(line.endswith(f"/csrc/bad.cpp:1:18: error: '{name}' was not declared in this scope")
               for line in lines)  # gcc printed it whole
    assert sig.startswith("csrc/bad.cpp:1:18: error: 'undeclared_aaaa")
    assert len(sig) == MAX_CHARS and sig.endswith("a…")


def test_the_driver_s_own_error(tmp_path: Path) -> None:
    lines = output(["g++", "-c", "nosuch.cpp"], cwd=tmp_path)
    assert signature(lines) == ["cc1plus: fatal error: nosuch.cpp: No such file or directory"]


def test_an_undefined_reference_without_gcc_s_temporary_object(tmp_path: Path) -> None:
    _, src = copy_of(tmp_path, "w", {"link.cpp": "int foo();\nint main() { return foo(); }\n"})
    one = output(["g++", str(src / "link.cpp"), "-o", str(tmp_path / "a.out")], cwd=src)
    two = output(["g++", str(src / "link.cpp"), "-o", str(tmp_path / "a.out")], cwd=src)
    assert any("/tmp/cc" in line for line in one)  # gcc's random object name: not kept
    want = ["link.cpp:(.text): undefined reference to `foo()'",
            "collect2: error: ld returned 1 exit status"]
    assert signature(one, source=str(src)) == signature(two, source=str(src)) == want


def test_two_failed_links_keep_their_errors_before_the_linkers_summary(tmp_path: Path) -> None:
    """Two links that fail in one build (g++ and collect2 run for real): ``collect2: error:
    ld returned 1 exit status`` sums up the undefined references before it, so over the
    limit the references are kept and the summary dropped, whatever the output order."""
    _, src = copy_of(tmp_path, "w", {"a.cpp": "int f();\nint main() { return f(); }\n",
                                     "b.cpp": "int g();\nint main() { return g(); }\n"})
    lines = output(["sh", "-c", "g++ a.cpp -o a; g++ b.cpp -o b; exit 1"], cwd=src)
    assert lines.count("collect2: error: ld returned 1 exit status") == 2
    assert signature(lines, limit=2) == ["a.cpp:(.text): undefined reference to `f()'",
                                         "b.cpp:(.text): undefined reference to `g()'"]


def test_a_missing_library(tmp_path: Path) -> None:
    (tmp_path / "m.c").write_text("int main(void) { return 0; }\n")
    lines = output(["gcc", "m.c", "-lnosuchlib", "-o", "m"], cwd=tmp_path)
    assert signature(lines) == ["/usr/bin/ld: cannot find -lnosuchlib: No such file or directory",
                                "collect2: error: ld returned 1 exit status"]


def test_lld_s_undefined_symbol(tmp_path: Path) -> None:
    if not shutil.which("ld.lld") and not glob.glob("/usr/lib/llvm-*/bin/ld.lld"):
        pytest.skip("ld.lld is not installed")
    (tmp_path / "link.cpp").write_text("int foo();\nint main() { return foo(); }\n")
    lines = output([clang(), "-fuse-ld=lld", "link.cpp", "-o", "a.out"], cwd=tmp_path)
    assert any(line.startswith(">>> referenced by") for line in lines)
    assert signature(lines) == [
        "ld.lld: error: undefined symbol: foo()",
        "clang: error: linker command failed with exit code 1 (use -v to see invocation)"]


def test_cmake_error_with_its_message(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text(
        'cmake_minimum_required(VERSION 3.10)\nproject(x NONE)\n'
        'message(FATAL_ERROR "boom: the thing\n  is broken")\n')
    lines = output(["cmake", "-S", ".", "-B", "b"], cwd=tmp_path)
    assert "-- Configuring incomplete, errors occurred!" in lines
    assert signature(lines, source=str(tmp_path)) \
        == ["CMake Error at CMakeLists.txt:3 (message): boom: the thing is broken"]


def test_cmake_find_package_error_is_cut_after_max_chars(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(x NONE)\nfind_package(NoSuchThing REQUIRED)\n")
    lines = output(["cmake", "-S", ".", "-B", "b"], cwd=tmp_path)
    assert "  NoSuchThingConfig.cmake" in [line[2:] for line in lines]
    (sig,) = signature(lines)
    assert sig.startswith(
        'CMake Error at CMakeLists.txt:3 (find_package): By not providing "FindNoSuchThing.cmake" '
        'in CMAKE_MODULE_PATH this project has asked CMake to find a package configuration file '
        'provided by "NoSuchThing", but CMake did not find one. Could not find a package '
        'configuration file provided by "NoSuchThing" with any of the following names: '
        'NoSuchThingConfig.cmake nosuchthing-config.cmake')
    assert len(sig) == MAX_CHARS and sig.endswith("…")


def python(code: str, cwd: Path) -> list[str]:
    return output([sys.executable, "-c", code], cwd=cwd)


def test_the_last_line_of_a_traceback(tmp_path: Path) -> None:
    lines = python("import nosuchmod", tmp_path)
    assert lines[0] == "Traceback (most recent call last):"
    assert signature(lines) == ["ModuleNotFoundError: No module named 'nosuchmod'"]


def test_an_exception_of_any_name_and_chained_ones(tmp_path: Path) -> None:
    lines = python("class Boom(Exception): pass\ntry:\n    {}['k']\nexcept KeyError:\n"
                   "    raise Boom('no k')", tmp_path)
    assert "During handling of the above exception, another exception occurred:" in lines
    assert signature(lines) == ["Boom: no k"]


def test_called_process_error_behind_a_compile_error_is_left_out(tmp_path: Path) -> None:
    _, src = copy_of(tmp_path, "w", {"csrc/bad.cpp": SYNTAX})
    lines = python("import subprocess\nsubprocess.run(['g++', '-c', 'csrc/bad.cpp', '-o', "
                   "'/dev/null'], check=True)", src)
    assert lines[-1].startswith("subprocess.CalledProcessError: Command ")
    assert signature(lines, source=str(src)) == [GCC_SYNTAX]


def test_volatile_parts_of_an_exception_are_stable(tmp_path: Path) -> None:
    code = ("import os, tempfile, time\nt = time.perf_counter()\nd = tempfile.mkdtemp()\n"
            "raise RuntimeError(f'worker pid {os.getpid()} lost {object()} in {d} after "
            "{time.perf_counter() - t + 1:.3f}s')")
    one, two = python(code, tmp_path), python(code, tmp_path)
    assert one[-1] != two[-1]
    assert signature(one) == signature(two) == [
        "RuntimeError: worker pid <pid> lost <object object at 0x<addr>> in /tmp/tmp* after <time>"]


def test_the_toolkit_s_timeout_line(tmp_path: Path) -> None:
    with pytest.raises(CommandFailed) as err:
        run_proc(["sleep", "5"], timeout=0.3)
    message = f"step 'smoke': {err.value.reason}: {' '.join(err.value.argv)}"
    assert signature(["collecting ...", message]) == ["step 'smoke': timed out after 0.3 s"]


def test_nothing_recognised_gives_the_last_lines(tmp_path: Path) -> None:
    lines = output(["sh", "-c", "echo one; echo two; echo; echo three; echo four; echo; exit 3"],
                   cwd=tmp_path)
    assert FALLBACK_LINES == 3
    assert signature(lines) == ["two", "three", "four"]
    assert signature(lines, limit=1) == ["four"]


def test_at_most_limit_lines_in_order_each_once(tmp_path: Path) -> None:
    errors = "".join(f"int f{i}() {{ return undeclared_{i}; }}\n" for i in range(30))
    _, src = copy_of(tmp_path, "w", {"csrc/bad.cpp": errors, "csrc/b.h": "int h() { return nope; }\n",
                                      "csrc/two.cpp": '#include "b.h"\n', "csrc/one.cpp": '#include "b.h"\n'})
    lines = output(["g++", "-c", "csrc/bad.cpp", "-o", "/dev/null"], cwd=src)
    want = [f"csrc/bad.cpp:{i + 1}:{18 + len(str(i))}: error: 'undeclared_{i}' was not declared in "
            "this scope" for i in range(30)]
    assert signature(lines) == want[:MAX_LINES]
    assert signature(lines, limit=5) == want[:5]
    both = (output(["g++", "-c", "csrc/one.cpp", "-o", "/dev/null"], cwd=src)
            + output(["g++", "-c", "csrc/two.cpp", "-o", "/dev/null"], cwd=src))
    assert sum("error:" in line for line in both) == 2
    assert signature(both) == ["csrc/b.h:1:18: error: 'nope' was not declared in this scope"]


def test_uv_resolution_error_piped_and_on_a_terminal(tmp_path: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    make_wheel(tmp_path / "wh", "aa", "1.0", "py3-none-any", {"aa/__init__.py": ""}, requires=["cc==1.0"])
    make_wheel(tmp_path / "wh", "bb", "1.0", "py3-none-any", {"bb/__init__.py": ""}, requires=["cc==2.0"])
    make_wheel(tmp_path / "wh", "cc", "1.0", "py3-none-any", {"cc/__init__.py": ""})
    argv = [uv, "pip", "install", "--python", sys.executable, "--dry-run", "--no-index",
            "--find-links", "wh", "aa", "bb"]
    piped = output(argv, cwd=tmp_path)
    tty = output(["script", "-qec", " ".join(argv), "/dev/null"], cwd=tmp_path) \
        if shutil.which("script") else piped
    sig = signature(piped)
    assert len(sig) == 1 and sig[0].startswith("error: No solution found when resolving dependencies")
    assert "Because all versions of bb depend on cc==2.0" in sig[0]
    assert sig[0].endswith("we can conclude that your requirements are unsatisfiable.")
    assert signature(tty) == sig


def test_compare_is_on_sets_of_normalized_lines() -> None:
    a = ["x.cpp:1:1: error: a", "y.cpp:2:2: error: b"]
    assert compare(a, list(reversed(a)) + [a[0]]).same
    m = compare(a, [a[1], "z.cpp:3:3: error: c"])
    assert not m.same and m.common == (a[1],)
    assert m.only_recorded == (a[0],) and m.only_here == ("z.cpp:3:3: error: c",)
    assert not compare([], []).same and not compare(a, []).same and not compare([], a).same
    assert compare(["x.cpp:1:1: error: \x1b[31ma\x1b[0m  "], [a[0]]).same


def test_pypa_builds_wrapper_and_advice_never_crowd_out_the_backends_last_words() -> None:
    """Real ``python -m build`` output of a setup.py that ends with ``SystemExit(msg)``
    (copied from a run here): the message, not pypa/build's TIP and ERROR lines."""
    out = ["running build_ext", "cfail: CFAIL_ONLY_ON_CI is set on this machine", "",
           "TIP pass --env-dir and --sdist-extract-dir to keep the build environment and "
           "sources, then see https://build.pypa.io/en/stable/how-to/troubleshooting.html"
           "#debug-a-failed-build for help debugging a failed build",
           "ERROR Backend subprocess exited when trying to invoke build_wheel"]
    sig = signature(out)
    assert sig[-1] == "cfail: CFAIL_ONLY_ON_CI is set on this machine", sig
    assert not any(s.startswith(("TIP", "ERROR Backend")) for s in sig)
