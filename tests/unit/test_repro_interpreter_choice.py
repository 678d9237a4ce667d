"""Which interpreter a repro plans with (``repro._interpreter``): only a recorded plan whose
``check-env`` step named an absolute interpreter (the demo's) asks for one here: this
toolkit's own Python when it is that version, else the one discovery finds; otherwise the
recorded name stands (None)."""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

import pytest

from toolkit.verify import repro

HERE = f"{sys.version_info.major}.{sys.version_info.minor}"


def _data(*steps: dict[str, object]) -> dict[str, object]:
    return {"plan": {"steps": list(steps)}}


def test_an_absolute_recorded_interpreter_of_this_version_is_this_python() -> None:
    data = _data({"name": "create-env", "action": {"interpreter": "/ci/python"}},
                 {"name": "check-env", "action": {"interpreter": f"/ci/bin/python{HERE}"}})
    assert repro._interpreter(data, HERE) == sys.executable


def test_a_name_no_check_env_or_no_action_keeps_the_recorded_name() -> None:
    assert repro._interpreter(_data({"name": "check-env", "action": {"interpreter": "python3"}}),
                              HERE) is None
    assert repro._interpreter(_data({"name": "create-env", "action": {"interpreter": "/p"}}),
                              HERE) is None
    assert repro._interpreter(_data({"name": "check-env", "action": None}), HERE) is None
    assert repro._interpreter(_data({"name": "check-env"}), HERE) is None


def test_another_version_is_found_by_discovery_else_none() -> None:
    data = _data({"name": "check-env", "action": {"interpreter": "/ci/bin/python3.1"}})
    assert repro._interpreter(data, "3.1") is None  # no Python 3.1 here: said by differences


def test_a_free_threaded_toolkit_python_is_not_reused_discovery_finds_the_one_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded "3.X" is the GIL build: a free-threaded toolkit interpreter of that version
    (``sysconfig.get_config_var("Py_GIL_DISABLED")`` true, the variable Python documents for
    free-threaded builds) is not it, so discovery picks one from PATH. The free-threaded build
    is played by patching ``sysconfig.get_config_var`` in this process (the discovered
    candidate is probed in its own process, unpatched); PATH holds only a python3.X link."""
    real = sysconfig.get_config_var

    def free_threaded(name: str) -> object:
        return 1 if name == "Py_GIL_DISABLED" else real(name)
    monkeypatch.setattr(sysconfig, "get_config_var", free_threaded)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / f"python{HERE}").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bin_dir))
    data = _data({"name": "check-env", "action": {"interpreter": f"/ci/bin/python{HERE}"}})
    assert repro._interpreter(data, HERE) == str(bin_dir / f"python{HERE}")
