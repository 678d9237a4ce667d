"""Each way uv and pip say an index could not be reached becomes the one "cannot be reached"
line (exit 8) ending in the installer's own words for why (toolkit/env/buildreqs.py's module
text: refused, unresolvable host, no route, a certificate, ``--offline``, ...); a requirement
no index holds gets the hint that names PEP 518's ``[build-system] requires`` and the
installers' index variables.

The outputs are the installers' own: those marked "observed" were printed here by uv 0.13.9
and pip 23.2.1 (an unresolvable ``.invalid`` host, ``--offline``, an HTTP server spoken to
over HTTPS, one answering 403, read with ``pip -vvv``); the others keep that wording with the
resolver's or the kernel's message of another host: glibc's ``gai_strerror(EAI_AGAIN)``
("Temporary failure in name resolution", no DNS server), macOS's ``EAI_NONAME`` ("nodename
nor servname provided, or not known"), ``strerror(EHOSTUNREACH)`` and OpenSSL's "certificate
verify failed"."""

from __future__ import annotations

import errno
import os

import pytest

from toolkit.core.errors import BuildRequirementsUnavailable, SourceUnreachable
from toolkit.env.buildreqs import install_failure

INDEX = "https://no-such-host.invalid/simple"
UV_CHAIN = ("error: Request failed after 3 retries in 6.9s\n"
            f"  cause: Failed to fetch: {INDEX}/reqdemo-zz/\n"
            f"  cause: error sending request for url ({INDEX}/reqdemo-zz/)\n"
            "  cause: client error (Connect)\n")
OUTPUTS = {
    # observed: uv, a host the resolver says does not exist
    "Name or service not known": UV_CHAIN + (
        "  cause: dns error\n  cause: error resolving DNS\n"
        "  cause: failed to lookup address information: Name or service not known\n"),
    # uv on a host without a reachable DNS server (glibc EAI_AGAIN)
    "Temporary failure in name resolution": UV_CHAIN + (
        "  cause: dns error\n  cause: error resolving DNS\n"
        "  cause: failed to lookup address information: Temporary failure in name resolution\n"),
    # uv on macOS (EAI_NONAME there)
    "failed to lookup address information": UV_CHAIN + (
        "  cause: dns error\n  cause: error resolving DNS\n  cause: failed to lookup address "
        "information: nodename nor servname provided, or not known\n"),
    # uv, a route the kernel does not have
    os.strerror(errno.EHOSTUNREACH): UV_CHAIN + (
        f"  cause: tcp connect error: {os.strerror(errno.EHOSTUNREACH)} (os error "
        f"{errno.EHOSTUNREACH})\n"),
    # pip, a certificate the system does not trust
    "certificate verify failed": (
        f"Looking in indexes: {INDEX}\n"
        f"Could not fetch URL {INDEX}/reqdemo-zz/: There was a problem confirming the ssl "
        "certificate: HTTPSConnectionPool(host='no-such-host.invalid', port=443): Max retries "
        "exceeded with url: /simple/reqdemo-zz/ (Caused by SSLError(SSLCertVerificationError(1, "
        "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate "
        "(_ssl.c:1006)'))) - skipping\n"
        "ERROR: No matching distribution found for reqdemo-zz\n"),
    # observed: uv --offline, a registry requirement
    "network was disabled": (
        "error: No solution found when resolving dependencies\n  cause: Because reqdemo-zz was "
        "not found in the cache and you require reqdemo-zz, we can conclude that your "
        "requirements are unsatisfiable.\n\nhint: Packages were unavailable because the network "
        "was disabled. When the network is disabled, registry packages may only be read from "
        "the cache.\n"),
    # observed: uv --offline, a direct URL
    "Network connectivity is disabled": (
        "error: Failed to download `zz @ https://example.invalid/zz-1.0-py3-none-any.whl`\n"
        "  cause: Network connectivity is disabled, but the requested data wasn't found in the "
        "cache: https://example.invalid/zz-1.0-py3-none-any.whl\n"),
    # observed: pip, an HTTP server spoken to over HTTPS
    "Max retries exceeded": (
        "Looking in indexes: https://127.0.0.1:18765/simple\n"
        "Could not fetch URL https://127.0.0.1:18765/simple/reqdemo-zz/: There was a problem "
        "confirming the ssl certificate: HTTPSConnectionPool(host='127.0.0.1', port=18765): Max "
        "retries exceeded with url: /simple/reqdemo-zz/ (Caused by SSLError(SSLError(1, '[SSL: "
        "WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1006)'))) - skipping\n"
        "ERROR: No matching distribution found for reqdemo-zz\n"),
    # observed: pip -vvv, an index answering 403
    "Could not fetch URL": (
        "Looking in indexes: http://127.0.0.1:18766/simple\n"
        "Could not fetch URL http://127.0.0.1:18766/simple/reqdemo-zz/: 403 Client Error: "
        "Forbidden for url: http://127.0.0.1:18766/simple/reqdemo-zz/ - skipping\n"
        "ERROR: No matching distribution found for reqdemo-zz\n"),
}


@pytest.mark.parametrize("why", list(OUTPUTS))
def test_each_unreachable_index_ends_in_the_installers_words_for_why(why: str) -> None:
    said = install_failure(OUTPUTS[why], ["reqdemo-zz"], [INDEX], "the project at /src")
    assert isinstance(said, SourceUnreachable), said
    assert said.exit_code == 8
    assert said.message.endswith(f"of the project at /src (reqdemo-zz): {why}"), said.message


def test_a_missing_requirement_is_told_where_build_requirements_are_named_and_indexes_set() -> None:
    said = install_failure("ERROR: No matching distribution found for reqdemo-zz\n",
                           ["reqdemo-zz"], [INDEX], "the project at /src")
    assert isinstance(said, BuildRequirementsUnavailable) and said.hint is not None
    # PEP 518: the build requirements are the [build-system] table's `requires`
    assert said.hint.startswith("name a requirement the index serves in the project's "
                                "[build-system] requires, or ")
    # uv's and pip's documented index variables
    assert said.hint.endswith(" (UV_DEFAULT_INDEX, PIP_INDEX_URL)")
