"""The pull request body of `toolkit upstream --pr-body FILE`: what `--write` changed and what
still needs a maintainer, as markdown (the scheduled `upstream` job of
.github/workflows/upstream.yml opens or updates one pull request with it).

Every fact line comes from upstream repositories (branch names, file contents): it is shown
with its control characters escaped (``toolkit.core.text.escape``) and the credentials of any
URL masked (``toolkit.core.urls.mask``), inside a fenced block longer than any run of
backticks the lines hold, so no line can close the fence, forge a heading or a mention, or
ping anyone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolkit.core.text import escape
from toolkit.core.urls import mask
from toolkit.verify.upstream.model import Fact

# a fact line (evidence and review ranges included) is never cut: a maintainer reads all of it
LINE_LIMIT = 4000
MARKER = "<!-- toolkit upstream --pr-body -->"


def safe_line(text: str) -> str:
    """One line of outside text as it may appear in the body: credentials masked, control
    characters escaped (``\\x1b``, ``\\n``), at most ``LINE_LIMIT`` characters."""
    return escape(mask(text), limit=LINE_LIMIT)


def _block(lines: Sequence[str]) -> list[str]:
    if not lines:
        return ["None."]
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *lines, fence]


def render(facts: Sequence[Fact], settled: set[int], written: Sequence[str],
           where: str) -> str:
    """The body: the facts ``--write`` settled (``settled``: their ``id()``), the files it
    wrote, then every failing fact left (``review:`` and unsettled ``drift:``), then the
    notes folded away. ``where`` names the upstream the run read."""
    done = [safe_line(f.line()) for f in facts if id(f) in settled]
    left = [safe_line(f.line()) for f in facts if f.fails and id(f) not in settled]
    notes = [safe_line(f.line()) for f in facts if not f.fails]
    out = [MARKER, "## Upstream changed", "",
           f"`toolkit upstream --write` against {escape(mask(where))}: "
           f"{len(done)} fact(s) written, {len(left)} left for a maintainer.", "",
           "### Written by `--write` (this pull request's change)", ""]
    out += _block(done)
    if written:
        out += ["", "Files: " + ", ".join(f"`toolkit/data/{escape(n)}`" for n in written)]
    out += ["", "### Needs a maintainer (`review:` and unsettled `drift:`)", ""]
    out += _block(left)
    if left:
        out += ["", "Settle each one in the data (a recipe review, a known failure, or a "
                "`review:` entry), then `invoke upstream` exits 0."]
    if notes:
        out += ["", f"<details><summary>{len(notes)} note(s), never a failure</summary>", ""]
        out += _block(notes)
        out += ["", "</details>"]
    return "\n".join(out) + "\n"
