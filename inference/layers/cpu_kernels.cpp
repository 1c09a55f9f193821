// The CPU kernels of the q4_1 weights form (inference/layers/block_linear.py, norm.py):
//
// y = x W^T with W held in blocks of 32 weights along each row, as GGUF's Q4_1 and Q8_0:
//   q4_1: 16 bytes of 4-bit codes, a scale d and a minimum m per block (float16): w = d * q + m.
//         Code order within a block (chosen so that one widening spreads it over 8 lanes): byte 2i
//         holds weights i (low nibble) and 16 + i, byte 2i + 1 holds weights 8 + i and 24 + i.
//   q8_0: 32 signed bytes and a scale d per block (float16): w = d * q.
// Activations and accumulation stay float32 (weight-only). Up to `few` rows of x: each output is
// d * sum(x q) (+ m * sum(x)) over its blocks, reading the weights once for every 4 rows. More rows:
// the weights are dequantized a tile at a time (exactly d * q + m, as gguf's dequantizer) and
// multiplied by ATen's float32 product.
// Built and loaded by inference/layers/cpu_kernels.py.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <vector>
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define CODEDRAFT_AVX2 1
#endif

namespace {

constexpr int64_t kBlock = 32;
constexpr int64_t kMaxRows = 12;    // rows of x sharing one pass over the weights
constexpr int64_t kTileRows = 256;  // weight rows dequantized at a time for many-row products

inline float to_float(const at::Half* h) { return static_cast<float>(*h); }

struct Q4_1 {
  static constexpr int64_t kBytes = 16;
  static inline void codes(const uint8_t* q, float* out) {
    for (int i = 0; i < 8; ++i) {
      out[i] = static_cast<float>(q[2 * i] & 0x0F);
      out[16 + i] = static_cast<float>(q[2 * i] >> 4);
      out[8 + i] = static_cast<float>(q[2 * i + 1] & 0x0F);
      out[24 + i] = static_cast<float>(q[2 * i + 1] >> 4);
    }
  }
#ifdef CODEDRAFT_AVX2
  static inline void codes(const uint8_t* q, __m256 w[4]) {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    const __m256i nibble = _mm256_set1_epi32(0x0F);
    w[0] = _mm256_cvtepi32_ps(_mm256_and_si256(v, nibble));
    w[1] = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(v, 8), nibble));
    w[2] = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(v, 4), nibble));
    w[3] = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 12));
  }
#endif
};

struct Q8_0 {
  static constexpr int64_t kBytes = 32;
  static inline void codes(const uint8_t* q, float* out) {
    const int8_t* s = reinterpret_cast<const int8_t*>(q);
    for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(s[j]);
  }
#ifdef CODEDRAFT_AVX2
  static inline void codes(const uint8_t* q, __m256 w[4]) {
    for (int i = 0; i < 4; ++i) {
      const __m128i eight = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + 8 * i));
      w[i] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(eight));
    }
  }
#endif
};

struct Weights {
  const uint8_t* q;
  const at::Half* d;
  const at::Half* m;  // nullptr: no minimum (q8_0)
  int64_t blocks;     // per row
};

#ifdef CODEDRAFT_AVX2
inline float horizontal_sum(__m256 v) {
  const __m128 quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}
#endif

inline float dot(const float* a, const float* b, int64_t n) {
  int64_t j = 0;
  float total = 0.f;
#ifdef CODEDRAFT_AVX2
  __m256 acc = _mm256_setzero_ps();
  for (; j + 8 <= n; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), acc);
  total = horizontal_sum(acc);
#endif
  for (; j < n; ++j) total += a[j] * b[j];
  return total;
}

// A row's float16 values as float32.
inline void widen(const at::Half* h, int64_t n, float* out) {
  int64_t j = 0;
#ifdef CODEDRAFT_AVX2
  for (; j + 8 <= n; j += 8) {
    _mm256_storeu_ps(out + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + j))));
  }
#endif
  for (; j < n; ++j) out[j] = to_float(h + j);
}

// y[r, n] for rows r < R of x and weight rows n0 <= n < n1; xsums (R, blocks): each block's sum of x.
// Each output is sum over blocks of d * (x . q), plus sum over blocks of m * sum(x) (q4_1). Up
// to five rows: each row's block product is scaled (one short dependency chain per row); six or
// more: the codes are scaled once and shared (fewer multiplies, enough rows to keep the FMAs busy).
template <class F, int R>
void rows_times_weights(const float* x, int64_t ldx, const float* xsums, const Weights& w, int64_t n0,
                        int64_t n1, float* y, int64_t ldy) {
  std::vector<float> scales(w.blocks), minimums(w.blocks);
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* q = w.q + n * w.blocks * F::kBytes;
    widen(w.d + n * w.blocks, w.blocks, scales.data());
    float offset[R] = {};
    if (w.m != nullptr) {
      widen(w.m + n * w.blocks, w.blocks, minimums.data());
      for (int r = 0; r < R; ++r) offset[r] = dot(minimums.data(), xsums + r * w.blocks, w.blocks);
    }
#ifdef CODEDRAFT_AVX2
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < w.blocks; ++b) {
      __m256 c[4];
      F::codes(q + b * F::kBytes, c);
      const __m256 scale = _mm256_broadcast_ss(scales.data() + b);
      if constexpr (R < 6) {
        for (int r = 0; r < R; ++r) {
          const float* xb = x + r * ldx + b * kBlock;
          __m256 s = _mm256_mul_ps(_mm256_loadu_ps(xb), c[0]);
          s = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 8), c[1], s);
          s = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 16), c[2], s);
          s = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 24), c[3], s);
          acc[r] = _mm256_fmadd_ps(s, scale, acc[r]);
        }
      } else {
        for (int i = 0; i < 4; ++i) c[i] = _mm256_mul_ps(c[i], scale);
        for (int r = 0; r < R; ++r) {
          const float* xb = x + r * ldx + b * kBlock;
          acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xb), c[0], acc[r]);
          acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 8), c[1], acc[r]);
          acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 16), c[2], acc[r]);
          acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 24), c[3], acc[r]);
        }
      }
    }
    for (int r = 0; r < R; ++r) y[r * ldy + n] = horizontal_sum(acc[r]) + offset[r];
#else
    float acc[R] = {};
    float c[kBlock];
    for (int64_t b = 0; b < w.blocks; ++b) {
      F::codes(q + b * F::kBytes, c);
      for (int r = 0; r < R; ++r) {
        const float* xb = x + r * ldx + b * kBlock;
        float s = 0.f;
        for (int j = 0; j < kBlock; ++j) s += xb[j] * c[j];
        acc[r] += s * scales[b];
      }
    }
    for (int r = 0; r < R; ++r) y[r * ldy + n] = acc[r] + offset[r];
#endif
  }
}

// Weight rows n0 <= n < n1 as float32, (n1 - n0, blocks * 32) at out: d * q + m rounded twice, as
// gguf's dequantizer computes them.
template <class F>
void dequantize_rows(const Weights& w, int64_t n0, int64_t n1, float* out) {
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t b = 0; b < w.blocks; ++b) {
      const int64_t block = n * w.blocks + b;
      const float d = to_float(w.d + block);
      const float m = w.m == nullptr ? 0.f : to_float(w.m + block);
      float* o = out + (n - n0) * w.blocks * kBlock + b * kBlock;
#ifdef CODEDRAFT_AVX2
      __m256 c[4];
      F::codes(w.q + block * F::kBytes, c);
      for (int i = 0; i < 4; ++i) {
        _mm256_storeu_ps(o + 8 * i, _mm256_add_ps(_mm256_mul_ps(c[i], _mm256_set1_ps(d)), _mm256_set1_ps(m)));
      }
#else
      float c[kBlock];
      F::codes(w.q + block * F::kBytes, c);
      for (int j = 0; j < kBlock; ++j) o[j] = d * c[j] + m;
#endif
    }
  }
}

template <class F>
void few_rows(const at::Tensor& x, const Weights& w, at::Tensor& y) {
  const int64_t T = x.size(0), K = x.size(1), N = y.size(1);
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  std::vector<float> sums;  // each block's sum of x, for the minimums' term
  if (w.m != nullptr) {
    sums.resize(T * w.blocks);
    for (int64_t i = 0; i < T * w.blocks; ++i) {
      float s = 0.f;
      for (int j = 0; j < kBlock; ++j) s += xp[i * kBlock + j];
      sums[i] = s;
    }
  }
  const float* sp = sums.empty() ? nullptr : sums.data();
  for (int64_t t0 = 0; t0 < T; t0 += kMaxRows) {
    const int64_t rows = std::min(kMaxRows, T - t0);
    const float* xr = xp + t0 * K;
    const float* sr = sp == nullptr ? nullptr : sp + t0 * w.blocks;
    float* yr = yp + t0 * N;
    at::parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
      switch (rows) {
        case 1: rows_times_weights<F, 1>(xr, K, sr, w, n0, n1, yr, N); break;
        case 2: rows_times_weights<F, 2>(xr, K, sr, w, n0, n1, yr, N); break;
        case 3: rows_times_weights<F, 3>(xr, K, sr, w, n0, n1, yr, N); break;
        case 4: rows_times_weights<F, 4>(xr, K, sr, w, n0, n1, yr, N); break;
        case 5: rows_times_weights<F, 5>(xr, K, sr, w, n0, n1, yr, N); break;
        case 6: rows_times_weights<F, 6>(xr, K, sr, w, n0, n1, yr, N); break;
        case 7: rows_times_weights<F, 7>(xr, K, sr, w, n0, n1, yr, N); break;
        case 8: rows_times_weights<F, 8>(xr, K, sr, w, n0, n1, yr, N); break;
        case 9: rows_times_weights<F, 9>(xr, K, sr, w, n0, n1, yr, N); break;
        case 10: rows_times_weights<F, 10>(xr, K, sr, w, n0, n1, yr, N); break;
        case 11: rows_times_weights<F, 11>(xr, K, sr, w, n0, n1, yr, N); break;
        default: rows_times_weights<F, 12>(xr, K, sr, w, n0, n1, yr, N); break;
      }
    });
  }
}

template <class F>
void many_rows(const at::Tensor& x, const Weights& w, at::Tensor& y) {
  const int64_t K = x.size(1), N = y.size(1);
  at::Tensor tile = at::empty({kTileRows, K}, x.options());
  for (int64_t n0 = 0; n0 < N; n0 += kTileRows) {
    const int64_t rows = std::min(kTileRows, N - n0);
    at::Tensor part = tile.narrow(0, 0, rows);
    float* base = part.data_ptr<float>();
    at::parallel_for(0, rows, 8, [&](int64_t a, int64_t b) { dequantize_rows<F>(w, n0 + a, n0 + b, base + a * K); });
    y.narrow(1, n0, rows).copy_(at::mm(x, part.t()));
  }
}

template <class F>
at::Tensor linear(const at::Tensor& x_in, const at::Tensor& q, const at::Tensor& d,
                  const std::optional<at::Tensor>& m, int64_t few) {
  TORCH_CHECK(x_in.dim() == 2 && x_in.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "x must be (T, in) float32 on the CPU");
  TORCH_CHECK(q.dim() == 2 && q.scalar_type() == at::kByte && q.is_contiguous(), "codes must be (out, bytes) uint8");
  TORCH_CHECK(d.scalar_type() == at::kHalf && d.is_contiguous(), "scales must be contiguous float16");
  const at::Tensor x = x_in.contiguous();
  const int64_t K = x.size(1), N = q.size(0);
  TORCH_CHECK(K % kBlock == 0 && q.size(1) == K / kBlock * F::kBytes && d.numel() == N * (K / kBlock),
              "block weights of shape ", q.sizes(), " do not take an input of width ", K);
  Weights w{q.data_ptr<uint8_t>(), d.data_ptr<at::Half>(), nullptr, K / kBlock};
  if (m.has_value()) {
    TORCH_CHECK(m->scalar_type() == at::kHalf && m->is_contiguous() && m->numel() == d.numel(),
                "minimums must be contiguous float16, one per block");
    w.m = m->data_ptr<at::Half>();
  }
  at::Tensor y = at::empty({x.size(0), N}, x.options());
  if (x.size(0) <= few) {
    few_rows<F>(x, w, y);
  } else {
    many_rows<F>(x, w, y);
  }
  return y;
}

at::Tensor q4_1_linear(const at::Tensor& x, const at::Tensor& q, const at::Tensor& d, const at::Tensor& m,
                       int64_t few) {
  return linear<Q4_1>(x, q, d, m, few);
}

at::Tensor q8_0_linear(const at::Tensor& x, const at::Tensor& q, const at::Tensor& d, int64_t few) {
  return linear<Q8_0>(x, q, d, std::nullopt, few);
}

#ifdef CODEDRAFT_AVX2
// e^x for x <= 0 in 8 lanes (Cephes' expf polynomial, within about 2 ulp); below -87 it gives 2^-126.
inline __m256 exp_nonpositive(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  const __m256 n = _mm256_floor_ps(_mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.f)));
  const __m256i power = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(power));
}
#endif

// scores[j] = e^(scores[j] - top) for j < n (top: their maximum); returns their sum.
inline float exp_shifted(float* scores, int64_t n, float top) {
  int64_t j = 0;
  float total = 0.f;
#ifdef CODEDRAFT_AVX2
  __m256 sum = _mm256_setzero_ps();
  const __m256 shift = _mm256_set1_ps(top);
  for (; j + 8 <= n; j += 8) {
    const __m256 p = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(scores + j), shift));
    _mm256_storeu_ps(scores + j, p);
    sum = _mm256_add_ps(sum, p);
  }
  total = horizontal_sum(sum);
#endif
  for (; j < n; ++j) {
    scores[j] = std::exp(scores[j] - top);
    total += scores[j];
  }
  return total;
}

// o (D) = sum over j < seen of p[j] * value j, value j being row j % bs of block ids[j / bs] of values.
inline void weigh_values(const float* p, int64_t seen, const float* values, const int64_t* ids, int64_t bs,
                         int64_t D, float* o) {
  int64_t e0 = 0;
#ifdef CODEDRAFT_AVX2
  constexpr int64_t kLanes = 64;  // 8 registers of o at a time
  for (; e0 + kLanes <= D; e0 += kLanes) {
    __m256 acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t start = 0; start < seen; start += bs) {
      const float* value = values + ids[start / bs] * bs * D + e0;
      for (int64_t j = start; j < std::min(seen, start + bs); ++j, value += D) {
        const __m256 weight = _mm256_broadcast_ss(p + j);
        for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(weight, _mm256_loadu_ps(value + 8 * i), acc[i]);
      }
    }
    for (int i = 0; i < 8; ++i) _mm256_storeu_ps(o + e0 + 8 * i, acc[i]);
  }
#endif
  if (e0 == D) return;
  std::fill(o + e0, o + D, 0.f);
  for (int64_t start = 0; start < seen; start += bs) {
    const float* value = values + ids[start / bs] * bs * D;
    for (int64_t j = start; j < std::min(seen, start + bs); ++j, value += D) {
      for (int64_t e = e0; e < D; ++e) o[e] += p[j] * value[e];
    }
  }
}

struct Pool {
  const float* k;
  const float* v;
  int64_t kv_heads, blocks, block_size, head_dim;
};

Pool pool_of(const at::Tensor& k_cache, const at::Tensor& v_cache) {
  TORCH_CHECK(k_cache.dim() == 4 && k_cache.scalar_type() == at::kFloat && k_cache.is_contiguous() &&
                  v_cache.sizes() == k_cache.sizes() && v_cache.scalar_type() == at::kFloat && v_cache.is_contiguous(),
              "the K/V pool must be contiguous float32 (KvH, blocks, block_size, D)");
  return {k_cache.data_ptr<float>(), v_cache.data_ptr<float>(), k_cache.size(0), k_cache.size(1), k_cache.size(2),
          k_cache.size(3)};
}

// Attention of one sequence's T newest rows q (T, H, D) over its K/V in the pool (already holding
// the new rows); block_table lists its blocks, covering context_len tokens. Row t sits at position
// context_len - T + t and sees the positions up to its own; query head h reads KV head h / (H / KvH).
void attend(const float* q, int64_t T, int64_t H, const Pool& pool, const at::Tensor& block_table,
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
  at::parallel_for(0, T * H, 1, [&](int64_t first, int64_t last) {
    std::vector<float> scores(context_len);
    for (int64_t item = first; item < last; ++item) {
      const int64_t t = item / H, h = item % H;
      const int64_t seen = context_len - T + t + 1;
      const float* keys = pool.k + (h / group) * head_stride;
      const float* values = pool.v + (h / group) * head_stride;
      const float* qv = q + (t * H + h) * D;
      // Keys and values are read block by block: position j is row j % bs of block ids[j / bs].
      float top = -INFINITY;
      for (int64_t start = 0; start < seen; start += bs) {
        const float* key = keys + ids[start / bs] * bs * D;
        for (int64_t j = start; j < std::min(seen, start + bs); ++j, key += D) {
          scores[j] = static_cast<float>(scale) * dot(qv, key, D);
          top = std::max(top, scores[j]);
        }
      }
      const float total = exp_shifted(scores.data(), seen, top);
      for (int64_t j = 0; j < seen; ++j) scores[j] /= total;
      weigh_values(scores.data(), seen, values, ids, bs, D, out + (t * H + h) * D);
    }
  });
}

// paged_attention: `attend` for q (T, H, D); returns (T, H, D).
at::Tensor paged_attention(const at::Tensor& q_in, const at::Tensor& k_cache, const at::Tensor& v_cache,
                           const at::Tensor& block_table, int64_t context_len, double scale) {
  TORCH_CHECK(q_in.dim() == 3 && q_in.scalar_type() == at::kFloat, "q must be (T, H, D) float32");
  const Pool pool = pool_of(k_cache, v_cache);
  TORCH_CHECK(q_in.size(2) == pool.head_dim, "q and the pool disagree on the head size");
  const at::Tensor q = q_in.contiguous();
  at::Tensor out = at::empty_like(q);
  attend(q.data_ptr<float>(), q.size(0), q.size(1), pool, block_table.contiguous(), context_len, scale,
         out.data_ptr<float>());
  return out;
}

// A whole attention step after the q|k|v product, for one sequence's few new rows: qkv (T, H + 2 KvH,
// D) is rotated (q and k heads, rotate-half RoPE by cos, sin (T, D)), its K and V are written to the
// pool at `slots` (T,), and the rows attend as in `attend`. Returns (T, H * D).
at::Tensor rotate_store_attend(const at::Tensor& qkv_in, const at::Tensor& cos_in, const at::Tensor& sin_in,
                               const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& slots_in,
                               const at::Tensor& block_table, int64_t context_len, int64_t heads, double scale) {
  const Pool pool = pool_of(k_cache, v_cache);
  const at::Tensor qkv = qkv_in.contiguous(), cos = cos_in.contiguous(), sin = sin_in.contiguous();
  const at::Tensor slots = slots_in.contiguous();
  const int64_t T = qkv.size(0), KvH = pool.kv_heads, D = pool.head_dim, half = D / 2;
  TORCH_CHECK(qkv.dim() == 3 && qkv.scalar_type() == at::kFloat && qkv.size(1) == heads + 2 * KvH &&
                  qkv.size(2) == D && D % 2 == 0,
              "qkv must be (T, heads + 2 KvH, D) float32");
  TORCH_CHECK(cos.scalar_type() == at::kFloat && sin.scalar_type() == at::kFloat && cos.numel() == T * D &&
                  sin.numel() == T * D,
              "cos and sin must be (T, D) float32");
  TORCH_CHECK(slots.scalar_type() == at::kLong && slots.numel() == T, "slots must be (T,) int64");
  const float* src = qkv.data_ptr<float>();
  const int64_t* slot = slots.data_ptr<int64_t>();
  const int64_t head_stride = pool.blocks * pool.block_size * D;
  at::Tensor q = at::empty({T, heads, D}, qkv.options());
  float* qp = q.data_ptr<float>();
  for (int64_t t = 0; t < T; ++t) {
    TORCH_CHECK(slot[t] >= 0 && slot[t] < pool.blocks * pool.block_size, "slot ", slot[t], " out of range");
    const float* c = cos.data_ptr<float>() + t * D;
    const float* s = sin.data_ptr<float>() + t * D;
    for (int64_t h = 0; h < heads + 2 * KvH; ++h) {
      const float* x = src + (t * (heads + 2 * KvH) + h) * D;
      float* dest;
      if (h < heads) {
        dest = qp + (t * heads + h) * D;
      } else if (h < heads + KvH) {
        dest = const_cast<float*>(pool.k) + (h - heads) * head_stride + slot[t] * D;
      } else {
        float* v = const_cast<float*>(pool.v) + (h - heads - KvH) * head_stride + slot[t] * D;
        std::copy(x, x + D, v);
        continue;
      }
      for (int64_t e = 0; e < half; ++e) {
        const float lo = x[e], hi = x[e + half];
        dest[e] = lo * c[e] + (-hi) * s[e];
        dest[e + half] = hi * c[e + half] + lo * s[e + half];
      }
    }
  }
  at::Tensor out = at::empty({T, heads * D}, qkv.options());
  attend(qp, T, heads, pool, block_table.contiguous(), context_len, scale, out.data_ptr<float>());
  return out;
}

// y = weight * x / sqrt(mean(x^2) + eps) over each row of x (T, D), in float32.
at::Tensor rms_norm(const at::Tensor& x_in, const at::Tensor& weight, double eps) {
  TORCH_CHECK(x_in.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "rms_norm takes float32 on the CPU");
  const at::Tensor x = x_in.contiguous();
  const int64_t D = x.size(-1), rows = D == 0 ? 0 : x.numel() / D;
  TORCH_CHECK(weight.numel() == D && weight.is_contiguous(), "weight must be (", D, ")");
  at::Tensor y = at::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = xp + r * D;
      float squares = 0.f;
      for (int64_t j = 0; j < D; ++j) squares += xr[j] * xr[j];
      const float inverse = 1.f / std::sqrt(squares / static_cast<float>(D) + static_cast<float>(eps));
      float* yr = yp + r * D;
      for (int64_t j = 0; j < D; ++j) yr[j] = wp[j] * (xr[j] * inverse);
    }
  });
  return y;
}

}  // namespace

TORCH_LIBRARY(codedraft_cpu, lib) {
  lib.def("q4_1_linear(Tensor x, Tensor q, Tensor d, Tensor m, int few) -> Tensor", &q4_1_linear);
  lib.def("q8_0_linear(Tensor x, Tensor q, Tensor d, int few) -> Tensor", &q8_0_linear);
  lib.def("rms_norm(Tensor x, Tensor weight, float eps) -> Tensor", &rms_norm);
  lib.def("paged_attention(Tensor q, Tensor k_cache, Tensor v_cache, Tensor block_table, int context_len, "
          "float scale) -> Tensor", &paged_attention);
  lib.def("rotate_store_attend(Tensor qkv, Tensor cos, Tensor sin, Tensor(a!) k_cache, Tensor(b!) v_cache, "
          "Tensor slots, Tensor block_table, int context_len, int heads, float scale) -> Tensor",
          &rotate_store_attend);
}
