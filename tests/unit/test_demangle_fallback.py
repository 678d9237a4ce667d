"""The pure-Python demangling fallback (used when c++filt is missing or fails) names a function
as binutils' c++filt does, for the shapes it claims: nested names, ``St``, cv and ref
qualifiers, ABI tags, constructors and destructors; anything else keeps its mangled spelling.

The expected names are c++filt's (binutils 2.40) output, cut before the parameter list."""

from __future__ import annotations

import pytest

from toolkit.inspect.readers.demangle import demangle_many, qualified_name

# mangled name -> what c++filt prints for it
CXXFILT = {
    "_ZN10fbgemm_gpu18jagged_2d_to_denseEN2at6TensorES1_l":
        "fbgemm_gpu::jagged_2d_to_dense(at::Tensor, at::Tensor, long)",
    "_ZNK3foo3barEv": "foo::bar() const",
    "_ZNr3foo3barEv": "foo::bar() restrict",
    "_ZNVKR3foo3barEv": "foo::bar() const volatile &",
    "_ZN3foo3barB5cxx11Ev": "foo::bar[abi:cxx11]()",
    "_ZN3fooC2Ev": "foo::foo()",
    "_ZN3fooD1Ev": "foo::~foo()",
    "_ZN3foo3barC1Ev": "foo::bar::bar()",
    "_ZN2at6TensorD2Ev": "at::Tensor::~Tensor()",
    "_ZN3abiB5cxx11C1Ev": "abi[abi:cxx11]::abi()",
    "_ZN3foo3D2xEv": "foo::D2x()",  # a name that starts like a destructor
    "_ZNSt6thread4joinEv": "std::thread::join()",
    "_Z3foov": "foo()",
}


@pytest.mark.parametrize(("mangled", "shown"), CXXFILT.items())
def test_the_fallback_names_a_function_as_cxxfilt_does(mangled: str, shown: str) -> None:
    assert qualified_name(mangled) == shown.split("(")[0]


def test_without_cxxfilt_functions_are_shown_with_elided_parameters() -> None:
    got = demangle_many([*CXXFILT, "plain_c_name", "_ZNSt6vectorIiSaIiEED1Ev"], tool=None)
    assert got["_ZN3fooD1Ev"] == "foo::~foo(...)"
    assert got["_ZN3foo3barB5cxx11Ev"] == "foo::bar[abi:cxx11](...)"
    # a template (c++filt: std::vector<int, std::allocator<int> >::~vector()) is beyond the
    # fallback: it keeps its mangled spelling rather than a wrong name
    assert got["_ZNSt6vectorIiSaIiEED1Ev"] == "_ZNSt6vectorIiSaIiEED1Ev"
    assert "plain_c_name" not in got  # not mangled: nothing to do
