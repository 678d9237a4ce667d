#pragma once
#ifdef __cplusplus
extern "C" {
#endif
int hip_sample_device_count(void);
/* Returns NULL on success, else an error message. */
const char* hip_sample_saxpy(int n, float a, const float* x, float* y);
#ifdef __cplusplus
}
#endif
