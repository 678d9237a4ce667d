"""StreamReporter's three modes, rendered into a string: the words GitHub Actions reads
(docs.github.com, "Workflow commands": ``::group::``, ``::endgroup::``, ``::error::``,
``::stop-commands::<token>`` ... ``::<token>::``) and plain lines when piped."""

from __future__ import annotations

import io
import re

import pytest

from toolkit.cli.console import StreamReporter


def ci(monkeypatch: pytest.MonkeyPatch) -> tuple[StreamReporter, io.StringIO]:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    out = io.StringIO()
    return StreamReporter(out, out), out


def test_ci_output_cannot_run_workflow_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    rep, out = ci(monkeypatch)
    rep.step_started(6, 12, "build-wheel")
    rep.step_output("::add-mask::secret\n")  # printed by a build: must stay text
    rep.step_output("::error::forged\n")
    rep.step(6, 12, "build-wheel", "FAILED", 1.0, "step 'build-wheel' failed (exit 1): x")
    lines = out.getvalue().splitlines()
    assert lines[0] == "::group::[6/12] build-wheel"
    token = re.fullmatch(r"::stop-commands::([0-9a-f]{32})", lines[1])
    assert token, lines
    assert lines[2:4] == ["    ::add-mask::secret", "    ::error::forged"]
    assert lines[4:6] == [f"::{token.group(1)}::", "::endgroup::"]  # commands resumed first
    assert re.fullmatch(r"\[6/12\] build-wheel\s+FAILED\s+1\.0s", lines[6])
    assert lines[7:] == ["::error::step 'build-wheel' failed (exit 1): x"]


def test_ci_step_without_output_is_an_empty_group(monkeypatch: pytest.MonkeyPatch) -> None:
    rep, out = ci(monkeypatch)
    rep.step_started(1, 2, "check-env")
    rep.step(1, 2, "check-env", "ok", 0.0)
    rep.step(2, 2, "create-env", "skipped", 0.0)  # skipped: never started, no group
    assert out.getvalue().splitlines()[:2] == ["::group::[1/2] check-env", "::endgroup::"]
    assert "::group::[2/2]" not in out.getvalue()


def test_a_warning_inside_a_group_reaches_github(monkeypatch: pytest.MonkeyPatch) -> None:
    rep, out = ci(monkeypatch)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    rep.step_started(1, 1, "install-torch")
    rep.step_output("resolving\n")
    rep.warning("50% of\nthe index")
    lines = out.getvalue().splitlines()
    token = lines[1].split("::")[2]
    assert lines[3:6] == [f"::{token}::", "::warning::50%25 of%0Athe index",
                          f"::stop-commands::{token}"]


def test_piped_is_plain_lines_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("TOOLKIT_HEARTBEAT", "0")
    out = io.StringIO()
    rep = StreamReporter(out, out)
    assert rep.mode == "plain"
    rep.step_started(1, 1, "build-wheel")
    rep.step_output("\x1b[2Jcompiling\n")  # only the log keeps it when piped
    rep.step(1, 1, "build-wheel", "ok", 2.0)
    assert out.getvalue() == "[1/1] build-wheel            ok           2.0s\n"
