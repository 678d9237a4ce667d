"""A build's identity, apart from its host.

The identity is what decides a wheel's bits: the build (package, version, distribution,
recipe), the Python version, the ROCm release, where the SDK and torch come from, the gfx
targets, the options that change the output, the source (commit or tree) and every step of
the plan with the host's paths written as tokens. The host is everything else: where the
interpreter, the work folder, the cache, the source copy, uv, the toolkit's Python and a
system ROCm live; job counts; compiler launchers. Two machines agree on a build when their
identities agree, whatever their hosts.

``host_paths`` names the host's paths of a plan (token -> path); ``normal_steps`` writes a
plan's steps with those paths as tokens (what ``plan_sha256`` hashes); ``identity`` is the
manifest's ``identity`` object; ``identity_differences`` compares two of them.

``digest`` (the identity's ``digest``) is one sha256 over the planned identity and the upstream
commit the data read the package's source at (``upstream``: ``ROCm/apex@5567275d`` from the
version's evidence; a branch ref alone cannot say when its head moved). It is computable from
a plan without building (``plan_digest``) and from a manifest's ``identity`` alone, so a
published wheel whose manifest carries the digest a plan gives need not be built again
(``toolkit.verify.changed``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from toolkit.core.steps import CheckEnv, CreateEnv, UseSystemRocm
from toolkit.core.urls import mask
from toolkit.data.matrix import Build
from toolkit.env.buildenv import quote_flag
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan, options_json

# options that change what a build makes; the others (smoke, rebuild, allow_*, where the
# source is, locks found) change what a run does around it, or only where things are
OUTPUT_OPTIONS = ("rocm_from", "index_url", "find_links", "family", "naming", "apex_ops")
# environment variables that depend on the host, never on the build
HOST_ENV = frozenset({"MAX_JOBS", "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER",
                      "CMAKE_HIP_COMPILER_LAUNCHER"})
# the digest's scheme: a new number changes every digest (every build is then rebuilt once)
DIGEST_FORMAT = 1
# the planned identity's keys the digest covers (what a run learns is known only after it)
DIGEST_KEYS = ("build", "python", "rocm", "targets", "family", "options", "plan_sha256")
# step fields derived from others, or that only say how a run goes (force: --rebuild)
DERIVED = frozenset({"definition", "does", "description", "force"})


def host_paths(plan: Plan, layout: Layout) -> dict[str, str]:
    """The host's paths a plan holds, by role: ``workdir``, ``cache``, ``source``,
    ``interpreter``, ``toolkit_python``, ``uv``, ``rocm_root``."""
    out = {"workdir": str(layout.root), "cache": str(layout.cache)}
    if plan.source:
        out["source"] = plan.source
    for step in plan.steps:
        action = step.action
        if isinstance(action, CheckEnv) and action.interpreter.startswith("/"):
            out["interpreter"] = action.interpreter
        elif isinstance(action, CreateEnv) and action.uv.startswith("/"):
            out["uv"] = action.uv
        elif isinstance(action, UseSystemRocm) and action.root not in ("/", "/usr"):
            out["rocm_root"] = action.root
        toolkit_python = getattr(action, "toolkit_python", None)
        if isinstance(toolkit_python, str) and toolkit_python.startswith("/"):
            out["toolkit_python"] = toolkit_python
    return out


def _token(role: str) -> str:
    # one token for both Pythons: whether they are one file is itself a host fact
    return "<python>" if role in ("interpreter", "toolkit_python") else f"<{role}>"


def tokenize(text: str, paths: Mapping[str, str]) -> str:
    """``text`` with each host path (``paths``: role -> path; longest first, whole path
    components only) written as its role's token."""
    # each path as written: itself, inside a quoted compiler flag (env.buildenv.quote_flag),
    # and each of those inside a JSON string (non-ASCII and backslashes escaped)
    by_form: dict[str, str] = {}
    for role, path in paths.items():
        if isinstance(path, str) and path not in ("", "/"):
            for form in (path, quote_flag(path)):
                by_form[form] = _token(role)
                by_form[json.dumps(form)[1:-1]] = _token(role)
    for escaped in sorted(by_form, key=len, reverse=True):
        token = by_form[escaped]
        out: list[str] = []
        rest = text
        while True:
            i = rest.find(escaped)
            if i < 0:
                out.append(rest)
                break
            end = i + len(escaped)
            whole = end == len(rest) or not (rest[end].isalnum() or rest[end] in "._-")
            out.append(rest[:i] + (token if whole else escaped))
            rest = rest[end:]
        text = "".join(out)
    return text


def normal_steps(steps: Any, paths: Mapping[str, str]) -> list[Any]:
    """A plan's steps (as JSON) with host paths as tokens, without host-only and derived
    fields and without credentials (never recorded)."""
    text = tokenize(json.dumps(steps, sort_keys=True).replace("://***@", "://"), paths)

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: clean(v) for k, v in node.items() if k not in DERIVED | HOST_ENV}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    return list(clean(json.loads(text)))


def plan_sha256(steps: Any, paths: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(normal_steps(steps, paths), sort_keys=True)
                          .encode()).hexdigest()


def planned_identity(plan: Plan, layout: Layout) -> dict[str, Any]:
    """The identity a plan fixes before anything runs (pure)."""
    b = plan.build
    # credentials are never part of an identity (nor recorded): masked, then left out
    options = json.loads(mask(json.dumps(options_json(plan.options) if plan.options else {}))
                         .replace("://***@", "://"))
    # the plan's steps as the manifest records them (``Plan.to_json``: masked), without its
    # indent: masking is the same on either text (no word spans a JSON string's quotes) and
    # json's C encoder serves only unindented text (``to_json`` for every matrix entry was
    # most of ``matrix --changed-since``'s time)
    steps = json.loads(mask(json.dumps([s.as_json() for s in plan.steps])))
    return {
        "build": {**b.as_json(), "dist": b.package.dist, "recipe": b.package.recipe},
        "python": b.python,
        "rocm": b.rocm.version,
        "targets": list(plan.targets),
        "family": plan.family,
        "options": {k: options.get(k) for k in OUTPUT_OPTIONS},
        "plan_sha256": plan_sha256(steps, host_paths(plan, layout)),
    }


def upstream_commit(build: Build) -> str | None:
    """``owner/name@commit``: the commit of the package's own repository its version's evidence
    names at the version's ref (the data's record of where upstream was read, rewritten when
    upstream moves); None when it names none (the sample, a project given by its source)."""
    parts = urlsplit(build.package.repo)
    slug = parts.path.strip("/").removesuffix(".git")
    if parts.scheme not in ("https", "http", "ssh", "git") or slug.count("/") != 1:
        return None
    commit = rf"(?<![\w./-]){re.escape(slug)}@([0-9a-f]{{7,40}})\b"
    evidence = build.pkg_version.evidence
    # the commit read at the version's own ref ("ROCm/apex@5567275d (release/1.4.0)"), else
    # the first of that repository's
    found = re.search(commit + rf" \({re.escape(build.pkg_version.ref)}\)", evidence,
                      re.IGNORECASE) or re.search(commit, evidence, re.IGNORECASE)
    return f"{slug}@{found.group(1).lower()}" if found else None


def identity_digest(ident: Mapping[str, Any]) -> str:
    """sha256 of an identity's planned keys (``DIGEST_KEYS``) and its ``upstream`` commit:
    the same for a plan (``plan_digest``) and for the manifest of its build."""
    doc = {"format": DIGEST_FORMAT, **{k: ident.get(k) for k in DIGEST_KEYS},
           "upstream": ident.get("upstream")}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def plan_digest(plan: Plan, layout: Layout) -> str:
    """The digest a build of ``plan`` records, known before it runs (pure)."""
    return identity_digest({**planned_identity(plan, layout),
                            "upstream": upstream_commit(plan.build)})


def identity(plan: Plan, layout: Layout, values: Mapping[str, str],
             learned: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest's ``identity``: the planned identity plus what the run learned (the
    source commit or tree, the interpreter's implementation and ABI, the SDK and torch
    versions installed, the lock's hash; ``source.diff``: the sha256 of uncommitted changes
    built with --allow-dirty), the upstream commit and the ``digest``."""
    planned = {**planned_identity(plan, layout), "upstream": upstream_commit(plan.build)}
    return {**planned,
            "source": {"sha": values.get("SHA"), "tree": values.get("TREE"),
                       **({"diff": values["DIFF"]} if values.get("DIFF") else {})},
            **learned,
            "digest": identity_digest(planned)}


def identity_differences(recorded: Mapping[str, Any], here: Mapping[str, Any]) -> list[str]:
    """``key: recorded -> here`` for every key of ``here`` whose value differs."""
    out = []
    for key, value in here.items():
        if recorded.get(key) != value:
            out.append(f"{key} {_short(recorded.get(key))} recorded, {_short(value)} here")
    return out


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."
