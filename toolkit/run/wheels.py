"""Wheel naming: local version labels, retagging, atomic writes.

Final wheels are ``<name>-<version>+rocm<rocm>git<sha8>-<py>-<abi>-<plat>.whl``: the version
inside METADATA, the ``.dist-info`` (and ``.data``) folder and RECORD are rewritten together
(RECORD by ``wheel.wheelfile.WheelFile``), and the result is validated with ``packaging``.
Outputs appear atomically: written in a temporary folder next to the destination, then
renamed; a failure leaves whatever was there before untouched.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import tempfile
import time
import zipfile
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from toolkit.core.errors import StepFailed, UsageError
from toolkit.core.versions import rocm_label

DEFAULT_TIME = (1980, 1, 1, 0, 0, 0)
_SKIP = re.compile(r"\.dist-info/RECORD(\.jws|\.p7s)?$")


def local_label(rocm: str, sha: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{8,40}", sha):
        raise UsageError(f"bad source commit {sha!r}: expected 8-40 lowercase hex digits")
    return rocm_label(rocm) + f"git{sha[:8]}"


def with_local(version: str, label: str) -> str:
    """``1.8.0`` + ``rocm7.0git8d873bb6`` -> ``1.8.0+rocm7.0git8d873bb6`` (replacing any label)."""
    try:
        v = Version(version)
    except InvalidVersion:
        raise UsageError(f"{version!r} is not a valid PEP 440 version") from None
    result = f"{v.public}+{label}"
    Version(result)  # validates the label
    return result


def _parse(path: Path) -> tuple[str, Version, str, str, str]:
    try:
        name, version, _build, _tags = parse_wheel_filename(path.name)
    except (InvalidWheelFilename, InvalidVersion) as exc:
        raise UsageError(f"{path.name}: not a valid wheel file name ({exc})") from None
    parts = path.name[:-4].split("-")
    py, abi, plat = parts[-3], parts[-2], parts[-1]
    return str(name), version, py, abi, plat


def _dist_info_prefix(zf: zipfile.ZipFile, path: Path) -> str:
    for item in zf.namelist():
        m = re.fullmatch(r"([^/]+)\.dist-info/METADATA", item)
        if m:
            return m.group(1)
    raise UsageError(f"{path.name}: no .dist-info/METADATA inside; not a wheel")


def _zip_time(epoch: int | None) -> tuple[int, int, int, int, int, int]:
    """A member timestamp: ``epoch`` (SOURCE_DATE_EPOCH) in UTC, clamped to zip's 1980."""
    if epoch is None:
        return DEFAULT_TIME
    stamp = time.gmtime(max(epoch, 315532800))
    return (stamp.tm_year, stamp.tm_mon, stamp.tm_mday, stamp.tm_hour, stamp.tm_min,
            stamp.tm_sec)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _order(name: str, prefix: str) -> tuple[int, str]:
    """Package files first, then .data, then .dist-info (RECORD always last)."""
    if name.startswith(prefix + ".dist-info/"):
        return (2, name)
    if name.startswith(prefix + ".data/"):
        return (1, name)
    return (0, name)


def retag(src: Path, dest_dir: Path, *, version: str | None = None,
          platform: str | None = None, epoch: int | None = None) -> Path:
    """Write ``src`` into ``dest_dir`` with a new version and/or platform tag, atomically.

    The result is normalised so that the same contents give the same bytes: members sorted
    (RECORD last), every timestamp ``epoch`` (else 1980-01-01), permissions 0644 or 0755,
    deflate at one level, RECORD computed anew.
    """
    _name, old_version, py, abi, plat = _parse(src)
    new_version = version or str(old_version)
    new_plat = platform or plat
    when = _zip_time(epoch)
    try:
        with zipfile.ZipFile(src) as zf:
            old_prefix = _dist_info_prefix(zf, src)
            dist = old_prefix.rsplit("-", 1)[0]
            new_prefix = f"{dist}-{new_version}"
            filename = f"{dist}-{new_version}-{py}-{abi}-{new_plat}.whl"
            _parse(Path(filename))
            members: dict[str, tuple[bytes, bool]] = {}
            for info in zf.infolist():
                if info.is_dir() or _SKIP.search(info.filename):
                    continue
                data = zf.read(info)
                arc = info.filename
                for suffix in (".dist-info/", ".data/"):
                    if arc.startswith(old_prefix + suffix):
                        arc = new_prefix + arc[len(old_prefix):]
                if arc == f"{new_prefix}.dist-info/METADATA":
                    data = re.sub(rb"(?m)^Version: .*$",
                                  f"Version: {new_version}".encode(), data, count=1)
                elif arc == f"{new_prefix}.dist-info/WHEEL" and new_plat != plat:
                    data = re.sub(rb"(?m)^(Tag: [^-\n]+-[^-\n]+-)" + re.escape(plat.encode()),
                                  rb"\g<1>" + new_plat.encode(), data)
                executable = bool((info.external_attr >> 16) & 0o111)
                members[arc] = (data, executable)
    except zipfile.BadZipFile as exc:
        raise UsageError(f"{src.name}: not a readable wheel ({exc})") from None
    record_name = f"{new_prefix}.dist-info/RECORD"
    rows = [f"{name},{_record_hash(data)},{len(data)}"
            for name, (data, _x) in sorted(members.items(), key=lambda kv: _order(kv[0], new_prefix))]
    rows.append(f"{record_name},,")
    members[record_name] = (("\n".join(rows) + "\n").encode(), False)
    dest_dir.mkdir(parents=True, exist_ok=True)
    tmp_dir = Path(tempfile.mkdtemp(prefix=".tmp-", dir=dest_dir))
    try:
        tmp = tmp_dir / filename
        names = sorted(members, key=lambda n: (n == record_name, _order(n, new_prefix)))
        _write_zip(tmp, [(name, *members[name]) for name in names], when)
        final = dest_dir / filename
        os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return final


def _write_zip(path: Path, members: list[tuple[str, bytes, bool]],
               when: tuple[int, int, int, int, int, int]) -> None:
    """``members`` (name, data, executable) in this order, normalised: time ``when``, mode 0644
    or 0755, deflate at level 6."""
    with zipfile.ZipFile(path, "w") as out:
        for name, data, executable in members:
            zi = zipfile.ZipInfo(name, date_time=when)
            zi.external_attr = ((0o100755 if executable else 0o100644) & 0xFFFF) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.create_system = 3  # unix
            out.writestr(zi, data, compresslevel=6)


def find_one_wheel(folder: Path) -> Path:
    wheels = sorted(folder.glob("*.whl")) if folder.is_dir() else []
    if len(wheels) != 1:
        found = ", ".join(w.name for w in wheels) or "none"
        raise StepFailed(f"expected exactly one wheel in {folder}, found: {found}")
    return wheels[0]


def name_wheel(wheelhouse: Path, dest: Path, *, label: str | None,
               epoch: int | None = None, dirty: bool = False) -> Path:
    """The build's wheel, renamed with ``label`` (None: upstream naming kept), into ``dest``,
    normalised (see ``retag``) with member times ``epoch``; ``dirty`` (uncommitted changes):
    the local segment ``dirty`` last, so it never has the clean commit's name."""
    src = find_one_wheel(wheelhouse)
    _name, version, *_ = _parse(src)
    new_version = with_local(str(version), label) if label else None
    if dirty:
        new_version = with_dirty(new_version or str(version))
    return retag(src, dest, version=new_version, epoch=epoch)


def with_dirty(version: str) -> str:
    """``version`` with the local segment ``dirty`` last, validated (PEP 440)."""
    from toolkit.env.project import dirty_version

    result = dirty_version(version)
    try:
        Version(result)
    except InvalidVersion:
        raise UsageError(f"{version!r}: no valid PEP 440 version with a dirty label") from None
    return result


def is_dirty(path: Path) -> bool:
    """A wheel named for uncommitted changes: its local version's last segment is ``dirty``."""
    from toolkit.env.project import DIRTY_LABEL

    try:
        _name, version, *_ = _parse(path)
    except UsageError:
        return False
    return (version.local or "").split(".")[-1] == DIRTY_LABEL

