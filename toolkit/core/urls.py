"""Index URLs: one masking function for every writer; refuse what is not a safe location.

``mask`` (defined in :mod:`toolkit.core.masking`, which the error types use too) is what
every line, log, manifest, stamp and lock goes through before it is shown or written.

``check_location`` is the one judge of an index or find-links value the user gives: an
absolute ``https://`` or ``file://`` URL, ``http://`` on loopback (elsewhere only with
``allow_insecure``), or an existing local path; anything else is bad input (exit 2), named
masked.

``open_url`` is every HTTP GET the toolkit makes itself (the index probe, the published-index
reader). A redirect is followed only to a target that passes the rules of a URL given by hand
(https, http on loopback); never to ``file://`` or another scheme, never to a URL holding
credentials. Credentials stay with their origin: the ``Authorization`` header is dropped on a
redirect to another origin (scheme, host, port), and a redirect that would carry the given
URL's query token there is refused. A refused redirect is one line naming both URLs, masked
(``UsageError``, exit 2); ``hops`` lists where the request went, for the caller's line.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urljoin, urlsplit, urlunsplit

from toolkit.core.errors import UsageError
from toolkit.core.masking import _BARE_CREDS
from toolkit.core.masking import mask as mask
from toolkit.core.text import escape, unsafe

if TYPE_CHECKING:
    import urllib.request
    from http.client import HTTPMessage

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
def check_index_url(url: str, *, allow_insecure: bool = False, what: str = "index URL") -> str:
    """https, file://, or http on loopback; plain http elsewhere only with allow_insecure.
    A URL holding a control character (a newline could forge an output line) is refused."""
    if unsafe(url):
        raise UsageError(f"refusing {what} {escape(mask(url))}: it holds a control character; "
                         "valid: an absolute https:// URL, file://, http:// on loopback")
    parts = urlsplit(url)
    if parts.scheme in {"https", "file"} and (parts.netloc or parts.scheme == "file"):
        return url
    if parts.scheme == "http" and parts.hostname:
        if parts.hostname in LOOPBACK or allow_insecure:
            return url
        raise UsageError(
            f"refusing insecure {what} {escape(mask(url))}: plain http:// to a non-loopback "
            "host; valid: https://..., file://..., http://127.0.0.1:PORT/...",
            hint="pass --allow-insecure-index if you really mean it",
        )
    raise UsageError(f"unsupported {what} {escape(mask(url))}; valid: an absolute https:// "
                     "URL, file://, http:// on loopback")


def check_location(value: str, *, allow_insecure: bool = False,
                   what: str = "index URL") -> str:
    """An index or find-links value: a URL ``check_index_url`` accepts, or an existing local
    path. Anything else (``user:pass@host/simple`` without a scheme, a path that does not
    exist) is a ``UsageError`` naming it masked."""
    if "://" in value:  # a URL (a local path may hold any byte: it is an argv element)
        return check_index_url(value, allow_insecure=allow_insecure, what=what)
    try:
        exists = bool(value) and "\0" not in value and os.path.exists(value)
    except (OSError, ValueError):
        exists = False
    if exists and not _BARE_CREDS.search(value):
        return value
    raise UsageError(f"{what} {escape(mask(value))} is neither a URL nor an existing path; "
                     "valid: an absolute https:// URL (http:// only on loopback), file://, "
                     "or a local folder or file")


def join_path(url: str, *segments: str) -> str:
    """``url`` with ``segments`` appended to its path as folders (``.../simple/`` +
    ``gfx942`` -> ``.../simple/gfx942/``); its query and fragment stay where they are (a
    ``?token=`` never ends up inside the path)."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    for seg in segments:
        path += "/" + quote(seg.strip("/"), safe="")
    return urlunsplit(parts._replace(path=path + "/"))


# ----------------------------------------------------------------------------- fetching
def credentials(url: str) -> tuple[str, str | None]:
    """``url`` without its userinfo and fragment, and the HTTP Basic ``Authorization`` value
    its userinfo stands for (None: it has none)."""
    parts = urlsplit(url)
    auth = None
    if parts.username or parts.password:
        creds = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        auth = "Basic " + base64.b64encode(creds.encode()).decode()
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc, fragment="")), auth


def origin(url: str) -> tuple[str, str, int | None]:
    """The (scheme, host, port) of ``url``; a default port is written out."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, parts.hostname or "", port


def redirected(hops: list[str]) -> str:
    """`` (redirected to URL)`` when ``hops`` (what ``open_url`` filled) holds a redirect."""
    return f" (redirected to {escape(mask(hops[-1]))})" if len(hops) > 1 else ""


def _secrets(parts: SplitResult) -> set[str]:
    """The values of a URL's query (a bare ``?TOKEN`` too) and its password (or a user name
    alone: a token): what must stay with its origin."""
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    found = {v or k for k, v in pairs if v or k}
    secret = parts.password or parts.username
    return found | {unquote(secret)} if secret else found


def _redirect_problem(target: str, first: str, allow_insecure: bool) -> str | None:
    """Why a redirect to ``target`` (``first``: the URL asked for) may not be followed; None
    when it may."""
    if unsafe(target):
        return "the target holds a control character"
    parts = urlsplit(target)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return "a redirect may lead only to https:// (or http:// on loopback)"
    if parts.scheme == "http" and parts.hostname not in LOOPBACK and not allow_insecure:
        return "plain http:// to a non-loopback host (--allow-insecure-index allows it)"
    if parts.username or parts.password:
        return "the target holds credentials"
    if origin(target) != origin(first) and _secrets(parts) & _secrets(urlsplit(first)):
        return "it would carry the query token or password of the URL to another origin"
    return None


def _redirects(what: str, allow_insecure: bool,
               hops: list[str]) -> urllib.request.HTTPRedirectHandler:
    """The redirect handler of ``open_url`` (urllib.request, http.client and ssl are imported
    only when a URL is opened: every command would pay their import, most open none)."""
    import urllib.error
    import urllib.request

    class _Redirects(urllib.request.HTTPRedirectHandler):
        """Follows a redirect only where ``_redirect_problem`` finds none; the ``Authorization``
        header only to the origin it was given for."""

        def __init__(self, what: str, allow_insecure: bool, hops: list[str]) -> None:
            self.what, self.allow_insecure, self.hops = what, allow_insecure, hops

        def http_error_302(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                           headers: HTTPMessage) -> Any:
            location = headers.get("location") or headers.get("uri")
            if location:
                target = urljoin(req.full_url, location)
                why = _redirect_problem(target, self.hops[0], self.allow_insecure)
                if why:
                    fp.close()
                    raise UsageError(
                        f"refusing the redirect of {self.what} {escape(mask(self.hops[0]))} to "
                        f"{escape(mask(target))} (HTTP {code}): {why}",
                        hint="give the index's final URL if you trust it")
            return super().http_error_302(req, fp, code, msg, headers)

        http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

        def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int,
                             msg: str, headers: HTTPMessage, newurl: str) -> urllib.request.Request:
            if req.get_method() not in {"GET", "HEAD"}:
                raise urllib.error.HTTPError(req.full_url, code, msg, headers, fp)
            # the request's own headers (not Host and the like, which urllib adds per request)
            kept = {k: v for k, v in req.headers.items()
                    if k.lower() not in {"content-length", "content-type"}}
            if origin(newurl) != origin(req.full_url):  # credentials stay with their origin
                kept = {k: v for k, v in kept.items() if k.lower() != "authorization"}
            self.hops.append(newurl)
            return urllib.request.Request(newurl, headers=kept, origin_req_host=req.origin_req_host,
                                          unverifiable=True)

    return _Redirects(what, allow_insecure, hops)


def open_url(url: str, *, what: str, timeout: float, allow_insecure: bool = False,
             headers: Mapping[str, str] | None = None, auth: str | None = None,
             hops: list[str] | None = None) -> Any:
    """GET ``url`` (http or https; its userinfo becomes ``Authorization``, or ``auth`` is
    sent) following redirects by the module's rules; the response, as ``urlopen`` gives it.
    ``hops`` (when given) is filled with ``url`` and each redirect target."""
    plain, own = credentials(url)
    trail = hops if hops is not None else []
    trail[:] = [url]
    sent = dict(headers or {"User-Agent": "rocm-wheel-toolkit"})
    if own or auth:
        sent["Authorization"] = own or auth or ""
    import urllib.request

    opener = urllib.request.build_opener(_redirects(what, allow_insecure, trail))
    return opener.open(urllib.request.Request(plain, headers=sent), timeout=timeout)
