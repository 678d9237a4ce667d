"""`toolkit upstream`'s lines (its --help: one line per fact, ``written`` first where --write
wrote it; exit 1 while a drift is left), never a raw control character from a repository
(Python's ``str.isprintable``), and the refusal of a --pr-body nowhere to write (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.cli.commands import upstream as command
from toolkit.core.errors import UsageError
from toolkit.verify.upstream.model import Fact


@pytest.mark.parametrize(("text", "safe"), [
    ("plain", "plain"), ("é ü 中", "é ü 中"), ("a\x1b[2Jb", "a\\x1b[2Jb"), ("tab\there", "tab\\there"),
    ("line\nbreak", "line\\nbreak"), ("\u202eevil", "\\u202eevil"),
])
def test_only_printable_characters_reach_the_terminal(text: str, safe: str) -> None:
    assert command._safe(text) == safe


def test_each_fact_on_a_line_the_written_ones_marked(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    done = Fact("drift", "apex 1.9.0 torch", "2.6", "2.7", "ROCm/apex@abc setup.py")
    left = Fact("review", "fbgemm_gpu 1.2.0 source", "@a", "@b\x07", "pytorch/FBGEMM@b")
    monkeypatch.delenv("TOOLKIT_CACHE_DIR", raising=False)
    command._print_facts([done, left], {id(done)}, ["apex.toml"], tmp_path, 1, None)
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == f"written {done.line()}"
    assert lines[1] == left.line().replace("\x07", "\\x07")
    assert lines[2] == f"wrote apex.toml in {tmp_path}"
    assert err == "1 fact(s) differ from upstream (the cache)\n"
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", "/tmp/c")
    command._print_facts([], set(), [], tmp_path, 0, None)
    out, err = capsys.readouterr()
    assert out == "" and err == "no drift (/tmp/c)\n"
    command._print_facts([], set(), [], tmp_path, 0, "/mirrors")
    assert capsys.readouterr().err == "no drift (/mirrors)\n"


def test_a_pr_body_nowhere_to_write_is_refused_before_anything(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        command._unwritable(tmp_path / "no" / "body.md", "no such folder")
    assert err.value.exit_code == 2
    assert "--pr-body" in err.value.message and "body.md" in err.value.message
    assert "no such folder" in err.value.message
