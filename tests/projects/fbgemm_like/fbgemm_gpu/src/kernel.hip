#include <hip/hip_runtime.h>

__global__ void cumsum_kernel(long long* x, int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (int i = 1; i < n; ++i) x[i] += x[i - 1];
}

extern "C" int fbgemm_like_device_count(void) {
    int n = 0;
    return hipGetDeviceCount(&n) == hipSuccess ? n : 0;
}
