"""The names of a plan's steps, in plan order: defined here once.

The planner and the recipes name their ``Step``s with these; the data's known failures
(``toolkit.data.known``) may expect a failure at any of them; manifests, ``--dry-run`` and
``--from-step`` show them.
"""

from __future__ import annotations

CHECK_ENV = "check-env"
PROBE_INDEXES = "probe-indexes"
CREATE_ENV = "create-env"
INSTALL_ROCM_SDK = "install-rocm-sdk"
ROCM_SDK_TEST = "rocm-sdk-test"
PIN_TORCH = "pin-torch"
INSTALL_TORCH = "install-torch"
ROCM_SDK_INIT = "rocm-sdk-init"
MARK_ENV_READY = "mark-env-ready"
GET_SOURCES = "get-sources"
GET_SUBMODULES = "get-submodules"
INSTALL_REQUIREMENTS = "install-requirements"
PROVIDE_TBB = "provide-tbb"
PREFLIGHT = "preflight"
BUILD_WHEEL = "build-wheel"
EXPECT_WHEEL = "expect-wheel"
NAME_WHEEL = "name-wheel"
CHECK = "check"
INSTALL_WHEEL = "install-wheel"
SMOKE = "smoke"
PUBLISH = "publish"

# every step a plan may have, in plan order (``publish`` last: it cannot fail a build's code)
STEP_NAMES = (CHECK_ENV, PROBE_INDEXES, CREATE_ENV, INSTALL_ROCM_SDK, ROCM_SDK_TEST, PIN_TORCH,
              INSTALL_TORCH, ROCM_SDK_INIT, MARK_ENV_READY, GET_SOURCES, GET_SUBMODULES,
              INSTALL_REQUIREMENTS, PROVIDE_TBB, PREFLIGHT, BUILD_WHEEL, EXPECT_WHEEL, NAME_WHEEL,
              CHECK, INSTALL_WHEEL, SMOKE, PUBLISH)

# --variants (issue 31): one group per gfx target, named <prefix>-<target>: build, make and
# check each variant before publish, publish each after it (toolkit/plan/variants.py)
BUILD_VARIANT = "build-variant"
MAKE_VARIANT = "make-variant"
CHECK_VARIANT = "check-variant"
PUBLISH_VARIANT = "publish-variant"
VARIANT_STEPS = (BUILD_VARIANT, MAKE_VARIANT, CHECK_VARIANT, PUBLISH_VARIANT)
