"""Build manifests: ``artifacts/<build-id>/manifest.json``, enough to re-run a build as it ran.

What a manifest records: the toolkit version; the build (combo) and gfx targets; the SDK
provider, index URLs and SDK version; the lock file and its hash; every installed
distribution; the environment variables the toolkit set; each step's argv, exit code and
duration; tool versions; the source repository and commit; host facts; the outcome.
Credentials in URLs are masked before anything is written.

``recipe_facts(build, targets)`` is the part every manifest shares (the build, its recipe and
distribution name, the targets, the modules and symbols the recipe expects): the build's own
manifest (``toolkit.run.jobs.write_manifest``) and the one the smoke runner makes for a build
that has none (``toolkit.verify.smoke.manifest_for_id``) both take those fields from it.
``read`` is the one reader (JSON object with a ``build`` object naming id, package and
version); ``load`` adds the checks ``repro`` needs (every field, this schema version).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.errors import CommandFailed, UsageError
from toolkit.core.files import missing as no_file
from toolkit.core.files import read_bytes, sha256_file, write_atomic
from toolkit.core.proc import run as run_command
from toolkit.core.text import escape
from toolkit.core.urls import mask
from toolkit.run.manifest_schema import check_values, type_error, validate

if TYPE_CHECKING:
    from toolkit.data.matrix import Build
    from toolkit.plan.model import Options

# how long a tool asked for its version (``_first_line``) may take: one that hangs past it
# has no version (None), and its process group is stopped
PROBE_TIMEOUT_S = 30.0

_INDEX_FLAGS = ("--index-url", "--extra-index-url", "--index", "--default-index", "--find-links")


def _first_line(argv: list[str], pattern: str | None = None) -> str | None:
    exe = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
    if not exe or not os.path.exists(exe):
        return None
    try:
        proc = run_command([exe, *argv[1:]], timeout=PROBE_TIMEOUT_S, check=False,
                           env={**os.environ, "HIP_PLATFORM": "amd"})
    except CommandFailed:  # could not start, or timed out
        return None
    text = proc.stdout + proc.stderr
    if pattern:
        m = re.search(pattern, text)
        return m.group(0).strip() if m else None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[0].strip() if lines else None


def tool_versions(env_python: str, rocm_bin: str | None) -> dict[str, str | None]:
    hipcc = f"{rocm_bin}/hipcc" if rocm_bin else "hipcc"
    return {
        "python": _first_line([env_python, "--version"]),
        "hipcc": _first_line([hipcc, "--version"], r"HIP version: \S+"),
        "clang": _first_line([f"{rocm_bin}/../llvm/bin/clang" if rocm_bin else "clang", "--version"])
        or _first_line(["clang", "--version"]),
        "gcc": _first_line(["gcc", "--version"]),
        "cmake": _first_line(["cmake", "--version"]),
        "ninja": _first_line(["ninja", "--version"]),
    }


def host_facts() -> dict[str, Any]:
    from toolkit.env.gpus import detect
    from toolkit.env.host import discover

    host = discover()
    os_name = platform.platform()
    try:
        with open("/etc/os-release", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("PRETTY_NAME="):
                    os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    libc = platform.libc_ver()
    detection = detect()
    return {
        "os": os_name,
        "machine": platform.machine(),
        "glibc": libc[1] if libc[0] == "glibc" else None,
        "cores": host.cores,
        "mem_available_gib": round(host.mem_available_gib, 1),
        "gpus": [g.gfx for g in detection.gpus],
    }


_ABI_PROBE = ("import json, sys, sysconfig; print(json.dumps([sys.implementation.name, "
              "'%d.%d' % sys.version_info[:2], sysconfig.get_config_var('SOABI') or '']))")


def interpreter_identity(python: str) -> dict[str, str | None]:
    """The implementation, major.minor and ABI (SOABI) of the interpreter ``python``."""
    try:
        proc = run_command([python, "-I", "-c", _ABI_PROBE], timeout=60, check=False)
        impl, version, abi = json.loads(proc.stdout) if proc.returncode == 0 else [None] * 3
    except (CommandFailed, json.JSONDecodeError, ValueError):
        impl = version = abi = None
    return {"implementation": impl, "version": version, "abi": abi}


def learned_identity(env_python: str, sdk: dict[str, Any],
                     installed: list[dict[str, str]]) -> dict[str, Any]:
    """The identity a run learns: the interpreter's implementation, version and ABI, the
    SDK's version, the torch installed and the lock's hash."""
    torch = next((d["version"] for d in installed if d["name"].lower() == "torch"), None)
    lock = sdk.get("lock") or {}
    return {"interpreter": interpreter_identity(env_python),
            "sdk_version": sdk.get("version"), "torch_version": torch,
            "lock_sha256": lock.get("sha256")}


def installed(env_python: str) -> list[dict[str, str]]:
    code = ("import importlib.metadata as m, json; print(json.dumps(sorted("
            "{(d.metadata['Name'], d.version) for d in m.distributions() if d.metadata['Name']})))")
    try:
        proc = run_command([env_python, "-I", "-c", code], timeout=120, check=False)
        pairs = json.loads(proc.stdout) if proc.returncode == 0 else []
    except (CommandFailed, json.JSONDecodeError):
        pairs = []
    return [{"name": n, "version": v} for n, v in pairs]


def file_sha256(path: str | Path) -> str | None:
    """The file's sha256, None when it cannot be read."""
    try:
        return sha256_file(path)
    except OSError:
        return None


def sdk_facts(plan_json: dict[str, Any], values: dict[str, str],
              channel: str | None = None) -> dict[str, Any]:
    """Where the SDK came from: its provider, the indexes the installs read, TheRock's channel
    they are (``channel``; None: no channel), the version installed, its root and the lock."""
    urls: list[str] = []
    lock: str | None = None
    provider = "pip"
    for step in plan_json["steps"]:
        if step["name"] not in ("install-rocm-sdk", "install-torch"):
            continue
        argv = step["argv"]
        if step["name"] == "install-rocm-sdk" and not any(a == "pip" for a in argv[:3]):
            provider = "system"
        for flag, value in zip(argv, argv[1:], strict=False):
            if flag in _INDEX_FLAGS and value not in urls:
                urls.append(value)
            if flag == "-r":
                lock = value
    return {
        "provider": provider,
        "index_urls": urls,
        "channel": channel,
        "version": values.get("ROCM_SDK_VERSION"),
        "root": values.get("ROCM_ROOT"),
        "lock": {"path": lock, "sha256": file_sha256(lock)} if lock else None,
    }


def dirty_fields(values: dict[str, str]) -> dict[str, str]:
    """``{"diff": sha256}`` for a build of uncommitted changes (``DIFF``, --allow-dirty: see
    ``toolkit.env.project.source_changes``), the manifest's ``source`` and identity's
    ``source`` both; nothing for a clean one (its manifest stays as before)."""
    diff = values.get("DIFF")
    return {"diff": diff} if diff else {}


def recipe_facts(build: Build, targets: Sequence[str] = (),
                 options: Options | None = None) -> dict[str, Any]:
    """The manifest fields that follow from the build and its recipe (and the gfx targets):
    ``build``, ``recipe``, ``dist``, ``targets``, ``expected_modules``, ``required_symbols``.

    Shared by every manifest, real (written by the build) or made from a build id."""
    from toolkit.plan.recipes import recipe_for

    recipe = recipe_for(build.package.recipe)
    return {
        "build": build.as_json(),
        "recipe": build.package.recipe,
        "dist": build.package.dist,
        "targets": list(targets),
        "expected_modules": list(recipe.expected_modules(build.pkg_version, options)),
        "required_symbols": list(recipe.required_symbols(build.pkg_version)),
    }


def write(path: Path, data: dict[str, Any]) -> Path:
    """Write atomically (never through a symlink), credentials masked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, mask(json.dumps(data, indent=2)) + "\n", "manifest")


def keep_clean(path: Path) -> Path | None:
    """Before a build of uncommitted changes (--allow-dirty) writes ``path``: an earlier
    successful clean build's manifest there is kept as ``<its wheel>.manifest.json`` beside
    it (the name a published wheel's manifest has), since its wheel stays in dist/ and
    repro needs the manifest it was built by. Returns the kept copy (None: nothing kept)."""
    try:
        raw = read_bytes(path, "manifest") if path.is_file() else b"null"
        earlier = json.loads(raw)
    except (OSError, UsageError, ValueError):
        return None  # unreadable: nothing that repro could use either
    if not isinstance(earlier, dict) or earlier.get("outcome") != "ok":
        return None
    source, wheel = earlier.get("source"), earlier.get("wheel")
    if not isinstance(wheel, str) or (isinstance(source, dict) and source.get("diff")):
        return None
    kept = path.with_name(Path(wheel).name + ".manifest.json")
    if kept.name == path.name or kept.exists():
        return None
    return write_atomic(kept, raw, "manifest")


def record_known_failure(path: Path, verdict: dict[str, Any]) -> Path:
    """Add a known failure's verdict (``known_failure``: id, result xfail | xpass | failed |
    not reached, what it expected, the line said) to a written manifest, atomically; its
    ``outcome`` stays what the run did."""
    data = read(path)
    data["known_failure"] = verdict
    return write(path, data)


_BUILD_KEYS = ("id", "package", "version")


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A manifest as written (a running build's too): a JSON object whose ``build`` object
    names the id, package and version. Anything else is a one-line ``UsageError``."""
    p = Path(path)
    if no_file(p):
        raise UsageError(f"no manifest at {escape(p)}; builds write "
                         "artifacts/<build-id>/manifest.json")
    raw = read_bytes(p, "manifest")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise UsageError(f"{escape(p)}: not a readable manifest ({escape(exc)})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{escape(p)}: not a manifest (expected a JSON object): "
                         f"{type_error(data)}")
    build = data.get("build")
    if "build" in data and not isinstance(build, dict):
        raise UsageError(f"{escape(p)}: manifest field build: {type_error(build)}, expected an "
                         "object")
    if not isinstance(build, dict):
        raise UsageError(f"{escape(p)}: not a build manifest (no 'build' object)")
    for key in _BUILD_KEYS:
        if key in build and not isinstance(build[key], str):
            raise UsageError(f"{escape(p)}: manifest field build.{key}: {type_error(build[key])}"
                             ", expected a string")
    missing = [k for k in _BUILD_KEYS if not isinstance(build.get(k), str) or not build[k]]
    if missing:
        raise UsageError(f"{escape(p)}: not a build manifest (its 'build' object lacks "
                         f"{', '.join(missing)})")
    check_values(data, escape(p))  # ids, folders and paths: rules, never just ignored
    return data


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A complete manifest of this schema version, validated (what ``repro`` re-plans from)."""
    p = Path(path)
    data = read(p)
    validate(data, escape(p))
    return data
