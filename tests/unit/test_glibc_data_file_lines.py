"""The shipped glibc data file's grammar (``@glibc 2.N`` sections of ``name library version
default|compat`` rows, ``#`` comments, blank lines) and its refusals as whole lines naming
file and line; and which ``readelf -W --dyn-syms`` rows are a library's names (binutils'
columns: Num: Value Size Type Bind Vis Ndx Name): defined (not UND, not a version node's own
ABS symbol), GLOBAL/WEAK/UNIQUE binding, DEFAULT/PROTECTED visibility, versioned."""

from __future__ import annotations

import pytest

from toolkit.core.errors import DataError
from toolkit.inspect.readers.glibc import Row, parse, parse_readelf


def test_sections_rows_and_comments() -> None:
    table = parse("# header\n\n@glibc 2.36\nexp libm.so.6 GLIBC_2.29 default\n"
                  "exp libm.so.6 GLIBC_2.2.5 compat\n# more\n@glibc 2.33\n"
                  "shm_open librt.so.1 GLIBC_2.2.5 default\n", "g.txt")
    assert table.sections == {
        (2, 36): {"exp": (Row("exp", "libm.so.6", "GLIBC_2.29", True),
                          Row("exp", "libm.so.6", "GLIBC_2.2.5", False))},
        (2, 33): {"shm_open": (Row("shm_open", "librt.so.1", "GLIBC_2.2.5", True),)}}


@pytest.mark.parametrize(("text", "line"), [
    ("@glibc 2.36\nexp libm.so.6 GLIBC_2.29 maybe\n",
     "g.txt:2: expected '@glibc 2.N' or 'name library version default|compat', got "
     "'exp libm.so.6 GLIBC_2.29 maybe'"),
    ("exp libm.so.6 GLIBC_2.29 default\n",  # a row before any section
     "g.txt:1: expected '@glibc 2.N' or 'name library version default|compat', got "
     "'exp libm.so.6 GLIBC_2.29 default'"),
    ("# c\n@glibc two\n", "g.txt:2: expected '@glibc 2.N' or 'name library version default|compat', "
                          "got '@glibc two'"),
    ("@glibc 2.36\n" + "x" * 100 + "\n", "g.txt:2: expected '@glibc 2.N' or 'name library version "
                                         "default|compat', got '" + "x" * 80 + "'"),
    ("# only a comment\n\n", "g.txt: no '@glibc 2.N' section"),
])
def test_refusals_name_the_file_and_line(text: str, line: str) -> None:
    with pytest.raises(DataError) as err:
        parse(text, "g.txt")
    assert str(err.value) == line


def test_which_readelf_rows_are_names() -> None:
    text = """
Symbol table '.dynsym' contains 9 entries:
   Num:    Value          Size Type    Bind   Vis      Ndx Name
     1: 0000000000001000     8 FUNC    WEAK   DEFAULT   16 w@@GLIBC_2.3
     2: 0000000000001000     8 OBJECT  UNIQUE DEFAULT   16 u@GLIBC_2.2.5
     3: 0000000000001000     8 FUNC    GLOBAL PROTECTED 16 p@@GLIBC_2.17
     4: 0000000000001000     8 FUNC    GLOBAL HIDDEN   16 h@@GLIBC_2.17
     5: 0000000000001000     8 FUNC    GLOBAL INTERNAL 16 i@@GLIBC_2.17
     6: 0000000000001000     8 FUNC    GLOBAL DEFAULT   16 plain
     7: 0000000000001000     8 FUNC    GLOBAL DEFAULT   16 priv@@GLIBC_PRIVATE
     8: 0000000000001000     8 FUNC    GLOBAL DEFAULT
"""
    assert parse_readelf(text, "libx.so.6") == [
        Row("w", "libx.so.6", "GLIBC_2.3", True), Row("u", "libx.so.6", "GLIBC_2.2.5", False),
        Row("p", "libx.so.6", "GLIBC_2.17", True), Row("priv", "libx.so.6", "GLIBC_PRIVATE", True)]
