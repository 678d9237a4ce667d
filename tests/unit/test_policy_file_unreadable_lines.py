"""A manylinux policy file that cannot be read, and auditwheel's that cannot be found, as the
whole line a user reads: the path and the operating system's reason (a malformed data file,
exit 3), or what is missing and the next step, ``pip install auditwheel`` (an environment
problem, exit 4: README "Exit codes")."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import DataError, EnvironmentProblem
from toolkit.inspect.readers import policy
from toolkit.inspect.readers.policy import read_policy_file


def test_a_policy_file_that_cannot_be_read(tmp_path: Path) -> None:
    gone = tmp_path / "none.json"
    with pytest.raises(DataError) as err:
        read_policy_file(gone)
    assert err.value.line == (f"{gone}: cannot read the manylinux policy file ([Errno 2] No such file or "
                              f"directory: '{gone}')")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"name": "\xff"}]')
    with pytest.raises(DataError) as err:
        read_policy_file(latin)
    assert err.value.line == (f"{latin}: cannot read the manylinux policy file ('utf-8' codec can't "
                              "decode byte 0xff in position 11: invalid start byte)")
    assert err.value.exit_code == 3


def test_without_auditwheel_the_next_step_is_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "POLICY_PACKAGE", "no_such_package_here.policy")
    policy._auditwheel_policies.cache_clear()
    try:
        with pytest.raises(EnvironmentProblem) as err:
            policy._auditwheel_policies()
    finally:
        policy._auditwheel_policies.cache_clear()
    assert err.value.line == ("cannot read auditwheel's manylinux-policy.json (No module named "
                              "'no_such_package_here') (next: pip install auditwheel)")
    assert err.value.exit_code == 4
