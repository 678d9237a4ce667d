"""Outside text on a terminal: one escape helper for every name, value and path shown.

A wheel member, a METADATA field, a manifest value, a data file value or a path comes from
outside; printed raw, ``\\x1b[2J`` clears the screen and a newline forges a report line.
``escape`` shows such text on one line with every control or non-printing character
written as its Python escape (``\\x1b``, ``\\n``, ``\\u2028``), and cuts a long value with an
ellipsis and its length. ``clean`` is the last guard of the entry points' output streams:
it escapes control bytes but keeps the line breaks and tabs the toolkit itself writes.
JSON output never goes through either (``json.dumps`` escapes on its own).
"""

from __future__ import annotations

import re

LIMIT = 200  # characters of one value shown before it is cut
# C0 and C1 controls, DEL, and the Unicode line/paragraph separators and bidi overrides
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEP_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _esc(m: re.Match[str]) -> str:
    return ascii(m.group(0))[1:-1]


def _parts(value: object, limit: int) -> tuple[str, str]:
    text = str(value)
    cut = len(text) > limit
    shown = _UNSAFE.sub(_esc, text[:limit] if cut else text)
    if not shown.isprintable():  # unpaired surrogates (undecodable file names) and the like
        shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in shown)
    return (shown + "…", f" ({len(text)} chars)") if cut else (shown, "")


def unsafe(value: str) -> bool:
    """Does ``value`` hold a character ``escape`` would escape (controls, bidi overrides)?"""
    return _UNSAFE.search(value) is not None


def escape(value: object, limit: int = LIMIT) -> str:
    """``value`` as one safe line: control characters escaped (``\\x1b``, ``\\n``), cut after
    ``limit`` characters with ``…`` and the full length (``gfxxxx… (10003 chars)``)."""
    shown, suffix = _parts(value, limit)
    return shown + suffix


def quoted(value: object, limit: int = LIMIT) -> str:
    """``escape`` in single quotes: how a bad value is named in an error message."""
    shown, suffix = _parts(value, limit)
    return f"'{shown}'{suffix}"


def clean(text: str) -> str:
    """``text`` with control characters escaped except line breaks and tabs: what reaches a
    terminal from the entry points, whatever a message embedded."""
    return _UNSAFE_KEEP_LINES.sub(_esc, text)
