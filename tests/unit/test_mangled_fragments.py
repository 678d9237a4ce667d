"""The prefilter fragment of a required C++ name is its Itanium ABI ``<source-name>``
(``<length><identifier>``, Itanium C++ ABI 5.1.5), so it occurs in every mangled name of
that function; names that are not plain identifiers (operators, destructors, templates) have
none. The mangled names and their c++filt (binutils 2.40) spellings below were checked with
c++filt by hand."""

from __future__ import annotations

import pytest

from toolkit.inspect.readers.demangle import qualified_name, source_name_fragment

# mangled name -> c++filt's qualified name (before the parameter list)
CXXFILT = {
    "_ZN10fbgemm_gpu18jagged_2d_to_denseEN2at6TensorES1_l": "fbgemm_gpu::jagged_2d_to_dense",
    "_ZN3Foo9BarBaz_42Ev": "Foo::BarBaz_42",
    "_ZN2at6TensorD2Ev": "at::Tensor::~Tensor",
    "_ZN3fooclEv": "foo::operator()",
    "_Z9hip_Alloc": "hip_Alloc",
    "_ZN5Apex_3ZedEv": "Apex_::Zed",
}


@pytest.mark.parametrize(("mangled", "qualified"), CXXFILT.items())
def test_a_fragment_occurs_in_the_mangled_name(mangled: str, qualified: str) -> None:
    frag = source_name_fragment(qualified)
    last = qualified.split("::")[-1]
    if last.startswith("~") or last.startswith("operator"):
        assert frag is None  # not a <source-name>: no prefilter
    else:
        assert frag is not None and frag in mangled.encode()
        assert frag == f"{len(last)}{last}".encode()


@pytest.mark.parametrize(("name", "frag"), [
    ("jagged_2d_to_dense", b"18jagged_2d_to_dense"),
    ("ns::Upper", b"5Upper"),
    ("ns::lower", b"5lower"),
    ("_private", b"8_private"),
    ("x", b"1x"),
    ("Z9", b"2Z9"),
    ("9lives", None),  # identifiers do not start with a digit
    ("vector<int>", None),
    ("operator+", None),
    ("~Tensor", None),
    ("", None),
    ("a-b", None),
])
def test_only_identifiers_have_a_fragment(name: str, frag: bytes | None) -> None:
    assert source_name_fragment(name) == frag


@pytest.mark.parametrize("mangled", [
    "plain",  # not mangled
    "_ZN3foo3bar",  # a nested name without its E
    "_Z0foo",  # a zero-length source name
    "_Z9foo",  # a source name longer than what follows
    "_ZN3fooB",  # an ABI tag without its length
])
def test_names_the_fallback_cannot_read_have_no_qualified_name(mangled: str) -> None:
    assert qualified_name(mangled) is None


def test_a_nested_name_with_its_end_is_read() -> None:
    assert qualified_name("_ZN3foo3barE") == "foo::bar"  # c++filt: foo::bar
    assert qualified_name("_ZN3Foo9BarBaz_42Ev") == "Foo::BarBaz_42"


def test_qualifiers_plain_names_and_empty_names() -> None:
    assert qualified_name("_ZNO3foo3barEv") == "foo::bar"  # c++filt: foo::bar() &&
    assert qualified_name("_Z3foo") == "foo"  # c++filt: foo (a name ending the string)
    assert qualified_name("_Z") is None and qualified_name("_ZNE") is None  # nothing named
    # characters outside ASCII (never in a mangled name) are replaced, not fatal
    assert qualified_name("_Z4f\u00e9xy") == "f?xy"
