"""The bodies of the developer sessions ``nox -s fuzz`` and ``nox -s flakes``.

``fuzz``: the property tests (pytest's ``hypothesis`` marker) under the ``fuzz`` Hypothesis
profile of ``tests/conftest.py`` (random, many examples, every phase including explain); each
failing example is printed as an ``@example(...)`` block ready to paste above its test.

``flakes``: the integration tests run several times in a row in this clone, alternately with
a cold ccache (``CCACHE_DIR`` a fresh empty folder) and a warm one (the folder the cold run
before filled); one JUnit XML per run, compared test by test. Any test whose outcome changed
from one run to another is reported, and so is a test that failed every time (exit 1).

Imported by ``noxfile.py`` only inside a session: module-level imports stay light.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.cli.running import Finished
from toolkit.cli.sessions import _guard
from toolkit.core.errors import UsageError

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

FUZZ_EXAMPLES = 5000
FLAKE_RUNS = 5
# pytest exit codes: 0 all passed, 1 some failed; anything else (interrupted, internal
# error, usage error, nothing collected) means the run itself did not happen as asked
_PYTEST_RAN = (0, 1)
_HEADER = re.compile(r"^(?P<prefix>.*?)(?:Failing test case|Falsifying example): "
                     r"(?P<rest>\w+\(.*)$", re.MULTILINE)


# ---------------------------------------------------------------------------- @example lines

@dataclass(frozen=True)
class Failing:
    """One failing example of a property test, as Hypothesis printed it."""

    test: str  # ``tests/unit/test_x.py::test_name``
    call: str  # ``test_name(\n    a=1,\n)`` as printed
    example: str | None  # ``@example(\n    a=1,\n)``, or None when the call is not Python


def _blocks(text: str) -> list[str]:
    """Every complete ``test_name(...)`` call Hypothesis printed in ``text`` (pytest prefixes
    each line of an exception, e.g. ``E       ``; the header line's prefix is taken off every
    line). A call cut short (pytest shortens some messages) is left out."""
    lines = text.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if not m:
            continue
        prefix, call = m["prefix"], [m["rest"]]
        depth = _depth(m["rest"])
        j = i + 1
        while depth > 0 and j < len(lines):
            nxt = lines[j][len(prefix):] if lines[j].startswith(prefix) else lines[j].lstrip()
            call.append(nxt)
            depth += _depth(nxt)
            j += 1
        if depth == 0:
            out.append("\n".join(call))
    return out


def _depth(line: str) -> int:
    """Brackets opened minus closed on a line, outside strings and comments (a line of
    Hypothesis's pretty-printed call is complete Python tokens, except for its brackets)."""
    depth, quote, i = 0, "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif line.startswith(quote, i):
                i += len(quote) - 1
                quote = ""
        elif ch in "\"'":
            quote = ch * 3 if line.startswith(ch * 3, i) else ch
            i += len(quote) - 1
        elif ch == "#":
            break
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        i += 1
    return depth


def given_names(source: str, function: str) -> set[str] | None:
    """The argument names ``@given`` fills for ``function`` in a test module's source (other
    arguments are pytest fixtures, which ``@example`` must not name); None when unknown."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != function:
            continue
        for dec in node.decorator_list:
            if not isinstance(dec, ast.Call):
                continue
            name = dec.func.attr if isinstance(dec.func, ast.Attribute) else getattr(dec.func, "id", "")
            if name != "given":
                continue
            names = {k.arg for k in dec.keywords if k.arg}
            params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            if dec.args:  # positional strategies fill the rightmost parameters
                names |= set(params[-len(dec.args):])
            return names
    return None


def _arguments(call: str) -> list[str] | None:
    """The top-level arguments of ``name(a=1, b=[2, 3])`` as printed, one string each (comments
    dropped); None when the brackets do not balance."""
    inner = call.strip()
    start = inner.find("(")
    if start < 0 or not inner.endswith(")"):
        return None
    args: list[str] = []
    current: list[str] = []
    depth = 0
    for line in inner[start + 1:-1].splitlines():
        piece = line.strip()
        if not piece or (piece.startswith("#") and depth == 0):
            continue
        current.append(line)
        depth += _depth(line)
        if depth == 0:
            text = "\n".join(current).strip()
            args.append(text[:-1] if text.endswith(",") else text)
            current = []
    if depth != 0 or current:
        return None
    return args


def to_example(call: str, given: set[str] | None) -> str | None:
    """``test(a=1, fixture=<obj>)`` as printed -> ``@example(\n    a=1,\n)``, with only
    ``given``'s arguments when known (a fixture's value need not be Python); None when the
    remaining arguments are not Python (Hypothesis printed an object's repr)."""
    args = _arguments(call)
    if args is None:
        return None
    kept = [a for a in args if given is None or a.split("=", 1)[0].strip() in given]
    text = "@example(\n" + "".join(f"    {a},\n" for a in kept) + ")"
    try:
        ast.parse(text.removeprefix("@"), mode="eval")
    except SyntaxError:
        return None
    return text


def _test_file(classname: str, root: Path) -> Path:
    return root.joinpath(*classname.split(".")).with_suffix(".py")


def failing_examples(junit: Path, root: Path) -> list[Failing]:
    """The failing examples of every failed case in a pytest JUnit file."""
    import xml.etree.ElementTree as ET

    try:
        tree = ET.parse(junit)
    except (OSError, ET.ParseError) as exc:
        raise UsageError(f"{junit}: not a readable JUnit file: {exc}") from None
    return [f for tc in tree.getroot().iter("testcase") for f in _case_examples(tc, root)]


def _case_examples(tc: Element, root: Path) -> list[Failing]:
    """A failed (or erroring) test case's failing examples, each block once; none when it passed."""
    # the element's text is pytest's full report; its message may be cut short
    texts = [el.text if el.text and _HEADER.search(el.text) else el.get("message") or ""
             for tag in ("failure", "error") for el in tc.findall(tag)]
    if not texts:
        return []
    classname, name = tc.get("classname") or "", tc.get("name") or ""
    path = _test_file(classname, root)
    given = _given_of(path, name.split("[", 1)[0])
    test = f"{path.relative_to(root) if path.is_relative_to(root) else path}::{name}"
    blocks = dict.fromkeys(b for t in texts for b in _blocks(t))  # each once, in order
    return [Failing(test, block, to_example(block, given)) for block in blocks]


def _given_of(path: Path, function: str) -> set[str] | None:
    """The names ``function``'s @given draws, in the test file at ``path``; None: unreadable."""
    try:
        return given_names(path.read_text(encoding="utf-8"), function)
    except OSError:
        return None


def fuzz_report(failing: Sequence[Failing], failed_tests: int) -> list[str]:
    if not failed_tests:
        return ["fuzz: no property test failed"]
    lines = [f"fuzz: {failed_tests} property test(s) failed. Pin each example below above its "
             "test (`from hypothesis import example`), then fix the code:", ""]
    for f in failing:
        lines.append(f"# {f.test}")
        if f.example:
            lines.append(f.example)
        else:
            lines.append("# (printed values are not Python: write this @example by hand)")
            lines += [f"# {ln}" for ln in f.call.splitlines()]
        lines.append("")
    if failed_tests and not failing:
        lines.append("no failing example was printed: the failures are above (a health check "
                     "or an error outside the examples)")
    return lines


def fuzz(session: Any, posargs: Sequence[str]) -> None:
    """Property tests at random with many examples; failing examples as ``@example`` lines."""

    def body() -> None:
        p = argparse.ArgumentParser(prog="nox -s fuzz --", exit_on_error=False,
                                    description="other arguments go to pytest (paths, -k, "
                                    "--hypothesis-seed=N); by default every test marked "
                                    "`hypothesis` under tests/")
        p.add_argument("--examples", type=int, default=FUZZ_EXAMPLES,
                       help=f"examples per property test (default {FUZZ_EXAMPLES})")
        args, rest = p.parse_known_args(list(posargs))
        if args.examples < 1:
            raise UsageError(f"--examples {args.examples}: give a positive number of examples")
        root = Path.cwd()
        junit = Path(tempfile.mkdtemp(prefix="toolkit-fuzz-")) / "fuzz.xml"
        session.run(sys.executable, "-m", "pytest", "-n", "auto", "-p", "no:cacheprovider",
                    "-m", "hypothesis", "--hypothesis-profile=fuzz",
                    "--hypothesis-show-statistics", f"--junitxml={junit}", *rest,
                    env={"TOOLKIT_FUZZ_EXAMPLES": str(args.examples)},
                    success_codes=list(_PYTEST_RAN))
        from toolkit.verify.junit import ERROR, FAILED, cases

        failed = [c for c in cases(junit) if c.outcome in (FAILED, ERROR)]
        for line in fuzz_report(failing_examples(junit, root), len(failed)):
            print(line)
        if failed:
            raise Finished(1, f"{len(failed)} property test{'s' * (len(failed) != 1)} failed "
                              "(the failing examples are above)")

    _guard(session, body)


# ---------------------------------------------------------------------------- flake check

@dataclass
class RunResult:
    number: int
    cache: str  # "cold" | "warm"
    seconds: float
    outcomes: dict[str, str] = field(default_factory=dict)  # test id -> outcome
    messages: dict[str, str] = field(default_factory=dict)  # test id -> first line
    ccache: str = ""


def run_outcomes(junit: Path) -> tuple[dict[str, str], dict[str, str]]:
    """test id -> outcome, and test id -> the first line of a failure, from one JUnit file."""
    from toolkit.verify.junit import PASSED, SKIPPED, cases

    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    for c in cases(junit):
        tid = c.qualname
        outcomes[tid] = c.outcome
        if c.outcome not in (PASSED, SKIPPED):
            messages[tid] = c.first_line
    return outcomes, messages


def changed_tests(runs: Sequence[RunResult]) -> dict[str, list[str]]:
    """Tests whose outcome was not the same in every run (absent from a run: ``missing``),
    with their outcome per run."""
    ids = sorted({t for r in runs for t in r.outcomes})
    table = {t: [r.outcomes.get(t, "missing") for r in runs] for t in ids}
    return {t: row for t, row in table.items() if len(set(row)) > 1}


def always_failing(runs: Sequence[RunResult]) -> list[str]:
    from toolkit.verify.junit import ERROR, FAILED

    ids = sorted({t for r in runs for t in r.outcomes})
    return [t for t in ids
            if all(r.outcomes.get(t) in (FAILED, ERROR) for r in runs)]


def flakes_report(runs: Sequence[RunResult], what: str) -> tuple[list[str], int]:
    """The report's lines and the exit code (1 when a test changed or always failed)."""
    from collections import Counter

    ids = {t for r in runs for t in r.outcomes}
    kinds = ", ".join(r.cache for r in runs)
    lines = [f"flakes: {len(runs)} runs of {what} in this clone (ccache: {kinds}), "
             f"{len(ids)} tests"]
    for r in runs:
        counts = Counter(r.outcomes.values())
        summary = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
        lines.append(f"  run {r.number} ({r.cache:<4} ccache): {summary or 'no tests'} in "
                     f"{r.seconds:.0f} s" + (f"; ccache {r.ccache}" if r.ccache else ""))
    changed = changed_tests(runs)
    failing = always_failing(runs)
    lines += _changed_lines(runs, changed)
    if failing:
        lines.append(f"FAILED EVERY RUN (not a flake, a failure): {len(failing)} test(s):")
        lines += [f"  {t}: {runs[-1].messages.get(t, '')}" for t in failing]
    if not changed and not failing:
        lines.append(f"no test changed its outcome across {len(runs)} runs")
    return lines, (1 if changed or failing else 0)


def _changed_lines(runs: Sequence[RunResult], changed: dict[str, list[str]]) -> list[str]:
    """Each test whose outcome changed: its outcome per run and each run's failure line."""
    if not changed:
        return []
    lines = [f"CHANGED: {len(changed)} test(s) did not give the same outcome every run:"]
    for t, row in changed.items():
        lines.append(f"  {t}")
        lines.append("    " + "  ".join(f"run {i + 1}: {o}" for i, o in enumerate(row)))
        lines += [f"    run {r.number}: {r.messages[t]}" for r in runs if t in r.messages]
    return lines


def cache_kinds(runs: int) -> list[str]:
    """cold, warm, warm, cold, warm, ...: a cold run fills a fresh ccache, the next two reuse
    it warm."""
    return ["cold" if i % 3 == 0 else "warm" for i in range(runs)]


def _ccache(ccache_dir: Path, *args: str) -> str | None:
    """``ccache ARGS`` on ``ccache_dir``: its output, None without ccache or on failure."""
    import shutil

    from toolkit.core.errors import CommandFailed
    from toolkit.core.proc import run

    exe = shutil.which("ccache")
    if not exe:
        return None
    try:
        return run([exe, *args], env={**os.environ, "CCACHE_DIR": str(ccache_dir)},
                   timeout=60).stdout
    except CommandFailed:
        return None


def _ccache_zero(ccache_dir: Path) -> None:
    _ccache(ccache_dir, "--zero-stats")


def _ccache_stats(ccache_dir: Path) -> str:
    """``H hits, M misses`` of ``ccache_dir`` since it was zeroed ("" without ccache)."""
    out = _ccache(ccache_dir, "--print-stats")
    if out is None:
        return ""
    stats = dict(ln.split("\t", 1) for ln in out.splitlines() if "\t" in ln)
    hits = sum(int(stats.get(k, "0")) for k in ("direct_cache_hit", "preprocessed_cache_hit"))
    return f"{hits} hits, {stats.get('cache_miss', '?')} misses"


def flakes(session: Any, posargs: Sequence[str]) -> None:
    """The integration tests N times in a row, cold and warm ccache; outcomes compared."""

    def body() -> None:
        p = argparse.ArgumentParser(prog="nox -s flakes --", exit_on_error=False,
                                    description="other arguments go to pytest (paths, -k); "
                                    "by default every test marked `integration`")
        p.add_argument("--runs", type=int, default=FLAKE_RUNS,
                       help=f"how many runs (default {FLAKE_RUNS}; at least 2)")
        args, rest = p.parse_known_args(list(posargs))
        if args.runs < 2:
            raise UsageError(f"--runs {args.runs}: comparing outcomes needs at least 2 runs")
        what = " ".join(["-m integration", *rest])
        work = Path(tempfile.mkdtemp(prefix="toolkit-flakes-"))
        results: list[RunResult] = []
        ccache_dir = work / "ccache-0"
        for i, kind in enumerate(cache_kinds(args.runs), start=1):
            if kind == "cold":
                ccache_dir = work / f"ccache-{i}"
                ccache_dir.mkdir()
            junit = work / f"run-{i}.xml"
            session.log(f"flakes: run {i}/{args.runs}, {kind} ccache ({ccache_dir})")
            _ccache_zero(ccache_dir)
            start = time.monotonic()
            session.run(sys.executable, "-m", "pytest", "-n", "auto", "-p", "no:cacheprovider",
                        "-q", "-m", "integration", f"--junitxml={junit}", *rest,
                        env={"CCACHE_DIR": str(ccache_dir)}, success_codes=list(_PYTEST_RAN))
            seconds = time.monotonic() - start
            outcomes, messages = run_outcomes(junit)
            results.append(RunResult(i, kind, seconds, outcomes, messages,
                                     _ccache_stats(ccache_dir)))
        lines, code = flakes_report(results, what)
        lines.append(f"JUnit files: {work}/run-*.xml")
        for line in lines:
            print(line)
        if code:
            raise Finished(code, f"in {len(results)} runs, {len(changed_tests(results))} "
                                 f"test(s) changed outcome and {len(always_failing(results))} "
                                 "failed every time (named above)")

    _guard(session, body)
