#include <cstddef>
#include <cstdint>
#include <vector>

namespace fbgemm_gpu {

std::vector<int64_t> asynchronous_inclusive_cumsum_cpu(const std::vector<int64_t>& x) {
    std::vector<int64_t> out(x.size());
    int64_t acc = 0;
    for (size_t i = 0; i < x.size(); ++i) out[i] = acc += x[i];
    return out;
}

std::vector<int64_t> asynchronous_inclusive_cumsum_gpu(const std::vector<int64_t>& x) {
    return asynchronous_inclusive_cumsum_cpu(x);
}

std::vector<float> jagged_2d_to_dense(const std::vector<float>& values,
                                      const std::vector<int64_t>& offsets, int64_t max_len) {
    std::vector<float> out;
    for (size_t r = 0; r + 1 < offsets.size(); ++r)
        for (int64_t j = 0; j < max_len; ++j) {
            int64_t k = offsets[r] + j;
            out.push_back(k < offsets[r + 1] ? values[static_cast<size_t>(k)] : 0.0f);
        }
    return out;
}

std::vector<float> merge_pooled_embeddings(const std::vector<std::vector<float>>& parts) {
    std::vector<float> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

}  // namespace fbgemm_gpu
