"""How each matrix session is declared to nox (README: ``nox -s build-3.12-rocm6.4``,
``smoke-...``, ``lock-...``; ``nox -t apex`` / ``-t rocm7.0`` select by tag; none runs by
default, and none creates a virtualenv: the toolkit makes each build's environment), and
that the session body calls the toolkit's session of its kind with the pair and posargs."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import nox.registry
import pytest

from toolkit.cli import noxsupport, sessions


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    own: dict[str, Any] = {}
    monkeypatch.setattr(nox.registry, "_REGISTRY", own)
    yield own


@pytest.mark.parametrize("kind", ["build", "smoke", "lock"])
def test_a_pair_session_its_name_tags_and_no_venv(registry: dict[str, Any], kind: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    noxsupport._register(kind, "3.12", "7.0", ["apex", "rocm7.0", "py3.12", "python3.12"])
    func = registry[f"{kind}-3.12-rocm7.0"]
    assert func.tags == [kind, "apex", "rocm7.0", "py3.12", "python3.12"]
    assert func.python is False and func.default is False
    assert func.__doc__ == noxsupport.DOCS[kind].format(python="3.12", rocm="7.0")
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(sessions, kind, lambda *a: calls.append(a))
    session = SimpleNamespace(posargs=["--dry-run"])
    func(session)
    assert calls == [(session, "3.12", "7.0", ["--dry-run"])]


def test_the_kinds_docs_name_the_pair() -> None:
    assert noxsupport.DOCS["build"].format(python="3.12", rocm="7.0") == (
        "Build, name, check and smoke-test the wheels of Python 3.12 x ROCm 7.0")
    assert noxsupport.DOCS["smoke"].format(python="3.12", rocm="7.0") == (
        "Run the smoke tests against the built wheels of Python 3.12 x ROCm 7.0")
    assert noxsupport.DOCS["lock"].format(python="3.12", rocm="7.0") == (
        "Write locks/3.12-rocm7.0.txt (pip-compile --generate-hashes)")
    assert noxsupport.KINDS == ("build", "smoke", "lock")
