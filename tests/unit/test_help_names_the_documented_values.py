"""What each option's --help must name, from independent statements: the README's option list
(``--naming toolkit|upstream``, ``--rocm-from pip|system``, ``--channel
stable|prerelease|nightly|dev``, ``--apex-ops prebuilt|jit``) and exit codes (12 a dirty
source, 0/1 for a re-tried known failure, 9 a timeout), rocm.toml's channels, the limits the
checks really apply (``wheelzip.Budget``'s defaults, in binary units) and the smoke suite's own
default per-test limit (smoke_tests/conftest.py). Not the exact wording."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import tomllib

from toolkit.cli.commands import check
from toolkit.cli.main import build_parser
from toolkit.inspect.readers import wheelzip

ROOT = Path(__file__).resolve().parents[2]


def _helps(command: str) -> dict[str, str]:
    parser = build_parser(command).commands[command]
    return {max(a.option_strings, key=len): " ".join((a.help or "").split())
            for a in parser._actions if a.option_strings}


@pytest.fixture(scope="module")
def plan() -> dict[str, str]:
    return _helps("plan")


@pytest.mark.parametrize(("option", "words"), [
    ("--naming", ["toolkit", "upstream"]),
    ("--rocm-from", ["pip", "system"]),
    ("--channel", ["stable", "prerelease", "nightly", "dev"]),
    ("--allow-dirty", ["12", "dirty", "--source"]),
    ("--include-known-failures", ["exit 0", "exit 1", "known_failures.toml"]),
    ("--gfx", ["gfx", "famil"]),
    ("--workdir", ["dist/", "artifacts/"]),
    ("--no-lock", ["locks/"]),
    ("--allow-insecure-index", ["http://", "loopback"]),
    ("--variants", ["variant", "gfx"]),
    ("--source", ["checkout", "sdist"]),
    ("--index-url", ["index"]),
    ("--find-links", ["find-links"]),
    ("--family", ["family"]),
    ("--rocm-sdk-test", ["rocm-sdk test"]),
    ("--no-smoke", ["smoke"]),
    ("--rebuild", ["wheel"]),
    ("--allow-rocm-mismatch", ["ROCm", "version"]),
])
def test_build_options_name_their_documented_values(plan: dict[str, str], option: str,
                                                    words: list[str]) -> None:
    for word in words:
        assert word in plan[option], (option, plan[option])


def test_every_channel_of_the_data_is_one_the_help_names(plan: dict[str, str]) -> None:
    rocm = tomllib.loads((ROOT / "toolkit" / "data" / "rocm.toml").read_text(encoding="utf-8"))
    channels = {c for release in rocm.get("releases", rocm).values() if isinstance(release, dict)
                for c in release.get("channels", ()) if c != "evidence"}
    assert channels, "rocm.toml lists channels"
    named = set(re.findall(r"[a-z]+", plan["--channel"].split("(")[0]))
    assert channels <= named


def test_the_apex_option_offers_what_the_readme_documents() -> None:
    parser = build_parser("plan").commands["plan"]
    (ops,) = [a for a in parser._actions if "--apex-ops" in a.option_strings]
    assert set(ops.choices or ()) == {"prebuilt", "jit"}


def _amount(help_text: str) -> str:
    found = re.search(r"default ([0-9.]+[KMGT]?)\)", help_text)
    assert found, help_text
    return found.group(1)


def test_check_limits_say_the_limits_the_checks_apply() -> None:
    helps = _helps("check")
    budget = wheelzip.Budget()
    assert check._size(_amount(helps["--max-member-size"])) == budget.member
    assert check._size(_amount(helps["--max-total-size"])) == budget.total
    assert float(_amount(helps["--max-ratio"])) == budget.max_ratio
    assert "64M" in helps["--max-ratio"]
    assert "CPU" in helps["--jobs"]
    assert "JSON" in helps["--json"] and "every" in helps["--verbose"]
    assert "manylinux" in helps["--policy"] and "auditwheel" in helps["--exclude"]


def test_smoke_limits_say_their_variables_and_defaults() -> None:
    helps = _helps("smoke")
    conftest = (ROOT / "smoke_tests" / "conftest.py").read_text(encoding="utf-8")
    default = re.search(r"^DEFAULT_TEST_TIMEOUT_S = ([0-9.]+)", conftest, re.M)
    assert default
    per_test = helps["--test-timeout"]
    assert "$TOOLKIT_SMOKE_TEST_TIMEOUT" in per_test and f"{float(default.group(1)):g}" in per_test
    assert "0: none" in per_test and "exit 9" in per_test
    total = helps["--timeout"]
    assert "$TOOLKIT_SMOKE_TIMEOUT" in total and "3600" in total and "exit 9" in total
    assert "xdist" in helps["--numprocesses"] and "JUnit" in helps["--junit"]
    assert "GPU" in helps["--require-gpu"]


def test_report_and_upstream_options_name_their_files() -> None:
    report = _helps("report")
    assert "nox --report FILE" in report["--nox-report"] and "junit" in report["--junit"].lower()
    assert "manifest.json" in report["--manifests"] and "artifacts/" in report["--manifests"]
    assert "markdown" in report["--markdown"] and "exit 1" in report["--strict"]
    upstream = _helps("upstream")
    assert "data" in upstream["--write"] and "JSON" in upstream["--json"]
    assert "markdown" in upstream["--pr-body"]


def test_parsers_refuse_an_empty_path_in_one_line() -> None:
    from toolkit.cli.commands.plan import path_value

    with pytest.raises(argparse.ArgumentTypeError, match="empty path"):
        path_value("")
    with pytest.raises(argparse.ArgumentTypeError, match="control character"):
        path_value("a\nb")
    assert path_value("dist") == "dist"
