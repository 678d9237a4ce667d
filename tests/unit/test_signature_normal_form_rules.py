"""Each normalization rule of a failure signature line (``toolkit.run.signature.normalize``),
one example per rule as the module's documentation states it, the expected lines written by
hand."""

from __future__ import annotations

import pytest

from toolkit.run.signature import normalize


@pytest.mark.parametrize("raw, normal", [
    # 1. escape sequences removed; after a carriage return, what the terminal shows last
    ("\x1b[01;31merror:\x1b[0m bad", "error: bad"),
    ("progress 10%\rprogress 100%\r  ", "progress 100%"),
    ("\r\r", ""),
    # 5. the random part of a temporary name, its extension kept
    ("ld: /tmp/ccAb12Cd.o: undefined", "ld: /tmp/cc*.o: undefined"),
    ("/var/tmp/tmpab12cd34.py:3", "/var/tmp/tmp*.py:3"),
    ("/tmp/tmpab12cd34", "/tmp/tmp*"),
    ("x /tmp/pip-build-env-abcd1234/lib y", "x /tmp/pip-build-env-*/lib y"),
    ("/opt/work/tmpab12cd34/x", "/opt/work/tmp*/x"),  # Python's tempfile names anywhere
    ("/srv/c/uv/.tmpAbC123/x", "/srv/c/uv/.tmp*/x"),  # uv's
    ("pytest-of-bob/pytest-12/test_x0", "pytest-of-*/pytest-*/test_x0"),
    # 4. a home folder
    ("/home/alice/x", "~/x"), ("/root/x", "~/x"), ("/home/u/.cache/uv/.tmpAbC123/x",
                                                   "~/.cache/uv/.tmp*/x"),
    # 5. addresses, section offsets, durations (a limit kept), pids, timestamps
    ("at 0x7ffd1234abcd", "at 0x<addr>"),
    ("(.text+0x1c): undefined", "(.text): undefined"),
    ("passed in 0.53s", "passed in <time>"),
    ("timed out after 600 s", "timed out after 600 s"),
    ("pid 1234 died", "pid <pid> died"),
    ("at 2024-01-02T03:04:05Z", "at <timestamp>"),
    # 6. typographic quotes, runs of white space
    ("‘x’ was   not declared", "'x' was not declared"),
])
def test_each_rule(raw: str, normal: str) -> None:
    assert normalize(raw) == normal
    assert normalize(normal) == normal  # idempotent


def test_paths_under_the_source_are_relative_and_host_paths_tokens() -> None:
    assert normalize("/w/src/a.cpp:3: error", paths={"workdir": "/w"}, source="/w/src") == \
        "a.cpp:3: error"
    assert normalize("in /w/src", paths={"workdir": "/w"}, source="/w/src") == "in <source>"
    assert normalize("/w/x", paths={"workdir": "/w"}) == "<workdir>/x"
    assert normalize("https://u:tok@h.example/simple") == "https://***@h.example/simple"
