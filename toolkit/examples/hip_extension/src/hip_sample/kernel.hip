// saxpy on the GPU: y = a * x + y
#include <hip/hip_runtime.h>

#include "kernel.h"

__global__ void saxpy_kernel(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" int hip_sample_device_count(void) {
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess) return 0;
    return count;
}

extern "C" const char* hip_sample_saxpy(int n, float a, const float* x, float* y) {
    float *dx = nullptr, *dy = nullptr;
    size_t bytes = static_cast<size_t>(n) * sizeof(float);
    if (hipMalloc(&dx, bytes) != hipSuccess || hipMalloc(&dy, bytes) != hipSuccess)
        return "hipMalloc failed";
    hipMemcpy(dx, x, bytes, hipMemcpyHostToDevice);
    hipMemcpy(dy, y, bytes, hipMemcpyHostToDevice);
    saxpy_kernel<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
    hipError_t err = hipGetLastError();
    if (err == hipSuccess) err = hipDeviceSynchronize();
    if (err == hipSuccess) hipMemcpy(y, dy, bytes, hipMemcpyDeviceToHost);
    hipFree(dx);
    hipFree(dy);
    return err == hipSuccess ? nullptr : hipGetErrorString(err);
}
