"""The body of ``nox -s mutants``: mutation testing of all of ``toolkit/``, package by package
(inspect, plan, data, core, env, run, verify, cli), with mutmut.

    nox -s mutants                                   # every mutant of every package
    nox -s mutants -- toolkit.plan                   # one package (or module: toolkit.plan.planner)
    nox -s mutants -- toolkit.inspect --sample 300 --seed 1   # a uniform random sample of them
    nox -s mutants -- --score-only                   # the score of the last run, nothing run
    nox -s mutants -- toolkit.run --sample 30 --seed 2 --integration   # then the area's integration tests

Which tests judge a mutant, in order (a documented selection):

1. the test files that exercise the mutated module: mutmut runs, for each mutant, only the
   tests (``tests/unit`` and the check's in-process integration tests, ``[tool.mutmut]``
   ``pytest_add_cli_args_test_selection``) that called the mutated function while it collected
   its stats; the Python processes those tests start count too (tests/mutation_child/
   sitecustomize.py: they run the mutated toolkit and report the functions they called);
2. with ``--integration``, for a sampled mutant those let survive (or none covered), the area's
   integration tests, ``AREA_TESTS`` below: they run the toolkit in subprocesses (nox, python -m
   toolkit), which inherit ``MUTANT_UNDER_TEST`` and so run the mutant; a failure there kills
   it (exit code 1 in mutmut's results). They build real projects, a minute or more per
   mutant, so they are opt-in.

mutmut's configuration (what is mutated, which tests run) is ``[tool.mutmut]`` in
pyproject.toml; it works in ``mutants/`` (git-ignored). For each mutant mutmut runs only the
unit tests that called the mutated function when it collected its stats, so a mutant costs
seconds. The score counts a mutant as killed when a test failed, timed out or crashed on it;
survivors and mutants no test covers are listed, each to become a test or a line in
``docs/equivalent-mutants.md``; the mutants listed there (and not killed) are left out of the
score, as equivalent mutants are (killed over the mutants that can be killed).

``--sample N --seed S`` first generates the mutants (nothing is run), then draws N of the
generated names uniformly at random (without replacement: the N names whose hash with S is
smallest, so the same N, S and sources give the same sample, and an edit changes only the
draws of the mutants it changes) and runs only those. Its score is an estimate: printed with
the sample size, the number of mutants it was drawn from and a 95% Wilson score interval.
``--score-only --sample N --seed S`` reports the same sample's score again, and
``--unkilled --sample N --seed S`` runs again only its mutants no test has killed yet (after
adding tests; mutants of functions edited since count as not run). ``--seed`` given twice
draws two samples, each of N, and runs them in one mutmut run (the stats and the clean run of
their tests are shared); each is scored apart.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.errors import EnvironmentProblem, UsageError

PACKAGES = ("toolkit.inspect", "toolkit.plan", "toolkit.data", "toolkit.core", "toolkit.env",
            "toolkit.run", "toolkit.verify", "toolkit.cli")
MODULE = re.compile(r"^toolkit\.(inspect|plan|data|core|env|run|verify|cli)(\.[a-z_][a-z0-9_]*)*$")
# each package's integration tests, run (``--integration``) on its sampled mutants the unit
# tests let survive: small real builds that reach the package's code in a subprocess
AREA_TESTS: dict[str, tuple[str, ...]] = {
    "toolkit.core": ("tests/integration/test_secrets.py", "tests/integration/test_faults.py"),
    "toolkit.env": ("tests/integration/test_provision.py", "tests/integration/test_fresh_runner.py"),
    "toolkit.inspect": ("tests/integration/test_checks_glibc_tree.py",),
    "toolkit.data": ("tests/integration/test_data_sessions.py",),
    "toolkit.plan": ("tests/integration/test_flag_paths.py", "tests/integration/test_provision.py"),
    "toolkit.run": ("tests/integration/test_locks.py", "tests/integration/test_build_safety.py",
                    "tests/integration/test_faults.py"),
    "toolkit.verify": ("tests/integration/test_repro_failures.py", "tests/integration/test_smoke_demo.py"),
    "toolkit.cli": ("tests/integration/test_nox_failed_build.py", "tests/integration/test_flag_paths.py"),
}
# mutmut 3's exit codes (mutmut/stats.py): a test failed (1), pytest's internal error (3), a
# timeout (36, SIGXCPU 24/-24/152, 255), a crash (-11, -9) or the type checker (37) kill it
SURVIVED, NO_TESTS = (0,), (5, 33)
KILLED = (1, 3, 36, 24, -24, 152, 255, -11, -9, 37)
NOT_RUN = (None, 2, 34)  # not checked yet, interrupted, skipped
EQUIVALENTS = Path("docs/equivalent-mutants.md")  # mutants no input can tell apart, with why
Z95 = 1.959963984540054  # the 0.975 quantile of the standard normal distribution

GENERATE = ("from pathlib import Path; import sys; "
            "from mutmut.__main__ import create_mutants; "
            "from mutmut.utils.file_utils import copy_src_dir, copy_also_copy_files; "
            "Path('mutants').mkdir(exist_ok=True); copy_src_dir(); copy_also_copy_files(); "
            "create_mutants(int(sys.argv[1]))")


@dataclass
class Score:
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    no_tests: list[str] = field(default_factory=list)
    suspicious: list[str] = field(default_factory=list)  # an exit code mutmut does not name
    not_run: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)  # documented: left out of the score
    wrongly_equivalent: list[str] = field(default_factory=list)  # documented, yet a test kills it

    @property
    def total(self) -> int:
        return self.killed + len(self.survived) + len(self.no_tests) + len(self.suspicious)

    def add(self, key: str, code: int | None, equivalent: bool = False) -> None:
        if code in NOT_RUN:
            self.not_run.append(key)
        elif code in SURVIVED + NO_TESTS and equivalent:
            self.equivalent.append(key)
        elif code in SURVIVED:
            self.survived.append(key)
        elif code in NO_TESTS:
            self.no_tests.append(key)
        elif code in KILLED:
            self.killed += 1
            if equivalent:
                self.wrongly_equivalent.append(key)
        else:
            self.suspicious.append(key)

    def line(self, label: str = "mutants", drawn_from: int | None = None) -> str:
        """One line: killed of total, the percentage, and for a sample the sample size, the
        number of mutants it was drawn from and the 95% Wilson interval."""
        pct = 100.0 * self.killed / self.total if self.total else 0.0
        head = f"{label}: {self.killed} killed of {self.total} ({pct:.1f}%)"
        if drawn_from is not None and self.total:
            lo, hi = wilson(self.killed, self.total)
            head += (f" in a sample of {self.total} of {drawn_from} mutants, "
                     f"95% interval {100 * lo:.1f}-{100 * hi:.1f}%")
        tail = f", {len(self.survived)} survived, {len(self.no_tests)} not covered by any test"
        if self.equivalent:
            tail += f", {len(self.equivalent)} equivalent (left out)"
        if self.suspicious:
            tail += f", {len(self.suspicious)} suspicious"
        if self.not_run:
            tail += f", {len(self.not_run)} not run"
        return head + tail


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials (Wilson 1927; Newcombe 1998,
    method 3): ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``."""
    if not 0 <= k <= n or n == 0:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    p, z2 = k / n, z * z
    centre = p + z2 / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    den = 1 + z2 / n
    return max(0.0, (centre - half) / den), min(1.0, (centre + half) / den)


def draw(names: Iterable[str], size: int, seed: int) -> list[str]:
    """``size`` of ``names`` drawn uniformly without replacement (all of them when there are no
    more): the ``size`` whose SHA-256 of ``seed`` and name is smallest (bottom-k sampling; the
    hash ranks the names in a random order). It depends on the set of names and the seed, not
    on their order. Every mutant keeps its rank when the sources change, so an edit changes
    the sample only by the mutants it adds or removes (and, at the margin, as many that they
    push out or let in)."""
    def rank(name: str) -> bytes:
        return hashlib.sha256(f"{seed}\0{name}".encode()).digest()

    return sorted(sorted(set(names), key=rank)[:size])


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nox -s mutants --", exit_on_error=False,
                                description="mutation testing of every package of toolkit/ (mutmut)")
    p.add_argument("modules", nargs="*",
                   help="packages or modules, e.g. toolkit.run toolkit.inspect.readers.policy "
                        "(default: every package)")
    p.add_argument("--score-only", action="store_true", help="report the last run's score, run nothing")
    p.add_argument("--max-children", type=int, default=None, help="parallel workers (mutmut's default: CPUs)")
    p.add_argument("--sample", type=int, default=None, metavar="N",
                   help="run N mutants drawn uniformly at random; the score gets a 95%% interval")
    p.add_argument("--seed", type=int, action="append", default=None,
                   help="the seed of --sample (default 0); given again, another sample, drawn "
                        "apart: one mutmut run runs them all, each is scored alone")
    p.add_argument("--unkilled", action="store_true",
                   help="with --sample: run only the drawn mutants no test has killed yet "
                        "(survived, not covered, not run, changed since): after adding tests")
    p.add_argument("--integration", action="store_true",
                   help="with --sample: then run each package's integration tests on the drawn "
                        "mutants the unit tests let survive (slow: real builds)")
    return p


def _inside(name: str, modules: Sequence[str]) -> bool:
    return any(name == m or name.startswith(m + ".") for m in modules)


def generated(root: Path, modules: Sequence[str] = PACKAGES) -> dict[str, dict[str, int | None]]:
    """Every generated mutant of ``modules`` in ``root/mutants``: module -> {name: exit code}
    (the module named by its file; a package's ``__init__`` by ``pkg.__init__``). Results of
    a module whose source file is gone are left out."""
    base = root / "mutants"
    out: dict[str, dict[str, int | None]] = {}
    for meta in sorted(base.glob("toolkit/**/*.py.meta")):
        rel = meta.relative_to(base).with_suffix("")
        name = ".".join(rel.with_suffix("").parts)
        if not _inside(name, modules) or not (root / rel).is_file():
            continue  # another module, or one whose source is gone (moved or deleted)
        try:
            codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key") or {}
        except (OSError, ValueError):
            continue
        out[name] = dict(codes)
    return out


_NAME = re.compile(r"`(toolkit\.[^`\s]+__mutmut_)(\d+)`|`_(\d+)`")


def equivalents(text: str) -> set[str]:
    """The mutants ``docs/equivalent-mutants.md`` lists as equivalent: in its "Equivalent
    mutants" section, every full name in backquotes (``toolkit.…__mutmut_N``) and every
    ``_N`` after one in the same list item (that function's mutant N). Names cited in a
    reason are written without the ``toolkit.`` prefix, so they do not count."""
    parts = re.split(r"^## Equivalent mutants[^\n]*$", text, maxsplit=1, flags=re.M)
    if len(parts) < 2:
        return set()
    body = re.split(r"^## ", parts[1], maxsplit=1, flags=re.M)[0]
    out: set[str] = set()
    for item in re.split(r"\n(?=- )", body):
        prefix = None
        for m in _NAME.finditer(item):
            if m.group(1):
                prefix = m.group(1)
                out.add(prefix + m.group(2))
            elif prefix is not None:
                out.add(prefix + m.group(3))
    return out


def score(root: Path, modules: Sequence[str] = PACKAGES, only: Iterable[str] | None = None,
          equivalent: frozenset[str] | set[str] = frozenset()) -> Score:
    """The score of the mutants of ``modules`` in ``mutants/`` (of those in ``only``, if given);
    the ``equivalent`` ones that no test kills are left out of it (the usual mutation score:
    killed over the mutants that can be killed)."""
    keep = set(only) if only is not None else None
    out = Score()
    for codes in generated(root, modules).values():
        for key, code in codes.items():
            if keep is None or key in keep:
                out.add(key, code, key in equivalent)
    return out


def refresh_data(root: Path) -> list[Path]:
    """Copy into ``mutants/`` the files of ``toolkit/`` that are not Python and changed since
    mutmut copied them: mutmut copies a source tree's other files once and never again, so
    tests would read stale data (a TOML file edited since). The files copied are returned."""
    import shutil

    base = root / "mutants"
    if not base.is_dir():
        return []
    out = []
    for src in sorted((root / "toolkit").rglob("*")):
        if src.suffix == ".py" or "__pycache__" in src.parts or not src.is_file():
            continue
        dst = base / src.relative_to(root)
        if dst.is_file() and dst.read_bytes() == src.read_bytes():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        out.append(dst)
    return out


def _validate(args: argparse.Namespace) -> list[str]:
    for mod in args.modules:
        if not MODULE.match(mod):
            raise UsageError(f"bad module {mod!r}: give a dotted name under "
                             f"{', '.join(PACKAGES)}, e.g. toolkit.inspect.readers.policy")
    if args.sample is not None and args.sample < 1:
        raise UsageError(f"bad --sample {args.sample}: give a number of mutants of at least 1")
    if args.unkilled and args.sample is None:
        raise UsageError("--unkilled goes with --sample N (the drawn mutants not killed yet); "
                         "without a sample, a plain run already skips the mutants decided before")
    if args.integration and args.sample is None:
        raise UsageError("--integration goes with --sample N (each drawn survivor runs real builds)")
    if args.max_children is not None and args.max_children < 1:
        raise UsageError(f"bad --max-children {args.max_children}: give at least 1")
    return list(args.modules) or list(PACKAGES)


def _body(session: Any, posargs: Sequence[str]) -> None:
    args = parser().parse_args(list(posargs))
    modules = _validate(args)
    root = Path.cwd()
    exe = Path(sys.executable).with_name("mutmut")
    children = args.max_children
    extra = [f"--max-children={children}"] if children else []
    if not args.score_only and not exe.exists():
        raise EnvironmentProblem("mutmut is not installed", hint="pip install -e '.[dev]'")
    if not args.score_only:
        for path in refresh_data(root):
            session.log(f"refreshed {path.relative_to(root)}")
    if args.sample is None:
        if not args.score_only:
            session.run(str(exe), "run", *extra, *[f"{m}.*" for m in modules])
        _report(session, root, modules, None)
        return
    samples = _run_sample(session, args, root, modules, [str(exe), "run", *extra])
    for seed, chosen in samples.items():
        if len(samples) > 1:
            session.log(f"sample of seed {seed}:")
        _report(session, root, modules, chosen)


def _run_sample(session: Any, args: argparse.Namespace, root: Path, modules: list[str],
                mutmut_run: list[str]) -> dict[int, list[str]]:
    """--sample N: for each seed, draw N of the modules' mutants, then run the drawn mutants of
    every seed in one mutmut run (with --unkilled, those no test killed yet; with
    --score-only, none); each seed's drawn mutants."""
    if not args.score_only:
        session.run(sys.executable, "-c", GENERATE, str(args.max_children or 2))
    codes = {k: c for cs in generated(root, modules).values() for k, c in cs.items()}
    names = list(codes)
    if not names:
        raise UsageError(f"no mutants of {', '.join(modules)} in mutants/: "
                         "run without --score-only first")
    samples = _draw_samples(session, names, args.sample, args.seed or [0])
    drawn = sorted({k for chosen in samples.values() for k in chosen})
    todo = _to_run(session, drawn, codes, unkilled=args.unkilled, samples=len(samples))
    if not args.score_only and todo:
        session.run(*mutmut_run, *todo)
    if args.integration and not args.score_only:
        _integration_pass(session, root, modules, drawn)
    return samples


def _draw_samples(session: Any, names: list[str], size: int, seeds: Sequence[int]) -> dict[int, list[str]]:
    """One sample of ``size`` per seed (a seed given twice: one sample), each logged."""
    samples: dict[int, list[str]] = {}
    for seed in seeds:
        samples[seed] = draw(names, size, seed)
        session.log(f"sample: {len(samples[seed])} of {len(names)} mutants, seed {seed}")
    return samples


def _to_run(session: Any, drawn: list[str], codes: dict[str, int | None], *, unkilled: bool,
            samples: int) -> list[str]:
    """The drawn mutants to run: all, or with ``unkilled`` those no test has killed yet."""
    if unkilled:  # after new tests: what a test killed stays killed
        todo = [k for k in drawn if codes.get(k) not in KILLED]
        session.log(f"running the {len(todo)} of them no test has killed yet")
        return todo
    if samples > 1:
        session.log(f"running the {len(drawn)} mutants the samples drew, in one run")
    return drawn


def area_tests(mutant: str) -> tuple[str, ...]:
    """The integration test files of the package ``mutant`` (a mutmut name) belongs to."""
    for package, files in AREA_TESTS.items():
        if _inside(mutant, [package]):
            return files
    return ()


def _integration_pass(session: Any, root: Path, modules: Sequence[str], chosen: list[str]) -> None:
    """Step 2 of the selection: each drawn mutant the unit tests let survive (or none covered)
    runs its package's integration tests in ``mutants/`` with ``MUTANT_UNDER_TEST`` set (the
    subprocesses they start inherit it); a failing test records it killed (exit code 1)."""
    metas = {}
    for meta in sorted((root / "mutants").glob("toolkit/**/*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for key, code in (data.get("exit_code_by_key") or {}).items():
            if key in chosen and code in SURVIVED + NO_TESTS:
                metas[key] = meta
    for key, meta in sorted(metas.items()):
        files = area_tests(key)
        if not files:
            continue
        session.log(f"integration tests on {key}: {' '.join(files)}")
        import os

        from toolkit.core import proc

        res = proc.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *files],
                       cwd=root / "mutants", env={**os.environ, "MUTANT_UNDER_TEST": key},
                       timeout=3600, check=False)
        session.log(f"  {'killed' if res.returncode == 1 else 'survived'} (pytest exit {res.returncode})")
        if res.returncode != 1:  # 0 passed; 2-5 an interrupted or broken run decides nothing
            continue
        data = json.loads(meta.read_text(encoding="utf-8"))
        data["exit_code_by_key"][key] = 1
        meta.write_text(json.dumps(data), encoding="utf-8")


def _report(session: Any, root: Path, modules: Sequence[str], chosen: list[str] | None) -> None:
    docs = root / EQUIVALENTS
    equivalent = equivalents(docs.read_text(encoding="utf-8")) if docs.is_file() else set()
    total = score(root, modules, chosen, equivalent)
    listed = ((total.survived, "survived"), (total.no_tests, "no test covers"),
              (total.suspicious, "suspicious"),
              (total.wrongly_equivalent, f"killed, yet listed as equivalent in {EQUIVALENTS}"))
    for keys, says in listed:  # each list's mutants, under what the score says of them
        for key in keys:
            session.log(f"{says}: {key}")
    parts = [p for p in PACKAGES if any(_inside(m, [p]) for m in modules)]
    for label in [*parts, "overall"] if len(parts) > 1 else parts:
        line = _score_line(root, label, modules, chosen, equivalent, alone=len(parts) == 1)
        if line:
            session.log(line)


def _score_line(root: Path, label: str, modules: Sequence[str], chosen: list[str] | None,
                equivalent: set[str], *, alone: bool) -> str | None:
    """The score line of one package (or ``overall``); none for a package, among others,
    none of whose mutants was generated, drawn or run."""
    scope = modules if label == "overall" else [m for m in modules if _inside(m, [label])]
    s = score(root, scope, chosen, equivalent)
    if not alone and label != "overall" and not (s.total or s.not_run or s.equivalent):
        return None
    drawn = None
    if chosen is not None:
        drawn = sum(len(c) for c in generated(root, scope).values())
    return s.line(label if label == "overall" else " ".join(scope), drawn)


def mutants(session: Any, posargs: Sequence[str]) -> None:
    """Run mutmut over every package of toolkit/ (or the modules given, or a sample) and
    print the score per package, overall, and the survivors."""
    from toolkit.cli.sessions import _guard

    _guard(session, lambda: _body(session, posargs), fault_code=4)
