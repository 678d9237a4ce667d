"""Does it run on my GPU? Small numeric checks against a reference (marker ``gpu``).

Skipped, with what was found, without a GPU of the requested target; failed instead with
``--require-gpu`` (GPU runners in CI).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


def test_gpu_is_requested_target(build, gpu, target):
    assert gpu.gfx == target.split(":")[0]


@pytest.mark.package("sample")
def test_sample_saxpy(build, gpu, load):
    hip_sample = load("hip_sample")
    if gpu.index != 0:
        pytest.skip(f"hip_sample runs on HIP device 0; the {gpu.gfx} GPU is device {gpu.index}")
    a = 2.5
    x = [float(i) / 7 for i in range(1000)]
    y = [1.0 - float(i) / 13 for i in range(1000)]
    got, why = hip_sample.run_kernel(a, x, y)
    assert got is not None, f"the kernel did not run on the {gpu.gfx} GPU: {why}"
    bad = [(i, g, a * xi + yi) for i, (g, xi, yi) in enumerate(zip(got, x, y))  # noqa: B905 (3.9 envs)
           if abs(g - (a * xi + yi)) > 1e-5 * max(1.0, abs(a * xi + yi))]
    assert not bad, f"{len(bad)} of {len(x)} results differ, first (index, got, want): {bad[0]}"


@pytest.mark.package("apex")
def test_apex_fused_layer_norm(build, torch_device, load):
    import torch
    import torch.nn.functional as F

    load("apex")
    from apex.normalization import FusedLayerNorm

    torch.manual_seed(0)
    x = torch.randn(16, 256, device=torch_device)
    ln = FusedLayerNorm(256).to(torch_device)
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
        got = ln(x)
        want = F.layer_norm(x, (256,), ln.weight, ln.bias, ln.eps)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.package("apex")
def test_apex_multi_tensor_scale(build, torch_device, load):
    import torch

    name = next(m for m in build.expected_modules if m.split(".")[-1] == "amp_C")
    amp_C = load(name)
    from apex.multi_tensor_apply import multi_tensor_applier

    torch.manual_seed(0)
    src = [torch.randn(n, device=torch_device) for n in (1, 1000, 65536 + 3)]
    dst = [torch.empty_like(t) for t in src]
    overflow = torch.zeros(1, dtype=torch.int, device=torch_device)
    multi_tensor_applier(amp_C.multi_tensor_scale, overflow, [src, dst], 0.25)
    for s, d in zip(src, dst):  # noqa: B905 (zip(strict=) needs 3.10; envs may be 3.9)
        torch.testing.assert_close(d, s * 0.25, rtol=1e-6, atol=1e-6)
    assert overflow.item() == 0, "multi_tensor_scale flagged an overflow on finite inputs"


@pytest.mark.package("fbgemm_gpu")
def test_fbgemm_jagged_2d_to_dense(build, torch_device, load):
    import torch

    load("fbgemm_gpu")
    lengths = [2, 0, 5, 3]
    offsets = torch.tensor([0, 2, 2, 7, 10], dtype=torch.int64, device=torch_device)
    values = torch.arange(30, dtype=torch.float32, device=torch_device).reshape(10, 3)
    max_len = 4
    got = torch.ops.fbgemm.jagged_2d_to_dense(values, offsets, max_len)
    want = torch.zeros(len(lengths), max_len, 3, device=torch_device)
    start = 0
    for b, n in enumerate(lengths):
        k = min(n, max_len)
        want[b, :k] = values[start:start + k]
        start += n
    torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.package("fbgemm_gpu")
def test_fbgemm_inclusive_cumsum(build, torch_device, load):
    import torch

    load("fbgemm_gpu")
    t = torch.randint(0, 100, (1000,), dtype=torch.int64, device=torch_device)
    got = torch.ops.fbgemm.asynchronous_inclusive_cumsum(t)
    torch.testing.assert_close(got, torch.cumsum(t, 0), rtol=0, atol=0)
