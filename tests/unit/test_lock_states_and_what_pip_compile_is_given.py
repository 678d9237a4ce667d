"""Lock files (``toolkit.run.lockfiles``) without a real resolve: their four states, and what
pip-compile is run with and what of its output is written.

The pip-compile here is a real executable in the place the toolkit's pip-tools environment
puts it (as in test_failed_lock_names_the_error.py); it writes what it was given (its argv and
the environment variables pip reads) to its ``--output-file``, as pip-compile writes the lock
there. The truths: pip's documented variables (``PIP_FIND_LINKS`` adds locations, a lock
records only what it was compiled from; ``PIP_CONFIG_FILE=os.devnull`` reads no config
file), the header's documented "toolkit-lock-inputs" line, and ``nox -s lock --check``'s
states as the README names them (a missing lock, a stale one).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import tempfile
from importlib.metadata import version
from pathlib import Path

import pytest

from toolkit.core.errors import StepFailed
from toolkit.data.matrix import Build
from toolkit.plan.layout import Layout
from toolkit.plan.locks import lock_name
from toolkit.plan.model import Options
from toolkit.plan.provision import sources_for
from toolkit.plan.recipes import load_matrix
from toolkit.run.lockfiles import compile_lock, lock_status, write_locks

RECORDER = """#!/bin/sh
out=""; prev=""; last=""
for a in "$@"; do
  [ "$prev" = "--output-file" ] && out="$a"
  prev="$a"; last="$a"
done
{
  printf 'torch==2.7.0 \\\\\\n    --hash=sha256:%s\\n' "$(printf 'ab%.0s' $(seq 32))"
  echo "# from https://user:s3cret@mirror.example/simple"
  echo "# made in $(pwd)/cache"
  echo "# SEEN PIP_FIND_LINKS=${PIP_FIND_LINKS-unset}"
  echo "# SEEN PIP_CONFIG_FILE=${PIP_CONFIG_FILE-unset}"
  echo "# SEEN ROCM_SDK_TARGET_FAMILY=${ROCM_SDK_TARGET_FAMILY-unset}"
  echo "# SEEN PIP_INDEX_URL=${PIP_INDEX_URL-unset}"
  echo "# SEEN hashes=$(echo " $* " | grep -c -- ' --generate-hashes ')"
  echo "# SEEN last=$last"
  for a in "$@"; do echo "# ARG $a"; done
} > "$out"
"""


def install_tool(layout: Layout, python: str, body: str) -> Path:
    tool = (layout.cache / "tools" / f"pip-tools-{version('pip-tools')}-py{python}" / "bin"
            / "pip-compile")
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text(body)
    tool.chmod(0o755)
    return tool


def seen(text: str) -> dict[str, str]:
    """What the recorder wrote: ``# SEEN KEY=VALUE`` lines."""
    pairs = [ln[len("# SEEN "):].split("=", 1) for ln in text.splitlines()
             if ln.startswith("# SEEN ")]
    return {k: v for k, v in pairs}


def pip_build() -> tuple[object, Build]:
    m = load_matrix()
    build = next(b for b in m.builds if b.rocm.version != "cpu"
                 and sources_for(m, b, Options()).provider == "pip")
    return m, build


def test_pip_compile_gets_only_the_locations_the_lock_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m, build = pip_build()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    install_tool(layout, build.python, RECORDER)
    sources = dataclasses.replace(sources_for(m, build, Options()), family="gfx94X-dcgpu")  # type: ignore[arg-type]
    environ = {"PATH": os.environ["PATH"], "PIP_FIND_LINKS": "/somewhere/else",
               "PIP_CONFIG_FILE": "/etc/pip.conf", "PIP_INDEX_URL": "https://kept.example/"}
    path = compile_lock(build, sources, interpreter="/usr/bin/python3", layout=layout,
                        name="x.txt", environ=environ)
    assert path == layout.locks() / "x.txt"
    text = path.read_text()
    got = seen(text)
    assert got["PIP_FIND_LINKS"] == "unset"  # dropped: only what the lock records
    assert got["PIP_CONFIG_FILE"] == os.devnull  # no pip.conf of the host
    assert got["ROCM_SDK_TARGET_FAMILY"] == "gfx94X-dcgpu"
    assert got["PIP_INDEX_URL"] == "https://kept.example/"  # the rest is passed on
    assert got["hashes"] == "1"
    assert got["last"] == "./requirements.in"  # the temporary folder is written as "."
    # the lock names no temporary folder, and no password
    assert "/toolkit-lock-" not in text and tempfile.gettempdir() + "/" not in text
    assert "# made in ./cache" in text
    assert "s3cret" not in text and "mirror.example" in text
    # the header comes first and names its inputs
    first = text.splitlines()
    assert first[0].startswith("# toolkit-lock: ")
    assert any(line.startswith("# toolkit-lock-inputs: ") for line in first[:3])
    assert text.index("torch==2.7.0") > text.index("# toolkit-lock-inputs: ")


def test_no_family_sets_no_family_variable(tmp_path: Path) -> None:
    m, build = pip_build()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    install_tool(layout, build.python, RECORDER)
    sources = dataclasses.replace(sources_for(m, build, Options()), family=None)  # type: ignore[arg-type]
    environ = {"PATH": os.environ["PATH"], "ROCM_SDK_TARGET_FAMILY": "from-the-host"}
    text = compile_lock(build, sources, interpreter="/usr/bin/python3", layout=layout,
                        name="y.txt", environ=environ).read_text()
    assert seen(text)["ROCM_SDK_TARGET_FAMILY"] == "from-the-host"


def test_a_pip_compile_killed_by_a_signal_says_so(tmp_path: Path) -> None:
    m, build = pip_build()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    install_tool(layout, build.python, "#!/bin/sh\necho 'resolving' >&2\nkill -TERM $$\n")
    with pytest.raises(StepFailed) as caught:
        compile_lock(build, sources_for(m, build, Options()), interpreter="/usr/bin/python3",  # type: ignore[arg-type]
                     layout=layout, name="z.txt")
    message = str(caught.value)
    assert "z.txt" in message and "SIGTERM" in message, message
    assert caught.value.exit_code == 5
    assert not (layout.locks() / "z.txt").exists()


def test_lock_states_missing_then_current_then_stale_and_a_lock_without_header(
        tmp_path: Path) -> None:
    m, build = pip_build()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    install_tool(layout, build.python, RECORDER)
    options = Options()
    name = lock_name(m, build)  # type: ignore[arg-type]
    [st] = lock_status(m, [build], options, layout)  # type: ignore[arg-type]
    assert (st.name, st.state, st.path) == (name, "missing", str(layout.locks() / name))

    [written] = write_locks(m, [build, build], options, layout,  # type: ignore[arg-type]
                            interpreter="/usr/bin/python3")
    assert written == layout.locks() / name
    [st] = lock_status(m, [build, build], options, layout)  # type: ignore[arg-type]
    assert st.state == "current"

    # other inputs (another SDK index) than the lock was compiled from: stale
    other = Options(index_url="https://other.example/simple/")
    [st] = lock_status(m, [build], other, layout)  # type: ignore[arg-type]
    assert st.state == "stale"

    written.write_text("torch==2.7.0\n")  # hand-written: no toolkit header
    [st] = lock_status(m, [build], options, layout)  # type: ignore[arg-type]
    assert st.state == "no-header"


def test_builds_sharing_an_environment_share_one_lock_and_one_row(tmp_path: Path) -> None:
    m = load_matrix()
    by_name: dict[str, list[Build]] = {}
    for b in m.builds:
        if b.rocm.version != "cpu":
            by_name.setdefault(lock_name(m, b), []).append(b)
    shared = next(bs for bs in by_name.values() if len(bs) > 1)
    other = next(bs[0] for n, bs in by_name.items() if bs[0] not in shared)
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    rows = lock_status(m, [*shared, other], Options(), layout)
    assert [r.name for r in rows] == [lock_name(m, shared[0]), lock_name(m, other)]
    assert [r.state for r in rows] == ["missing", "missing"]


def test_pip_compiles_own_parser_reads_the_options_the_lock_needs(tmp_path: Path) -> None:
    """pip-tools' own command line (click) and pip's own install options parse the argv:
    hashes, pre-releases, no index or find-links lines in the lock, pip's cache off."""
    import warnings

    with warnings.catch_warnings():  # pip's vendored pkg_resources warns on import
        warnings.simplefilter("ignore", DeprecationWarning)
        from pip._internal.commands import create_command
    from piptools.scripts.compile import cli

    m, build = pip_build()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    install_tool(layout, build.python, RECORDER)
    text = compile_lock(build, sources_for(m, build, Options()), interpreter="/usr/bin/python3",  # type: ignore[arg-type]
                        layout=layout, name="x.txt").read_text()
    args = [ln[len("# ARG "):] for ln in text.splitlines() if ln.startswith("# ARG ")]
    req = tmp_path / "requirements.in"
    req.write_text("torch\n")
    args = [str(req) if a == "./requirements.in" else a for a in args]
    params = cli.make_context("pip-compile", args).params
    assert params["generate_hashes"] and params["pre"] and params["strip_extras"]
    assert params["allow_unsafe"] and params["quiet"] >= 1
    assert not params["emit_trusted_host"] and not params["emit_index_url"]
    assert not params["emit_find_links"]
    assert params["cache_dir"] == "./cache"  # inside its own temporary folder
    assert params["src_files"] == (str(req),)
    assert params["output_file"].name == "./x.txt"
    options, rest = create_command("install").parse_args(shlex.split(params["pip_args_str"]))
    assert rest == [] and options.cache_dir is False
    assert (options.timeout, options.retries) == (15, 1)


def test_a_second_lock_is_written_beside_the_first(tmp_path: Path) -> None:
    """The locks folder the first compile made is reused, not refused as existing."""
    m, build = pip_build()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    install_tool(layout, build.python, RECORDER)
    sources = sources_for(m, build, Options())  # type: ignore[arg-type]
    for name in ("a.txt", "b.txt"):
        compile_lock(build, sources, interpreter="/usr/bin/python3", layout=layout, name=name)
    assert sorted(p.name for p in layout.locks().iterdir()) == ["a.txt", "b.txt"]


def test_a_symlink_put_at_the_lock_while_pip_compile_runs_is_refused_as_the_lock_file(
        tmp_path: Path) -> None:
    """The lock is looked at again when written (README "## Exit codes": exit 2, bad input,
    for "an output or lock path that is a symlink, FIFO or folder"): a symlink that appeared
    there while pip-compile ran (this pip-compile makes one, the race played by the real
    executable) is refused in words naming the lock file and its path, and what it points to
    is left as it was."""
    from toolkit.core.errors import UsageError

    m, build = pip_build()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    victim = tmp_path / "elsewhere.txt"
    victim.write_text("keep\n")
    lock = layout.locks() / "a.txt"
    install_tool(layout, build.python,
                 RECORDER + f"ln -s {shlex.quote(str(victim))} {shlex.quote(str(lock))}\n")
    sources = sources_for(m, build, Options())  # type: ignore[arg-type]
    with pytest.raises(UsageError) as err:
        compile_lock(build, sources, interpreter="/usr/bin/python3", layout=layout, name="a.txt")
    message = err.value.message
    assert message.startswith("lock file "), message
    assert str(lock) in message and "symlink" in message and err.value.exit_code == 2
    assert victim.read_text() == "keep\n" and lock.is_symlink()
