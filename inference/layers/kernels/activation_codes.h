// The one rule by which the 8-bit-activation products (int8_products.h, gguf_int8_products.h) quantize
// a run of activations, as llama.cpp's Q8_0 / Q8_1 / Q8_K do: one scale d = max|x| / 127 for the
// run, codes q = round(x / d) with ties to even (x times the float32 reciprocal of d, then rounded),
// all codes 0 where the run is all zeros. |q| <= 127, so no code is -128.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "vector_math.h"

namespace codedraft {

#ifdef CODEDRAFT_AVX2
// quantize_activations for n a multiple of 32, eight values a register: the same max (taken in any
// order, NaNs skipped as std::max skips them), the same products and the same rounding (to nearest,
// ties to even, as nearbyint in the default mode), so the same codes and sum.
inline float quantize_activations_32(const float* x, int n, int8_t* q, int* sum) {
  const __m256 sign = _mm256_set1_ps(-0.f);
  __m256 top = _mm256_setzero_ps();
  for (int e = 0; e < n; e += 8) top = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + e)), top);
  __m128 h = _mm_max_ps(_mm256_extractf128_ps(top, 1), _mm256_castps256_ps128(top));
  h = _mm_max_ps(_mm_movehl_ps(h, h), h);
  h = _mm_max_ss(_mm_movehdup_ps(h), h);
  const float amax = _mm_cvtss_f32(h);
  const float d = amax / 127.f;
  const __m256 inverse = _mm256_set1_ps(d != 0.f ? 1.f / d : 0.f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  __m256i total = _mm256_setzero_si256();
  for (int e = 0; e < n; e += 32) {
    __m256i v[4];
    for (int i = 0; i < 4; ++i) {
      const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(x + e + 8 * i), inverse);
      v[i] = _mm256_cvtps_epi32(_mm256_round_ps(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      total = _mm256_add_epi32(total, v[i]);
    }
    const __m256i words = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + e), _mm256_permutevar8x32_epi32(words, order));
  }
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(total), _mm256_extracti128_si256(total, 1));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
  *sum = _mm_cvtsi128_si32(t);
  return d;
}
#endif

// x[0 .. n) into q[0 .. n); returns d, and the sum of the codes in *sum.
inline float quantize_activations(const float* x, int n, int8_t* q, int* sum) {
#ifdef CODEDRAFT_AVX2
  if (n % 32 == 0) return quantize_activations_32(x, n, q, sum);
#endif
  float amax = 0.f;
  for (int e = 0; e < n; ++e) amax = std::max(amax, std::fabs(x[e]));
  const float d = amax / 127.f;
  const float inverse = d != 0.f ? 1.f / d : 0.f;
  int total = 0;
  for (int e = 0; e < n; ++e) {
    q[e] = static_cast<int8_t>(std::nearbyint(x[e] * inverse));
    total += q[e];
  }
  *sum = total;
  return d;
}

}  // namespace codedraft
