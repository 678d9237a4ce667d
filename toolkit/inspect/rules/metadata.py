"""The wheel's own metadata: file name, ``.dist-info`` folder, ``METADATA`` and ``WHEEL``."""

from __future__ import annotations

import email.message
import email.parser
import zipfile

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from toolkit.core.errors import MemberError
from toolkit.inspect.readers.wheelzip import WheelZip
from toolkit.inspect.report import Finding, WheelResult


def _without_variant(fname: str) -> str:
    """A wheel variant's name without its label (the PEP 825 draft's ``-<label>`` before
    ``.whl``; ``rules/variant_labels.py`` judges the label)."""
    from toolkit.core.variants import parse_name

    name = parse_name(fname)
    return f"{name.base}.whl" if name is not None and name.label is not None else fname


def check_metadata(res: WheelResult, wz: WheelZip) -> None:
    """Fill in name, version and tags from the file name; add a finding per inconsistency."""
    f = res.findings
    fname = wz.path.name
    try:
        name, version, _build, tags = parse_wheel_filename(_without_variant(fname))
        res.name, res.version = str(name), str(version)
        res.tags = sorted(str(t) for t in tags)
    except (InvalidWheelFilename, InvalidVersion) as err:
        f.append(Finding("metadata", "error", None, f"bad wheel file name {fname!r}: {err}"))
        return
    infos = {i.filename: i for i in wz.members}
    di = _dist_info(infos, f, name, version)
    if di is None:
        return
    meta = _headers(wz, infos.get(f"{di}/METADATA"), f, "METADATA")
    if meta is not None:
        res.requires = _requires(meta.get_all("Requires-Dist") or [])
        f.extend(_metadata_findings(meta, name, version))
    wheel = _headers(wz, infos.get(f"{di}/WHEEL"), f, "WHEEL")
    if wheel is not None:
        wtags = {t.strip() for t in wheel.get_all("Tag") or []}
        expanded = {str(t) for t in tags}
        if wtags != expanded:
            msg = f"WHEEL Tag lines {sorted(wtags)} do not match the file name tags {sorted(expanded)}"
            f.append(Finding("metadata", "error", None, msg))


def _dist_info(infos: dict[str, zipfile.ZipInfo], f: list[Finding], name: str,
               version: Version) -> str | None:
    """The one ``.dist-info`` folder (a finding when it does not match the file name); None,
    with a finding, when there is not exactly one."""
    dist_infos = sorted({n.split("/")[0] for n in infos if n.split("/")[0].endswith(".dist-info")})
    if len(dist_infos) != 1:
        msg = f"expected exactly one .dist-info folder, found {dist_infos or 'none'}"
        f.append(Finding("metadata", "error", None, msg))
        return None
    di = dist_infos[0]
    di_name, _, di_version = di[: -len(".dist-info")].rpartition("-")
    if canonicalize_name(di_name) != name or not _same_version(di_version, version):
        msg = f"{di} does not match the file name ({name} {version})"
        f.append(Finding("metadata", "error", None, msg))
    return di


def _metadata_findings(meta: email.message.Message, name: str, version: Version) -> list[Finding]:
    """METADATA's Name and Version against the file name's."""
    out = []
    m_name, m_version = meta.get("Name"), meta.get("Version")
    if not m_name or canonicalize_name(m_name) != name:
        msg = f"METADATA Name {m_name!r} does not match the file name ({name})"
        out.append(Finding("metadata", "error", None, msg))
    if not m_version:
        out.append(Finding("metadata", "error", None, "METADATA has no Version"))
    elif not _valid_version(m_version):
        msg = f"METADATA Version {m_version!r} is not valid PEP 440"
        out.append(Finding("metadata", "error", None, msg))
    elif Version(m_version) != version:
        msg = f"METADATA Version {m_version} does not match the file name ({version})"
        out.append(Finding("metadata", "error", None, msg))
    return out


def _requires(lines: list[str]) -> list[str]:
    """The canonical names of the ``Requires-Dist`` packages (unparsable lines left out)."""
    out = set()
    for line in lines:
        try:
            out.add(canonicalize_name(Requirement(line).name))
        except InvalidRequirement:
            continue
    return sorted(out)


def _same_version(text: str, version: Version) -> bool:
    return _valid_version(text) and Version(text) == version


def _valid_version(text: str) -> bool:
    try:
        Version(text)
        return True
    except InvalidVersion:
        return False


def _headers(
    wz: WheelZip, info: zipfile.ZipInfo | None, f: list[Finding], what: str
) -> email.message.Message | None:
    if info is None:
        f.append(Finding("metadata", "error", None, f"the wheel has no {what} file"))
        return None
    try:
        text = wz.read_small(info).decode("utf-8", "replace")
    except MemberError as err:
        f.append(Finding("metadata", "error", None, str(err)))
        return None
    return email.parser.HeaderParser().parsestr(text)
