"""``Resolver.closure`` and ``with_libraries`` pinned whole, against what ld.so(8) does: each
object is loaded once (a cycle or two names for one file do not load it twice), the needing
object's own RPATH is inherited by what it loads unless it has a RUNPATH, RUNPATH is never
inherited, every needed name is looked up once; ``--with`` files are indexed by file name
and, when it differs, by their SONAME (as ``DT_NEEDED`` names it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.handmade_elf import EM_386, EM_X86_64, shared_object
from toolkit.core.errors import UsageError
from toolkit.inspect.readers.elf import ElfInfo, read_elf_bytes
from toolkit.inspect.readers.resolver import Lib, Resolver, defines, with_libraries
from toolkit.inspect.rules.symbols import undefined_symbols


def _info(*needed: str, rpath: tuple[str, ...] = (), runpath: tuple[str, ...] = (),
          machine: int = EM_X86_64, elf_class: int = 64) -> ElfInfo:
    return ElfInfo(machine=machine, elf_class=elf_class, type=3, needed=needed, rpath=rpath,
                   runpath=runpath)


def _wheel_lib(path: str, info: ElfInfo | None) -> Lib:
    return Lib(path, "wheel:" + path.rpartition("/")[0], info)


def test_a_cycle_loads_each_object_once() -> None:
    a = _wheel_lib("pkg/liba.so", _info("libb.so", rpath=("$ORIGIN",)))
    b = _wheel_lib("pkg/libb.so", _info("liba.so", "libc.so.6"))
    index = {"pkg/liba.so": a, "pkg/libb.so": b}
    order, missing, by_name, assumed = Resolver({}, allowed=frozenset({"libc.so.6"})).closure(a, index)
    assert order == [a, b]  # b finds a (inherited RPATH) but a is loaded already
    assert by_name == {"libb.so": b, "liba.so": a}
    assert missing == [] and assumed == ["libc.so.6"]


def test_two_names_of_one_file_load_it_once_and_each_name_is_looked_up_once() -> None:
    z = Lib("/opt/libz.so.1", "/opt", _info())
    withs = {"libz.so": [z], "libz.so.1": [z]}
    root = _wheel_lib("pkg/root.so", _info("libz.so", "libz.so.1", "libq.so", "libq.so", "libz.so"))
    order, missing, by_name, assumed = Resolver(withs).closure(root, {})
    assert order == [root, z]
    assert by_name == {"libz.so": z, "libz.so.1": z}
    assert missing == [("libq.so", "pkg/root.so")]  # once, though needed twice
    assert assumed == []


def test_rpath_is_inherited_runpath_is_not_and_runpath_disables_rpath() -> None:
    # root (RPATH $ORIGIN/libs) -> mid (in libs/, no paths) -> leaf: found through root's RPATH
    root = _wheel_lib("pkg/root.so", _info("libmid.so", rpath=("$ORIGIN/libs",)))
    mid = _wheel_lib("pkg/libs/libmid.so", _info("libleaf.so"))
    leaf = _wheel_lib("pkg/libs/libleaf.so", _info())
    index = {lib.path: lib for lib in (root, mid, leaf)}
    order, missing, _, _ = Resolver({}).closure(root, index)
    assert order == [root, mid, leaf] and missing == []
    # the same with RUNPATH: mid's lookup does not see root's path
    root2 = _wheel_lib("pkg/root.so", _info("libmid.so", runpath=("$ORIGIN/libs",)))
    order, missing, _, _ = Resolver({}).closure(root2, {**index, root2.path: root2})
    assert order == [root2, mid] and missing == [("libleaf.so", "pkg/libs/libmid.so")]
    # an object with both: its RPATH is ignored (and so is not passed on)
    root3 = _wheel_lib("pkg/root.so", _info("libmid.so", rpath=("$ORIGIN/libs",), runpath=("$ORIGIN/none",)))
    order, missing, _, _ = Resolver({}).closure(root3, {**index, root3.path: root3})
    assert order == [root3] and missing == [("libmid.so", "pkg/root.so")]


def test_inherited_paths_come_after_the_objects_own_rpath_and_before_its_runpath() -> None:
    # root: RPATH $ORIGIN/a; mid (in a/) has RPATH $ORIGIN/../b; both a/ and b/ hold libx.so
    root = _wheel_lib("pkg/root.so", _info("libmid.so", rpath=("$ORIGIN/a",)))
    mid = _wheel_lib("pkg/a/libmid.so", _info("libx.so", rpath=("$ORIGIN/../b",)))
    xa, xb = _wheel_lib("pkg/a/libx.so", _info()), _wheel_lib("pkg/b/libx.so", _info())
    index = {lib.path: lib for lib in (root, mid, xa, xb)}
    order, _, by_name, _ = Resolver({}).closure(root, index)
    assert by_name["libx.so"] is xb and order == [root, mid, xb]  # own RPATH first
    mid_run = _wheel_lib("pkg/a/libmid.so", _info("libx.so", runpath=("$ORIGIN/../b",)))
    order, _, by_name, _ = Resolver({}).closure(root, {**index, mid_run.path: mid_run})
    assert by_name["libx.so"] is xa  # the inherited RPATH before its own RUNPATH


def test_unloadable_objects_need_nothing_and_foreign_libraries_do_not_satisfy() -> None:
    broken = _wheel_lib("pkg/broken.so", None)
    assert Resolver({}).closure(broken, {}) == ([broken], [], {}, [])
    root = _wheel_lib("pkg/root.so", _info("lib32.so", "libok.so", rpath=("$ORIGIN",)))
    lib32 = _wheel_lib("pkg/lib32.so", _info(machine=EM_386, elf_class=32))
    ok = _wheel_lib("pkg/libok.so", _info("libgone.so"))
    withs = {"libgone.so": [Lib("/w/libgone.so", "/w", _info(elf_class=32))]}
    index = {lib.path: lib for lib in (root, lib32, ok)}
    order, missing, by_name, assumed = Resolver(withs, allowed=frozenset({"libgone.so"})).closure(root, index)
    assert order == [root, ok]
    assert missing == [("lib32.so", "pkg/root.so")]
    assert by_name == {"libok.so": ok}
    assert assumed == ["libgone.so"]  # the 32-bit --with copy cannot load; the policy allows it


def _write(path: Path, soname: str | None) -> Path:
    path.write_bytes(shared_object(64, True, EM_X86_64, soname=soname))
    return path


def test_a_with_file_is_indexed_by_its_name_and_by_a_different_soname(tmp_path: Path) -> None:
    same = _write(tmp_path / "libsame.so.1", "libsame.so.1")
    other = _write(tmp_path / "libdev.so", "libreal.so.2")
    bare = _write(tmp_path / "libbare.so", None)
    found = with_libraries([same, other, bare])
    assert sorted(found) == ["libbare.so", "libdev.so", "libreal.so.2", "libsame.so.1"]
    assert [lib.path for lib in found["libsame.so.1"]] == [str(same)]  # not twice
    assert [lib.path for lib in found["libbare.so"]] == [str(bare)]
    assert found["libdev.so"] == found["libreal.so.2"] and found["libdev.so"][0].path == str(other)
    lib = found["libdev.so"][0]
    assert (lib.origin, lib.loader, lib.info is not None) == (str(tmp_path.resolve()), None, True)
    assert lib.info is not None and lib.info.soname == "libreal.so.2"


def test_a_with_folder_indexes_its_files_lazily_and_in_name_order(tmp_path: Path) -> None:
    for name in ("libb.so", "liba.so"):
        _write(tmp_path / name, "libsoname.so")
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "libc.so", None)
    found = with_libraries([tmp_path])
    assert sorted(found) == ["liba.so", "libb.so"]  # files only, by name; never by SONAME
    assert [lib.info for libs in found.values() for lib in libs] == [None, None]
    (a,) = found["liba.so"]
    assert (a.path, a.origin) == (str(tmp_path / "liba.so"), str(tmp_path.resolve()))
    a.load()
    assert a.info is not None and a.info.soname == "libsoname.so"


def test_a_missing_with_location_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^--with .*nothere: no such file or directory$"):
        with_libraries([tmp_path / "nothere"])


def test_a_library_on_disk_is_read_once_per_real_file_with_its_folder_as_origin(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    real = _write(tmp_path / "real" / "libx.so.1", "libx.so.1")
    (tmp_path / "links").mkdir()
    link = tmp_path / "links" / "libx.so"
    link.symlink_to(real)
    r = Resolver({})
    via_link = r.fs_lib(str(link))
    assert via_link is not None and via_link.info is not None and via_link.info.soname == "libx.so.1"
    # shown as asked; $ORIGIN is the folder of the path ld.so opened (the link's, not the target's)
    assert (via_link.path, via_link.origin) == (str(link), str(tmp_path / "links"))
    assert r.fs_lib(str(real)) is via_link  # one real file: read once
    (tmp_path / "text.so").write_text("not ELF")
    assert r.fs_lib(str(tmp_path / "text.so")) is None
    assert r.fs_lib(str(tmp_path / "missing.so")) is None
    assert r.fs_lib(str(tmp_path)) is None  # a folder


def test_a_dependency_on_disk_expands_origin_from_its_own_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "libmid.so").write_bytes(shared_object(64, True, EM_X86_64, needed=["libleaf.so"]))
    _write(tmp_path / "b" / "libleaf.so", None)
    r = Resolver({})
    mid = r.fs_lib(str(tmp_path / "a" / "libmid.so"))
    assert mid is not None and mid.info is not None
    mid.info.runpath = ("$ORIGIN/../b",)
    root = Lib(str(tmp_path / "root.so"), str(tmp_path), _info("libmid.so", runpath=("$ORIGIN/a",)))
    order, missing, _, _ = r.closure(root, {})
    assert [lib.path for lib in order] == [root.path, str(tmp_path / "a" / "libmid.so"),
                                           str(tmp_path / "b" / "libleaf.so")]
    assert missing == []


def test_ldconfigs_cache_names_the_hosts_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from tests.fixtures.native import system_lib
    from toolkit.inspect.readers import resolver

    libz = system_lib("libz.so.1")  # found in the standard folders, not through ldconfig
    resolver._ldconfig.cache_clear()
    try:
        cache = resolver._ldconfig()
        if not cache:
            pytest.skip("no ldconfig cache on this machine")
        assert any(os.path.realpath(p) == str(libz) for p in cache["libz.so.1"])
        assert all(" " not in name and all(p.startswith("/") and p == p.strip() for p in paths)
                   for name, paths in cache.items())
        dirs = resolver.host_system_dirs()
        assert len(dirs) == len(set(dirs)) and set(resolver.STD_DIRS) <= set(dirs)
        assert os.path.dirname(cache["libz.so.1"][0]) in dirs[: len(dirs) - len(resolver.STD_DIRS) + 1]
        resolver._ldconfig.cache_clear()
        monkeypatch.setattr("shutil.which", lambda name: None)
        monkeypatch.setattr("os.path.exists", lambda p: False)
        assert resolver._ldconfig() == {}  # no ldconfig: nothing named, nothing fails
        assert resolver.host_system_dirs() == resolver.STD_DIRS
    finally:
        resolver._ldconfig.cache_clear()


def test_a_lazy_library_loads_once_and_keeps_its_error() -> None:
    calls: list[int] = []

    def ok() -> ElfInfo:
        calls.append(1)
        return _info()

    lib = Lib("x", "/", None, loader=ok)
    lib.load()
    lib.load()
    assert calls == [1] and lib.info == _info() and lib.loader is None and lib.error is None

    def bad() -> ElfInfo:
        calls.append(2)
        raise OSError("gone")

    failed = Lib("y", "/", None, loader=bad)
    failed.load()
    failed.load()
    assert calls == [1, 2] and failed.info is None and failed.error == "gone" and failed.loader is None
    ready = Lib("z", "/", _info("a"), loader=bad)
    ready.load()  # already read: the loader is not needed
    assert calls == [1, 2] and ready.info == _info("a")


def test_find_looks_in_the_wheel_on_disk_then_with_in_order(tmp_path: Path) -> None:
    obj = _wheel_lib("pkg/sub/root.so", _info())
    here = _wheel_lib("pkg/libx.so", _info())
    top = _wheel_lib("libx.so", _info())
    foreign = _wheel_lib("other/libx.so", _info(machine=EM_386, elf_class=32))
    index = {lib.path: lib for lib in (here, top, foreign)}
    r = Resolver({})
    assert r.find("libx.so", obj, ["wheel:pkg/sub/..", "wheel:."], index) is here  # normalised
    assert r.find("libx.so", obj, ["wheel:.", "wheel:pkg"], index) is top  # the first folder wins
    assert r.find("libx.so", obj, ["wheel:/pkg"], index) is here  # no leading slash in the wheel
    assert r.find("libx.so", obj, ["wheel:other", "wheel:pkg"], index) is here  # 32-bit: passed over
    assert r.find("libx.so", obj, ["wheel:nowhere", "relative/dir"], index) is None
    assert r.find("libx.so", _wheel_lib("pkg/u.so", None), ["wheel:pkg"], index) is None  # unreadable
    # an absolute folder: a folder input's libraries, else the disk only for a file on disk
    disk = tmp_path / "d"
    disk.mkdir()
    _write(disk / "libx.so", None)
    given = Lib(str(tmp_path / "in" / "libx.so"), str(tmp_path / "in"), _info())
    on_disk = Lib("/abs/root.so", "/abs", _info())
    assert r.find("libx.so", on_disk, [str(tmp_path / "in" / ".")], {given.path: given}) is given
    found = r.find("libx.so", on_disk, [str(disk)], {})
    assert found is not None and found.path == str(disk / "libx.so")
    assert r.find("libx.so", obj, [str(disk)], {}) is None  # a wheel's library never reads the disk
    # then the --with libraries, the first that can load
    w32 = Lib("/w/32/libx.so", "/w/32", _info(machine=EM_386, elf_class=32))
    w64 = Lib("/w/64/libx.so", "/w/64", None, loader=_info)
    assert Resolver({"libx.so": [w32, w64]}).find("libx.so", obj, [], {}) is w64
    assert w64.info == _info()  # loaded on first use
    assert Resolver({"libx.so": [w32]}).find("libx.so", obj, [], {}) is None


def _lib(path: str, **kw: object) -> Lib:
    info = ElfInfo(machine=62, elf_class=64, type=3, **kw)  # type: ignore[arg-type]
    return Lib(path, "wheel:" + path.rpartition("/")[0], info)


def test_runpath_overrides_rpath_and_only_rpath_is_inherited() -> None:
    a, b = _lib("pkg/a/libx.so"), _lib("pkg/b/libx.so")
    both = _lib("pkg/user.so", needed=("libx.so",), rpath=("$ORIGIN/a",), runpath=("$ORIGIN/b",))
    index = {"pkg/a/libx.so": a, "pkg/b/libx.so": b}
    r = Resolver({})
    assert r.closure(both, index)[2]["libx.so"] is b  # ld.so ignores DT_RPATH when DT_RUNPATH is set
    only_rpath = _lib("pkg/user.so", needed=("libx.so",), rpath=("$ORIGIN/a",))
    assert r.closure(only_rpath, index)[2]["libx.so"] is a
    # a dependency without its own search path finds its needs through its parent's RPATH ...
    mid = _lib("pkg/mid.so", needed=("libx.so",))
    via_rpath = _lib("pkg/top.so", needed=("mid.so",), rpath=("$ORIGIN", "$ORIGIN/a"))
    idx = {**index, "pkg/mid.so": mid}
    order, missing, by_name, _ = r.closure(via_rpath, idx)
    assert by_name["libx.so"] is a and not missing
    # ... but never through its parent's RUNPATH
    via_runpath = _lib("pkg/top.so", needed=("mid.so",), runpath=("$ORIGIN", "$ORIGIN/a"))
    _, missing, _, _ = r.closure(via_runpath, idx)
    assert missing == [("libx.so", "pkg/mid.so")]


def test_symbol_versions_count_when_resolving() -> None:
    prov = _lib("pkg/libp.so", defined=frozenset({b"foo", b"bar"}),
                defined_versions={b"foo": ("V1",), b"bar": ("V2",)}, version_defs=frozenset({"V1", "V2"}))
    assert defines(prov, b"foo", "V1") and defines(prov, b"foo", None)
    assert not defines(prov, b"foo", "V2") and not defines(prov, b"baz", None)
    refs: list[tuple[bytes, str | None]] = [(b"foo", "V2"), (b"bar", "V2"), (b"foo", "V1")]
    user = ElfInfo(machine=62, elf_class=64, type=3, undefined=refs)
    assert undefined_symbols(user, [prov], set()) == [(b"foo", "V2")]
    assert undefined_symbols(user, [prov], {"V2"}) == []  # versions judged elsewhere are skipped


def test_a_foreign_library_is_not_compatible() -> None:
    user = _lib("pkg/u.so", needed=("libx.so",), runpath=("$ORIGIN",))
    be = Lib("pkg/libx.so", "wheel:pkg", read_elf_bytes(shared_object(64, False, EM_X86_64)))
    _, missing, _, _ = Resolver({}).closure(user, {"pkg/libx.so": be})
    assert missing == [("libx.so", "pkg/u.so")]


def test_an_absolute_runpath_finds_an_input_library_in_that_folder() -> None:
    from toolkit.inspect.readers.elf import ElfInfo
    from toolkit.inspect.readers.resolver import Resolver

    # ld.so(8): an absolute RUNPATH folder is searched for the needed name itself
    x86 = ElfInfo(machine=62, elf_class=64, type=3)
    dep = Lib("/opt/x/libdep.so", "with:/opt/x", x86)
    ext = Lib("pkg/ext.so", "wheel:pkg", x86)
    index = {"/opt/x/libdep.so": dep, "/opt/x": Lib("/opt/x", "with:/opt/x", x86)}
    assert Resolver({}).find("libdep.so", ext, ["/opt/x"], index) is dep


def test_a_wheel_folder_starting_with_x_is_looked_up_as_named() -> None:
    def lib(path: str) -> Lib:
        return Lib(path, "wheel:" + path.rpartition("/")[0],
                   ElfInfo(machine=EM_X86_64, elf_class=64, type=3))

    obj, dep = lib("pkg/root.so"), lib("Xlibs/libx.so")
    index = {dep.path: dep}
    assert Resolver({}).find("libx.so", obj, ["wheel:Xlibs"], index) is dep
    assert Resolver({}).find("libx.so", obj, ["wheel:/Xlibs/"], index) is dep


def test_an_unreadable_provider_defines_nothing_and_the_next_one_is_asked() -> None:
    from toolkit.inspect.rules.symbols import undefined_symbols

    info = ElfInfo(machine=62, elf_class=64, type=3, undefined=[(b"foo", None), (b"bar", None)])
    broken = Lib("libbroken.so", "/x", None, error="truncated")
    good = Lib("libgood.so", "/x", ElfInfo(machine=62, elf_class=64, type=3, defined=frozenset({b"foo"})))
    assert undefined_symbols(info, [broken, good], set()) == [(b"bar", None)]
    assert undefined_symbols(info, [good, broken], set()) == [(b"bar", None)]
