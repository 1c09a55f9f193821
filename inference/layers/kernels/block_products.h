// y = x W^T with W held in blocks of 32 weights along each row, as GGUF's Q4_1 and Q8_0:
//   q4_1: 16 bytes of 4-bit codes, a scale d and a minimum m per block (float16): w = d * q + m.
//         Code order within a block (chosen so that one widening spreads it over 8 lanes): byte 2i
//         holds weights i (low nibble) and 16 + i, byte 2i + 1 holds weights 8 + i and 24 + i.
//   q8_0: 32 signed bytes and a scale d per block (float16): w = d * q.
// Activations and accumulation stay float32 (weight-only). Up to `few` rows of x: each output is
// d * sum(x q) (+ m * sum(x)) over its blocks, reading the weights once for every 12 rows. More
// rows: the weights are dequantized a tile at a time (exactly d * q + m, as gguf's dequantizer) and
// multiplied by ATen's float32 product.
#pragma once
#include "vector_math.h"

namespace codedraft {

constexpr int64_t kBlock = 32;
constexpr int64_t kMaxRows = 12;    // rows of x sharing one pass over the weights
constexpr int64_t kTileRows = 256;  // weight rows dequantized at a time for many-row products

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
}  // namespace codedraft
