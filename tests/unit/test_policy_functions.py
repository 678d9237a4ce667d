"""Where the toolkit finds auditwheel's policy file, pinned: the file auditwheel's installed
distribution lists (``importlib.metadata``, not the toolkit), found without importing
auditwheel (its import is slow), and a clear error when auditwheel is not installed."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem
from toolkit.inspect.readers import policy


def _listed() -> str:
    files = importlib.metadata.files("auditwheel") or []
    (f,) = [f for f in files if f.name == "manylinux-policy.json"]
    return str(Path(f.locate()).resolve())


def test_the_policy_file_is_auditwheels_own_found_without_importing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m == "auditwheel" or m.startswith("auditwheel.")]:
        monkeypatch.delitem(sys.modules, name)
    path = policy._policy_path()
    assert str(path.resolve()) == _listed()
    assert not any(m == "auditwheel" or m.startswith("auditwheel.") for m in sys.modules)


def test_without_auditwheel_the_policies_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "POLICY_PACKAGE", "no_such_package_here.policy")
    with pytest.raises(ModuleNotFoundError, match="^No module named 'no_such_package_here'$"):
        policy._policy_path()
    policy._auditwheel_policies.cache_clear()
    try:
        with pytest.raises(EnvironmentProblem) as err:
            policy._auditwheel_policies()
        assert str(err.value).startswith("cannot read auditwheel's manylinux-policy.json (No module named")
    finally:
        policy._auditwheel_policies.cache_clear()
