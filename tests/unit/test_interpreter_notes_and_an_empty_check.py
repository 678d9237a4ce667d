"""Two edges of the check's entry point: nothing given is bad input in one line (exit 2,
README "Exit codes"), and the note per glibc library an extension module uses without linking
it (the interpreter loaded it): the library, how many names (five shown, then a count), and
the ``-l`` flag that links it (its soname's stem without ``lib``), one note per library in
name order."""

from __future__ import annotations

import pytest

from toolkit.core.errors import UsageError
from toolkit.inspect.checks import _interpreter_notes, check_paths
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.report import Finding


def test_nothing_to_check_is_bad_input() -> None:
    with pytest.raises(UsageError) as err:
        check_paths([])
    assert err.value.line == "nothing to check: give at least one wheel, folder or library"
    assert err.value.exit_code == 2


def test_one_note_per_glibc_library_used_without_linking_it() -> None:
    info = ElfInfo(machine=62, elf_class=64, type=3)
    used = {"libm.so.6": ["cos", "sin", "tan", "exp", "log", "pow", "sqrt"], "libdl.so.2": ["dlopen"]}
    assert _interpreter_notes("pkg/_ext.so", used, info) == [
        Finding("interpreter-symbols", "info", "pkg/_ext.so",
                "pkg/_ext.so uses 1 libdl.so.2 symbol (dlopen) without linking libdl.so.2: the "
                "interpreter provides them, so the import works; link dl explicitly (-ldl)",
                cause="uses libdl.so.2 without linking it"),
        Finding("interpreter-symbols", "info", "pkg/_ext.so",
                "pkg/_ext.so uses 7 libm.so.6 symbols (cos, sin, tan, exp, log and 2 more) without "
                "linking libm.so.6: the interpreter provides them, so the import works; link m "
                "explicitly (-lm)", cause="uses libm.so.6 without linking it")]
    five = {"libm.so.6": ["cos", "sin", "tan", "exp", "log"]}
    assert "(cos, sin, tan, exp, log) without" in _interpreter_notes("x.so", five, info)[0].message
    assert _interpreter_notes("x.so", {}, info) == []
