"""Variant wheels: a wheel built for one gfx target, renamed and labelled as a wheel variant
(``toolkit.core.variants`` says where each rule comes from), and the index's
``<name>-<version>-variants.json``.

``make_variant`` copies every member of the built wheel as it is (same bytes, same times and
modes), replaces any earlier ``variant.json`` by the target's, rewrites RECORD with its hash
and size, and writes the result whole or not at all (a temporary file in the destination,
then ``os.replace``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from toolkit.core import variants
from toolkit.core.errors import UsageError
from toolkit.core.files import write_atomic
from toolkit.core.text import escape


def _record_row(name: str, data: bytes) -> bytes:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n".encode()


def _dist_info(zf: zipfile.ZipFile, src: Path) -> str:
    tops = {n.split("/", 1)[0] for n in zf.namelist() if n.endswith(".dist-info/RECORD")}
    if len(tops) != 1:
        raise UsageError(f"{escape(src.name)}: expected one .dist-info/RECORD inside, found "
                         f"{len(tops)}; not a wheel")
    return tops.pop()


def _new_record(old: bytes, dist_info: str, data: bytes) -> bytes:
    path = f"{dist_info}/{variants.DIST_INFO_FILE}"
    kept = [ln for ln in old.splitlines(keepends=True)
            if ln.split(b",", 1)[0].decode("utf-8", "replace") != path]
    if kept and not kept[-1].endswith(b"\n"):
        kept[-1] += b"\n"
    return b"".join(kept) + _record_row(path, data)


def _copy(zf: zipfile.ZipFile, out: zipfile.ZipFile, dist_info: str, data: bytes) -> None:
    variant_path = f"{dist_info}/{variants.DIST_INFO_FILE}"
    for info in zf.infolist():
        if info.filename == variant_path:
            continue
        if info.filename == f"{dist_info}/RECORD":
            vi = zipfile.ZipInfo(variant_path, date_time=info.date_time)
            vi.external_attr = 0o100644 << 16
            vi.compress_type = zipfile.ZIP_DEFLATED
            vi.create_system = 3
            out.writestr(vi, data)
            out.writestr(info, _new_record(zf.read(info), dist_info, data))
            continue
        with zf.open(info) as src_member, out.open(info, "w") as dst_member:
            shutil.copyfileobj(src_member, dst_member, 1 << 20)


def make_variant(src: Path, dest_dir: Path, target: str) -> Path:
    """The wheel ``src`` (built for ``target`` alone) as the variant wheel of ``target`` in
    ``dest_dir``; returns its path."""
    name = variants.parse_name(src.name)
    if name is None or name.label is not None:
        raise UsageError(f"{escape(src.name)}: not a plain wheel file name "
                         "(<name>-<ver>-<py>-<abi>-<plat>.whl)")
    data = variants.dist_info_json(target).encode()
    filename = f"{name.base}-{variants.label_for(target)}.whl"
    dest_dir.mkdir(parents=True, exist_ok=True)
    tmp_dir = Path(tempfile.mkdtemp(prefix=".tmp-", dir=dest_dir))
    try:
        tmp = tmp_dir / filename
        try:
            with zipfile.ZipFile(src) as zf, zipfile.ZipFile(tmp, "w") as out:
                _copy(zf, out, _dist_info(zf, src), data)
        except (zipfile.BadZipFile, OSError) as exc:
            raise UsageError(f"{escape(src.name)}: not a readable wheel ({escape(str(exc))})"
                             ) from None
        final = dest_dir / filename
        os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return final


# ---- the index's <name>-<version>-variants.json ------------------------------------------

def _read_variant_json(wheel: Path) -> dict[str, Any] | None:
    try:
        with zipfile.ZipFile(wheel) as zf:
            for member in zf.namelist():
                top, _, rest = member.partition("/")
                if top.endswith(".dist-info") and rest == variants.DIST_INFO_FILE:
                    data = json.loads(zf.read(member))
                    return data if isinstance(data, dict) else None
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    return None


def _merge(into: dict[str, Any], one: dict[str, Any], label: str) -> bool:
    """Merge one wheel's variant.json into the index document; False when they disagree."""
    vdata = one.get("variants")
    if not isinstance(vdata, dict) or list(vdata) != [label]:
        return False
    props = {ns: {f: sorted(vals) for f, vals in feats.items()} for ns, feats in vdata[label].items()}
    if into.get("variants", {}).get(label, props) != props:
        return False
    prio = one.get("default-priorities", {}).get("namespace", [])
    old = into.setdefault("default-priorities", {}).setdefault("namespace", [])
    short, long_ = sorted((old, prio), key=len)
    if short != long_[: len(short)]:
        return False
    into["default-priorities"]["namespace"] = list(long_)
    for ns, info in one.get("providers", {}).items():
        if into.setdefault("providers", {}).setdefault(ns, info) != info:
            return False
    into.setdefault("variants", {})[label] = props
    return True


def index_documents(folder: Path) -> tuple[dict[str, str], list[str]]:
    """``{file name: text}`` of each ``<name>-<version>-variants.json`` the variant wheels
    directly in ``folder`` make, and a warning line per wheel left out."""
    docs: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    for wheel in sorted(folder.glob("*.whl")):
        name = variants.parse_name(wheel.name)
        if name is None or name.label is None:
            continue
        one = _read_variant_json(wheel)
        doc = docs.setdefault(name.namever, {"$schema": variants.SCHEMA_URL})
        if one is None or not _merge(doc, one, name.label):
            warnings.append(f"{escape(wheel.name)}: its {variants.DIST_INFO_FILE} is missing, "
                            "malformed or disagrees with the other variants; left out")
    texts = {f"{namever}-variants.json": json.dumps(doc, indent=4, sort_keys=True)
             for namever, doc in docs.items() if doc.get("variants")}
    return texts, warnings


def write_index_documents(folder: Path) -> tuple[list[Path], list[str]]:
    """Write each folder's variants JSON files (atomically); the paths and the warnings."""
    written: list[Path] = []
    warnings: list[str] = []
    dirs = sorted({p.parent for p in folder.rglob("*.whl") if not any(
        part.startswith(".") for part in p.relative_to(folder).parts)})
    for d in dirs:
        texts, warns = index_documents(d)
        warnings += warns
        for filename, text in sorted(texts.items()):
            written.append(write_atomic(d / filename, text, "variants index"))
    return written, warnings
