// GGUF's quantized blocks as they lie in the file (ggml's block_q4_0 ... block_q6_K), decoded a
// sub-block of 32 weights at a time into
//   codes c[0..32) (small integers, exact as int8) and factors mul[2], add:
//   weight j = mul[j / 16] * c[j] + add, rounded after the product and after the sum,
// which is exactly how the `gguf` package's dequantizer computes each weight (float32 numpy), so
// dequantized tiles equal gguf's values bit for bit. `codes` has a portable form (int8 array) and
// an AVX2 form (32 bytes in a register) that give the same integers.
#pragma once
#include <cstring>

#include "vector_math.h"

namespace codedraft::gguf {

inline float half_at(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
#ifdef CODEDRAFT_AVX2
  return _cvtsh_ss(bits);  // F16C: the same exact widening in one instruction
#else
  return static_cast<float>(c10::Half(bits, c10::Half::from_bits()));
#endif
}

#ifdef CODEDRAFT_AVX2
// 16 bytes -> their 32 nibbles as bytes: low nibbles first, then high (ggml's q4_0 / q4_1 order).
inline __m256i nibbles16(const uint8_t* q) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m128i mask = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), mask), _mm_and_si128(b, mask));
}
// Byte j = 0x10 where bit j of the 32 bits at `qh` is set (q5_0 / q5_1's fifth bits).
inline __m256i fifth_bits(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  return _mm256_maskz_mov_epi8(_cvtu32_mask32(bits), _mm256_set1_epi8(0x10));  // the bits as a byte mask
#else
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
#endif
}
inline __m256i low_nibbles(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0F)); }
inline __m256i high_nibbles(__m256i v) { return low_nibbles(_mm256_srli_epi16(v, 4)); }
inline __m256i load32(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
#endif

#ifdef CODEDRAFT_AVX2
// Eight bytes at p as eight int32 lanes (one widening each, instead of splitting a 32-byte register).
inline __m256i bytes8(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
inline __m256i signed8(const uint8_t* p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
// 16 bytes of nibbles (weight j low nibble of byte j, weight 16 + j its high nibble) as four groups
// of eight int32 lanes, `bias` subtracted.
inline void nibble_lanes(const uint8_t* q, int bias, __m256i out[4]) {
  const __m256i low = bytes8(q), high = bytes8(q + 8), mask = _mm256_set1_epi32(0x0F), b = _mm256_set1_epi32(bias);
  out[0] = _mm256_sub_epi32(_mm256_and_si256(low, mask), b);
  out[1] = _mm256_sub_epi32(_mm256_and_si256(high, mask), b);
  out[2] = _mm256_sub_epi32(_mm256_srli_epi32(low, 4), b);
  out[3] = _mm256_sub_epi32(_mm256_srli_epi32(high, 4), b);
}
#endif

inline bool bit_at(const uint8_t* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; }

// Q4_0: d, 16 bytes of nibbles; w = d * (q - 8).
struct Q4_0 {
  static constexpr int64_t kValues = 32, kBytes = 18, kSubs = 1;
  static void factors(const uint8_t* b, int, float mul[2], float& add) { mul[0] = mul[1] = half_at(b), add = 0.f; }
  static void codes(const uint8_t* b, int, int8_t* c) {
    for (int j = 0; j < 16; ++j) c[j] = (b[2 + j] & 0x0F) - 8, c[16 + j] = (b[2 + j] >> 4) - 8;
  }
#ifdef CODEDRAFT_AVX2
  static __m256i codes(const uint8_t* b, int) { return _mm256_sub_epi8(nibbles16(b + 2), _mm256_set1_epi8(8)); }
  static void lanes(const uint8_t* b, int, __m256i out[4]) { nibble_lanes(b + 2, 8, out); }
#endif
};

// Q4_1: d, m, 16 bytes of nibbles; w = d * q + m.
struct Q4_1 {
  static constexpr int64_t kValues = 32, kBytes = 20, kSubs = 1;
  static void factors(const uint8_t* b, int, float mul[2], float& add) {
    mul[0] = mul[1] = half_at(b), add = half_at(b + 2);
  }
  static void codes(const uint8_t* b, int, int8_t* c) {
    for (int j = 0; j < 16; ++j) c[j] = b[4 + j] & 0x0F, c[16 + j] = b[4 + j] >> 4;
  }
#ifdef CODEDRAFT_AVX2
  static __m256i codes(const uint8_t* b, int) { return nibbles16(b + 4); }
  static void lanes(const uint8_t* b, int, __m256i out[4]) { nibble_lanes(b + 4, 0, out); }
#endif
};

// Q5_0: d, 32 fifth bits, 16 bytes of nibbles; w = d * (q - 16).
struct Q5_0 {
  static constexpr int64_t kValues = 32, kBytes = 22, kSubs = 1;
  static void factors(const uint8_t* b, int, float mul[2], float& add) { mul[0] = mul[1] = half_at(b), add = 0.f; }
  static void codes(const uint8_t* b, int, int8_t* c) {
    for (int j = 0; j < 16; ++j) {
      c[j] = ((b[6 + j] & 0x0F) | (bit_at(b + 2, j) << 4)) - 16;
      c[16 + j] = ((b[6 + j] >> 4) | (bit_at(b + 2, 16 + j) << 4)) - 16;
    }
  }
#ifdef CODEDRAFT_AVX2
  static __m256i codes(const uint8_t* b, int) {
    return _mm256_sub_epi8(_mm256_or_si256(nibbles16(b + 6), fifth_bits(b + 2)), _mm256_set1_epi8(16));
  }
#endif
};

// Q5_1: d, m, 32 fifth bits, 16 bytes of nibbles; w = d * q + m.
struct Q5_1 {
  static constexpr int64_t kValues = 32, kBytes = 24, kSubs = 1;
  static void factors(const uint8_t* b, int, float mul[2], float& add) {
    mul[0] = mul[1] = half_at(b), add = half_at(b + 2);
  }
  static void codes(const uint8_t* b, int, int8_t* c) {
    for (int j = 0; j < 16; ++j) {
      c[j] = (b[8 + j] & 0x0F) | (bit_at(b + 4, j) << 4);
      c[16 + j] = (b[8 + j] >> 4) | (bit_at(b + 4, 16 + j) << 4);
    }
  }
#ifdef CODEDRAFT_AVX2
  static __m256i codes(const uint8_t* b, int) { return _mm256_or_si256(nibbles16(b + 8), fifth_bits(b + 4)); }
#endif
};

// Q8_0: d, 32 signed bytes; w = q * d.
struct Q8_0 {
  static constexpr int64_t kValues = 32, kBytes = 34, kSubs = 1;
  static void factors(const uint8_t* b, int, float mul[2], float& add) { mul[0] = mul[1] = half_at(b), add = 0.f; }
  static void codes(const uint8_t* b, int, int8_t* c) { std::memcpy(c, b + 2, 32); }
#ifdef CODEDRAFT_AVX2
  static __m256i codes(const uint8_t* b, int) { return load32(b + 2); }
  static void lanes(const uint8_t* b, int, __m256i out[4]) {
    for (int i = 0; i < 4; ++i) out[i] = signed8(b + 2 + 8 * i);
  }
#endif
};

// Q4_K / Q5_K's 6-bit scale and minimum of sub-block s from the 12 packed bytes (ggml's
// get_scale_min_k4; gguf's Q4_K.get_scale_min).
inline void scale_min_k4(const uint8_t* q, int s, int& scale, int& minimum) {
  if (s < 4) {
    scale = q[s] & 63, minimum = q[s + 4] & 63;
  } else {
    scale = (q[s + 4] & 0x0F) | ((q[s - 4] >> 6) << 4);
    minimum = (q[s + 4] >> 4) | ((q[s] >> 6) << 4);
  }
}

inline void k4_factors(const uint8_t* b, int s, float mul[2], float& add) {
  int scale, minimum;
  scale_min_k4(b + 4, s, scale, minimum);
  mul[0] = mul[1] = half_at(b) * static_cast<float>(scale);
  add = -(half_at(b + 2) * static_cast<float>(minimum));
}

// Q4_K: d, dmin, 12 bytes of scales, 128 bytes of nibbles (sub-blocks 2i, 2i + 1: the low, high
// nibbles of bytes 32i ..); w = (d * scale) * q - (dmin * minimum).
struct Q4_K {
  static constexpr int64_t kValues = 256, kBytes = 144, kSubs = 8;
  static void factors(const uint8_t* b, int s, float mul[2], float& add) { k4_factors(b, s, mul, add); }
  static void codes(const uint8_t* b, int s, int8_t* c) {
    const uint8_t* q = b + 16 + 32 * (s / 2);
    for (int j = 0; j < 32; ++j) c[j] = s % 2 ? q[j] >> 4 : q[j] & 0x0F;
  }
#ifdef CODEDRAFT_AVX2
  static __m256i codes(const uint8_t* b, int s) {
    const __m256i q = load32(b + 16 + 32 * (s / 2));
    return s % 2 ? high_nibbles(q) : low_nibbles(q);
  }
  static void lanes(const uint8_t* b, int s, __m256i out[4]) {
    const uint8_t* q = b + 16 + 32 * (s / 2);
    const __m256i mask = _mm256_set1_epi32(0x0F);
    for (int i = 0; i < 4; ++i) {
      const __m256i v = bytes8(q + 8 * i);
      out[i] = s % 2 ? _mm256_srli_epi32(v, 4) : _mm256_and_si256(v, mask);
    }
  }
#endif
};

// Q5_K: as Q4_K with 32 bytes of fifth bits after the scales (bit s of byte j: sub-block s's
// weight j).
struct Q5_K {
  static constexpr int64_t kValues = 256, kBytes = 176, kSubs = 8;
  static void factors(const uint8_t* b, int s, float mul[2], float& add) { k4_factors(b, s, mul, add); }
  static void codes(const uint8_t* b, int s, int8_t* c) {
    const uint8_t* qh = b + 16;
    const uint8_t* q = b + 48 + 32 * (s / 2);
    for (int j = 0; j < 32; ++j) c[j] = (s % 2 ? q[j] >> 4 : q[j] & 0x0F) | (((qh[j] >> s) & 1) << 4);
  }
#ifdef CODEDRAFT_AVX2
  static __m256i codes(const uint8_t* b, int s) {
    const __m256i q = load32(b + 48 + 32 * (s / 2));
    const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << s));
    const __m256i fifth = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(load32(b + 16), bit), bit),
                                           _mm256_set1_epi8(0x10));
    return _mm256_or_si256(s % 2 ? high_nibbles(q) : low_nibbles(q), fifth);
  }
#endif
};

// Q6_K: 128 bytes of low nibbles, 64 of high bit pairs, 16 signed scales (one per 16 weights), d
// last. Sub-block s = 4h + k: low nibbles of ql[64h + 32(k % 2) + j] (k < 2) or their high nibbles,
// bits 2k, 2k + 1 of qh[32h + j]; w = (d * scale) * (q - 32).
struct Q6_K {
  static constexpr int64_t kValues = 256, kBytes = 210, kSubs = 8;
  static void factors(const uint8_t* b, int s, float mul[2], float& add) {
    const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
    const float d = half_at(b + 208);
    mul[0] = d * static_cast<float>(scales[2 * s]), mul[1] = d * static_cast<float>(scales[2 * s + 1]);
    add = 0.f;
  }
  static void codes(const uint8_t* b, int s, int8_t* c) {
    const int h = s / 4, k = s % 4;
    const uint8_t* ql = b + 64 * h + 32 * (k % 2);
    const uint8_t* qh = b + 128 + 32 * h;
    for (int j = 0; j < 32; ++j) {
      const int low = k < 2 ? ql[j] & 0x0F : ql[j] >> 4;
      c[j] = (low | (((qh[j] >> (2 * k)) & 3) << 4)) - 32;
    }
  }
#ifdef CODEDRAFT_AVX2
  // The codes before the 32 is taken off (0 .. 63), as the 8-bit-activation products use them.
  static __m256i unsigned_codes(const uint8_t* b, int s) {
    const int h = s / 4, k = s % 4;
    const __m256i ql = load32(b + 64 * h + 32 * (k % 2));
    const __m256i pairs = _mm256_and_si256(_mm256_srl_epi16(load32(b + 128 + 32 * h), _mm_cvtsi32_si128(2 * k)),
                                           _mm256_set1_epi8(3));
    return _mm256_or_si256(k < 2 ? low_nibbles(ql) : high_nibbles(ql), _mm256_slli_epi16(pairs, 4));
  }
  static __m256i codes(const uint8_t* b, int s) { return _mm256_sub_epi8(unsigned_codes(b, s), _mm256_set1_epi8(32)); }
#endif
};

}  // namespace codedraft::gguf
