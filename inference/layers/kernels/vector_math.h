// Small vector helpers of the CPU kernels (AVX2 with FMA and F16C where the compiler targets it,
// plain loops elsewhere, or where CODEDRAFT_PORTABLE is defined: the tests build that too). Included
// by library.cpp, the one translation unit.
#pragma once
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && !defined(CODEDRAFT_PORTABLE)
#include <immintrin.h>
#define CODEDRAFT_AVX2 1
#endif
// 8-bit dot products in one instruction (vpdpbusd, vpdpwssd on 256-bit registers).
#if defined(CODEDRAFT_AVX2) && defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define CODEDRAFT_VNNI 1
#endif

namespace codedraft {

inline float to_float(const at::Half* h) { return static_cast<float>(*h); }

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

// out[i] = dot(a, rows + i * n, n) for the eight rows i < 8 (n floats apart), each the same float as
// dot gives: every row's chain of multiply-adds in dot's order, eight chains side by side (one chain
// at a time waited on each multiply-add's latency), and horizontal_sum's tree for four rows at once.
inline void dot8(const float* a, const float* rows, int64_t n, float* out) {
#ifdef CODEDRAFT_AVX2
  if (n % 8 == 0) {
    __m256 acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t j = 0; j < n; j += 8) {
      const __m256 av = _mm256_loadu_ps(a + j);
      for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(av, _mm256_loadu_ps(rows + i * n + j), acc[i]);
    }
    for (int four = 0; four < 8; four += 4) {
      __m128 quad[4];  // horizontal_sum's first step for each row; then its pairs, four rows a register
      for (int i = 0; i < 4; ++i) {
        quad[i] = _mm_add_ps(_mm256_castps256_ps128(acc[four + i]), _mm256_extractf128_ps(acc[four + i], 1));
      }
      _MM_TRANSPOSE4_PS(quad[0], quad[1], quad[2], quad[3]);  // quad[k]: element k of the four rows
      _mm_storeu_ps(out + four, _mm_add_ps(_mm_add_ps(quad[0], quad[2]), _mm_add_ps(quad[1], quad[3])));
    }
    return;
  }
#endif
  for (int i = 0; i < 8; ++i) out[i] = dot(a, rows + i * n, n);
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
}  // namespace codedraft
