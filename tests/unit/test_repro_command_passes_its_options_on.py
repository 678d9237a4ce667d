"""``python -m toolkit repro MANIFEST --step S --dry-run --force --workdir W --source P``
(README, docs/command-line.md): each option reaches the repro as given, a folder source as
it is; read where ``toolkit.verify.repro.reproduce`` receives them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolkit.cli.main import main
from toolkit.verify import repro


def test_every_option_reaches_the_repro(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def reproduce(manifest: str, reporter: object, **kw: Any) -> int:
        seen.append((manifest, kw))
        return 0
    monkeypatch.setattr(repro, "reproduce", reproduce)
    (tmp_path / "src").mkdir()
    assert main(["repro", "m.json", "--step", "build-wheel", "--dry-run", "--force",
                 "--workdir", str(tmp_path / "w"), "--source", str(tmp_path / "src")]) == 0
    assert main(["repro", "m.json"]) == 0
    (given, kw), (plain, bare) = seen
    assert given == plain == "m.json"
    assert kw == {"step": "build-wheel", "dry_run": True, "force": True,
                  "workdir": str(tmp_path / "w"), "source": str(tmp_path / "src")}
    assert bare == {"step": None, "dry_run": False, "force": False, "workdir": None,
                    "source": None}
