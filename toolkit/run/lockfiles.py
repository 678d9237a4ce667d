"""Writing lock files: pip-compile ``--generate-hashes`` per environment, and their state.

Naming, the inputs hash and reading live in ``toolkit.plan.locks`` (plans depend on them);
running pip-compile and writing ``locks/<name>`` atomically (masked) lives here.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import EnvironmentProblem, StepFailed, status
from toolkit.core.files import refuse_special, write_atomic
from toolkit.core.proc import run as run_proc
from toolkit.core.urls import mask
from toolkit.data.matrix import Build, Matrix
from toolkit.env.interpreters import find_uv
from toolkit.plan.layout import Layout
from toolkit.plan.locks import find_lock, header, inputs_hash, lock_name, read_locks, requirements_in
from toolkit.plan.model import Options
from toolkit.plan.provision import sources_for
from toolkit.plan.sources import Sources


def _tools_env(layout: Layout, interpreter: str, python: str) -> Path:
    """A small venv of the target Python holding pip-tools (pip-compile resolves for its own
    interpreter: markers and wheel tags must be the environment's, not the toolkit's)."""
    from importlib.metadata import version

    pt = version("pip-tools")
    env = layout.cache / "tools" / f"pip-tools-{pt}-py{python}"
    compile_bin = env / "bin" / "pip-compile"
    if compile_bin.exists():
        return compile_bin
    uv = find_uv()
    if not uv:
        raise EnvironmentProblem("uv is needed to prepare pip-tools", hint="pip install uv")
    for argv in ([uv, "venv", "-q", "--python", interpreter, str(env)],
                 [uv, "pip", "install", "-q", "--python", str(env / "bin" / "python"),
                  f"pip-tools=={pt}", "pip"]):
        res = run_proc(argv, timeout=600, check=False)
        if not res.ok:
            raise EnvironmentProblem(f"cannot prepare pip-tools for Python {python}: "
                                     f"{mask(' '.join(argv))}: {res.last_line()}")
    return compile_bin


def compile_lock(
    build: Build,
    sources: Sources,
    *,
    interpreter: str,
    layout: Layout,
    name: str,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """Run pip-compile for one environment; write ``locks/<name>`` atomically, masked."""
    compile_bin = _tools_env(layout, interpreter, build.python)
    out_dir = layout.locks()
    out_dir.mkdir(parents=True, exist_ok=True)
    refuse_special(out_dir / name, "lock file")  # before pip-compile runs, not after
    digest = inputs_hash(build, sources)
    env = dict(os.environ if environ is None else environ)
    if sources.family:
        env["ROCM_SDK_TARGET_FAMILY"] = sources.family
    env.pop("PIP_FIND_LINKS", None)  # only what the lock records
    env["PIP_CONFIG_FILE"] = os.devnull
    with tempfile.TemporaryDirectory(prefix="toolkit-lock-") as tmp:
        req = Path(tmp) / "requirements.in"
        req.write_text(requirements_in(sources), encoding="utf-8")
        out = Path(tmp) / name
        argv = [str(compile_bin), "--quiet", "--generate-hashes", "--pre", "--strip-extras",
                "--allow-unsafe", "--no-emit-trusted-host", "--no-emit-index-url",
                "--no-emit-find-links", "--cache-dir", str(Path(tmp) / "cache"),
                "--pip-args", "--no-cache-dir --timeout 15 --retries 1",
                "--output-file", str(out), str(req)]
        res = run_proc(argv, env=env, cwd=tmp, timeout=3600, check=False)
        if not res.ok:
            # its error is on stderr (stdout: progress), so stderr's last line, else stdout's
            raise StepFailed(f"pip-compile failed for {name} ({status(res.returncode)}): "
                             f"{res.last_line()}")
        body = out.read_text(encoding="utf-8").replace(tmp, ".")
        text = mask(header(build, sources, name, digest) + body)
        # replaced whole (never written through a symlink or into a FIFO)
        return write_atomic(out_dir / name, text, "lock file")


@dataclass(frozen=True)
class LockStatus:
    name: str
    state: str  # "current" | "stale" | "missing" | "no-header"
    path: str


def lock_status(matrix: Matrix, builds: Iterable[Build], options: Options,
                layout: Layout) -> list[LockStatus]:
    found = read_locks(layout.locks())
    out: dict[str, LockStatus] = {}
    for b in builds:
        name = lock_name(matrix, b)
        if name in out:
            continue
        ref = find_lock(found, name)
        path = str(layout.locks() / name)
        if ref is None:
            out[name] = LockStatus(name, "missing", path)
        elif ref.inputs is None:
            out[name] = LockStatus(name, "no-header", path)
        else:
            want = inputs_hash(b, sources_for(matrix, b, options))
            out[name] = LockStatus(name, "current" if want == ref.inputs else "stale", path)
    return list(out.values())


def write_locks(matrix: Matrix, builds: Iterable[Build], options: Options, layout: Layout,
                *, interpreter: str) -> list[Path]:
    """One lock per distinct environment among ``builds``."""
    done: dict[str, Path] = {}
    for b in builds:
        name = lock_name(matrix, b)
        if name in done:
            continue
        done[name] = compile_lock(b, sources_for(matrix, b, options), interpreter=interpreter,
                                  layout=layout, name=name)
    return list(done.values())
