"""``mask``: hide the credentials of every URL in a text, for every line, log, manifest,
stamp, lock and error message the toolkit shows or writes. It hides, in any text:

* the userinfo of ``scheme://user:pass@host`` (everything between ``://`` and the LAST ``@``
  of the authority, so a password holding ``@`` is masked whole);
* the userinfo of a scheme-less ``user:pass@host/...`` (pip would take it as a URL);
* every query-string value of a URL (``?token=SECRET&x=1`` -> ``?token=***&x=***``): a
  token in the query is as secret as one in the userinfo.

It imports nothing of the toolkit, so :mod:`toolkit.core.errors` (``CommandFailed`` masks
its argv) can use it; :mod:`toolkit.core.urls` re-exports it.
"""

from __future__ import annotations

import re

# what ends a URL inside a line of text (a log line, a JSON string, a quoted argv)
_STOP = r"\s'\"<>`"
# a scheme of at most 32 characters: a longer run of letters before "://" leaves its head
# unmatched (and unchanged), so what is masked is the same, in linear time
_CREDS = re.compile(rf"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]{{0,31}}://)(?P<creds>[^/?#{_STOP}]*)@")
# user:pass@host with no scheme: a word, a colon, anything up to the last "@" before a host
_BARE_CREDS = re.compile(
    rf"(?<![\w.+%/:@-])(?P<creds>[\w.+%~-]+:[^/?#{_STOP}]*)@(?=[A-Za-z0-9\[])")
# a query string in a URL: "?" after a URL-ish path, up to the end of the URL
_QUERY = re.compile(rf"(?P<head>(?:://|@)[^?#{_STOP}]*\?)(?P<query>[^#{_STOP}]*)")
_PAIR = re.compile(r"(?P<key>[^&;=]*)(?P<eq>=?)(?P<value>[^&;]*)")


def _mask_query(m: re.Match[str]) -> str:
    def pair(p: re.Match[str]) -> str:
        if not p.group(0):
            return ""
        if p.group("eq"):
            return f"{p.group('key')}=***"
        return "***"  # a bare ?TOKEN is a secret too
    return m.group("head") + _PAIR.sub(pair, m.group("query"))


# no match of the three patterns holds a character of _STOP (and none of _QUERY a "#"): each
# word, and each "#"-piece of it, is masked alone, and only where it holds an "@" or a "?",
# so a hostile line (``a://`` 100,000 times) costs linear time, not quadratic
_PIECE = re.compile(r"[^#]+")


def _mask_piece(m: re.Match[str]) -> str:
    piece = m.group(0)
    return _QUERY.sub(_mask_query, piece) if "?" in piece else piece


# a bare user:pass@ never spans a "/", "?" or "#": each segment of a word is searched only
# up to its last "@" before a host, the only place such a match can end
_SEGMENT = re.compile(r"[^/?#]+")
_HOST_AT = re.compile(r"@(?=[A-Za-z0-9\[])")


def _bare_creds(word: str) -> str:
    out: list[str] = []
    last = 0
    for seg in _SEGMENT.finditer(word):
        ends = [a.start() for a in _HOST_AT.finditer(word, seg.start(), seg.end())]
        if not ends:
            continue
        # the lookbehind still sees the character before the segment (pos, not a slice)
        for m in _BARE_CREDS.finditer(word, seg.start(), ends[-1] + 2):
            out += [word[last:m.start()], "***@"]
            last = m.end()
    return "".join([*out, word[last:]])


# a whole word holding an "@" or a "?" (only those change): matched only where a word starts
# (the lookbehind), so a word without either costs one scan, not one per character; the
# words without either are not handed to Python one by one (most of a plan's words)
_WORD_HIT = re.compile(rf"(?<![^{_STOP}])[^{_STOP}@?]*[@?][^{_STOP}]*")


def _mask_word(m: re.Match[str]) -> str:
    word = m.group(0)
    if "@" in word:
        word = _CREDS.sub(lambda c: f"{c.group('scheme')}***@", word)
        word = _bare_creds(word)
    return _PIECE.sub(_mask_piece, word) if "?" in word else word


def mask(text: str) -> str:
    """Replace the credentials and query values of every URL in ``text`` with ``***``."""
    if "@" not in text and "?" not in text:
        return text
    return _WORD_HIT.sub(_mask_word, text)
