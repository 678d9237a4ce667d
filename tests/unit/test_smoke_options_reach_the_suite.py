"""What ``smoke`` hands the suite runner from its own options (README: ``-n N`` runs the
suite on N workers, ``--junit FILE``, ``--require-gpu``, the two time limits in seconds):
each parsed by the real ``smoke`` parser, read where the runner receives them."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli.commands import smoke as smoke_cmd
from toolkit.verify import smoke
from toolkit.verify.smoke_builds import SmokeTarget


def test_each_option_reaches_the_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def runner(target: SmokeTarget, targets: tuple[str, ...], **kw: Any) -> str:
        seen.append((tuple(targets), kw))
        return "outcome"
    monkeypatch.setattr(smoke, "run", runner)
    p = argparse.ArgumentParser()
    smoke_cmd.add_smoke_options(p)
    args = p.parse_args(["-n", "3", "--junit", str(tmp_path / "j.xml"), "--require-gpu",
                         "--test-timeout", "40", "--timeout", "900"])
    target = SmokeTarget("hip_sample-0.1.0-py3.11-rocm5.2",
                         {"build": {"id": "x"}, "targets": ["gfx90a"]}, tmp_path)
    result: object = smoke_cmd.smoke_one(target, None, args, out=io.StringIO())
    assert result == "outcome"
    ((targets, kw),) = seen
    assert targets == ("gfx90a",)
    assert (str(kw["workers"]), kw["junit"], kw["require_gpu"]) == ("3", tmp_path / "j.xml", True)
    assert (kw["test_timeout"], kw["timeout"]) == (40.0, 900.0)
