"""Truths the toolkit/plan function tests share (issue 19, part 8, session 25): the test
layout and host, orders of gfx ids worked out by hand from gpus.toml, rocm.toml's 7.0 served
families, ROCm/apex's ``get_apex_version`` as written at its release branches, and readers
that take an install command apart with pip's own parser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fixtures.data import edit
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout

LAYOUT = Layout(Path("/w"), Path("/c"))
HOST = HostFacts(cores=16, mem_available_gib=64.0)


# gpus.toml's "rocm-6" era (targets and extra_targets), ordered by hand: family by family
# (gfx9, gfx10, gfx11), within one by the hex digits of its minor and stepping
ROCM6_SORTED = ("gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx1010", "gfx1011",
                "gfx1012", "gfx1013", "gfx1030", "gfx1032", "gfx1035", "gfx1036", "gfx1100",
                "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151")


def therock_torch_on_a_system_sdk(data: Path, index: str) -> None:
    """ROCm 7.1 (a system SDK by default: no per-family SDK index, so no SDK family) with a
    per-family pip channel ``index`` and torch 2.10 from it, TheRock-style (rocm.toml:
    `kind = "therock"` installs from the release's channel, `<channel>/<family>/`)."""
    rocm = data / "rocm.toml"
    edit(rocm, 'provider = "system", version = "7.1.0",',
         'provider = "system", version = "7.1.0", layout = "per-family", legacy = true,')
    edit(rocm, 'torch."2.10" = { kind = "pytorch", index_url = "https://download.pytorch.org/whl/rocm7.1/", ',
         f'channels = {{ nightly = "{index}", evidence = "x" }}\n'
         'torch."2.10" = { kind = "therock", ')


def get_apex_version(version_txt: str, env: dict[str, str], reads_build_version: bool) -> str:
    """ROCm/apex setup.py get_apex_version, as written at every release branch 1.4-1.13
    (@5567275d 1.4.0 ... @68f9dc9e3 1.13.0): BUILD_VERSION replaces version.txt (1.7 on), then
    ``+$DESIRED_CUDA`` and, with it, ``.git`` and APEX_COMMIT's first 8 characters."""
    version = version_txt
    if reads_build_version and env.get("BUILD_VERSION"):
        version = env["BUILD_VERSION"]
    if env.get("DESIRED_CUDA"):
        version += "+" + env["DESIRED_CUDA"]
        if env.get("APEX_COMMIT"):
            version += ".git" + env["APEX_COMMIT"][:8]
    return version


SHA = "0123abcd4567ef890123abcd4567ef890123abcd"


PROJECT = Path(__file__).parent.parent / "projects" / "own_flat"


def install_names(argv: tuple[str, ...]) -> list[str]:
    """The PEP 503 names of the requirements `uv pip install` is given (after --python X),
    an ``-r`` file left out."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    args = list(argv[argv.index("--python") + 2:])
    if "-r" in args:
        del args[args.index("-r"):args.index("-r") + 2]
    return [canonicalize_name(Requirement(a).name) for a in args]


# rocm.toml [releases."7.0".families] (TheRock@de9728b3d): what its per-family index served;
# ordered narrowest first (members, then name), after the default family gfx94X-dcgpu
SERVED_70 = {"gfx94X-dcgpu": ["gfx942"], "gfx950-dcgpu": ["gfx950"],
             "gfx110X-dgpu": ["gfx1100", "gfx1101", "gfx1102"], "gfx1151": ["gfx1151"],
             "gfx120X-all": ["gfx1200", "gfx1201"]}


LINKS = ("https://links.example/",)


GFX = ("gfx942", "gfx90a:xnack+")


def pip_install_reads(argv: tuple[str, ...]) -> tuple[Any, list[str]]:
    """``uv pip install ARGS`` read by pip's own install parser (uv pip takes pip's index and
    find-links options): (options, requirements). uv's own flags are taken off first."""
    from pip._internal.commands import create_command

    assert argv[1:5] == ("pip", "install", "--python", argv[4]) and argv[5] == "--prerelease=allow"
    args = list(argv[6:])
    for flag in ("--refresh-package", "--index-strategy"):
        if flag in args:
            at = args.index(flag)
            del args[at:at + 2]
    opts, reqs = create_command("install", isolated=True).parse_args(["--isolated", *args])
    return opts, reqs


# gpus.toml's "therock-7.15" era targets (each has a rocm-sdk-device-<gfx> package), ordered by hand
THEROCK_715 = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx90c", "gfx942", "gfx950", "gfx1010",
               "gfx1011", "gfx1012", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034",
               "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
               "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201", "gfx1250")


def demo_plan(hip: tuple[str, str] | None) -> Any:
    """The plan `python -m toolkit demo` makes (toolkit/cli/commands/demo.py) for the sample
    on a host whose system ROCm is ``hip`` (version, path) or none."""
    from toolkit.env.host import SystemRocm
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan
    from toolkit.plan.recipes import load_matrix
    from toolkit.plan.recipes.sample import EXAMPLE, demo_build

    host = HostFacts(cores=16, mem_available_gib=64.0, interpreters={"3.12": "/usr/bin/python3.12"},
                     system_rocm=SystemRocm(*hip) if hip else None)
    opts = Options(gfx=("gfx90a",), rocm_from="system", source=str(EXAMPLE))
    return plan(load_matrix(), demo_build("3.12", hip), opts, host, LAYOUT)
