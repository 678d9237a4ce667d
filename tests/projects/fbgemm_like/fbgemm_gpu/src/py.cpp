#include <cstdint>
#include <vector>

namespace fbgemm_gpu {
std::vector<int64_t> asynchronous_inclusive_cumsum_cpu(const std::vector<int64_t>& x);
}
extern "C" int fbgemm_like_device_count(void);

extern "C" int64_t fbgemm_like_cumsum_last(const int64_t* x, int n) {
    std::vector<int64_t> v(x, x + n);
    auto out = fbgemm_gpu::asynchronous_inclusive_cumsum_cpu(v);
    return out.empty() ? 0 : out.back();
}
