"""Index URLs: mask credentials everywhere they are shown or written; refuse insecure ones."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from toolkit.core.errors import UsageError

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# scheme://<userinfo>@host: the userinfo is everything between "://" and the LAST "@" of the
# authority (which ends at the first "/", "?", "#", whitespace or quote), so a password that
# itself holds "@" (user:p@ss@host) is masked whole.
_CREDS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<creds>[^/?#\s'\"<>]*)@")


def mask(text: str) -> str:
    """Replace the credentials of every URL in ``text`` with ``***``."""
    return _CREDS.sub(lambda m: f"{m.group('scheme')}***@", text)



def check_index_url(url: str, *, allow_insecure: bool = False, what: str = "index URL") -> str:
    """https, file://, or http on loopback; plain http elsewhere only with allow_insecure."""
    parts = urlsplit(url)
    if parts.scheme in {"https", "file"}:
        return url
    if parts.scheme == "http":
        if parts.hostname in LOOPBACK or allow_insecure:
            return url
        raise UsageError(
            f"refusing insecure {what} {mask(url)}: plain http:// to a non-loopback host; "
            "valid: https://..., file://..., http://127.0.0.1:PORT/...",
            hint="pass --allow-insecure-index if you really mean it",
        )
    raise UsageError(f"unsupported {what} {mask(url)}; valid: https://, file://, http:// on loopback")
