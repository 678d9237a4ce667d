"""The commands typed steps run, read by the tools that run them: the toolkit's own command line
parser for ``check`` and ``smoke``, the real git for a worktree, the real uv for an environment;
and what ``--dry-run`` shows of each step (toolkit/core/steps: "``--dry-run`` is the whole
truth"), word for word, hand-written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli.main import build_parser
from toolkit.core.command import Command
from toolkit.core.steps import (
    BuildWheel,
    CheckEnv,
    CheckWheel,
    CreateEnv,
    ExpectWheel,
    FetchSources,
    IndexProbe,
    InstallSdk,
    InstallTorch,
    MarkEnvReady,
    NameWheel,
    ProbeIndexes,
    ProvideLibrary,
    Publish,
    Smoke,
    Step,
    UseSystemRocm,
)
from toolkit.core.steps.sources import CopySources, FetchSubmodules, Submodule
from toolkit.core.steps.variants import MakeVariant, PublishVariant

UV = shutil.which("uv", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def test_the_check_command_is_what_the_check_parser_reads() -> None:
    cmd = CheckWheel("/py", "/s/w.whl", "/art", gfx=("gfx942", "gfx90a"), with_libs=("/t/lib", "/r/lib"),
                     require_symbols=("ns::f",)).command()
    assert cmd.argv[:3] == ("/py", "-m", "toolkit") and cmd.cwd == "/art"
    args = build_parser("check").parse_args(list(cmd.argv[3:]))
    assert (args.command, args.paths, args.gfx, args.with_paths, args.required) == (
        "check", ["/s/w.whl"], ["gfx942,gfx90a"], ["/t/lib", "/r/lib"], ["ns::f"])
    bare = CheckWheel("/py", "/s/w.whl", "/art").command()
    assert bare.argv == ("/py", "-m", "toolkit", "check", "/s/w.whl")


def test_the_smoke_command_is_what_the_smoke_parser_reads() -> None:
    cmd = Smoke("/py", "/envs/e", "apex-1.8.0-cp312-rocm7.0", ("gfx942", "gfx90a"), "/w", "/art").command()
    assert cmd.argv[:3] == ("/py", "-m", "toolkit") and cmd.cwd == "/art" and cmd.echo
    args = build_parser("smoke").parse_args(list(cmd.argv[3:]))
    assert (args.env, args.build, args.manifest, args.gfx, args.workdir, args.junit) == (
        "/envs/e", "apex-1.8.0-cp312-rocm7.0", "{MANIFEST}", ["gfx942,gfx90a"], "/w", "/art/smoke-junit.xml")


def _git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def test_the_worktree_command_gives_git_a_detached_worktree_at_the_ref(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "f").write_text("1")
    _git("add", "f", cwd=repo)
    _git("commit", "-qm", "one", cwd=repo)
    _git("tag", "v1", cwd=repo)
    (repo / "f").write_text("2")
    _git("commit", "-qam", "two", cwd=repo)
    mirror = tmp_path / "mirror.git"
    _git("clone", "-q", "--mirror", str(repo), str(mirror), cwd=tmp_path)
    (tmp_path / "wt").mkdir()  # --force: a folder left there is no obstacle to git
    cmd = FetchSources(str(repo), "v1", str(mirror), str(tmp_path / "wt" / "x")).command()
    subprocess.run(cmd.argv, check=True, capture_output=True)
    assert (tmp_path / "wt" / "x" / "f").read_text() == "1"
    assert _git("rev-parse", "HEAD", cwd=tmp_path / "wt" / "x") == _git("rev-parse", "v1^{commit}", cwd=repo)
    assert _git("branch", "--show-current", cwd=tmp_path / "wt" / "x") == ""  # detached


@pytest.mark.skipif(UV is None, reason="uv is not installed")
def test_the_create_env_command_makes_a_seeded_venv_with_uv(tmp_path: Path) -> None:
    assert UV is not None
    cmd = CreateEnv(str(tmp_path / "env"), UV).command()
    assert dict(cmd.env) == {"UV_PYTHON_DOWNLOADS": "never"}
    argv = [sys.executable if a == "{INTERPRETER}" else a for a in cmd.argv]
    subprocess.run(argv, check=True, capture_output=True, env={**os.environ, **cmd.env})
    assert (tmp_path / "env" / "bin" / "python").exists()
    assert list((tmp_path / "env").glob("lib/python*/site-packages/pip"))  # --seed


def test_what_the_environment_steps_say() -> None:
    probes = ProbeIndexes((IndexProbe("https://i/simple", "rocm", "ROCm SDK index"),
                           IndexProbe("/wheels", None, "find-links location")))
    assert probes.explain() == ["probe ROCm SDK index https://i/simple for project 'rocm'",
                                "probe find-links location /wheels"]
    assert probes.command() is None
    check = CheckEnv("/e", "3.12", "python3.12", "0123456789abcdef", lock="/l/x.txt")
    assert check.explain() == [
        "resolve python3.12; learn INTERPRETER and TOOLS_PATH",
        "reuse /e when its stamp .toolkit-env.json matches (definition 0123456789ab, interpreter, lock "
        "/l/x.txt)"]
    assert CheckEnv("/e", "3.12", "python3.12", "0123456789abcdef").explain()[1] == (
        "reuse /e when its stamp .toolkit-env.json matches (definition 0123456789ab, interpreter)")
    assert CreateEnv("/e", "uv").explain() == ["rm /e/.toolkit-env.json; rm -rf /e"]
    install = Command(("pip", "install", "rocm"))
    assert InstallSdk(install, "/e/bin/python", "7.0").explain() == [
        "then /e/bin/python -m rocm_sdk path --root/--bin/--cmake, version, targets; its version must be "
        "ROCm 7.0"]
    assert InstallSdk(install, "/e/bin/python", "7.0", allow_mismatch=True).explain()[0].endswith(
        "ROCm 7.0 (a mismatch only warns: --allow-rocm-mismatch)")
    assert InstallSdk(install, "/p", "7.0").command() is install
    system = UseSystemRocm("/opt/rocm", "6.4", allow_mismatch=True)
    assert system.command() == Command(("/opt/rocm/bin/hipconfig", "--version"))
    assert system.explain() == ["read the version of /opt/rocm (.info/version, hip_version.h, hipconfig); "
                                "its "
                                "major.minor must match 6.4 (a mismatch only warns: --allow-rocm-mismatch)"]
    torch = InstallTorch(install, "/p", "7.0", "7.0")
    assert torch.explain() == ["then torch.version.hip major.minor must be 7.0; learn TORCH_LIB"]
    assert torch.command() is install
    assert MarkEnvReady("/e").explain() == ["write /e/.toolkit-env.json (the environment is ready)"]


def test_what_providing_a_library_says() -> None:
    tbb = ProvideLibrary(None, "system", "tbb", ("tbb/tbb.h", "oneapi/tbb.h"), ("/usr/lib", "/usr/lib64"),
                         ("/usr/include", "/opt/include"))
    assert (tbb.library, tbb.placeholder) == ("libtbb.so", "{TBB_LIB_DIR}")
    assert tbb.command() is None
    assert tbb.explain() == ["then libtbb.so must be in one of /usr/lib, /usr/lib64 and tbb/tbb.h or "
                             "oneapi/tbb.h "
                             "in one of /usr/include, /opt/include (else fail before the build); learn "
                             "TBB_LIB_DIR"]


def test_what_the_wheel_steps_say() -> None:
    build = Command(("python", "-m", "build"))
    assert BuildWheel(build, "/wh", "/wt", "/e", sanitize_ldshared="/e/bin/python").explain() == [
        "{LDSHARED}, {LDCXXSHARED} = LDSHARED, LDCXXSHARED of /e/bin/python without absolute -Wl,-rpath "
        "flags; "
        "{PYTHON_PREFIX_MAP} maps its prefix to /python",
        "skipped when /wh/.build-key matches (sources, command, environment unchanged); otherwise rm -rf /wh"]
    assert BuildWheel(build, "/wh", "/wt", "/e", force=True).explain() == ["rm -rf /wh (--rebuild)"]
    assert NameWheel("/wh", "/st", "7.0", "toolkit").explain() == [
        "rm -rf /st; write the wheel of /wh there (local label +rocm7.0git{SHA8}; METADATA, dist-info and "
        "RECORD "
        "rewritten; members sorted, times SOURCE_DATE_EPOCH, modes 0644/0755); learn WHEEL"]
    assert "(local label +cpugit{SHA8}; " in NameWheel("/wh", "/st", "cpu", "toolkit").explain()[0]
    assert "(the upstream name kept; " in NameWheel("/wh", "/st", "7.0", "upstream").explain()[0]
    assert Publish("/st/w.whl", "/dist").explain() == [
        "rename /st/w.whl into /dist/ (atomic), then remove the other wheels of /dist/ (a +...dirty wheel: "
        "only "
        "the earlier dirty ones); learn WHEEL"]
    assert ExpectWheel("/wh", "apex", "1.8.0", tags="cp39-abi3").explain() == [
        "the one wheel in /wh must be apex 1.8.0, tagged cp39-abi3"]
    assert ExpectWheel("/wh", "apex", "1.8.0").explain() == ["the one wheel in /wh must be apex 1.8.0"]


def test_a_step_renders_its_explanation_around_its_shell_line_and_says_it_all_in_json() -> None:
    cmd = Command(("uv", "pip", "install", "a b"), env={"X": "1 2"}, unset=("PYTHONPATH",), cwd="/w d")
    step = Step("install-torch", "install torch", InstallTorch(cmd, "/p", "7.0", "7.0"), reuse_env=True)
    assert step.kind == "install-torch" and step.provisions
    assert step.render() == [
        "    cd '/w d'", "    unset PYTHONPATH", "    X='1 2'", "    uv pip install 'a b'",
        "    # then torch.version.hip major.minor must be 7.0; learn TORCH_LIB",
        "    # skipped while the environment is reused"]
    doc = step.as_json()
    assert doc["action"]["install"] == {"argv": ["uv", "pip", "install", "a b"], "env": {"X": "1 2"},
                                        "unset": ["PYTHONPATH"], "cwd": "/w d", "echo": False,
                                        "timeout": None}
    action = doc["action"]
    assert (action["kind"], action["hip"], doc["argv"], doc["env"], doc["unset"], doc["cwd"]) == (
        "install-torch", "7.0", ["uv", "pip", "install", "a b"], {"X": "1 2"}, ["PYTHONPATH"], "/w d")
    assert doc["does"] == step.explain() and doc["reuse_env"] is True
    assert step.text() == ("then torch.version.hip major.minor must be 7.0; learn TORCH_LIB uv pip install a "
                           "b 1 2 /w d")
    mark = Step("mark-env-ready", "stamp", MarkEnvReady("/e"))
    assert mark.render() == ["    # write /e/.toolkit-env.json (the environment is ready)"]
    assert (mark.argv, dict(mark.env), mark.unset, mark.cwd, mark.provisions) == ((), {}, (), None, False)
    assert Step("check-env", "c", CheckEnv("/e", "3.12", "p", "d")).provisions


def test_what_the_source_steps_say_names_each_repository_and_folder() -> None:
    fetch = FetchSources("https://g/r.git", "v1", "/c/r.git", "/w/src").explain()
    assert fetch[0].startswith("git clone --mirror https://g/r.git /c/r.git unless it exists; ")
    assert fetch[0].endswith("; git fetch --prune when v1 is missing")  # a ref the mirror lacks
    subs = FetchSubmodules("/w/src", (Submodule("external/a", "https://g/a.git", "/c/m/a.git"),
                                      Submodule("external/b", "https://g/b.git", "/c/m/b.git")),
                           "/c/m").explain()
    # one line per submodule, led by its path, cloned from its URL into its own mirror
    assert [line.split(" (git fetch ")[0] for line in subs[:2]] == [
        "external/a: git clone --mirror https://g/a.git /c/m/a.git unless it exists",
        "external/b: git clone --mirror https://g/b.git /c/m/b.git unless it exists"]
    assert subs[2] == "their own submodules likewise, recursively (mirrors in /c/m/)"
    # what the step refuses, with the file it reads (gitmodules(5))
    assert subs[3].startswith("fail when .gitmodules lacks one of these paths") and \
        subs[3].endswith(" or names another URL")
    copy = CopySources("/home/me/p", "/w/src").explain()
    # a folder outside git has no commit: SOURCE_DATE_EPOCH 0 (reproducible-builds.org)
    assert copy[1].startswith("learn SHA and SOURCE_DATE_EPOCH from git -C /home/me/p (0 outside git) ")
    assert copy[1].endswith(" and TREE, the hash of the copied files")


def test_what_the_variant_steps_say_names_the_wheel_and_its_label() -> None:
    make = MakeVariant("gfx90a:xnack-", "/wh", "/st", "7.0", "toolkit").explain()
    (line,) = make
    # the label of a gfx90a:xnack- wheel is its owner gfx90a (rocm-bootstrap), written in the
    # file name and in .dist-info/variant.json as amd :: gfx_arch :: gfx90a (variantlib's form)
    assert line.startswith("rm -rf /st; name the wheel of /wh as name-wheel does, then write it there ")
    assert "there as <name>-<ver>-<py>-<abi>-<plat>-gfx90a.whl with .dist-info/variant.json " in line
    assert "amd :: gfx_arch :: gfx90a (rocm-bootstrap's owner of the target; " in line
    assert line.endswith(" and RECORD updated; learn VARIANT_WHEEL")
    (publish,) = PublishVariant("gfx942", "/st", "/dist").explain()
    assert publish.startswith("rename the wheel variant of /st into /dist/ (atomic), ")
    assert publish.endswith("remove the other wheels of /dist/ labelled -gfx942 "
                            "(the fat wheel and the other variants stay)")
