"""Installing a project's build requirements, and saying in one line why it failed.

uv (or pip) installs what a project's build backend asks for, from the index its own
configuration names (``UV_DEFAULT_INDEX``/``UV_INDEX_URL``, ``PIP_INDEX_URL``, else PyPI).
When it fails, its output says why, and ``install_failure`` turns that into one error:

- the index cannot be reached (refused, unresolvable host, a timeout, ``--offline``):
  ``SourceUnreachable`` (exit 8) naming the index, as for the SDK's indexes;
- the index answered but holds no such project or no matching version:
  ``BuildRequirementsUnavailable`` (exit 11) naming the requirement and the index.

Anything else (a broken wheel, a build of an sdist failing) stays a failed step.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from toolkit.core.errors import BuildRequirementsUnavailable, SourceUnreachable, ToolkitError
from toolkit.core.text import escape, quoted
from toolkit.core.urls import mask

PYPI = "https://pypi.org/simple"
HINT = ("name a requirement the index serves in the project's [build-system] requires, or "
        "point the installer at an index that holds it (UV_DEFAULT_INDEX, PIP_INDEX_URL)")

# what uv and pip print when no connection to the index could be made, the most telling first
_UNREACHABLE = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"Connection refused", r"Name or service not known", r"Temporary failure in name resolution",
    r"failed to lookup address information", r"dns error", r"Network is unreachable",
    r"No route to host", r"certificate verify failed", r"timed out",
    r"network was disabled", r"Network connectivity is disabled", r"ProxyError",
    r"NewConnectionError", r"Max retries exceeded", r"error sending request",
    r"Could not fetch URL"))
# the requirement the installer could not find (uv, then pip)
_MISSING = (
    re.compile(r"Because (?:there (?:is|are) no versions? of )?([A-Za-z0-9][A-Za-z0-9._\[\],<>=!~*-]*)"
               r" (?:was not found|and you require|is available|are available)"),
    re.compile(r"No matching distribution found for ([^\s;]+)"),
    re.compile(r"satisfies the requirement ([^\s;]+)"),
)
_FETCH_URL = re.compile(r"(?:Failed to fetch|request for url \(|Could not fetch URL)[: ]*"
                        r"`?([a-z][a-z0-9+.-]*://[^\s`)]+)")
_LOOKING = re.compile(r"^Looking in indexes: (.+)$", re.MULTILINE)


def installer_indexes(installer: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """The indexes ``installer`` (``uv`` or ``pip``) reads with no index option given: its
    environment variables, else PyPI (a config file may name others: the output's own
    ``Looking in indexes`` line, when pip prints one, wins in ``install_failure``)."""
    env = os.environ if environ is None else environ
    if installer == "uv":
        main = env.get("UV_DEFAULT_INDEX") or env.get("UV_INDEX_URL") or PYPI
        extra = (env.get("UV_INDEX", "") + " " + env.get("UV_EXTRA_INDEX_URL", "")).split()
    else:
        main = env.get("PIP_INDEX_URL") or PYPI
        extra = env.get("PIP_EXTRA_INDEX_URL", "").split()
    return [main, *(e.split("=", 1)[-1] if "=" in e and "://" in e.split("=", 1)[-1] else e
                    for e in extra)]


def _shown(urls: Sequence[str]) -> str:
    return ", ".join(escape(mask(u)) for u in urls)


def missing_requirement(output: str, requirements: Sequence[str]) -> str | None:
    """The requirement the installer's output says no index holds; None: it names none."""
    for pattern in _MISSING:
        m = pattern.search(output)
        if m:
            return m.group(1).rstrip(",.")
    return None


def install_failure(output: str, requirements: Sequence[str], indexes: Sequence[str],
                    where: str) -> ToolkitError | None:
    """The one-line error the installer's failed ``output`` means (see the module's text);
    None when it is neither an unreachable index nor an unavailable requirement. ``where``
    says whose requirements they are (``the project at PATH``)."""
    looking = _LOOKING.search(output)
    if looking:
        indexes = [u.strip() for u in looking.group(1).split(",") if u.strip()]
    unreachable = next((m for p in _UNREACHABLE if (m := p.search(output))), None)
    if unreachable:
        fetched = _FETCH_URL.search(output)
        url = fetched.group(1) if fetched else None
        # the configured index the failed URL lies under, else that URL itself
        under = [i for i in indexes if url and url.startswith(i.rstrip("/"))]
        index = _shown(under[:1] or ([url] if url else indexes))
        return SourceUnreachable(
            f"the index {index} cannot be reached to install the build requirements of "
            f"{where} ({escape(', '.join(requirements))}): {escape(unreachable.group(0))}",
            hint="check the network or proxy, or point the installer at a reachable index "
                 "(UV_DEFAULT_INDEX, PIP_INDEX_URL)")
    name = missing_requirement(output, requirements)
    if name is None:
        return None
    return BuildRequirementsUnavailable(
        f"the build requirement {quoted(name)} of {where} cannot be installed: the index "
        f"{_shown(indexes)} holds no distribution that satisfies it", hint=HINT)
