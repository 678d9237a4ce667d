// CPU variant of the sample kernel (built when no HIP compiler exists).
#include "kernel.h"

extern "C" int hip_sample_device_count(void) { return 0; }

extern "C" const char* hip_sample_saxpy(int n, float a, const float* x, float* y) {
    for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
    return nullptr;
}
