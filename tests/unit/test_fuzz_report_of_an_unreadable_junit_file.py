"""``nox -s fuzz`` reads the failing examples from pytest's JUnit file: a file that is not
there or not XML is one line naming it and what is wrong (bad input, exit 2), the reason the
XML parser or the OS gave after it; no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.cli import devsessions
from toolkit.core.errors import UsageError


@pytest.mark.parametrize(("text", "cause"), [
    (None, "No such file or directory"),
    ("", "no element found: line 1"),  # expat's words for an empty document
])
def test_an_unreadable_junit_file_is_one_line(tmp_path: Path, text: str | None, cause: str) -> None:
    junit = tmp_path / "fuzz.xml"
    if text is not None:
        junit.write_text(text)
    with pytest.raises(UsageError) as err:
        devsessions.failing_examples(junit, tmp_path)
    assert err.value.exit_code == 2
    assert err.value.message.startswith(f"{junit}: not a readable JUnit file: ")
    assert cause in err.value.message and "\n" not in err.value.message
