// The integer lanes of the 8-bit-activation products (gguf_int8_products.h): a GGUF block's codes
// times x's 8-bit codes, lane l of a sub-block of 32 being the sum of the products of its codes
// 4l .. 4l + 3, and for a K-quant super-block those lanes scaled by the sub-blocks' integer scales
// and summed (Q6_K's bias of 32 taken off through the sums of 16 x codes). AVX-512 VNNI, AVX2 and
// plain loops give the same integers.
#pragma once
#include "gguf_products.h"

namespace codedraft::gguf {

template <class B>
constexpr bool k_quant() {
  return B::kValues == 256;
}
// Types whose codes are signed (their products take the codes' signs onto x).
template <class B>
constexpr bool signed_codes() {
  return std::is_same_v<B, Q4_0> || std::is_same_v<B, Q5_0> || std::is_same_v<B, Q8_0>;
}

#ifdef CODEDRAFT_AVX2
using Ints = __m256i;
inline Lanes to_lanes(Ints v) { return {_mm256_cvtepi32_ps(v)}; }
inline Ints zero_ints() { return _mm256_setzero_si256(); }

// acc + (int16 pairs times scales, adjacent products added into int32 lanes).
inline __m256i scaled_add(__m256i acc, __m256i pairs, __m256i scales) {
#ifdef CODEDRAFT_VNNI
  return _mm256_dpwssd_epi32(acc, pairs, scales);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, scales));
#endif
}

// 32 weight codes as u8 x s8 products take them: magnitudes, and for a signed type the codes whose
// signs go onto x.
struct Codes32 {
  __m256i magnitude, sign;
};
template <class B>
inline Codes32 codes32(const uint8_t* block, int s) {
  if constexpr (signed_codes<B>()) {
    const __m256i c = B::codes(block, s);
    return {_mm256_abs_epi8(c), c};
  } else if constexpr (std::is_same_v<B, Q6_K>) {
    return {B::unsigned_codes(block, s), _mm256_setzero_si256()};
  } else {
    return {B::codes(block, s), _mm256_setzero_si256()};
  }
}
// int16 lane k: code 2k x 2k + code 2k+1 x 2k+1.
template <class B>
inline __m256i pair_products(const Codes32& c, const int8_t* x) {
  __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  if constexpr (signed_codes<B>()) v = _mm256_sign_epi8(v, c.sign);
  return _mm256_maddubs_epi16(c.magnitude, v);
}
template <class B>
inline __m256i lane_products(const Codes32& c, const int8_t* x) {
#ifdef CODEDRAFT_VNNI
  __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  if constexpr (signed_codes<B>()) v = _mm256_sign_epi8(v, c.sign);
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), c.magnitude, v);
#else
  return _mm256_madd_epi16(pair_products<B>(c, x), _mm256_set1_epi16(1));
#endif
}

// Q4_K / Q5_K's eight scales (bytes 0 .. 7) and eight minimums (bytes 8 .. 15) from their 12 bytes
// at q, four 32-bit words at once (the same values as scale_min_k4; reads 4 bytes past the 12, which
// are the block's codes).
inline __m128i scales_mins_k4(const uint8_t* q) {
  const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));  // w0 w1 w2 (w3)
  const __m128i low = _mm_shuffle_epi32(w, _MM_SHUFFLE(2, 1, 2, 0));        // w0 w2 w1 w2
  const __m128i high = _mm_shuffle_epi32(w, _MM_SHUFFLE(1, 1, 0, 0));       // w0 w0 w1 w1
  const __m128i low_bits = _mm_and_si128(_mm_srlv_epi32(low, _mm_setr_epi32(0, 0, 0, 4)),
                                         _mm_setr_epi32(0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F));
  const __m128i top_bits = _mm_and_si128(_mm_srli_epi32(high, 6), _mm_setr_epi32(0, 0x03030303, 0, 0x03030303));
  return _mm_or_si128(low_bits, _mm_slli_epi32(top_bits, 4));
}

// Integer lanes of one super-block for R rows of x (codes at xq[r], their sums of 16 and of 32 at
// sums16[r], sums32[r]); for Q4_K / Q5_K also minimums[r] = sum over s of min_s * (x codes' sum in s).
// Even and odd sub-blocks add into two chains (integers: the same lanes, half the latency).
template <class B, int R>
inline void super_block_lanes(const uint8_t* block, const int8_t* const xq[R], const int16_t* const sums16[R],
                              const int16_t* const sums32[R], Ints out[R], int minimums[R]) {
  __m256i even[R], odd[R];
  for (int r = 0; r < R; ++r) even[r] = odd[r] = _mm256_setzero_si256();
  __m128i scales_mins = _mm_setzero_si128();
  __m256i scales16 = _mm256_setzero_si256();
  if constexpr (!std::is_same_v<B, Q6_K>) {
    scales_mins = scales_mins_k4(block + 4);
    scales16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_mins));
  }
  // Q6_K: its 16 scales as int16; word s holds sub-block s's two (first and second 16 weights).
  const __m256i wide = std::is_same_v<B, Q6_K>
                           ? _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192)))
                           : _mm256_setzero_si256();
  const auto scale_of = [&](int s) {
    if constexpr (std::is_same_v<B, Q6_K>) {
      const __m256i word = _mm256_permutevar8x32_epi32(wide, _mm256_set1_epi32(s));
      const __m256i halves = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2,
                                              3, 2, 3, 2, 3, 2, 3);
      return _mm256_shuffle_epi8(word, halves);
    } else {
      return _mm256_shuffle_epi8(scales16, _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * s)));
    }
  };
  for (int s = 0; s < 8; s += 2) {
    const Codes32 c0 = codes32<B>(block, s), c1 = codes32<B>(block, s + 1);
    const __m256i scale0 = scale_of(s), scale1 = scale_of(s + 1);
    for (int r = 0; r < R; ++r) {
      even[r] = scaled_add(even[r], pair_products<B>(c0, xq[r] + 32 * s), scale0);
      odd[r] = scaled_add(odd[r], pair_products<B>(c1, xq[r] + 32 * s + 32), scale1);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = _mm256_add_epi32(even[r], odd[r]);
  if constexpr (std::is_same_v<B, Q6_K>) {
    for (int r = 0; r < R; ++r) {
      const __m256i bias = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums16[r])), wide);
      out[r] = _mm256_sub_epi32(out[r], _mm256_slli_epi32(bias, 5));
    }
  } else {
    const __m128i m = _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8));
    for (int r = 0; r < R; ++r) {
      __m128i p = _mm_madd_epi16(m, _mm_loadu_si128(reinterpret_cast<const __m128i*>(sums32[r])));
      p = _mm_add_epi32(p, _mm_shuffle_epi32(p, 0x4E));
      p = _mm_add_epi32(p, _mm_shuffle_epi32(p, 0xB1));
      minimums[r] = _mm_cvtsi128_si32(p);
    }
  }
}
#else
struct Ints {
  int32_t v[8];
};
inline Lanes to_lanes(Ints a) {
  Lanes r;
  for (int i = 0; i < 8; ++i) r.v[i] = static_cast<float>(a.v[i]);
  return r;
}
inline Ints zero_ints() { return Ints{}; }

// Lane l of 32 codes times 32 x codes: the products of codes 4l .. 4l + 3.
inline Ints lanes_of(const int8_t* c, const int8_t* x) {
  Ints out{};
  for (int j = 0; j < 32; ++j) out.v[j / 4] += c[j] * x[j];
  return out;
}

template <class B, int R>
inline void super_block_lanes(const uint8_t* block, const int8_t* const xq[R], const int16_t* const sums16[R],
                              const int16_t* const sums32[R], Ints out[R], int minimums[R]) {
  const int8_t* signed_scales = reinterpret_cast<const int8_t*>(block + 192);
  for (int r = 0; r < R; ++r) out[r] = Ints{}, minimums[r] = 0;
  for (int s = 0; s < 8; ++s) {
    int8_t c[32];
    B::codes(block, s, c);
    int scale[2], minimum = 0;
    if constexpr (std::is_same_v<B, Q6_K>) {
      for (int j = 0; j < 32; ++j) c[j] += 32;  // 0 .. 63, as the vector path multiplies them
      scale[0] = signed_scales[2 * s], scale[1] = signed_scales[2 * s + 1];
    } else {
      scale_min_k4(block + 4, s, scale[0], minimum);
      scale[1] = scale[0];
    }
    for (int r = 0; r < R; ++r) {
      const Ints lanes = lanes_of(c, xq[r] + 32 * s);
      for (int l = 0; l < 8; ++l) out[r].v[l] += scale[l / 4] * lanes.v[l];
      minimums[r] += minimum * sums32[r][s];
    }
  }
  if constexpr (std::is_same_v<B, Q6_K>) {
    for (int r = 0; r < R; ++r) {
      for (int l = 0; l < 8; ++l) {
        out[r].v[l] -= 32 * (signed_scales[2 * l] * sums16[r][2 * l] + signed_scales[2 * l + 1] * sums16[r][2 * l + 1]);
      }
    }
  }
}

#endif

}  // namespace codedraft::gguf
