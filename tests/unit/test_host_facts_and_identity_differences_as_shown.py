"""What a manifest says of its host (``toolkit.run.manifest.host_facts``) and how two
identities' differences are shown (``toolkit.run.identity.identity_differences``).

The host's truths come from elsewhere than the toolkit: the OS's ``PRETTY_NAME`` through
Python's own os-release(5) reader (``platform.freedesktop_os_release``), glibc's version from
``confstr(_CS_GNU_LIBC_VERSION)``, the cores this process may run on, and GPUs from a KFD
topology written here (``TOOLKIT_KFD_ROOT``, ``gfx_target_version`` 90010 = gfx90a). A
difference names the key and both values; a value over 80 characters is shown as its first 77
and "...", written here by hand."""

from __future__ import annotations

import codecs
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.run.identity import identity_differences
from toolkit.run.manifest import host_facts


def test_the_host_facts_are_the_hosts_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node = tmp_path / "nodes" / "1"
    node.mkdir(parents=True)
    (node / "properties").write_text("gfx_target_version 90010\n")
    monkeypatch.setenv("TOOLKIT_KFD_ROOT", str(tmp_path / "nodes"))
    facts = host_facts()
    assert facts["os"] == platform.freedesktop_os_release()["PRETTY_NAME"]
    assert facts["machine"] == os.uname().machine
    assert facts["glibc"] == (os.confstr("CS_GNU_LIBC_VERSION") or "").split()[1]  # glibc 2.36
    assert facts["cores"] == len(os.sched_getaffinity(0))
    assert facts["mem_available_gib"] == round(facts["mem_available_gib"], 1) > 0
    assert facts["gpus"] == ["gfx90a"]


def _private_mounts() -> bool:
    """Can this process make a mount namespace of its own (``unshare -rm``)?"""
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True,
                              timeout=60).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not _private_mounts(), reason="no private mount namespace (unshare -rm)")
def test_an_os_name_outside_ascii_is_read_as_utf8_in_any_locale(tmp_path: Path) -> None:
    """os-release(5): "All strings should be in UTF-8 encoding". A host whose PRETTY_NAME is
    not ASCII, read by a toolkit running in the C locale with Python's UTF-8 mode off (its
    default text encoding is then ASCII), still names its OS. The file is a real
    /etc/os-release in a mount namespace of the child's own (``unshare -rm``, a bind mount
    over it), so the host's file is untouched."""
    name = "Débian GNU/Linux 12 (bookworm) ✓"
    release = tmp_path / "os-release"
    release.write_text(f'NAME="Débian"\nPRETTY_NAME="{name}"\nID=debian\n', encoding="utf-8")
    (tmp_path / "nodes").mkdir()
    code = ("import json, locale; from toolkit.run.manifest import host_facts; "
            "print(json.dumps([locale.getpreferredencoding(False), host_facts()['os']]))")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C",
           "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "TOOLKIT_KFD_ROOT": str(tmp_path / "nodes"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", 'mount --bind "$1" /etc/os-release && exec "$2" -c "$3"',
         "sh", str(release), sys.executable, code],
        capture_output=True, text=True, encoding="utf-8", env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    encoding, os_name = json.loads(done.stdout)
    assert codecs.lookup(encoding).name == "ascii"  # the locale the file is read under
    assert os_name == name


def test_each_differing_key_names_both_values_and_long_ones_are_cut() -> None:
    long_recorded = "r" * 81
    exactly_80 = "h" * 80
    assert identity_differences(
        {"python": "3.11", "rocm": "7.0", "source": long_recorded, "targets": ["gfx942"]},
        {"python": "3.11", "rocm": "7.1", "source": exactly_80, "targets": ["gfx90a"],
         "family": "gfx94X"}) == [
        "rocm 7.0 recorded, 7.1 here",
        f"source {'r' * 77}... recorded, {exactly_80} here",
        'targets ["gfx942"] recorded, ["gfx90a"] here',
        "family null recorded, gfx94X here",
    ]
