"""A URL holding a control character is refused (issue 29: urllib drops tabs and newlines
while parsing, so `https://host/simple\\nerror: forged` was accepted and printed a forged
`error:` line)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.core.errors import UsageError
from toolkit.core.urls import check_index_url, check_location

CONTROL = st.sampled_from([chr(c) for c in (*range(32), 127)])


@given(at=st.integers(min_value=8, max_value=30), c=CONTROL)
def test_a_control_character_anywhere_is_refused_in_one_escaped_line(at: int, c: str) -> None:
    url = "https://idx.example.com/simple/"
    bad = url[:at] + c + url[at:]
    for check in (check_index_url, check_location):  # check_location: "://" makes it a URL
        with pytest.raises(UsageError) as err:
            check(bad)
        text = str(err.value)
        assert "holds a control character" in text
        assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in text)  # escaped, one line


def test_the_environment_variable_cannot_forge_an_output_line() -> None:
    res = subprocess.run([sys.executable, "-m", "toolkit", "plan", "apex-1.8.0-cp312-rocm7.0",
                          "--channel", "nightly"], capture_output=True, text=True, timeout=60,
                         env={**os.environ,
                              "TOOLKIT_ROCM_INDEX_URL": "https://idx.example.com/s\nerror: forged"})
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: refusing index URL ")
    assert "\\nerror: forged" in lines[0]
