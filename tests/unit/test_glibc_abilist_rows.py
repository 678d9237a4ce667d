"""glibc's per-library ABI lists (``sysdeps/.../librt.abilist``: ``GLIBC_2.2.5 shm_open F``)
mark no default version: a name's newest version is its default (an unversioned reference
binds there), its older ones compat, unless a later release hides that newest one too.
Expectations written by hand from the lines given."""

from __future__ import annotations

from toolkit.inspect.readers.glibc import Row, parse_abilist, render

ABILIST = """\
GLIBC_2.2.5 shm_open F
GLIBC_2.2.5 timer_create F
GLIBC_2.3.3 timer_create F
GLIBC_PRIVATE __private F
GLIBC_2.2.5 _sys_errlist D 0x420
"""


def test_newest_version_is_the_default_and_older_ones_compat() -> None:
    rows = parse_abilist(ABILIST, "librt.so.1")
    assert sorted(rows, key=lambda r: (r.name, r.version)) == [
        Row("_sys_errlist", "librt.so.1", "GLIBC_2.2.5", True),
        Row("shm_open", "librt.so.1", "GLIBC_2.2.5", True),
        Row("timer_create", "librt.so.1", "GLIBC_2.2.5", False),
        Row("timer_create", "librt.so.1", "GLIBC_2.3.3", True),
    ]  # GLIBC_PRIVATE names no release: left out


def test_a_version_a_later_release_hides_is_compat() -> None:
    hidden = {("shm_open", "librt.so.1", "GLIBC_2.2.5")}
    rows = {(r.name, r.version): r.default for r in parse_abilist(ABILIST, "librt.so.1", hidden)}
    assert rows[("shm_open", "GLIBC_2.2.5")] is False
    assert rows[("timer_create", "GLIBC_2.3.3")] is True  # hidden names another library's row only
    other = {("timer_create", "libc.so.6", "GLIBC_2.3.3")}
    assert {(r.name, r.version): r.default for r in parse_abilist(ABILIST, "librt.so.1", other)} == {
        ("_sys_errlist", "GLIBC_2.2.5"): True, ("shm_open", "GLIBC_2.2.5"): True,
        ("timer_create", "GLIBC_2.2.5"): False, ("timer_create", "GLIBC_2.3.3"): True}


def test_rows_render_as_the_data_file_writes_them() -> None:
    text = render({"2.33": parse_abilist(ABILIST, "librt.so.1")}, ["from glibc 2.33"])
    assert text.splitlines() == [
        "# from glibc 2.33", "@glibc 2.33",
        "_sys_errlist librt.so.1 GLIBC_2.2.5 default",
        "shm_open librt.so.1 GLIBC_2.2.5 default",
        "timer_create librt.so.1 GLIBC_2.2.5 compat",
        "timer_create librt.so.1 GLIBC_2.3.3 default",
    ]
