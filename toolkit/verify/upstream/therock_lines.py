"""ROCm/TheRock's release lines, each read at its own ref (pure readers over a ``Repo``).

A line is one TheRock version X.Y, read where that release is stated:

- ``released``: a tag ``therock-X.Y`` or ``therock-X.Y.Z``; the ref is the newest such tag;
- ``branch``: a branch ``release/therock-X.Y`` and no tag;
- ``bkc``: a branch ``release/bkc/therock-X.Y-<date>`` and neither (the ref: the newest date);
- ``nightly-only``: only main's ``version.json`` history says X.Y; the ref is the last main
  commit at that version (HEAD for the current one).

At a line's commit this module reads, each value with its evidence
(``ROCm/TheRock@<short> <file>``):

- ``version.json``: the full version;
- the torch releases and Pythons the release builds: ``configure_pytorch_release_matrix.py``
  when the ref has it (``PYTORCH_REFS_LINUX`` + ``PYTHON_VERSIONS``, or
  ``RELEASE_STABLE_PYTORCH_REFS["linux"]`` + ``RELEASE_PYTHON_VERSIONS``: read with ``ast``,
  never run), else the matrix of ``multi_arch_release_linux_pytorch_wheels.yml``
  (``python_version`` x ``pytorch_git_ref`` less ``exclude``); ``nightly`` refs are dropped;
- the GPU targets of ``cmake/therock_amdgpu_targets.cmake``;
- the channels: ``ROCM_INDEX_URLS_MAP`` of ``build_tools/setup_venv.py`` once it stopped
  joining family folders to them (no ``index_subdir``); before (7.13, 7.14) the multi-arch
  channels the ref names elsewhere: ``MULTI_ARCH_INDEX_URLS`` of
  ``publish_pytorch_to_release_bucket.py``, the "unified index at <url>" of ``RELEASES.md``
  (nightly), and setup_venv's ``stable`` (the release bucket).

A file the ref has in a shape this module cannot read raises ``Unreadable``: the caller
reports it, never an empty list.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import yaml

from toolkit.core.text import escape, unsafe
from toolkit.core.urls import mask
from toolkit.verify.upstream.model import minor, versions_key
from toolkit.verify.upstream.repos import Repo

VERSION_FILE = "version.json"
TARGETS_FILE = "cmake/therock_amdgpu_targets.cmake"
MATRIX_SCRIPT = "build_tools/github_actions/configure_pytorch_release_matrix.py"
MATRIX_WORKFLOW = ".github/workflows/multi_arch_release_linux_pytorch_wheels.yml"
SETUP_VENV = "build_tools/setup_venv.py"
PUBLISH = "build_tools/github_actions/publish_pytorch_to_release_bucket.py"
RELEASES_DOC = "RELEASES.md"
STATUSES = ("released", "branch", "bkc", "nightly-only")  # strongest first

_TAG = re.compile(r"therock-([0-9]+\.[0-9]+)(?:\.([0-9]+))?")
_BRANCH = re.compile(r"release/therock-([0-9]+\.[0-9]+)")
_BKC = re.compile(r"release/bkc/therock-([0-9]+\.[0-9]+)-(.+)")
_TARGET = re.compile(r"^\s*therock_add_amdgpu_target\(\s*(gfx[0-9a-z]+)(.*?)\)", re.M | re.S)
_FAMILY = re.compile(r"\bFAMILY\b(.*?)(?:\b[A-Z_]{4,}\b|$)", re.S)
_TORCH_REF = re.compile(r"release/([0-9]+\.[0-9]+)")
_UNIFIED = re.compile(r"unified\s+index\s+at\s+(https://[^\s)>`]+?)[.,]?(?:\s|$)")


class Unreadable(Exception):
    """A file the ref has, in a shape this reader does not know (the message says which)."""


@dataclass(frozen=True)
class Line:
    minor: str  # "7.14"
    status: str  # one of STATUSES
    ref: str  # "therock-7.14", "release/therock-10.0", or the short commit (nightly-only)
    commit: str  # the full commit the ref names
    version: str | None  # version.json's rocm-version at the ref ("7.14.0")
    evidence: str  # "ROCm/TheRock@<short> version.json"


@dataclass(frozen=True)
class Stated:
    """A value read at a commit, and where: ``ROCm/TheRock@<short> <file>``."""

    value: Any
    evidence: str
    detail: str = ""  # what the file says, briefly ("linux: release/2.10, ...")


def version_of(text: str | None) -> str | None:
    try:
        value = json.loads(text or "").get("rocm-version")
    except (ValueError, AttributeError):
        return None
    return str(value) if value else None


def targets(text: str) -> dict[str, tuple[str, ...]]:
    """gfx target -> the family names its FAMILY list gives, in file order."""
    out: dict[str, tuple[str, ...]] = {}
    for gfx, rest in _TARGET.findall(text):
        m = _FAMILY.search(rest)
        names = re.findall(r"[A-Za-z0-9_-]+", m.group(1)) if m else []
        out[gfx] = tuple(n for n in names if n.startswith("gfx"))
    return out


# ------------------------------------------------------------------------------------ lines
def _tags(repo: Repo) -> dict[str, tuple[str, str]]:
    """X.Y -> (newest tag therock-X.Y[.Z], its commit)."""
    best: dict[str, tuple[tuple[int, ...], str, str]] = {}
    for name, commit in repo.refs("refs/tags/").items():
        m = _TAG.fullmatch(name)
        if m:
            key = versions_key(m.group(1) + "." + (m.group(2) or "0"))
            if m.group(1) not in best or key > best[m.group(1)][0]:
                best[m.group(1)] = (key, name, commit)
    return {xy: (name, commit) for xy, (_, name, commit) in best.items()}


def _branches(repo: Repo) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """(X.Y -> release/therock-X.Y, X.Y -> the newest release/bkc/therock-X.Y-<date>)."""
    release: dict[str, tuple[str, str]] = {}
    bkc: dict[str, tuple[str, str]] = {}
    for name, commit in sorted(repo.refs("refs/heads/release/").items()):
        if m := _BRANCH.fullmatch(name):
            release[m.group(1)] = (name, commit)
        elif m := _BKC.fullmatch(name):
            bkc[m.group(1)] = (name, commit)  # sorted by name: the newest date wins
    return release, bkc


def main_versions(repo: Repo) -> dict[str, str]:
    """X.Y -> the last commit of main (HEAD's first-parent line) at that version."""
    commits = repo.log("HEAD", VERSION_FILE)
    firsts: dict[str, str] = {}
    for commit, text in zip(commits, repo.read_many([(c, VERSION_FILE) for c in commits]),
                            strict=True):
        version = version_of(text)
        if version:
            firsts.setdefault(minor(version), commit)
    order = sorted(firsts, key=versions_key)
    last: dict[str, str] = {}
    for i, xy in enumerate(order):
        nxt = order[i + 1] if i + 1 < len(order) else None
        end = repo.commit(f"{firsts[nxt]}^1") if nxt else repo.commit("HEAD")
        if end:
            last[xy] = end
    return last


def release_lines(repo: Repo) -> dict[str, Line]:
    """Every TheRock version X.Y, oldest first, read at the ref that states its release."""
    tags = _tags(repo)
    release, bkc = _branches(repo)
    main = main_versions(repo)
    found: dict[str, tuple[str, str, str]] = {}
    for status, source in (("nightly-only", {k: (repo.short(c), c) for k, c in main.items()}),
                           ("bkc", bkc), ("branch", release), ("released", tags)):
        for xy, (ref, commit) in source.items():
            found[xy] = (status, ref, commit)  # a stronger status replaces a weaker one
    order = sorted(found, key=versions_key)
    texts = repo.read_many([(found[xy][2], VERSION_FILE) for xy in order])
    return {xy: Line(xy, found[xy][0], found[xy][1], found[xy][2], version_of(text),
                     repo.evidence(found[xy][2], VERSION_FILE))
            for xy, text in zip(order, texts, strict=True)}


def line_of(repo: Repo, commit: str, lines: Mapping[str, Line] | None = None) -> Line | None:
    """The release line ``commit`` belongs to: the one of the version its ``version.json``
    says (None when it says none, or no line has that version)."""
    version = version_of(repo.show(commit, VERSION_FILE))
    if version is None:
        return None
    return (lines if lines is not None else release_lines(repo)).get(minor(version))


# ------------------------------------------------------------------------------ torch builds
def _assigned(text: str, path: str) -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` (or ``NAME: T = <literal>``) of a Python file."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise Unreadable(f"{path} is not valid Python (line {exc.lineno})") from None
    out: dict[str, Any] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            try:
                out[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue  # not a literal (a comprehension ...): not one we read
    return out


def _torch_minor(ref: object, path: str) -> str | None:
    """``release/2.10`` -> ``2.10``; ``nightly`` -> None; anything else: unreadable."""
    if ref == "nightly":
        return None
    m = _TORCH_REF.fullmatch(ref) if isinstance(ref, str) else None
    if m is None:
        raise Unreadable(f"{path}: torch ref {ref!r} is neither release/X.Y nor nightly")
    return m.group(1)


def _pythons(value: object, name: str, path: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise Unreadable(f"{path}: {name} is not a list of Python versions")
    return tuple(value)


def _from_script(text: str, path: str) -> tuple[dict[str, tuple[str, ...]], str]:
    names = _assigned(text, path)
    if "RELEASE_STABLE_PYTORCH_REFS" in names:
        refs = names["RELEASE_STABLE_PYTORCH_REFS"]
        refs = refs.get("linux") if isinstance(refs, dict) else None
        py_name = "RELEASE_PYTHON_VERSIONS"
        ref_name = 'RELEASE_STABLE_PYTORCH_REFS["linux"]'
    elif "PYTORCH_REFS_LINUX" in names:
        raw = names["PYTORCH_REFS_LINUX"]
        refs = [r.get("pytorch_git_ref") if isinstance(r, dict) else None
                for r in raw] if isinstance(raw, list) else None
        py_name, ref_name = "PYTHON_VERSIONS", "PYTORCH_REFS_LINUX"
    else:
        raise Unreadable(f"{path} names neither RELEASE_STABLE_PYTORCH_REFS nor "
                         "PYTORCH_REFS_LINUX")
    if not isinstance(refs, list) or not refs:
        raise Unreadable(f"{path}: {ref_name} is not a list of torch refs")
    pythons = _pythons(names.get(py_name), py_name, path)
    out = {m: pythons for m in (_torch_minor(r, path) for r in refs) if m}
    detail = (f"linux: {', '.join(r for r in refs if r != 'nightly')}; "
              f"{py_name} {_span(pythons)}")
    return out, detail


def _matrix_lists(matrix: dict[str, Any], path: str) -> tuple[list[Any], list[Any], list[Any]]:
    pys, refs = matrix.get("python_version"), matrix.get("pytorch_git_ref")
    excludes = matrix.get("exclude") or []
    if not isinstance(pys, list) or not isinstance(refs, list) or not isinstance(excludes, list):
        raise Unreadable(f"{path}: the matrix's python_version, pytorch_git_ref or exclude "
                         "is not a list")
    return pys, refs, excludes


def _from_workflow(text: str, path: str) -> tuple[dict[str, tuple[str, ...]], str]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise Unreadable(f"{path} is not valid YAML ({str(exc).splitlines()[0]})") from None
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    out: dict[str, list[str]] = {}
    details: list[str] = []
    for matrix in (m for m in map(_torch_matrix, (jobs or {}).values()) if m is not None):
        pys, refs, excludes = _matrix_lists(matrix, path)
        for ref in refs:
            torch = _torch_minor(ref, path)
            built = [str(py) for py in pys
                     if not _excluded({"python_version": py, "pytorch_git_ref": ref}, excludes)]
            if torch and built:
                out.setdefault(torch, []).extend(built)
        details.append(_matrix_detail(pys, refs, excludes))
    if not details:
        raise Unreadable(f"{path}: no job's strategy.matrix names pytorch_git_ref")
    return {t: tuple(dict.fromkeys(p)) for t, p in out.items()}, "; ".join(details)


def _torch_matrix(job: object) -> dict[str, Any] | None:
    """A workflow job's ``strategy.matrix`` when it names ``pytorch_git_ref``; else None."""
    strategy = job.get("strategy") if isinstance(job, dict) else None
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    return matrix if isinstance(matrix, dict) and "pytorch_git_ref" in matrix else None


def _excluded(row: dict[str, Any], excludes: list[Any]) -> bool:
    """Does one of the matrix's ``exclude`` entries (every key equal, as text) drop ``row``?"""
    return any(isinstance(e, dict) and e and all(str(row.get(k)) == str(v) for k, v in e.items())
               for e in excludes)


def _matrix_detail(pys: list[Any], refs: list[Any], excludes: list[Any]) -> str:
    """What one job's matrix says, in words: its torch refs, Pythons and exclusions."""
    return (f"linux: {', '.join(str(r) for r in refs if r != 'nightly')}; "
            f"python_version {_span(tuple(str(p) for p in pys))}"
            + "".join(f"; exclude {' '.join(str(v) for v in e.values())}"
                      for e in excludes if isinstance(e, dict)))


def _span(pythons: tuple[str, ...]) -> str:
    return f"{pythons[0]}-{pythons[-1]}" if len(pythons) > 2 else ", ".join(pythons)


def torch_builds(repo: Repo, commit: str) -> Stated:
    """torch minor -> the Pythons the release at ``commit`` builds it for (``Stated.value``).

    Raises ``Unreadable`` when the file is malformed or neither file exists."""
    script, workflow = repo.read_many([(commit, MATRIX_SCRIPT), (commit, MATRIX_WORKFLOW)])
    if script is not None:
        builds, detail = _from_script(script, MATRIX_SCRIPT)
        path = MATRIX_SCRIPT
    elif workflow is not None:
        builds, detail = _from_workflow(workflow, MATRIX_WORKFLOW)
        path = MATRIX_WORKFLOW
    else:
        raise Unreadable(f"neither {MATRIX_SCRIPT} nor {MATRIX_WORKFLOW} at "
                         f"{repo.short(commit)}")
    if not builds:
        raise Unreadable(f"{path} at {repo.short(commit)} names no release/X.Y torch")
    ordered = dict(sorted(builds.items(), key=lambda kv: versions_key(kv[0])))
    return Stated(ordered, repo.evidence(commit, path), detail)


def gpu_targets(repo: Repo, commit: str) -> Stated:
    """The gfx targets of ``cmake/therock_amdgpu_targets.cmake`` at ``commit``, in file order."""
    text = repo.show(commit, TARGETS_FILE)
    listed = tuple(targets(text or ""))
    if not listed:
        raise Unreadable(f"{TARGETS_FILE} at {repo.short(commit)} "
                         + ("is missing" if text is None else "lists no therock_add_amdgpu_target"))
    return Stated(listed, repo.evidence(commit, TARGETS_FILE))


# ---------------------------------------------------------------------------------- channels
def _index_url(url: str) -> bool:
    """An https index URL with a host and nothing a data file must not hold (credentials,
    a query, a fragment)."""
    parts = urlsplit(url)
    return (parts.scheme == "https" and bool(parts.hostname) and "@" not in parts.netloc
            and not parts.query and not parts.fragment and not unsafe(url))


def _url_map(text: str | None, path: str, name: str) -> dict[str, str]:
    """``name`` (a dict of channel -> index URL) in ``path``: only channels the toolkit knows
    (a ``--channel`` choice) and https URLs without credentials; anything else fails closed."""
    from toolkit.data.specs import CHANNELS

    value = _assigned(text or "", path).get(name)
    if not isinstance(value, dict) or not value or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise Unreadable(f"{path}: {name} is not a mapping of channel names to URLs")
    unknown = [k for k in value if k not in CHANNELS]
    if unknown:
        raise Unreadable(f"{path}: {name} names channel(s) the toolkit does not know: "
                         f"{', '.join(escape(k) for k in unknown)}; known: {', '.join(CHANNELS)}")
    bad = [k for k, v in value.items() if not _index_url(v)]
    if bad:
        raise Unreadable(f"{path}: {name}[{escape(bad[0])}] is not an https index URL without "
                         f"credentials, query or fragment: {escape(mask(value[bad[0]]))}")
    return dict(value)


def channels(repo: Repo, commit: str) -> Stated:
    """Channel name -> index URL of the multi-arch SDK the ref publishes (``Stated.value``)."""
    setup, publish, doc = repo.read_many([(commit, SETUP_VENV), (commit, PUBLISH),
                                          (commit, RELEASES_DOC)])
    if setup is None:
        raise Unreadable(f"no {SETUP_VENV} at {repo.short(commit)}")
    venv = _url_map(setup, SETUP_VENV, "ROCM_INDEX_URLS_MAP")
    if "index_subdir" not in setup:  # one multi-arch index per channel
        return Stated(venv, repo.evidence(commit, SETUP_VENV), "ROCM_INDEX_URLS_MAP")
    # setup_venv still joins a family folder to its URLs: the multi-arch ones are elsewhere
    out: dict[str, str] = {}
    files: list[str] = []
    if "stable" in venv:
        out["stable"] = venv["stable"]
        files.append(SETUP_VENV)
    if publish is not None:
        out.update(_url_map(publish, PUBLISH, "MULTI_ARCH_INDEX_URLS"))
        files.append(PUBLISH)
    m = _UNIFIED.search(doc or "")
    if m is not None:
        out.setdefault("nightly", m.group(1))
        files.append(RELEASES_DOC)
    if len(out) < 2:
        raise Unreadable(f"{repo.short(commit)} names no multi-arch channel beside stable "
                         f"({PUBLISH}, {RELEASES_DOC})")
    order = [c for c in ("stable", "prerelease", "nightly", "dev") if c in out]
    return Stated({c: out[c] for c in [*order, *sorted(set(out) - set(order))]},
                  repo.evidence(commit, *files), "multi-arch channels")
