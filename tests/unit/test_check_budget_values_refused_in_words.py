"""`python -m toolkit check`'s number options refuse a bad value: after the usage, one line that names the
option, the value (quoted) and what is valid, exit 2 (README "## Exit codes": bad input),
before any input is read. Valid forms, from --help and docs/command-line.md: sizes ``4G``,
``512M``, ``64K`` or a number of bytes (binary units, a trailing ``B``/``iB`` allowed), a
positive ratio, a job count of 1 or more."""

from __future__ import annotations

import argparse

import pytest

from toolkit.cli.commands import check
from toolkit.cli.main import main

PREFIX = "python -m toolkit check: error: argument "


@pytest.mark.parametrize(("option", "value", "words"), [
    ("--max-member-size", "12Q", "bad size '12Q': expected e.g. 4G, 512M or bytes"),
    ("--max-total-size", "lots", "bad size 'lots': expected e.g. 4G, 512M or bytes"),
    ("--max-member-size", "-1", "bad size '-1': a size is not negative (e.g. 4G, 512M or bytes)"),
    ("--max-ratio", "0", "bad ratio '0': expected a positive number, e.g. 200"),
    ("--max-ratio", "nan", "bad ratio 'nan': expected a positive number, e.g. 200"),
    ("--max-ratio", "much", "bad ratio 'much': expected a positive number, e.g. 200"),
    ("--jobs", "0", "bad job count '0': expected 1 or more"),
    ("--jobs", "two", "bad job count 'two': expected 1 or more"),
])
def test_a_bad_number_is_one_line_naming_what_is_valid(option: str, value: str, words: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:  # argparse's exit, with the toolkit's one line
        main(["check", "no-such.whl", f"{option}={value}"])
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[-1] == f"{PREFIX}{option}: {words}"  # after argparse's usage
    assert "no-such.whl" not in err  # refused before any input is read


@pytest.mark.parametrize(("text", "size"), [
    ("4G", 4 << 30), ("512M", 512 << 20), ("64K", 64 << 10), ("1T", 1 << 40), ("100", 100),
    ("2GiB", 2 << 30), ("2gb", 2 << 30), (" 1.5K ", 1536), ("0", 0),
])
def test_sizes_in_binary_units(text: str, size: int) -> None:
    assert check._size(text) == size


def test_ratio_and_jobs_take_what_they_say() -> None:
    assert check._ratio("200") == 200.0 and check._ratio("0.5") == 0.5
    assert check._jobs("1") == 1 and check._jobs("16") == 16
    for bad in ("inf", "-3"):
        with pytest.raises(argparse.ArgumentTypeError):
            check._ratio(bad)
