// Eight float32 lanes: AVX2 registers where the compiler targets them, plain arrays elsewhere, with
// the same operations in the same order (fused multiply-adds as std::fma, the same horizontal-sum
// tree), so the GGUF block products give the same numbers on every CPU.
#pragma once
#include <cmath>
#include <cstdint>

#include "vector_math.h"

namespace codedraft {

#ifdef CODEDRAFT_AVX2
struct Lanes {
  __m256 v;
};
inline Lanes zero() { return {_mm256_setzero_ps()}; }
inline Lanes splat(float a) { return {_mm256_set1_ps(a)}; }
inline Lanes load(const float* p) { return {_mm256_loadu_ps(p)}; }
inline void store(float* p, Lanes a) { _mm256_storeu_ps(p, a.v); }
inline Lanes mul(Lanes a, Lanes b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline Lanes add(Lanes a, Lanes b) { return {_mm256_add_ps(a.v, b.v)}; }
inline Lanes fmadd(Lanes a, Lanes b, Lanes c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline float sum(Lanes a) { return horizontal_sum(a.v); }
// 32 signed byte codes as four groups of eight float lanes.
inline void widen_codes(__m256i codes, Lanes out[4]) {
  const __m128i low = _mm256_castsi256_si128(codes), high = _mm256_extracti128_si256(codes, 1);
  out[0].v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(low));
  out[1].v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(low, 8)));
  out[2].v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(high));
  out[3].v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(high, 8)));
}
// A type with `lanes` widens its codes eight bytes at a time itself (fewer shuffles).
template <class B>
inline void block_codes(const uint8_t* block, int s, Lanes out[4]) {
  if constexpr (requires(__m256i* v) { B::lanes(block, s, v); }) {
    __m256i v[4];
    B::lanes(block, s, v);
    for (int i = 0; i < 4; ++i) out[i].v = _mm256_cvtepi32_ps(v[i]);
  } else {
    widen_codes(B::codes(block, s), out);
  }
}
#else
struct Lanes {
  float v[8];
};
inline Lanes splat(float a) {
  Lanes r;
  for (int i = 0; i < 8; ++i) r.v[i] = a;
  return r;
}
inline Lanes zero() { return splat(0.f); }
inline Lanes load(const float* p) {
  Lanes r;
  for (int i = 0; i < 8; ++i) r.v[i] = p[i];
  return r;
}
inline void store(float* p, Lanes a) {
  for (int i = 0; i < 8; ++i) p[i] = a.v[i];
}
inline Lanes mul(Lanes a, Lanes b) {
  for (int i = 0; i < 8; ++i) a.v[i] *= b.v[i];
  return a;
}
inline Lanes add(Lanes a, Lanes b) {
  for (int i = 0; i < 8; ++i) a.v[i] += b.v[i];
  return a;
}
inline Lanes fmadd(Lanes a, Lanes b, Lanes c) {
  for (int i = 0; i < 8; ++i) c.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
  return c;
}
// horizontal_sum's tree: lanes i + (i + 4), then pairs (0 + 2, 1 + 3), then the two.
inline float sum(Lanes a) {
  float quad[4];
  for (int i = 0; i < 4; ++i) quad[i] = a.v[i] + a.v[i + 4];
  return (quad[0] + quad[2]) + (quad[1] + quad[3]);
}
template <class B>
inline void block_codes(const uint8_t* block, int s, Lanes out[4]) {
  int8_t codes[32];
  B::codes(block, s, codes);
  for (int i = 0; i < 32; ++i) out[i / 8].v[i % 8] = static_cast<float>(codes[i]);
}
#endif

}  // namespace codedraft
