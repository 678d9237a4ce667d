"""An unknown flag is named by the subcommand it was given to, with that subcommand's usage
(argparse names it at the top level otherwise, which hides the subcommand's own flags)."""

from __future__ import annotations

import pytest

from toolkit.cli.main import main


@pytest.mark.parametrize("command", ["demo", "check", "matrix"])
def test_an_unknown_flag_shows_the_subcommands_usage(command: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, *(["a.whl"] if command == "check" else []), "--bogus=\x1b[31m"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: python -m toolkit {command} ")
    last = f"python -m toolkit {command}: error: unrecognized arguments: --bogus=\\x1b[31m"
    assert err.splitlines()[-1] == last
    assert "\x1b" not in err


def test_an_unknown_flag_before_any_command_shows_the_top_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m toolkit [-h]")
    assert err.splitlines()[-1] == "python -m toolkit: error: unrecognized arguments: --bogus"
