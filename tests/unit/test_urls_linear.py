"""``mask`` word by word: the same text as masking the whole line at once (the three patterns
applied to the whole text, as ``mask`` did before session 26: the oracle here), on any text,
and hostile lines that made it quadratic (``a://`` 100,000 times took 146 s) masked whole."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fixtures.mask_oracle import whole_line
from toolkit.core.urls import mask

URLISH = st.text(alphabet=st.sampled_from(list("ab1:/@?#&=.-+ %~[],'\"x\n")), max_size=60)


@given(URLISH)
@example("s://u:p@h/a?t=1#x?y=2 v:w@h2 ,k:q@[::1]")
@example("/a:b@c")  # the lookbehind sees the "/" before a segment
@example("?a:b@c#d:e@f")
@example("a" * 40 + "://u:p@h")  # a scheme longer than 32 letters
def test_word_by_word_is_the_whole_line(text: str) -> None:
    assert mask(text) == whole_line(text)


def test_hostile_lines_are_masked_whole() -> None:
    n = 50_000
    assert mask("a://" * n) == "a://" * n
    assert mask("a://" * n + "#?t=s") == "a://" * n + "#?t=s"  # no URL before that "?"
    assert mask("a://" * n + "h?t=s") == "a://" * n + "h?t=***"
    assert mask(",x:" * n + "@h") == ",***@h"
    assert mask("x:y" + "a" * (4 * n) + "@h") == "***@h"
    assert mask("https://u:" + "p" * (4 * n) + "@host/") == "https://***@host/"
    assert mask("a:b@" * n + "h") == "***@h"
