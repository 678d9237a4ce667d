"""When the ROCm SDK index cannot be reached and this machine has a ROCm install, the hint
offers ``--rocm-from system`` naming that install's version and folder, and, when its
major.minor is not the build's, that ``--allow-rocm-mismatch`` is needed too (README:
"another ROCm release" is refused unless allowed). The install is a folder made here, its
version in ``.info/version`` as ROCm's installers write it; tool output by hand."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.core.errors import SourceUnreachable
from toolkit.run.manifest import tool_versions
from toolkit.run.provisioning import SDK_INDEX, probe_index


def _rocm(root: Path, version: str) -> Path:
    return rocm_at(root, f"{version}-120")


@pytest.mark.parametrize(("installed", "want", "tail"), [
    ("6.4.1", "7.0", ", not 7.0: add --allow-rocm-mismatch)"),
    ("7.0.2", "7.0", ")"),
])
def test_the_hint_names_the_install_and_a_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   installed: str, want: str, tail: str) -> None:
    root = _rocm(tmp_path / "rocm", installed)
    monkeypatch.setenv("ROCM_PATH", str(root))
    with pytest.raises(SourceUnreachable) as exc:
        probe_index(str(tmp_path / "no-index"), None, SDK_INDEX, sdk=True, want=want)
    assert exc.value.hint is not None
    assert exc.value.hint.endswith(f", or --rocm-from system (ROCm {installed} is at {root}{tail}")


def test_a_tool_that_prints_its_version_and_fails_still_names_it(tmp_path: Path) -> None:
    """Some hipcc builds print their version, then fail on what they cannot find (no GPU,
    no device library): the version line is what the manifest records."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    hipcc = bin_dir / "hipcc"
    hipcc.write_text("#!/bin/sh\necho 'HIP version: 6.4.43484-123'\necho 'no device found' >&2\nexit 1\n")
    hipcc.chmod(hipcc.stat().st_mode | stat.S_IXUSR)
    got = tool_versions(sys.executable, str(bin_dir))
    assert got["hipcc"] == "HIP version: 6.4.43484-123"
