"""A relocatable object (``.o``, ELF type REL: `readelf -h` says "REL (Relocatable file)")
is never loaded by ld.so: its undefined symbols are resolved by the linker that uses it, so
the check does not report them. The same code built as a shared library (type DYN), which
ld.so does load, has its undefined symbol reported: the control that shows the check looks."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.fixtures.native import compile_shared, compiler
from tests.fixtures.wheels import make_wheel
from toolkit.inspect.checks import check_paths

TAG = "cp312-cp312-linux_x86_64"
SOURCE = "extern int nowhere_defined(void);\nint f(void){return nowhere_defined();}\n"


def test_an_object_files_undefined_symbol_is_the_linkers_business(tmp_path: Path) -> None:
    src = tmp_path / "part.c"
    src.write_text(SOURCE)
    obj = tmp_path / "part.o"
    subprocess.run([compiler("gcc"), "-c", "-fPIC", "-o", str(obj), str(src)], check=True)
    header = subprocess.run(["readelf", "-h", str(obj)], capture_output=True, text=True, check=True).stdout
    assert "REL (Relocatable file)" in header  # the independent statement of its type
    lib = compile_shared(tmp_path / "so", "libpart.so", SOURCE, lang="c")
    whl = make_wheel(tmp_path / "w", "demo", "1.0", TAG, {"demo/part.o": obj, "demo/libpart.so": lib})
    (w,) = check_paths([whl]).wheels
    undefined = {f.library for f in w.findings if f.check == "undefined-symbol"}
    assert undefined == {"demo/libpart.so"}
