"""The shape of the package: one-way layers, no cycles, small modules, a library that never
prints. Also run by `nox -s lint`."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "toolkit"
MAX_LINES = 500


def _modules() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "examples" not in p.relative_to(PACKAGE).parts]


def test_no_module_over_500_lines() -> None:
    big = {str(p.relative_to(ROOT)): n for p in _modules()
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert big == {}


def test_the_library_never_prints() -> None:
    """print() appears only in the entry layer (toolkit/cli) and in code run as a child."""
    offenders = []
    for path in _modules():
        if "cli" in path.relative_to(PACKAGE).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "print"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_no_bare_subprocess_outside_the_runner() -> None:
    """Every command goes through toolkit.core.proc (timeout, one error type)."""
    offenders = []
    for path in _modules():
        if path == PACKAGE / "core" / "proc.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""])
                if "subprocess" in names:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_import_contracts_hold() -> None:
    """Layers import one way and nothing imports in a cycle (import-linter, pyproject.toml)."""
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        found = shutil.which("lint-imports")
        if found is None:
            pytest.fail("import-linter is not installed (pip install -e '.[dev]')")
        exe = Path(found)
    proc = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert len(declared) >= 3, "the layers, the inspect layers and the no-cycles contracts"
    assert f"Contracts: {len(declared)} kept, 0 broken." in proc.stdout


# ----------------------------------------------------------------------------- function limits
MAX_COMPLEXITY = 15  # cyclomatic complexity as radon counts it (branches, boolean operators, ...)
MAX_FUNCTION_LINES = 60  # from the `def` line to the function's last line
LIMITED = ("toolkit", "smoke_tests", "noxfile.py", "tasks.py")


def _qualified(tree: ast.AST) -> dict[int, str]:
    """The line of each function's `def` -> its dotted name (Class.method, outer.inner)."""
    names: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    names[child.lineno] = name
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return names


def over_limits(path: Path, module: str) -> list[str]:
    """``module:function (why)`` for each function of ``path`` over the complexity or length limit."""
    from radon.complexity import cc_visit
    from radon.visitors import Function

    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    names = _qualified(tree)
    found: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.setdefault(names[node.lineno], []).append(f"{length} lines")
    blocks: list[object] = list(cc_visit(source))
    while blocks:
        block = blocks.pop()
        if isinstance(block, Function):
            blocks.extend(block.closures)
            if block.complexity > MAX_COMPLEXITY:
                found.setdefault(names[block.lineno], []).append(f"complexity {block.complexity}")
    return sorted(f"{module}:{name} ({', '.join(why)})" for name, why in found.items())


def _limited_files() -> dict[str, Path]:
    # LIMITS_ROOT: another tree to check (test_limits_fail_on_a_planted_violation)
    root = Path(os.environ.get("LIMITS_ROOT") or ROOT)
    files = {}
    for entry in LIMITED:
        paths = [root / entry] if entry.endswith(".py") else sorted((root / entry).rglob("*.py"))
        for p in paths:
            if p.exists() and "examples" not in p.relative_to(root).parts:
                files[".".join(p.relative_to(root).with_suffix("").parts)] = p
    return files


def test_no_function_over_the_complexity_or_length_limit() -> None:
    over = [v for m, p in _limited_files().items() for v in over_limits(p, m)]
    assert over == [], f"over {MAX_COMPLEXITY} complexity or {MAX_FUNCTION_LINES} lines:\n" + "\n".join(over)


def _planted() -> str:
    """Functions at and over the limits; complexities counted by hand (1 + one per branch)."""
    ifs = lambda n: "".join(f"    if x == {i}:\n        return {i}\n" for i in range(n))  # noqa: E731
    body = lambda n: "".join(f"    y = {i}\n" for i in range(n))  # noqa: E731
    ands = " and ".join(f"x{i}" for i in range(16))  # 15 boolean operators: 1 + 15 = 16
    return (f"def at_complexity(x):\n{ifs(14)}    return -1\n\n\n"           # 1 + 14 = 15
            f"def over_complexity(x):\n{ifs(15)}    return -1\n\n\n"         # 1 + 15 = 16
            f"def over_by_operators({', '.join(f'x{i}' for i in range(16))}):\n    return {ands}\n\n\n"
            f"class Holder:\n    def method(self, x):\n"
            + "".join(f"        if x == {i}:\n            return {i}\n" for i in range(15))
            + "        return -1\n\n\n"
            f"def outer(x):\n    def inner(x):\n{ifs(15).replace('    ', '        ')}"
            f"        return -1\n    return inner(x)\n\n\n"
            f"def at_length():\n{body(58)}    return y\n\n\n"                 # 1 + 58 + 1 = 60 lines
            f"def over_length():\n{body(59)}    return y\n")                   # 61 lines


def test_limits_fail_on_planted_violations(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(_planted(), encoding="utf-8")
    assert over_limits(planted, "planted") == [
        "planted:Holder.method (complexity 16)",
        "planted:outer.inner (complexity 16)",
        "planted:over_by_operators (complexity 16)",
        "planted:over_complexity (complexity 16)",
        "planted:over_length (61 lines)",
    ]


def test_lint_fails_on_a_planted_violation(tmp_path: Path) -> None:
    """The test `nox -s lint` runs fails, naming the function, when a module breaks a limit.
    The tree it checks holds the planted module alone: the real package passes the same test
    (test_no_function_over_the_complexity_or_length_limit), and measuring it again costs 3 s."""
    (tmp_path / "toolkit" / "core").mkdir(parents=True)
    (tmp_path / "toolkit" / "core" / "planted.py").write_text(_planted(), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         f"{Path(__file__)}::test_no_function_over_the_complexity_or_length_limit"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "LIMITS_ROOT": str(tmp_path)})
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "toolkit.core.planted:over_length (61 lines)" in proc.stdout
    assert "toolkit.core.planted:over_complexity (complexity 16)" in proc.stdout


def test_a_cycle_through_type_checking_imports_breaks_the_contracts(tmp_path: Path) -> None:
    """`lint-imports` counts imports under ``if TYPE_CHECKING:``: one closing a cycle
    (data.gpus -> data.matrix, which imports data.gpus) breaks the no-cycles contract."""
    shutil.copytree(PACKAGE, tmp_path / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    gpus = tmp_path / "toolkit" / "data" / "gpus.py"
    gpus.write_text(gpus.read_text(encoding="utf-8") + "\n\nfrom typing import TYPE_CHECKING\n\n"
                    "if TYPE_CHECKING:\n    from toolkit.data.matrix import Matrix\n", encoding="utf-8")
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    proc = subprocess.run([exe, "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "No cycles are allowed in toolkit.data." in proc.stdout
    assert ".gpus -> .matrix" in proc.stdout


# ------------------------------------------------------------------ package knowledge in recipes
def _package_names() -> frozenset[str]:
    """Every recipe's name (the registry) and every package's (the data): what code outside
    plan/recipes must not compare with."""
    from toolkit.data.matrix import DATA_DIR
    from toolkit.data.specs import RESERVED_FILES
    from toolkit.plan.recipes import REGISTRY

    # the shipped package files by name, not loaded: `nox -s lint` runs this with any data
    # (TOOLKIT_DATA_DIR may be broken on purpose), and the code is judged, not the data
    files = {p.stem for p in DATA_DIR.glob("*.toml") if p.name not in RESERVED_FILES}
    return frozenset(REGISTRY) | frozenset(files)


def _name_comparisons(source: str, names: frozenset[str]) -> list[int]:
    """Lines comparing a value with a recipe's or package's name (``recipe == "apex"``,
    ``name in ("apex", "fbgemm_gpu")``, ``!=``, ``not in``)."""
    def named(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(named(e) for e in node.elts)
        return False

    lines = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Compare)
                and any(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops)
                and any(named(side) for side in (node.left, *node.comparators))):
            lines.append(node.lineno)
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue) \
                and named(node.pattern.value):
            lines.append(node.pattern.lineno)
    return lines


def test_no_recipe_name_comparison_outside_the_recipes() -> None:
    """What a package needs is said by its recipe (plan/recipes/), found through the registry:
    no code elsewhere (nor the smoke suite) asks whether a build is apex's."""
    names = _package_names()
    files = [p for p in _modules() if p.relative_to(PACKAGE).parts[:2] != ("plan", "recipes")]
    files += sorted((ROOT / "smoke_tests").glob("*.py"))
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path in files
                 for line in _name_comparisons(path.read_text(encoding="utf-8"), names)]
    assert offenders == []


@pytest.mark.parametrize("planted", [
    'if data.get("recipe") == "sample":\n    pass\n',
    'ok = build.recipe != "apex"\n',
    'ok = package.name in ("apex", "fbgemm_gpu")\n',
    'ok = "fbgemm_gpu" not in {b.package.name for b in builds}\n',
    'match recipe:\n    case "apex":\n        pass\n',
])
def test_a_planted_recipe_name_comparison_is_found(planted: str) -> None:
    assert _name_comparisons(planted, _package_names()) != []


def test_comparisons_with_other_words_are_not_recipe_knowledge() -> None:
    assert _name_comparisons('ok = kind == "pip" or name in ("tbb", "rocm")\n',
                             _package_names()) == []


# Words that say when or how a test was written (a mutation-testing round, its survivors, a
# numbered seed, sample, session, round, issue or part), not what it tests.
HISTORY_WORDS = frozenset({"mutant", "mutants", "survivor", "survivors", "killed", "round", "rounds"})
# a history noun numbered (seed4, data2, session25, issue19, part8); a domain word with a digit
# (abi3, gfx90a, sha256, e2e) names what is tested
NUMBERED = re.compile(r"(seed|sample|session|round|issue|part|data|pass|batch|run|attempt|"
                      r"wave|phase|step|try)[0-9]+")


def _history_words(name: str) -> list[str]:
    """The words of a test file's name that name its history (``test_`` and ``.py`` dropped)."""
    words = name.removeprefix("test_").removesuffix(".py").lower().split("_")
    return [w for w in words if w in HISTORY_WORDS or NUMBERED.fullmatch(w)]


def _history_named(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("test_*.py") if _history_words(p.name))


def test_test_files_are_named_for_what_they_test() -> None:
    """A test file is named for the behaviour it pins, so a newcomer finds the tests of a
    behaviour by its name; a test found by a mutation round goes to that behaviour's file."""
    assert _history_named(ROOT / "tests") == []


@pytest.mark.parametrize(("name", "words"), [
    ("test_mutants_plan.py", ["mutants"]), ("test_inspect_survivors_messages.py", ["survivors"]),
    ("test_seed4_inspect.py", ["seed4"]), ("test_mutants_plan_data2.py", ["mutants", "data2"]),
    ("test_fresh_sample_survivors.py", ["survivors"]), ("test_session25_elf.py", ["session25"]),
    ("test_hash_seed_order.py", []), ("test_sample_recipe_plan.py", []), ("test_recipes_e2e.py", []),
    ("test_mutation_testing_session.py", []), ("test_abi3_builds.py", []),
    ("test_gfx90a_targets.py", []), ("test_issue31_kpack.py", ["issue31"]),
])
def test_history_words_in_a_test_file_name_are_found(name: str, words: list[str]) -> None:
    assert _history_words(name) == words


def test_a_planted_history_named_test_file_is_found(tmp_path: Path) -> None:
    (tmp_path / "unit").mkdir()
    for name in ("test_elf_functions.py", "conftest.py", "test_round2_policy.py"):
        (tmp_path / "unit" / name).write_text("")
    assert _history_named(tmp_path) == ["unit/test_round2_policy.py"]
