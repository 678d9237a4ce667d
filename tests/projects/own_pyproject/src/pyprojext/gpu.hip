#include <hip/hip_runtime.h>

__global__ void fill(int* out, int value) { out[threadIdx.x] = value; }

extern "C" int pyprojext_launch(int value) {
  int* dev = nullptr;
  if (hipMalloc(&dev, sizeof(int)) != hipSuccess) return -1;
  hipLaunchKernelGGL(fill, dim3(1), dim3(1), 0, 0, dev, value);
  int host = 0;
  hipMemcpy(&host, dev, sizeof(int), hipMemcpyDeviceToHost);
  hipFree(dev);
  return host;
}
