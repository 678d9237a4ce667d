"""TEST DOUBLES of TheRock's ROCm Python SDK packages and of a ROCm torch, built as real
wheels/sdists (stdlib only) and served by a real PEP 503 index (``tests.doubles.index``).

Packages, named as TheRock names them, every Summary starting with "TEST DOUBLE":

- ``rocm`` (an sdist with an in-tree PEP 517 backend, like TheRock's): the GPU family is
  chosen when the sdist is *built*, from ``ROCM_SDK_TARGET_FAMILY`` (else a baked-in
  default); extras ``libraries``, ``devel`` (per-family) plus ``device-gfxNNN``/``device-all``
  (multi-arch). Its ``rocm_sdk`` module answers ``python -m rocm_sdk path --root|--bin|--cmake``,
  ``version``, ``targets``, ``test``, ``init`` like the real one (also the ``rocm-sdk`` script).
- ``rocm-sdk-core``: the toolchain folder ``_rocm_sdk_core`` (``bin/hipcc`` wrapping the
  system's ``/usr/bin/hipcc`` when present, ``bin/hipconfig`` answering ``--version``/
  ``--rocmpath``, ``.info/version``, ``lib/cmake``, ``lib/llvm/amdgcn/bitcode``).
- ``rocm-sdk-devel`` (headers: ``include/hip/hip_version.h``), ``rocm-sdk-libraries-<family>``
  (per-family) or ``rocm-sdk-libraries`` + ``rocm-sdk-device-<gfx>`` (multi-arch).
- ``rocm 0.1.0``: the PyPI placeholder that ``>1.0`` must skip.
- ``torch`` X.Y.Z+rocmA.B reporting ``torch.version.hip``.
- a split ``torch`` as TheRock's multi-arch index has it (ROCm/TheRock@89553ce37 RELEASES.md):
  a host wheel with ``device-<gfx>``/``device-all`` extras, each pulling an
  ``amd-torch-device-<gfx>`` package that depends on ``rocm-sdk-device-<gfx>``; the host wheel
  pins ``rocm[libraries]==<the SDK it was built with>``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
import textwrap
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

TAG = "py3-none-linux_x86_64"  # TheRock's wheels are tagged linux_x86_64, not manylinux
FileSpec = Mapping[str, "bytes | str | tuple[bytes | str, int]"]


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _escape(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def metadata_text(name: str, version: str, summary: str, requires: Iterable[str] = (),
                  extras: Iterable[str] = ()) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
             f"Summary: {summary}", "Requires-Python: >=3.8"]
    lines += [f"Provides-Extra: {e}" for e in extras]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\n"


def write_wheel(out_dir: Path, name: str, version: str, files: FileSpec, *, summary: str,
                requires: Iterable[str] = (), extras: Iterable[str] = (), tag: str = TAG,
                entry_points: str | None = None) -> Path:
    """A real wheel (zip, dist-info, RECORD with hashes, file modes kept)."""
    dist = f"{_escape(name)}-{version}"
    info = f"{dist}.dist-info"
    members: dict[str, tuple[bytes, int]] = {}
    for path, spec in files.items():
        data, mode = spec if isinstance(spec, tuple) else (spec, 0o644)
        members[path] = (data.encode() if isinstance(data, str) else data, mode)
    members[f"{info}/METADATA"] = (metadata_text(name, version, summary, requires, extras).encode(),
                                   0o644)
    members[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: tests.doubles\nRoot-Is-Purelib: true\nTag: {tag}\n".encode(),
        0o644)
    if entry_points:
        members[f"{info}/entry_points.txt"] = (entry_points.encode(), 0o644)
    record = [f"{p},{_record_hash(d)},{len(d)}" for p, (d, _) in members.items()]
    record.append(f"{info}/RECORD,,")
    members[f"{info}/RECORD"] = ("\n".join(record).encode() + b"\n", 0o644)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{dist}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for p, (d, mode) in members.items():
            zi = zipfile.ZipInfo(p, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, d)
    return path


# ----------------------------------------------------------------------------- rocm_sdk CLI
ROCM_SDK_MAIN = '''\
"""TEST DOUBLE of TheRock's rocm_sdk CLI (python -m rocm_sdk / rocm-sdk)."""
import importlib.metadata
import importlib.util
import os
import subprocess
import sys

from rocm_sdk import _dist_info


def _pkg_dir(module):
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise SystemExit("rocm_sdk (TEST DOUBLE): package %s is not installed" % module)
    return os.path.dirname(spec.origin)


def root():
    return _pkg_dir("_rocm_sdk_core")


def targets():
    if _dist_info.LAYOUT == "multi-arch":
        found = sorted(
            d.metadata["Name"][len("rocm-sdk-device-"):]
            for d in importlib.metadata.distributions()
            if (d.metadata["Name"] or "").lower().startswith("rocm-sdk-device-")
        )
        return found or list(_dist_info.TARGETS)
    return list(_dist_info.TARGETS)


def _test():
    failures = []
    checks = 0
    def check(name, ok, detail=""):
        nonlocal checks
        checks += 1
        print("%s ... %s%s" % (name, "ok" if ok else "FAIL", (" (" + detail + ")") if detail else ""))
        if not ok:
            failures.append(name)
    r = root()
    check("test_core_installed", os.path.isdir(os.path.join(r, "bin")))
    for mod in ("_rocm_sdk_devel",):
        check("test_%s_side_by_side" % mod, importlib.util.find_spec(mod) is not None)
    libs = [d for d in importlib.metadata.distributions()
            if (d.metadata["Name"] or "").lower().startswith("rocm-sdk-libraries")]
    check("test_libraries_installed", bool(libs))
    out = subprocess.run([os.path.join(r, "bin", "hipconfig"), "--rocmpath"],
                         capture_output=True, text=True)
    check("test_hipconfig_rocmpath", out.stdout.strip() == r, out.stdout.strip())
    out = subprocess.run([os.path.join(r, "bin", "hipcc"), "--version"],
                         capture_output=True, text=True)
    check("test_hipcc_runs", out.returncode == 0)
    print("-" * 70)
    print("Ran %d tests" % checks)
    print("FAILED (failures=%d)" % len(failures) if failures else "OK")
    return 1 if failures else 0


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print("usage: rocm-sdk {path,version,targets,test,init} (TEST DOUBLE)")
        return 0 if args else 2
    cmd = args[0]
    if cmd == "path":
        r = root()
        if "--bin" in args:
            print(os.path.join(r, "bin"))
        elif "--cmake" in args:
            print(os.path.join(r, "lib", "cmake"))
        else:
            print(r)
        return 0
    if cmd == "version":
        print(_dist_info.VERSION)
        return 0
    if cmd == "targets":
        print(";".join(targets()))
        return 0
    if cmd == "init":
        print(root())
        return 0
    if cmd == "test":
        return _test()
    print("rocm-sdk: unknown command %r" % cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
'''

BACKEND = '''\
"""In-tree PEP 517 backend of the TEST DOUBLE rocm sdist: the GPU family is chosen at build
time from ROCM_SDK_TARGET_FAMILY (else the baked-in default), like TheRock's sdist."""
import base64
import hashlib
import os
import zipfile

NAME = "rocm"
VERSION = %(version)r
LAYOUT = %(layout)r
DEFAULT_FAMILY = %(default_family)r
FAMILIES = %(families)r
DEVICES = %(devices)r
SUMMARY = "TEST DOUBLE of TheRock's rocm meta package (%(layout)s)"


def _family():
    return os.environ.get("ROCM_SDK_TARGET_FAMILY") or DEFAULT_FAMILY


def _metadata():
    fam = _family()
    lines = ["Metadata-Version: 2.1", "Name: rocm", "Version: " + VERSION,
             "Summary: " + SUMMARY, "Requires-Python: >=3.8",
             "Provides-Extra: libraries", "Provides-Extra: devel"]
    reqs = ["rocm-sdk-core==" + VERSION,
            'rocm-sdk-devel==%%s ; extra == "devel"' %% VERSION]
    if LAYOUT == "multi-arch":
        reqs.append('rocm-sdk-libraries==%%s ; extra == "libraries"' %% VERSION)
        lines.append("Provides-Extra: device-all")
        for gfx in DEVICES:
            lines.append("Provides-Extra: device-" + gfx)
            reqs.append('rocm-sdk-device-%%s==%%s ; extra == "device-%%s"' %% (gfx, VERSION, gfx))
            reqs.append('rocm-sdk-device-%%s==%%s ; extra == "device-all"' %% (gfx, VERSION))
    else:
        reqs.append('rocm-sdk-libraries-%%s==%%s ; extra == "libraries"' %% (fam, VERSION))
    lines += ["Requires-Dist: " + r for r in reqs]
    return "\\n".join(lines) + "\\n\\n"


def _dist_info_py():
    fam = _family()
    targets = FAMILIES.get(fam, []) if LAYOUT != "multi-arch" else DEVICES
    return ("VERSION = %%r\\nLAYOUT = %%r\\nFAMILY = %%r\\nTARGETS = %%r\\n"
            %% (VERSION, LAYOUT, fam if LAYOUT != "multi-arch" else None, list(targets)))


def _info_dir():
    return "rocm-%%s.dist-info" %% VERSION


def _wheel_text():
    return "Wheel-Version: 1.0\\nGenerator: rocm-test-double\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _info_dir())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as fh:
        fh.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w") as fh:
        fh.write(_wheel_text())
    return _info_dir()


def _hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.abspath(__file__))
    members = {}
    for name in ("__init__.py", "__main__.py"):
        with open(os.path.join(here, "rocm_sdk", name), "rb") as fh:
            members["rocm_sdk/" + name] = fh.read()
    members["rocm_sdk/_dist_info.py"] = _dist_info_py().encode()
    info = _info_dir()
    members[info + "/METADATA"] = _metadata().encode()
    members[info + "/WHEEL"] = _wheel_text().encode()
    members[info + "/entry_points.txt"] = b"[console_scripts]\\nrocm-sdk = rocm_sdk.__main__:main\\n"
    record = ["%%s,%%s,%%d" %% (p, _hash(d), len(d)) for p, d in members.items()]
    record.append(info + "/RECORD,,")
    members[info + "/RECORD"] = ("\\n".join(record) + "\\n").encode()
    filename = "rocm-%%s-py3-none-any.whl" %% VERSION
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as zf:
        for p, d in members.items():
            zf.writestr(p, d)
    return filename
'''


def write_rocm_sdist(out_dir: Path, version: str, *, layout: str, default_family: str,
                     families: Mapping[str, Iterable[str]], devices: Iterable[str]) -> Path:
    """The ``rocm`` meta package as an sdist with an in-tree backend (no build dependencies)."""
    base = f"rocm-{version}"
    backend = BACKEND % {
        "version": version, "layout": layout, "default_family": default_family,
        "families": {k: list(v) for k, v in families.items()}, "devices": list(devices),
    }
    pkg_info = metadata_text("rocm", version, f"TEST DOUBLE of TheRock's rocm meta package ({layout})")
    files = {
        "PKG-INFO": pkg_info,
        "pyproject.toml": textwrap.dedent("""\
            [build-system]
            requires = []
            build-backend = "rocm_backend"
            backend-path = ["."]
            """),
        "rocm_backend.py": backend,
        "rocm_sdk/__init__.py": '"""TEST DOUBLE of TheRock\'s rocm_sdk."""\n',
        "rocm_sdk/__main__.py": ROCM_SDK_MAIN,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{base}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for rel, text in files.items():
            data = text.encode()
            ti = tarfile.TarInfo(f"{base}/{rel}")
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 1767225600
            tf.addfile(ti, io.BytesIO(data))
    return path


def _hip_numbers(version: str) -> tuple[str, str]:
    major, minor = version.split(".")[:2]
    return major, re.match(r"[0-9]+", minor)[0]  # type: ignore[index]


def core_files(version: str) -> dict[str, bytes | str | tuple[bytes | str, int]]:
    major, minor = _hip_numbers(version)
    hip = f"{major}.{minor}.51830"
    hipcc = textwrap.dedent(f"""\
        #!/bin/sh
        # TEST DOUBLE of TheRock's hipcc: wraps the system's hipcc (HIP_PLATFORM=amd) if present,
        # with the system's own ROCm paths (the double's root holds no compiler).
        if [ "$1" = "--version" ]; then
            echo "HIP version: {hip}-testdouble"
            echo "TEST DOUBLE of TheRock's hipcc (ROCm {version})"
            exit 0
        fi
        if [ -x /usr/bin/hipcc ]; then
            exec env -u ROCM_PATH -u ROCM_HOME -u HIP_PATH -u HIP_DEVICE_LIB_PATH \\
                HIP_PLATFORM=amd /usr/bin/hipcc "$@"
        fi
        echo "hipcc (TEST DOUBLE): no system hipcc to wrap" >&2
        exit 1
        """)
    hipconfig = textwrap.dedent(f"""\
        #!/bin/sh
        # TEST DOUBLE of TheRock's hipconfig.
        ROOT=$(cd "$(dirname "$0")/.." && pwd)
        case "$1" in
            --version|-v) printf '%s' "{hip}-testdouble" ;;
            --rocmpath|-R|--path|-p) printf '%s' "$ROOT" ;;
            --platform|-P) printf '%s' amd ;;
            *) echo "HIP version: {hip}-testdouble"; echo "ROCM_PATH: $ROOT" ;;
        esac
        """)
    return {
        "_rocm_sdk_core/__init__.py": '"""TEST DOUBLE of TheRock\'s rocm-sdk-core."""\n',
        "_rocm_sdk_core/bin/hipcc": (hipcc, 0o755),
        "_rocm_sdk_core/bin/hipconfig": (hipconfig, 0o755),
        "_rocm_sdk_core/.info/version": f"{version.split('a')[0].split('rc')[0]}-testdouble\n",
        "_rocm_sdk_core/lib/cmake/hip/hip-config.cmake": "# TEST DOUBLE\n",
        "_rocm_sdk_core/lib/llvm/amdgcn/bitcode/README": "TEST DOUBLE: no device libraries\n",
    }


def devel_files(version: str) -> dict[str, bytes | str | tuple[bytes | str, int]]:
    major, minor = _hip_numbers(version)
    return {
        "_rocm_sdk_devel/__init__.py": '"""TEST DOUBLE of TheRock\'s rocm-sdk-devel."""\n',
        "_rocm_sdk_devel/include/hip/hip_version.h": (
            f"// TEST DOUBLE\n#define HIP_VERSION_MAJOR {major}\n#define HIP_VERSION_MINOR {minor}\n"
            "#define HIP_VERSION_PATCH 51830\n"),
    }


def write_sdk(out_dir: Path, version: str, *, layout: str, default_family: str,
              families: Mapping[str, Iterable[str]], devices: Iterable[str] = ()) -> list[Path]:
    """Every package of one SDK release (and the PyPI placeholder) into ``out_dir``."""
    fams = {k: list(v) for k, v in families.items()}
    devs = list(devices)
    out = [
        write_rocm_sdist(out_dir, version, layout=layout, default_family=default_family,
                         families=fams, devices=devs),
        write_wheel(out_dir, "rocm-sdk-core", version, core_files(version),
                    summary="TEST DOUBLE of TheRock's rocm-sdk-core"),
        write_wheel(out_dir, "rocm-sdk-devel", version, devel_files(version),
                    summary="TEST DOUBLE of TheRock's rocm-sdk-devel"),
    ]
    if layout == "multi-arch":
        out.append(write_wheel(out_dir, "rocm-sdk-libraries", version, {
            "_rocm_sdk_libraries/__init__.py": "# TEST DOUBLE (arch-neutral)\n"},
            summary="TEST DOUBLE of TheRock's rocm-sdk-libraries"))
        for gfx in devs:
            out.append(write_wheel(out_dir, f"rocm-sdk-device-{gfx}", version, {
                f"_rocm_sdk_device_{gfx}/__init__.py": f"# TEST DOUBLE: device code for {gfx}\n"},
                summary=f"TEST DOUBLE of TheRock's rocm-sdk-device-{gfx}"))
    else:
        for fam in fams:
            out.append(write_wheel(out_dir, f"rocm-sdk-libraries-{fam}", version, {
                f"_rocm_sdk_libraries_{_escape(fam)}/__init__.py": f"FAMILY = {fam!r}  # TEST DOUBLE\n"},
                summary=f"TEST DOUBLE of TheRock's rocm-sdk-libraries-{fam}"))
    return out


def write_placeholder(out_dir: Path) -> Path:
    return write_wheel(out_dir, "rocm", "0.1.0", {"rocm_placeholder/__init__.py": ""},
                       summary="TEST DOUBLE of PyPI's rocm 0.1.0 placeholder", tag="py3-none-any")


def write_torch(out_dir: Path, version: str, hip: str | None) -> Path:
    """A ``torch`` double: ``torch.__version__`` and ``torch.version.hip`` like a ROCm build."""
    return write_wheel(out_dir, "torch", version, {
        "torch/__init__.py": f'"""TEST DOUBLE of a ROCm PyTorch build."""\n'
                             f"from torch import version\n__version__ = {version!r}\n",
        "torch/version.py": f"__version__ = {version!r}\nhip = {hip!r}\ncuda = None\n"
                            "git_version = 'testdouble'\n",
        "torch/lib/README": "TEST DOUBLE: no libraries\n",
    }, summary="TEST DOUBLE of a ROCm PyTorch build", tag="py3-none-any")


def write_split_torch(out_dir: Path, version: str, hip: str, *, devices: Iterable[str],
                      sdk_version: str) -> list[Path]:
    """TheRock's multi-arch torch: the host wheel and one ``amd-torch-device-<gfx>`` each."""
    devs = list(devices)
    requires = [f"rocm[libraries]=={sdk_version}"]
    for gfx in devs:
        requires.append(f'amd-torch-device-{gfx}=={version} ; extra == "device-{gfx}"')
        requires.append(f'amd-torch-device-{gfx}=={version} ; extra == "device-all"')
    host = write_wheel(out_dir, "torch", version, {
        "torch/__init__.py": f'"""TEST DOUBLE of TheRock\'s multi-arch torch (host wheel)."""\n'
                             f"from torch import version\n__version__ = {version!r}\n",
        "torch/version.py": f"__version__ = {version!r}\nhip = {hip!r}\ncuda = None\n"
                            "git_version = 'testdouble'\n",
        "torch/lib/README": "TEST DOUBLE: no libraries\n",
    }, summary="TEST DOUBLE of TheRock's multi-arch torch (host code)", requires=requires,
        extras=["device-all", *(f"device-{g}" for g in devs)])
    out = [host]
    for gfx in devs:
        out.append(write_wheel(out_dir, f"amd-torch-device-{gfx}", version, {
            f"_amd_torch_device_{gfx}/__init__.py": f"# TEST DOUBLE: torch kernels for {gfx}\n"},
            summary=f"TEST DOUBLE of TheRock's amd-torch-device-{gfx}",
            requires=[f"rocm-sdk-device-{gfx}=={sdk_version}"]))
    return out
