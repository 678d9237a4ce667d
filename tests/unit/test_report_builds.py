"""``toolkit report --manifests``: one row per build, a failed one with its signature, in
the table, the JSON and the GitHub step summary (hand-written manifests as the truth)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli.main import main
from toolkit.core.errors import UsageError
from toolkit.verify.report import markdown, summarise

BID = "cfail-0.1.0-cp311-cpu"
SIG = ["native.c:2:85: error: expected ';' before '}' token",
       "native.c:9:1: error: unknown type name 'PyObjct'"]


def manifest(root: Path, build_id: str = BID, **fields: Any) -> Path:
    path = root / build_id / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    name, version, cp, rocm = build_id.rsplit("-", 3)
    data = {"build": {"id": build_id, "package": name, "version": version,
                      "python": f"{cp[2]}.{cp[3:]}", "rocm": rocm}, "outcome": "ok", **fields}
    path.write_text(json.dumps(data))
    return path


def test_a_failed_build_is_a_failed_row_with_step_exit_code_and_signature(
        tmp_path: Path) -> None:
    manifest(tmp_path, outcome="failed", failed_step="build-wheel",
             failure={"step": "build-wheel", "exit_code": 5, "signature": SIG, "log": None})
    manifest(tmp_path, "ok-1.0-cp311-cpu")
    summary = summarise(manifests=[tmp_path])
    rows = {r.name: r for r in summary.rows}
    bad, good = rows[BID], rows["ok-1.0-cp311-cpu"]
    assert (bad.kind, bad.outcome, bad.exit_code, bad.reason) == (
        "build", "failed", 5, "failed at build-wheel")
    assert bad.signature == tuple(SIG) and good.outcome == "passed"
    assert not summary.ok and summary.headline() == "2 builds: 1 passed, 1 failed"
    md = markdown(summary)
    block = md.split(f"**`{BID}`** failed at build-wheel (exit 5), the failure's signature:", 1)[1]
    assert block.split("```")[1].strip().splitlines() == SIG


def test_the_json_carries_the_signature(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    manifest(tmp_path, outcome="failed", failed_step="smoke",
             failure={"step": "smoke", "exit_code": 1, "signature": SIG[:1], "log": None})
    assert main(["report", "--manifests", str(tmp_path / BID / "manifest.json"), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["signature"] == SIG[:1] and row["exit_code"] == 1
    assert row["reason"] == "failed at smoke"


def test_strict_fails_on_a_failed_build(tmp_path: Path) -> None:
    manifest(tmp_path, outcome="failed", failed_step="check")
    assert main(["report", "--manifests", str(tmp_path), "--strict"]) == 1


@pytest.mark.parametrize(("outcome", "reason"), [
    ("interrupted", "interrupted at build-wheel"),
    ("running", "still 'running': the run ended without recording its outcome"),
])
def test_an_unfinished_build_is_never_a_pass(tmp_path: Path, outcome: str, reason: str) -> None:
    manifest(tmp_path, outcome=outcome, failed_step="build-wheel")
    (row,) = summarise(manifests=[tmp_path]).rows
    assert row.outcome == "failed" and row.reason == reason and row.signature == ()


def test_a_schema_4_failed_manifest_names_its_step(tmp_path: Path) -> None:
    manifest(tmp_path, outcome="failed", failed_step="install-torch")
    (row,) = summarise(manifests=[tmp_path]).rows
    assert row.reason == "failed at install-torch" and row.exit_code is None


def test_a_folder_without_manifests_is_one_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no \\*/manifest.json in this folder"):
        summarise(manifests=[tmp_path])


def test_a_tampered_manifest_is_refused(tmp_path: Path) -> None:
    path = manifest(tmp_path)
    data = json.loads(path.read_text())
    data["build"]["id"] = "other-1.0-cp311-cpu"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="not the build its fields name"):
        summarise(manifests=[path])
