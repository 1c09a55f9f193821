// Paged attention of one sequence's few new rows, reading its K/V block by block from the pool.
#pragma once
#include "vector_math.h"

namespace codedraft {

// o (D) += p[j] * value row j - j0, for j0 <= j < j1 in that order (value: a block's rows of D).
// Called block after block from o = 0, it gives each o[e] the same chain of operations as one pass.
inline void weigh_block(const float* p, int64_t j0, int64_t j1, const float* value, int64_t D, float* o) {
  int64_t e0 = 0;
#ifdef CODEDRAFT_AVX2
  constexpr int64_t kLanes = 64;  // 8 registers of o at a time
  for (; e0 + kLanes <= D; e0 += kLanes) {
    __m256 acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_loadu_ps(o + e0 + 8 * i);
    const float* v = value + e0;
    for (int64_t j = j0; j < j1; ++j, v += D) {
      const __m256 weight = _mm256_broadcast_ss(p + j);
      for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(weight, _mm256_loadu_ps(v + 8 * i), acc[i]);
    }
    for (int i = 0; i < 8; ++i) _mm256_storeu_ps(o + e0 + 8 * i, acc[i]);
  }
#endif
  const float* v = value;
  for (int64_t j = j0; j < j1; ++j, v += D) {
    for (int64_t e = e0; e < D; ++e) o[e] += p[j] * v[e];
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
// context_len - T + t and sees the positions up to its own; query head h reads KV head h / (H / KvH).
inline void attend(const float* q, int64_t T, int64_t H, const Pool& pool, const at::Tensor& block_table,
            int64_t context_len, double scale, float* out) {
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
  // Work by KV head: its query heads' rows (items) take each block of keys, then of values, in turn
  // while it is in cache, instead of each reading the whole sequence. Each item's arithmetic is that
  // of attending alone (the same dot products, maximum, exponentials and value chain, in position
  // order), so a row's output does not depend on the other rows of the call.
  constexpr int64_t kRows = 16;  // rows taken together (bounds the scores kept: kRows x group x context)
  at::parallel_for(0, pool.kv_heads, 1, [&](int64_t g0, int64_t g1) {
    std::vector<float> scores(std::min(T, kRows) * group * context_len), tops(std::min(T, kRows) * group);
    for (int64_t g = g0; g < g1; ++g) {
      const float* keys = pool.k + g * head_stride;
      const float* values = pool.v + g * head_stride;
      for (int64_t t0 = 0; t0 < T; t0 += kRows) {
        const int64_t items = std::min(kRows, T - t0) * group;  // item i: row t0 + i / group
        const auto seen = [&](int64_t i) { return context_len - T + t0 + i / group + 1; };
        const auto head = [&](int64_t i) { return (t0 + i / group) * H + g * group + i % group; };  // t H + h
        std::fill(tops.begin(), tops.end(), -INFINITY);
        for (int64_t start = 0; start < seen(items - 1); start += bs) {
          const float* block = keys + ids[start / bs] * bs * D;
          for (int64_t i = 0; i < items; ++i) {
            const float* qv = q + head(i) * D;
            float* row = scores.data() + i * context_len;
            const float* key = block;
            for (int64_t j = start; j < std::min(seen(i), start + bs); ++j, key += D) {
              row[j] = static_cast<float>(scale) * dot(qv, key, D);
              tops[i] = std::max(tops[i], row[j]);
            }
          }
        }
        for (int64_t i = 0; i < items; ++i) {
          float* row = scores.data() + i * context_len;
          const float total = exp_shifted(row, seen(i), tops[i]);
          for (int64_t j = 0; j < seen(i); ++j) row[j] /= total;
          std::fill(out + head(i) * D, out + head(i) * D + D, 0.f);
        }
        for (int64_t start = 0; start < seen(items - 1); start += bs) {
          const float* block = values + ids[start / bs] * bs * D;
          for (int64_t i = 0; i < items; ++i) {
            const int64_t end = std::min(seen(i), start + bs);
            if (end > start) weigh_block(scores.data() + i * context_len, start, end, block, D, out + head(i) * D);
          }
        }
      }
    }
  });
}

}  // namespace codedraft
