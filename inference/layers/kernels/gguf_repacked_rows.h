// The one-row products on a repacked group (gguf_repacked_layout.h), AVX2: eight weight rows against
// one row of x, lane l of the eight rows in one register (the arithmetic: gguf_repacked_products.h).
#pragma once
#include "gguf_repacked_layout.h"

namespace codedraft::gguf {

#ifdef CODEDRAFT_AVX2
// How far ahead of the (super-)block it multiplies a one-row product asks for the weights' cache lines.
// The groups lie one after the other, so this runs on into the next group (a prefetch past the end
// of the matrix is harmless). With the hardware's prefetch alone, a decode product on a Zen 3 (AVX2,
// no VNNI) took about its arithmetic's time plus its DRAM time, the two hardly overlapped
// (docs/benchmarks.md).
constexpr int64_t kPrefetchAhead = 2048;

// Asks for the cache lines of bytes [p + kPrefetchAhead, p + kPrefetchAhead + n).
inline void prefetch_ahead(const uint8_t* p, int64_t n) {
  for (int64_t i = 0; i < n; i += 64) _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchAhead + i), _MM_HINT_T0);
}

inline __m256i broadcast32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
// Eight bytes at p (one per row) as int16 words 2r, 2r + 1 = byte r (sign-extended if `is_signed`).
template <bool is_signed>
inline __m256i row_words(const uint8_t* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i twice = _mm_unpacklo_epi8(bytes, bytes);
  return is_signed ? _mm256_cvtepi8_epi16(twice) : _mm256_cvtepu8_epi16(twice);
}

// Q6_K's top two bits of a 32-byte run's four chunks, each at bits 4-5 of its byte (the code's high part).
inline void q6_k_top_bits(__m256i bits, __m256i top[4]) {
  const __m256i pair_mask = _mm256_set1_epi8(0x30);
  top[0] = _mm256_and_si256(_mm256_slli_epi16(bits, 4), pair_mask);
  top[1] = _mm256_and_si256(_mm256_slli_epi16(bits, 2), pair_mask);
  top[2] = _mm256_and_si256(bits, pair_mask);
  top[3] = _mm256_and_si256(_mm256_srli_epi16(bits, 2), pair_mask);
}

// Integer lanes of one group super-block g for the 256 x codes at x: lanes[l] holds lane l of the
// eight rows; for Q4_K also the eight rows' minimums' sums.
template <class B>
inline void group_lanes(const uint8_t* g, const int8_t* x, const int16_t* sums16, const int16_t* sums32,
                        __m256i lanes[8], __m256i& minimums) {
  const __m256i mask = _mm256_set1_epi8(0x0F);
  if constexpr (std::is_same_v<B, Q4_K>) {
    for (int l = 0; l < 8; ++l) lanes[l] = _mm256_setzero_si256();
    __m256i scale[8];
    for (int s = 0; s < 8; ++s) scale[s] = row_words<false>(g + 32 + 8 * s);
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {
        const __m256i v = load32(g + 160 + (8 * p + l) * 32);
        const __m256i low = _mm256_and_si256(v, mask), high = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
        const __m256i x0 = broadcast32(x + 64 * p + 4 * l), x1 = broadcast32(x + 64 * p + 32 + 4 * l);
        lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(low, x0), scale[2 * p]);
        lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(high, x1), scale[2 * p + 1]);
      }
    }
    minimums = _mm256_setzero_si256();
    for (int p = 0; p < 4; ++p) {
      const __m256i m = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 96 + 16 * p)));
      minimums = scaled_add(minimums, m, broadcast32(sums32 + 2 * p));
    }
  } else {
    __m256i scale[16];  // scale j of the eight rows: sub-block s's are 2s (its lanes 0 .. 3) and 2s + 1
    for (int j = 0; j < 16; ++j) scale[j] = row_words<true>(g + 16 + 8 * j);
    for (int l = 0; l < 8; ++l) lanes[l] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {  // eight chains of integer adds, one a lane
        const uint8_t* run = g + 144 + (8 * h + l) * 96;
        __m256i top[4];
        q6_k_top_bits(load32(run), top);
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {  // chunk 2h + half: sub-blocks 4h + half (low), 4h + 2 + half (high)
          const __m256i v = load32(run + 32 + 32 * half);
          const int s0 = 4 * h + half, s1 = 4 * h + 2 + half;
          const __m256i c0 = _mm256_or_si256(_mm256_and_si256(v, mask), top[half]);
          const __m256i c1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), mask), top[2 + half]);
          lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(c0, broadcast32(x + 32 * s0 + 4 * l)), scale[2 * s0 + l / 4]);
          lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(c1, broadcast32(x + 32 * s1 + 4 * l)), scale[2 * s1 + l / 4]);
        }
      }
    }
    for (int l = 0; l < 8; ++l) {  // lane l loses 32 (sc_2l bs_2l + sc_2l+1 bs_2l+1)
      const __m128i two = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l))),
                                            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l + 1))));
      const __m256i bias = scaled_add(_mm256_setzero_si256(), _mm256_cvtepi8_epi16(two), broadcast32(sums16 + 2 * l));
      lanes[l] = _mm256_sub_epi32(lanes[l], _mm256_slli_epi32(bias, 5));
    }
  }
}

// y[0 .. 8) for row t of x and the group whose super-blocks start at `group`.
template <class B>
inline void group_row(const ActivationCodes& a, int64_t t, const uint8_t* group, float* y) {
  const int64_t supers = a.runs;
  __m256 acc[8];
  for (int l = 0; l < 8; ++l) acc[l] = _mm256_setzero_ps();
  __m256 offset = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < supers; ++sb) {
    const uint8_t* g = group + sb * Group<B>::kBytes;
    prefetch_ahead(g, Group<B>::kBytes);
    __m256i lanes[8], minimums;
    group_lanes<B>(g, a.q.data() + t * a.K + sb * 256, a.sums16.data() + (t * supers + sb) * 16,
                   a.sums32.data() + (t * supers + sb) * 8, lanes, minimums);
    const __m256 dx = _mm256_set1_ps(a.d[t * supers + sb]);
    const __m256 step = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g))), dx);
    for (int l = 0; l < 8; ++l) acc[l] = _mm256_add_ps(acc[l], _mm256_mul_ps(_mm256_cvtepi32_ps(lanes[l]), step));
    if constexpr (std::is_same_v<B, Q4_K>) {
      const __m256 min_step =
          _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16))), dx);
      offset = _mm256_add_ps(offset, _mm256_mul_ps(_mm256_cvtepi32_ps(minimums), min_step));
    }
  }
  __m256 quad[4];
  for (int i = 0; i < 4; ++i) quad[i] = _mm256_add_ps(acc[i], acc[i + 4]);
  const __m256 total = _mm256_add_ps(_mm256_add_ps(quad[0], quad[2]), _mm256_add_ps(quad[1], quad[3]));
  _mm256_storeu_ps(y, _mm256_sub_ps(total, offset));
}

// start + the sums of four u8 x s8 products in each int32 lane: code magnitudes (or Q5_0's unsigned
// codes) by x. With VNNI the start costs nothing: it is the accumulator of the one instruction.
inline __m256i quad_products(__m256i magnitude, __m256i v, __m256i start = _mm256_setzero_si256()) {
#ifdef CODEDRAFT_VNNI
  return _mm256_dpbusd_epi32(start, magnitude, v);
#else
  return _mm256_add_epi32(start, _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, v), _mm256_set1_epi16(1)));
#endif
}

// Q5_0's codes 0 .. 31 for lane l: the nibbles with the fifth bits' bit l (see the layout) as 0x10.
inline __m256i q5_0_codes(__m256i fifth, __m256i nibbles, int l) {
  __m256i top = _mm256_and_si256(fifth, _mm256_set1_epi8(static_cast<char>(1 << l)));  // bit l -> 0x10
  if (l < 4) top = _mm256_slli_epi16(top, 4 - l);
  if (l > 4) top = _mm256_srli_epi16(top, l - 4);
  return _mm256_or_si256(nibbles, top);
}

// Integer lanes of one group block (a 32-weight type) for the 32 x codes at x: lanes[l] holds lane l
// of the eight rows. Q5_0's codes are taken as 0 .. 31 and lane l then starts from minus 16 times
// the sum of its 4 x codes (offset16[l]): the same integers as the signed codes give.
template <class B>
inline void group_block_lanes(const uint8_t* g, const int8_t* x, const int32_t* offset16, __m256i lanes[8]) {
  if constexpr (std::is_same_v<B, Q8_0>) {
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) {
      const __m256i c = load32(g + 16 + 32 * l);
      const __m256i v = _mm256_sign_epi8(broadcast32(x + 4 * l), c);
      lanes[l] = quad_products(_mm256_abs_epi8(c), v);
    }
  } else {
    const __m256i mask = _mm256_set1_epi8(0x0F);
    const __m256i fifth = load32(g + 16);
    const auto lane = [&](int l, __m256i nibbles) {
      lanes[l] = quad_products(q5_0_codes(fifth, nibbles, l), broadcast32(x + 4 * l), _mm256_set1_epi32(offset16[l]));
    };
#pragma GCC unroll 4
    for (int l = 0; l < 4; ++l) {
      const __m256i q = load32(g + 48 + 32 * l);
      lane(l, _mm256_and_si256(q, mask));
      lane(l + 4, _mm256_and_si256(_mm256_srli_epi16(q, 4), mask));
    }
  }
}

// The same as group_row for a 32-weight type: block_rows_q8's even and odd float chains, lane l of
// eight rows a register; offset16 (blocks, 8): Q5_0's.
template <class B>
inline void group_block_row(const ActivationCodes& a, int64_t t, const uint8_t* group, const int32_t* offset16,
                            float* y) {
  const int64_t blocks = a.runs;
  __m256 even[8], odd[8];
  for (int l = 0; l < 8; ++l) even[l] = odd[l] = _mm256_setzero_ps();
  const auto add_block = [&](int64_t b, __m256 acc[8]) {
    const uint8_t* g = group + b * Group<B>::kBytes;
    prefetch_ahead(g, Group<B>::kBytes);
    __m256i lanes[8];
    const int32_t* offset = std::is_same_v<B, Q5_0> ? offset16 + (t * blocks + b) * 8 : nullptr;
    group_block_lanes<B>(g, a.q.data() + (t * blocks + b) * 32, offset, lanes);
    const __m256 factor = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g))),
                                        _mm256_set1_ps(a.d[t * blocks + b]));
    for (int l = 0; l < 8; ++l) acc[l] = _mm256_add_ps(acc[l], _mm256_mul_ps(_mm256_cvtepi32_ps(lanes[l]), factor));
  };
  for (int64_t b = 0; b + 1 < blocks; b += 2) {
    add_block(b, even);
    add_block(b + 1, odd);
  }
  if (blocks % 2) add_block(blocks - 1, even);
  __m256 quad[4];
  for (int i = 0; i < 4; ++i) {
    quad[i] = _mm256_add_ps(_mm256_add_ps(even[i], odd[i]), _mm256_add_ps(even[i + 4], odd[i + 4]));
  }
  const __m256 total = _mm256_add_ps(_mm256_add_ps(quad[0], quad[2]), _mm256_add_ps(quad[1], quad[3]));
  _mm256_storeu_ps(y, _mm256_add_ps(total, _mm256_setzero_ps()));  // + the offset of 0.f, as a -0.f sum becomes 0.f
}
#endif

}  // namespace codedraft::gguf
