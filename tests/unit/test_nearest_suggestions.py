"""A mistyped enumerated value (a subcommand, a ROCm or Python version, a package, a gfx target,
a channel, a naming, a provider, a format, a CI trigger or family, a manylinux policy, a recipe
option's value, a data file's recipe) is refused in one line naming the nearest valid values,
whichever front end was used (``python -m toolkit``, ``invoke``, ``nox``). The expectation is
difflib's own answer (``get_close_matches`` with its defaults) on the valid values read from
the data (or the definition that lists them), for a typo made from one of them; the exit code
is README's (2 bad input, 3 a malformed data file)."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

from toolkit.cli.main import main
from toolkit.data.ci import CiConfig
from toolkit.data.matrix import Matrix

ROOT = Path(__file__).resolve().parents[2]


def nearest_line(typo: str, valid: Sequence[str]) -> str:
    """What the error must say: difflib's nearest values, nearest first ("a, b or c")."""
    close = difflib.get_close_matches(typo, list(valid))
    assert close, (typo, valid)  # a typo that has a nearest value, or the test proves nothing
    named = close[0] if len(close) == 1 else f"{', '.join(close[:-1])} or {close[-1]}"
    return f"did you mean {named}?"


def typo_of(value: str, valid: Sequence[str]) -> str:
    """``value`` with its last character changed to one that makes no valid value."""
    for c in "x0123456789abcdefz":
        typo = value[:-1] + c
        if typo not in valid:
            return typo
    raise AssertionError(value)


def _matrix() -> Matrix:
    from toolkit.plan.recipes import load_matrix

    return load_matrix()


def _rocms() -> list[str]:
    return list(_matrix().rocm)


def _pythons() -> list[str]:
    return sorted({b.python for b in _matrix().builds})


def _packages() -> list[str]:
    return list(_matrix().packages)


def _build_id() -> str:
    return _matrix().builds[0].id


def _ci() -> CiConfig:
    from toolkit.data.ci import load_ci

    return load_ci(_matrix())


def _gfx() -> tuple[list[str], str]:
    """Every target and family name the matrix knows, and a well-formed gfx id of none."""
    m = _matrix()
    targets = list(m.known_targets)
    valid = [*targets, *m.family_targets]
    typo = next(t[:-1] + c for t in targets for c in "0123456789abcdef"
                if t[:-1] + c not in valid and t[-1].isdigit() == c.isdigit())
    return valid, typo


def _policies() -> list[str]:
    from toolkit.inspect.readers.policy import load_policies

    return [p.name for p in load_policies("x86_64") if p.name != "linux"]


class Case(NamedTuple):
    argv: Callable[[str], list[str]]  # the command line, given the typo
    valid: Callable[[], Sequence[str]]  # the valid values, from the data or their definition
    pick: Callable[[Sequence[str]], str] = lambda v: v[-1]  # the value the typo is made from


def _naming_of_name_wheel() -> list[str]:
    from toolkit.cli.main import build_parser

    parser = build_parser("name-wheel").commands["name-wheel"]
    action = next(a for a in parser._actions if "--naming" in a.option_strings)
    return [str(c) for c in action.choices or ()]


def _channels() -> list[str]:
    from toolkit.data.specs import CHANNELS

    return list(CHANNELS)


def _namings() -> list[str]:
    from toolkit.plan.request import NAMINGS

    return list(NAMINGS)


def _providers() -> list[str]:
    from toolkit.plan.request import PROVIDERS

    return list(PROVIDERS)


def _formats() -> list[str]:
    from toolkit.cli.commands.matrix import FORMATS

    return list(FORMATS)


def _commands() -> list[str]:
    from toolkit.cli.main import build_parser

    return list(build_parser().commands)


def _recipe_option() -> tuple[str, list[str]]:
    from toolkit.plan.recipes import recipe_options

    name, spec = next(iter(recipe_options().items()))
    return name, list(spec.choices)


CASES: dict[str, Case] = {
    "subcommand": Case(lambda t: [t], _commands, lambda v: v[0]),
    "ROCm version": Case(lambda t: ["matrix", "--rocm", t], _rocms),
    "Python version": Case(lambda t: ["matrix", "--python", t], _pythons),
    "package": Case(lambda t: ["matrix", "--package", t], _packages, lambda v: v[0]),
    "format": Case(lambda t: ["matrix", "--format", t], _formats, lambda v: v[1]),
    "CI trigger": Case(lambda t: ["matrix", "--format", "github", "--trigger", t],
                        lambda: list(_ci().triggers)),
    "CI family": Case(lambda t: ["matrix", "--format", "github", "--families", t],
                       lambda: list(_ci().families)),
    "channel": Case(lambda t: ["plan", _build_id(), "--channel", t], _channels,
                     lambda v: v[0]),
    "naming": Case(lambda t: ["plan", _build_id(), "--naming", t], _namings),
    "ROCm SDK provider": Case(lambda t: ["plan", _build_id(), "--rocm-from", t], _providers),
    "name-wheel naming": Case(lambda t: ["name-wheel", "--naming", t, "--rocm", "7.0", "--sha",
                                          "0" * 40, "--dest", "d", "w"], _naming_of_name_wheel),
    "manylinux policy": Case(lambda t: ["check", "--policy", t, str(ROOT / "README.md")],
                              _policies, lambda v: v[-2]),
    "recipe option": Case(lambda t: ["plan", _build_id(), f"--{_recipe_option()[0]}", t],
                           lambda: _recipe_option()[1], lambda v: v[0]),
}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse refused it
        code = int(stop.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("what", sorted(CASES))
def test_a_typo_names_the_nearest(what: str, capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[what]
    valid = list(case.valid())
    typo = typo_of(case.pick(valid), valid)
    code, err = _run(case.argv(typo), capsys)
    lines = [x for x in err.splitlines() if "error:" in x]
    assert code == 2 and len(lines) == 1, err
    assert nearest_line(typo, valid) in lines[0], (lines[0], typo)
    assert "Traceback" not in err


def test_a_gfx_typo_names_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    valid, typo = _gfx()
    code, err = _run(["plan", _build_id(), "--gfx", typo], capsys)
    assert code == 2, err
    assert nearest_line(typo, valid) in err, err


def test_a_gpu_family_typo_names_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    """``--family`` of a release whose SDK index is per family: the families it served."""
    from toolkit.plan.provision import served_families

    m = _matrix()
    build = next(b for b in m.builds if b.rocm.families and b.rocm.sdk.channels)
    valid = list(served_families(m, build))
    typo = typo_of(valid[0], valid)
    code, err = _run(["plan", build.id, "--channel", next(iter(build.rocm.sdk.channels)),
                      "--family", typo], capsys)
    assert code == 2 and nearest_line(typo, valid) in err, err


def test_far_values_name_no_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing near (difflib finds none): the valid values only, no empty "did you mean"."""
    assert difflib.get_close_matches("zzzzzzzz", _packages()) == []
    code, err = _run(["matrix", "--package", "zzzzzzzz"], capsys)
    assert code == 2 and "did you mean" not in err and "valid: " in err, err


def _tool(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


def test_a_data_files_recipe_typo_names_the_nearest(tmp_path: Path) -> None:
    """A package file naming a recipe that is not registered: exit 3, the nearest named."""
    from toolkit.data.matrix import data_dir
    from toolkit.plan.recipes import REGISTRY

    data = tmp_path / "data"
    shutil.copytree(data_dir(), data)
    recipe = sorted(REGISTRY)[0]
    files = [f for f in data.glob("*.toml") if f'\nrecipe = "{recipe}"' in f.read_text()]
    assert files, recipe
    typo = typo_of(recipe, sorted(REGISTRY))
    files[0].write_text(files[0].read_text().replace(f'\nrecipe = "{recipe}"',
                                                     f'\nrecipe = "{typo}"'))
    res = _tool("toolkit", "matrix", "--ids", env={"TOOLKIT_DATA_DIR": str(data)})
    assert res.returncode == 3, res.stderr
    assert len(res.stderr.splitlines()) == 1, res.stderr
    assert nearest_line(typo, sorted(REGISTRY)) in res.stderr, res.stderr


def test_invoke_and_nox_name_the_nearest_too() -> None:
    rocms = _rocms()
    typo = typo_of(rocms[-1], rocms)
    inv = _tool("invoke", "-r", str(ROOT), "matrix", "--rocm", typo)
    assert inv.returncode == 2 and nearest_line(typo, rocms) in inv.stderr, inv.stderr

    from toolkit.cli.noxsupport import matrix_pairs

    python, rocm, _ = matrix_pairs()[0]
    channels = _channels()
    typo = typo_of(channels[0], channels)
    res = _tool("nox", "-s", f"build-{python}-rocm{rocm}", "--", "--channel", typo,
                "--dry-run")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out  # nox's own failure; the session's line says exit 2
    line = next(x for x in out.splitlines() if "aborted" in x)
    assert nearest_line(typo, channels) in line and "(exit 2)" in line, line
