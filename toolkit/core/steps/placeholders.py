"""The placeholders a step's values may hold, learned at execution time by an earlier step
(``PLACEHOLDER_HELP`` names the step that learns each)."""

from __future__ import annotations

import re

PLACEHOLDER_HELP = {
    "{ROCM_ROOT}": "python -m rocm_sdk path --root (learned by install-rocm-sdk)",
    "{ROCM_BIN}": "python -m rocm_sdk path --bin (learned by install-rocm-sdk)",
    "{ROCM_CMAKE}": "python -m rocm_sdk path --cmake (learned by install-rocm-sdk)",
    "{SHA}": "the source commit (learned by get-sources)",
    "{SHA8}": "its first 8 hex digits",
    "{SOURCE_DATE_EPOCH}": "the source commit's time (learned by get-sources; 0 outside git)",
    "{TORCH_LIB}": "the installed torch's lib/ folder (learned by install-torch)",
    "{WHEEL}": "the named wheel in the build's staging folder (learned by name-wheel)",
    "{VARIANT_WHEEL}": "the wheel variant just written (learned by each make-variant-<gfx>)",
    "{LDSHARED}": "the env interpreter's LDSHARED minus absolute -Wl,-rpath flags (build-wheel)",
    "{LDCXXSHARED}": "the env interpreter's LDCXXSHARED minus absolute -Wl,-rpath flags "
                     "(build-wheel)",
    "{PYTHON_PREFIX_MAP}": "-ffile-prefix-map=<the interpreter's prefix>=/python, quoted for "
                           "setuptools, hipcc and CMake (build-wheel)",
    "{TOOLS_PATH}": "the folders of the interpreter and uv (learned by check-env)",
    "{INTERPRETER}": "the Python interpreter found for the build (learned by check-env)",
    "{<NAME>_LIB_DIR}": "the folder holding lib<name>.so (learned by a ProvideLibrary step)",
    "{PATH}": "the inherited PATH",
    "{MANIFEST}": "the manifest this run writes (artifacts/<id>/manifest.json; a repro's "
                  "repro-manifest.json)",
}

LIB_DIR = re.compile(r"\{[A-Z0-9]+_LIB_DIR\}")  # placeholders ProvideLibrary steps learn
