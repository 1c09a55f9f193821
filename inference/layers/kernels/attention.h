// Paged attention of one sequence's few new rows, reading its K/V block by block from the pool.
#pragma once
#include "vector_math.h"

namespace codedraft {

// o (D) = sum over lo <= j < seen of p[j] * value j, value j being row j % bs of block ids[j / bs] of values.
inline void weigh_values(const float* p, int64_t lo, int64_t seen, const float* values, const int64_t* ids,
                         int64_t bs, int64_t D, float* o) {
  int64_t e0 = 0;
#ifdef CODEDRAFT_AVX2
  constexpr int64_t kLanes = 64;  // 8 registers of o at a time
  for (; e0 + kLanes <= D; e0 += kLanes) {
    __m256 acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t start = lo - lo % bs; start < seen; start += bs) {
      const float* value = values + ids[start / bs] * bs * D + e0 + (std::max(start, lo) - start) * D;
      for (int64_t j = std::max(start, lo); j < std::min(seen, start + bs); ++j, value += D) {
        const __m256 weight = _mm256_broadcast_ss(p + j);
        for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(weight, _mm256_loadu_ps(value + 8 * i), acc[i]);
      }
    }
    for (int i = 0; i < 8; ++i) _mm256_storeu_ps(o + e0 + 8 * i, acc[i]);
  }
#endif
  if (e0 == D) return;
  std::fill(o + e0, o + D, 0.f);
  for (int64_t start = lo - lo % bs; start < seen; start += bs) {
    const float* value = values + ids[start / bs] * bs * D + (std::max(start, lo) - start) * D;
    for (int64_t j = std::max(start, lo); j < std::min(seen, start + bs); ++j, value += D) {
      for (int64_t e = e0; e < D; ++e) o[e] += p[j] * value[e];
    }
  }
}

struct Pool {
  const float* k;
  const float* v;
  int64_t kv_heads, blocks, block_size, head_dim;
};

inline Pool pool_of(const at::Tensor& k_cache, const at::Tensor& v_cache) {
  TORCH_CHECK(k_cache.dim() == 4 && k_cache.scalar_type() == at::kFloat && k_cache.is_contiguous() &&
                  v_cache.sizes() == k_cache.sizes() && v_cache.scalar_type() == at::kFloat && v_cache.is_contiguous(),
              "the K/V pool must be contiguous float32 (KvH, blocks, block_size, D)");
  return {k_cache.data_ptr<float>(), v_cache.data_ptr<float>(), k_cache.size(0), k_cache.size(1), k_cache.size(2),
          k_cache.size(3)};
}

// Attention of one sequence's T newest rows q (T, H, D) over its K/V in the pool (already holding
// the new rows); block_table lists its blocks, covering context_len tokens. Row t sits at position
// context_len - T + t and sees the positions up to its own, only the last `window` of them where
// window > 0 (a local layer's sliding window); query head h reads KV head h / (H / KvH). A row's
// output does not depend on the other rows of the call.
inline void attend(const float* q, int64_t T, int64_t H, const Pool& pool, const at::Tensor& block_table,
            int64_t context_len, double scale, float* out, int64_t window = 0) {
  TORCH_CHECK(block_table.dim() == 1 && block_table.scalar_type() == at::kLong && block_table.is_contiguous(),
              "block_table must be contiguous int64 (n,)");
  const int64_t D = pool.head_dim, bs = pool.block_size;
  TORCH_CHECK(H % pool.kv_heads == 0, "query heads must be a multiple of the KV heads");
  TORCH_CHECK(context_len >= T && block_table.numel() * bs >= context_len, "the blocks do not cover the context");
  const int64_t* ids = block_table.data_ptr<int64_t>();
  for (int64_t i = 0; i < block_table.numel(); ++i) {
    TORCH_CHECK(ids[i] >= 0 && ids[i] < pool.blocks, "block id ", ids[i], " out of range");
  }
  const int64_t group = H / pool.kv_heads, head_stride = pool.blocks * bs * D;
  at::parallel_for(0, T * H, 1, [&](int64_t first, int64_t last) {
    std::vector<float> scores(context_len);
    for (int64_t item = first; item < last; ++item) {
      const int64_t t = item / H, h = item % H;
      const int64_t seen = context_len - T + t + 1, lo = window > 0 ? std::max<int64_t>(0, seen - window) : 0;
      const float* keys = pool.k + (h / group) * head_stride;
      const float* values = pool.v + (h / group) * head_stride;
      const float* qv = q + (t * H + h) * D;
      // Keys and values are read block by block: position j is row j % bs of block ids[j / bs].
      float top = -INFINITY;
      for (int64_t start = lo - lo % bs; start < seen; start += bs) {
        const float* key = keys + ids[start / bs] * bs * D + (std::max(start, lo) - start) * D;
        const int64_t end = std::min(seen, start + bs);
        int64_t j = std::max(start, lo);
        for (; j + 8 <= end; j += 8, key += 8 * D) dot8(qv, key, D, scores.data() + j);  // a block's rows lie together
        for (; j < end; ++j, key += D) scores[j] = dot(qv, key, D);
        for (j = std::max(start, lo); j < end; ++j) {
          scores[j] = static_cast<float>(scale) * scores[j];
          top = std::max(top, scores[j]);
        }
      }
      const float total = exp_shifted(scores.data() + lo, seen - lo, top);
      for (int64_t j = lo; j < seen; ++j) scores[j] /= total;
      weigh_values(scores.data(), lo, seen, values, ids, bs, D, out + (t * H + h) * D);
    }
  });
}

}  // namespace codedraft
