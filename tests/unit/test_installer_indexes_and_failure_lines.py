"""Which indexes uv and pip read with no index option (their documented environment variables:
uv's ``UV_DEFAULT_INDEX``, deprecated ``UV_INDEX_URL``, ``UV_INDEX`` (space-separated, each
``URL`` or ``NAME=URL``), ``UV_EXTRA_INDEX_URL``; pip's ``PIP_INDEX_URL`` and space-separated
``PIP_EXTRA_INDEX_URL``; else PyPI), and the exact lines an installer's failure becomes
(toolkit/env/buildreqs.py's module text). Outputs are uv's and pip's own wording."""

from __future__ import annotations

import pytest

from toolkit.core.errors import BuildRequirementsUnavailable, SourceUnreachable
from toolkit.env.buildreqs import HINT, PYPI, install_failure, installer_indexes, missing_requirement


def test_with_nothing_set_both_read_pypi() -> None:
    assert installer_indexes("uv", {}) == [PYPI] == ["https://pypi.org/simple"]
    assert installer_indexes("pip", {}) == [PYPI]


def test_uv_reads_its_default_index_then_the_deprecated_name_then_its_extra_ones() -> None:
    env = {"UV_DEFAULT_INDEX": "https://d/simple", "UV_INDEX_URL": "https://old/simple",
           "UV_INDEX": "internal=https://i/simple https://j/simple", "UV_EXTRA_INDEX_URL": "https://x/simple",
           "PIP_INDEX_URL": "https://pip/simple"}
    assert installer_indexes("uv", env) == ["https://d/simple", "https://i/simple", "https://j/simple",
                                            "https://x/simple"]
    assert installer_indexes("uv", {"UV_INDEX_URL": "https://old/simple"}) == ["https://old/simple"]
    # a path holding "=" but no URL after it is kept whole
    assert installer_indexes("uv", {"UV_INDEX": "/srv/a=b"}) == [PYPI, "/srv/a=b"]


def test_pip_reads_only_its_own_variables() -> None:
    env = {"PIP_INDEX_URL": "https://p/simple", "PIP_EXTRA_INDEX_URL": "https://e1/simple  https://e2/simple",
           "UV_DEFAULT_INDEX": "https://d/simple", "UV_INDEX": "https://i/simple"}
    assert installer_indexes("pip", env) == ["https://p/simple", "https://e1/simple", "https://e2/simple"]


UV_UNREACHABLE = ("error: Request failed after 3 retries\n  Caused by: Failed to fetch: "
                  "`http://127.0.0.1:9/simple/cmake/`\n  Caused by: error sending request for url "
                  "(http://127.0.0.1:9/simple/cmake/)\n  Caused by: tcp connect error: Connection refused "
                  "(os error 111)\n")


def test_an_unreachable_index_is_the_configured_one_the_url_lies_under() -> None:
    err = install_failure(UV_UNREACHABLE, ["cmake", "ninja"],
                          ["https://pypi.org/simple", "http://127.0.0.1:9/simple/"], "the project at /p")
    assert isinstance(err, SourceUnreachable) and err.exit_code == 8
    assert err.message == ("the index http://127.0.0.1:9/simple/ cannot be reached to install the build "
                           "requirements of the project at /p (cmake, ninja): Connection refused")
    assert err.hint == ("check the network or proxy, or point the installer at a reachable index "
                        "(UV_DEFAULT_INDEX, PIP_INDEX_URL)")


def test_an_unreachable_url_under_no_configured_index_is_named_itself() -> None:
    err = install_failure(UV_UNREACHABLE, ["cmake"], ["https://pypi.org/simple"], "x")
    assert err is not None and err.message.startswith(
        "the index http://127.0.0.1:9/simple/cmake/ cannot be reached")
    plain = install_failure("ERROR: Network is unreachable\n", ["cmake"],
                            ["https://a/simple", "https://b/simple"], "x")
    assert plain is not None and plain.message.startswith("the index https://a/simple, https://b/simple "
                                                          "cannot")


def test_pips_looking_in_indexes_line_wins_over_the_given_ones() -> None:
    out = ("Looking in indexes: https://mirror/simple, https://u:pw@extra/simple\n"
           "ERROR: Could not find a version that satisfies the requirement cmake>=9 (from versions: none)\n"
           "ERROR: No matching distribution found for cmake>=9\n")
    err = install_failure(out, ["cmake>=9"], ["https://pypi.org/simple"], "the project at /p")
    assert isinstance(err, BuildRequirementsUnavailable) and err.exit_code == 11
    assert err.message == ("the build requirement 'cmake>=9' of the project at /p cannot be installed: the "
                           "index "
                           "https://mirror/simple, https://***@extra/simple holds no distribution that "
                           "satisfies it")
    assert err.hint == HINT


@pytest.mark.parametrize(("output", "name"), [
    ("  × No solution found when resolving dependencies:\n  ╰─▶ Because no-such-pkg was not found in the "
     "package registry and you require no-such-pkg, we can conclude that your requirements are "
     "unsatisfiable.\n",
     "no-such-pkg"),
    ("  ╰─▶ Because there are no versions of other>=5 and you require other>=5, we can conclude ...\n",
     "other>=5"),
    ("ERROR: No matching distribution found for zz-pkg==1.0.\n", "zz-pkg==1.0"),
    ("ERROR: Could not find a version that satisfies the requirement qq<2; python_version<'3' (from", "qq<2"),
    ("error: Failed to build `x @ file:///x`\n", None),
])
def test_the_requirement_named_by_each_installers_words(output: str, name: str | None) -> None:
    assert missing_requirement(output, []) == name
