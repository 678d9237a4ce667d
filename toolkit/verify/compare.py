"""What differs between two wheels: members, and for ELF members the sections."""

from __future__ import annotations

import zipfile
from pathlib import Path

from toolkit.core.errors import ElfError, UsageError
from toolkit.inspect.readers.elf import Image, is_elf, parse_header, read_sections

MAX_SHOWN = 20


def _members(path: Path) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(path) as zf:
            return {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
    except (OSError, zipfile.BadZipFile) as exc:
        raise UsageError(f"{path}: not a readable wheel ({exc})") from None


def _sections(data: bytes) -> dict[str, bytes]:
    img = Image.whole(data)
    hdr = parse_header(img)
    out: dict[str, bytes] = {}
    for i, sec in enumerate(read_sections(img, hdr)):
        key = sec.name or f"#{i}"
        out[key] = data[sec.offset:sec.offset + sec.size] if sec.size else b""
    return out


def section_differences(a: bytes, b: bytes) -> list[str]:
    """Names of the sections whose bytes differ (or that only one side has)."""
    try:
        sa, sb = _sections(a), _sections(b)
    except ElfError as exc:
        return [f"(sections unreadable: {exc})"]
    names = sorted(set(sa) | set(sb))
    return [n for n in names if sa.get(n) != sb.get(n)]


def wheel_differences(original: Path, again: Path) -> list[str]:
    """One line per member that differs (with its differing sections for ELF files)."""
    ma, mb = _members(original), _members(again)
    lines: list[str] = []
    for name in sorted(set(ma) | set(mb)):
        if name not in mb:
            lines.append(f"{name}: only in the original")
        elif name not in ma:
            lines.append(f"{name}: only in the rebuild")
        elif ma[name] != mb[name]:
            if is_elf(ma[name][:4]) and is_elf(mb[name][:4]):
                secs = section_differences(ma[name], mb[name])
                lines.append(f"{name}: sections {', '.join(secs) or '(headers only)'}")
            else:
                lines.append(f"{name}: contents")
    if not lines:
        order_a = list(ma)
        order_b = list(mb)
        lines.append("same members and contents; the archive differs (member order "
                     + ("differs" if order_a != order_b else "same") + ", times or modes)")
    if len(lines) > MAX_SHOWN:
        lines = [*lines[:MAX_SHOWN], f"... and {len(lines) - MAX_SHOWN} more"]
    return lines
