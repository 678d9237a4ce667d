"""The git that ``toolkit.env.project.source_changes`` runs in a contributor's checkout gets
the caller's environment plus ``GIT_TERMINAL_PROMPT=0`` (git(1): never ask on the terminal,
fail instead) and ``GIT_OPTIONAL_LOCKS=0`` (git(1): take no optional lock, so a looking git
never competes with the contributor's own git for ``index.lock``).

What git itself passes on is the truth: git runs the checkout's ``core.fsmonitor`` hook
(git-config(1)) with its own environment while it lists the changes, and the hook (a real
shell script) writes down what it was given."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from toolkit.env.project import source_changes


def sh_git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS"):
        monkeypatch.delenv(var, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    sh_git("init", "-q", str(repo))
    (repo / "setup.py").write_text("v = 1\n")
    sh_git("-C", str(repo), "add", "setup.py")
    sh_git("-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
           "commit", "-q", "-m", "one")
    hook = tmp_path / "fsmonitor.sh"
    seen = tmp_path / "seen"
    hook.write_text("#!/bin/sh\n"
                    f"env | grep -E '^(GIT_TERMINAL_PROMPT|GIT_OPTIONAL_LOCKS|PROBE_VAR)=' "
                    f">> {seen}\nexit 1\n")  # exit 1: no answer, git looks at every file
    hook.chmod(0o755)
    sh_git("-C", str(repo), "config", "core.fsmonitor", str(hook))
    return repo


def test_git_listing_changes_gets_no_prompts_no_optional_locks_and_the_callers_environment(
        checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_VAR", "from-the-caller")
    (checkout / "setup.py").write_text("v = 2\n")
    changes = source_changes(checkout)
    assert changes is not None and changes.files == ("setup.py",)
    seen = (checkout.parent / "seen").read_text().splitlines()
    assert seen, "git ran no fsmonitor hook"
    # every git the function ran passed all three on (the hook runs once per git)
    assert set(seen) == {"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
                         "PROBE_VAR=from-the-caller"}
    assert seen.count("GIT_TERMINAL_PROMPT=0") == seen.count("PROBE_VAR=from-the-caller")
    assert seen.count("GIT_OPTIONAL_LOCKS=0") == seen.count("PROBE_VAR=from-the-caller")


def test_a_clean_checkout_is_looked_at_the_same_way(checkout: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "1")  # the caller's own setting is overridden
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "1")
    assert source_changes(checkout) is None
    seen = set((checkout.parent / "seen").read_text().splitlines())
    assert seen == {"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0"}
