"""An explicit option wins over its environment variable; the variable is used only where
the option is not given (README: "CI may set `TOOLKIT_ROCM_FROM`, `TOOLKIT_ROCM_INDEX_URL`,
`TOOLKIT_ROCM_FAMILY`, `TOOLKIT_ROCM_CHANNEL` instead"; the smoke limits: "`--test-timeout S
--timeout S`, or `TOOLKIT_SMOKE_TEST_TIMEOUT` / `TOOLKIT_SMOKE_TIMEOUT` ...; 0: none"). The
options are parsed by the front ends' real parser."""

from __future__ import annotations

import argparse

import pytest

from toolkit.cli.commands.plan import add_build_options
from toolkit.core.errors import UsageError
from toolkit.plan.request import given_options
from toolkit.verify import smoke_limits

# (the option, its attribute on Options, its variable, a value for each)
PAIRS = [
    ("--rocm-from", "rocm_from", "TOOLKIT_ROCM_FROM", "system", "pip"),
    ("--channel", "channel", "TOOLKIT_ROCM_CHANNEL", "nightly", "stable"),
    ("--index-url", "index_url", "TOOLKIT_ROCM_INDEX_URL", "https://flag.example/simple/",
     "https://env.example/simple/"),
    ("--family", "family", "TOOLKIT_ROCM_FAMILY", "gfx94X-dcgpu", "gfx110X-all"),
]


def _parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_build_options(p)
    return p.parse_args(list(argv))


@pytest.mark.parametrize(("flag", "attr", "var", "given", "from_env"), PAIRS)
def test_the_option_wins_over_the_variable(flag: str, attr: str, var: str, given: str,
                                           from_env: str) -> None:
    opts = given_options(_parse(flag, given), {var: from_env})
    assert getattr(opts, attr) == given


@pytest.mark.parametrize(("flag", "attr", "var", "given", "from_env"), PAIRS)
def test_the_variable_stands_in_for_a_missing_option(flag: str, attr: str, var: str, given: str,
                                                     from_env: str) -> None:
    assert getattr(given_options(_parse(), {var: from_env}), attr) == from_env
    assert getattr(given_options(_parse(), {}), attr) is None
    assert getattr(given_options(_parse(), {var: ""}), attr) is None  # set but empty: unset


def test_a_variable_sets_only_its_own_option() -> None:
    env = {var: value for _, _, var, _, value in PAIRS}
    opts = given_options(_parse("--channel", "nightly"), env)
    assert (opts.rocm_from, opts.channel, opts.index_url, opts.family) == (
        "pip", "nightly", "https://env.example/simple/", "gfx110X-all")


@pytest.mark.parametrize(("option", "env", "want"), [
    (120.0, "600", 120.0),     # the option wins
    (None, "600", 600.0),      # the variable stands in
    (0.0, "600", None),        # an explicit 0: no limit, whatever the variable says
    (None, "0", None),         # README: 0: none
    (None, "", 900.0),         # set but empty: the default
    (None, None, 900.0),
])
def test_smoke_limits_option_then_variable_then_default(option: float | None, env: str | None,
                                                        want: float | None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if env is None:
        monkeypatch.delenv("TOOLKIT_SMOKE_TEST_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("TOOLKIT_SMOKE_TEST_TIMEOUT", env)
    got = smoke_limits.seconds(option, "--test-timeout", "TOOLKIT_SMOKE_TEST_TIMEOUT", 900.0)
    assert got == want


def test_a_bad_variable_is_named_when_it_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLKIT_SMOKE_TIMEOUT", "ten")
    assert smoke_limits.seconds(60.0, "--timeout", "TOOLKIT_SMOKE_TIMEOUT", 3600.0) == 60.0
    with pytest.raises(UsageError) as caught:
        smoke_limits.seconds(None, "--timeout", "TOOLKIT_SMOKE_TIMEOUT", 3600.0)
    assert "TOOLKIT_SMOKE_TIMEOUT" in str(caught.value) and "'ten'" in str(caught.value)
    assert caught.value.exit_code == 2
