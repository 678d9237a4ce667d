"""The rules of ``toolkit upstream`` and its one entry point (toolkit/verify/upstream/rules.py):
which repositories it reads (README: ROCm/TheRock, ROCm/apex, pytorch/FBGEMM,
pytorch/test-infra), in which order the rules run, from a folder or the cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.upstream_fakes import World
from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.verify.upstream import rules
from toolkit.verify.upstream.model import Context, Fact


def test_the_rules_and_the_repositories_they_read() -> None:
    assert [(r.name, r.slugs) for r in rules.RULES] == [
        ("pytorch", ("pytorch/test-infra",)), ("apex", ("ROCm/apex", "ROCm/TheRock")),
        ("fbgemm_gpu", ("pytorch/FBGEMM",)), ("therock", ("ROCm/TheRock",)),
        ("known_failures", ())]
    # each once, in the order the rules first name them
    assert rules.slugs() == ["pytorch/test-infra", "ROCm/apex", "ROCm/TheRock", "pytorch/FBGEMM"]


def _spec(name: str, slugs: tuple[str, ...], seen: list[tuple[str, list[str]]]) -> rules.RuleSpec:
    def check(ctx: Context) -> list[Fact]:
        seen.append((name, sorted(ctx.repos)))
        return [Fact("note", name, "-", "-", "-")]
    return rules.RuleSpec(name, slugs, check)


def test_run_reads_the_folder_and_runs_each_rule_in_order(world: World) -> None:
    seen: list[tuple[str, list[str]]] = []
    specs = (_spec("b", ("ROCm/apex",), seen), _spec("a", ("pytorch/FBGEMM", "ROCm/apex"), seen))
    facts = rules.run(world.data, folder=world.root, cache=world.root / "unused", rules=specs)
    assert [f.what for f in facts] == ["b", "a"]
    assert seen == [("b", ["ROCm/apex", "pytorch/FBGEMM"]), ("a", ["ROCm/apex", "pytorch/FBGEMM"])]
    assert not (world.root / "unused").exists()


def test_run_without_a_folder_uses_the_cache(world: World, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", str(world.root))
    seen: list[tuple[str, list[str]]] = []
    rules.run(world.data, folder=None, cache=tmp_path / "c", rules=(_spec("x", ("ROCm/apex",), seen),))
    assert seen == [("x", ["ROCm/apex"])]
    assert (tmp_path / "c" / "upstream" / "ROCm+apex.git" / "HEAD").is_file()


def test_run_refuses_a_bad_folder_and_needs_git(world: World, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError):
        rules.run(world.data, folder=tmp_path / "none", cache=tmp_path)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(EnvironmentProblem):
        rules.run(world.data, folder=world.root, cache=tmp_path)


def test_the_rules_judge_the_data_folder_they_are_given(world: World,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder passed to ``run`` is the matrix the rules see, with no TOOLKIT_DATA_DIR set
    (the hand-made folder's apex releases are 1.0.0 and 1.1.0, on ROCm 6.0, 6.1 and 7.0)."""
    monkeypatch.delenv("TOOLKIT_DATA_DIR", raising=False)
    seen: list[tuple[list[str], list[str]]] = []

    def check(ctx: Context) -> list[Fact]:
        seen.append(([v.version for v in ctx.matrix.packages["apex"].versions],
                     sorted(ctx.matrix.rocm)))
        return []
    rules.run(world.data, folder=world.root, cache=world.root / "unused",
              rules=(rules.RuleSpec("x", ("ROCm/apex",), check),))
    assert seen == [(["1.0.0", "1.1.0"], ["6.0", "6.1", "7.0"])]
