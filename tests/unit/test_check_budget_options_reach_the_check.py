"""``toolkit check``'s three size budgets, each given on the command line, are the ones the
check applies: a wheel whose one member declares 100 MiB (its header says so; about 1 MiB of
random bytes is stored, so it inflates about 100:1) passes the default budgets (4G a member,
16G in all, 200:1 as the help says) and is refused, not inflated, by each option alone at a
smaller limit, named with that limit as the option spelled it (``--max-ratio 50``: 50:1,
``--max-member-size 10M``: 10 MiB, binary units as the help's ``4G``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from tests.unit.test_checks_wheel import _lie_about_size
from toolkit.cli.main import main

DECLARED = 100 << 20


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("budget")
    whl = make_wheel(folder, "demo", "1.0", "py3-none-any", {"demo/big.bin": os.urandom(1 << 20)})
    _lie_about_size(whl, "demo/big.bin", DECLARED)
    return whl


def _archive_findings(whl: Path, capsys: pytest.CaptureFixture[str], *options: str) -> list[str]:
    code = main(["check", str(whl), "--json", *options])
    doc = json.loads(capsys.readouterr().out)
    (result,) = doc["wheels"]
    found = [f["message"] for f in result["findings"]
             if f["check"] == "archive" and "not inspected" in f["message"]]
    assert code == (1 if found else code)
    return found


def test_the_defaults_leave_the_member_to_be_inflated(wheel: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert _archive_findings(wheel, capsys) == []


def test_max_ratio_is_the_ratio_limit(wheel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (message,) = _archive_findings(wheel, capsys, "--max-ratio", "50")
    assert message.startswith("demo/big.bin inflates ")
    ratio = int(message.split("inflates ", 1)[1].split(":", 1)[0])
    assert 90 <= ratio <= 100  # 100 MiB over a little more than the 1 MiB stored
    assert message.endswith("over the 50:1 limit (a zip bomb? --max-ratio): not inspected")
    assert _archive_findings(wheel, capsys, "--max-ratio", "150") == []


def test_max_member_size_is_the_member_limit(wheel: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert _archive_findings(wheel, capsys, "--max-member-size", "10M") == [
        f"demo/big.bin declares {DECLARED} inflated bytes, over the 10 MiB limit "
        "(--max-member-size): not inspected"]
    assert _archive_findings(wheel, capsys, "--max-member-size", "100M") == []


def test_max_total_size_is_the_limit_of_all_members(wheel: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (message,) = _archive_findings(wheel, capsys, "--max-total-size", "50M")
    assert message.startswith("demo/big.bin: the archive's members declare more than ")
    assert message.endswith(" inflated bytes in all (--max-total-size): not inspected")
    left = int(message.split("more than ", 1)[1].split(" ", 1)[0])
    assert (50 << 20) - 10_000 < left <= 50 << 20  # what the members before it left of 50 MiB
