// The tiled prompt products on two repacked groups at once, AVX-512 (BW and VL; VNNI where present):
// group_tile and group_block_tile of gguf_repacked_tiles.h for sixteen weight rows, a 512-bit register
// holding one integer lane of two neighbouring groups' eight rows (the first group's in its low half),
// so that each instruction of the code unpacking and the products does the work of two. Per (weight
// row, x row) the same integer lanes and the same float32 operations in the same order as group_tile,
// group_row and their block forms. On this project's Zen 5 a 256-row Q4_K product took 0.6x the time
// of the 256-bit tiles (bench/repacked_rows.py); an odd last group keeps the 256-bit path.
#pragma once
#include "gguf_repacked_tiles.h"

#if defined(CODEDRAFT_AVX2) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define CODEDRAFT_AVX512 1
#endif

namespace codedraft::gguf {

// x rows a tile of the two-group products.
constexpr int kWideTileRows = 4;

#ifdef CODEDRAFT_AVX512
inline __m512i join(__m256i low, __m256i high) { return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1); }
inline __m256i join128(__m128i low, __m128i high) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(low), high, 1);
}
// The 32 bytes at `at` in the two groups g0 and g1.
inline __m512i load_pair(const uint8_t* g0, const uint8_t* g1, int64_t at) {
  return join(load32(g0 + at), load32(g1 + at));
}
// The eight float16 at `at` in each group as sixteen floats.
inline __m512 halves_pair(const uint8_t* g0, const uint8_t* g1, int64_t at) {
  return _mm512_cvtph_ps(join128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g0 + at)),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(g1 + at))));
}
inline __m512i broadcast32_512(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}
// acc + (int16 pairs times scales, adjacent products added into int32 lanes): scaled_add's integers.
inline __m512i scaled_add512(__m512i acc, __m512i pairs, __m512i scales) {
#ifdef __AVX512VNNI__
  return _mm512_dpwssd_epi32(acc, pairs, scales);
#else
  return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, scales));
#endif
}

// Q6_K's scales 2l and 2l + 1 of a group's eight rows, interleaved: bytes 2r, 2r + 1 (row r's two).
inline __m128i two_scales(const uint8_t* g, int l) {
  return _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l))),
                           _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l + 1))));
}
// q6_k_top_bits on a register of two groups' runs.
inline void q6_k_top_bits512(__m512i bits, __m512i top[4]) {
  const __m512i pair_mask = _mm512_set1_epi8(0x30);
  top[0] = _mm512_and_si512(_mm512_slli_epi16(bits, 4), pair_mask);
  top[1] = _mm512_and_si512(_mm512_slli_epi16(bits, 2), pair_mask);
  top[2] = _mm512_and_si512(bits, pair_mask);
  top[3] = _mm512_and_si512(_mm512_srli_epi16(bits, 2), pair_mask);
}

// quad_products's integers on 512-bit registers.
inline __m512i quad_products512(__m512i magnitude, __m512i v, __m512i start) {
#ifdef __AVX512VNNI__
  return _mm512_dpbusd_epi32(start, magnitude, v);
#else
  return _mm512_add_epi32(start, _mm512_madd_epi16(_mm512_maddubs_epi16(magnitude, v), _mm512_set1_epi16(1)));
#endif
}

// scaled_add512 onto acc, or where `first`, its products alone: one instruction either way (no zeroed
// register copied in to start a chain).
inline __m512i first_or_add(bool first, __m512i acc, __m512i pairs, __m512i scales) {
  return first ? _mm512_madd_epi16(pairs, scales) : scaled_add512(acc, pairs, scales);
}

// group_tile for the groups g0 and g1 (16 weight rows) and rows t0 .. t0 + TX of x: y[t][0 .. 8) the
// first group's outputs, y[t][8 .. 16) the second's.
template <class B, int TX>
inline void group_pair_tile(const ActivationCodes& a, int64_t t0, const uint8_t* group0, const uint8_t* group1,
                            float y[][16]) {
  const int64_t supers = a.runs;
  const __m512i mask = _mm512_set1_epi8(0x0F);
  alignas(64) float acc[TX][8][16] = {};
  __m512 offset[TX];
  for (int t = 0; t < TX; ++t) offset[t] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < supers; ++sb) {
    const uint8_t* g0 = group0 + sb * Group<B>::kBytes;
    const uint8_t* g1 = group1 + sb * Group<B>::kBytes;
    if (t0 == 0) {  // the first tile reads the weights from memory: two streams, which the hardware's prefetch loses
      prefetch_ahead(g0, Group<B>::kBytes);
      prefetch_ahead(g1, Group<B>::kBytes);
    }
    const int8_t* x[TX];
    __m512 step[TX];
    const __m512 d = halves_pair(g0, g1, 0);
    for (int t = 0; t < TX; ++t) {
      x[t] = a.q.data() + (t0 + t) * a.K + sb * 256;
      step[t] = _mm512_mul_ps(d, _mm512_set1_ps(a.d[(t0 + t) * supers + sb]));
    }
    if constexpr (std::is_same_v<B, Q4_K>) {
      __m512i scale[8];
      for (int s = 0; s < 8; ++s) scale[s] = join(row_words<false>(g0 + 32 + 8 * s), row_words<false>(g1 + 32 + 8 * s));
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {
        // Even and odd sub-blocks in two chains of integer adds (the same lane, half the latency).
        __m512i even[TX], odd[TX];
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p) {
          const __m512i v = load_pair(g0, g1, 160 + (8 * p + l) * 32);
          const __m512i low = _mm512_and_si512(v, mask), high = _mm512_and_si512(_mm512_srli_epi16(v, 4), mask);
#pragma GCC unroll 8
          for (int t = 0; t < TX; ++t) {
            const __m512i x0 = broadcast32_512(x[t] + 64 * p + 4 * l), x1 = broadcast32_512(x[t] + 64 * p + 32 + 4 * l);
            even[t] = first_or_add(p == 0, even[t], _mm512_maddubs_epi16(low, x0), scale[2 * p]);
            odd[t] = first_or_add(p == 0, odd[t], _mm512_maddubs_epi16(high, x1), scale[2 * p + 1]);
          }
        }
        for (int t = 0; t < TX; ++t) {
          const __m512 lane = _mm512_cvtepi32_ps(_mm512_add_epi32(even[t], odd[t]));
          const __m512 sum = _mm512_add_ps(_mm512_load_ps(acc[t][l]), _mm512_mul_ps(lane, step[t]));
          _mm512_store_ps(acc[t][l], sum);
        }
      }
      const __m512 dmin = halves_pair(g0, g1, 16);
      __m512i m[4];
      for (int p = 0; p < 4; ++p) {
        const __m128i m0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g0 + 96 + 16 * p));
        const __m128i m1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g1 + 96 + 16 * p));
        m[p] = _mm512_cvtepu8_epi16(join128(m0, m1));
      }
      for (int t = 0; t < TX; ++t) {
        const int16_t* sums32 = a.sums32.data() + ((t0 + t) * supers + sb) * 8;
        __m512i minimums = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p) minimums = scaled_add512(minimums, m[p], broadcast32_512(sums32 + 2 * p));
        const __m512 min_step = _mm512_mul_ps(dmin, _mm512_set1_ps(a.d[(t0 + t) * supers + sb]));
        offset[t] = _mm512_add_ps(offset[t], _mm512_mul_ps(_mm512_cvtepi32_ps(minimums), min_step));
      }
    } else {
      // As group_tile: eight scale registers a half of the lanes.
#pragma GCC unroll 2
      for (int upper = 0; upper < 2; ++upper) {
        __m512i scale[8];
        for (int s = 0; s < 8; ++s) {
          const int at = 16 + 8 * (2 * s + upper);
          scale[s] = join(row_words<true>(g0 + at), row_words<true>(g1 + at));
        }
#pragma GCC unroll 4
        for (int l = 4 * upper; l < 4 * upper + 4; ++l) {
          const __m512i two = _mm512_cvtepi8_epi16(join128(two_scales(g0, l), two_scales(g1, l)));
          const __m512i minus32 = _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_slli_epi16(two, 5));
          __m512i even[TX], odd[TX];
          for (int t = 0; t < TX; ++t) {
            const int16_t* sums16 = a.sums16.data() + ((t0 + t) * supers + sb) * 16;
            even[t] = scaled_add512(_mm512_setzero_si512(), minus32, broadcast32_512(sums16 + 2 * l));
          }
#pragma GCC unroll 2
          for (int h = 0; h < 2; ++h) {
            const int64_t run = 144 + (8 * h + l) * 96;
            __m512i top[4];
            q6_k_top_bits512(load_pair(g0, g1, run), top);
#pragma GCC unroll 2
            for (int half = 0; half < 2; ++half) {
              const __m512i v = load_pair(g0, g1, run + 32 + 32 * half);
              const int s0 = 4 * h + half, s1 = 4 * h + 2 + half;
              const __m512i c0 = _mm512_or_si512(_mm512_and_si512(v, mask), top[half]);
              const __m512i c1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(v, 4), mask), top[2 + half]);
#pragma GCC unroll 8
              for (int t = 0; t < TX; ++t) {
                const __m512i x0 = broadcast32_512(x[t] + 32 * s0 + 4 * l);
                const __m512i x1 = broadcast32_512(x[t] + 32 * s1 + 4 * l);
                even[t] = scaled_add512(even[t], _mm512_maddubs_epi16(c0, x0), scale[s0]);
                odd[t] = first_or_add(h + half == 0, odd[t], _mm512_maddubs_epi16(c1, x1), scale[s1]);
              }
            }
          }
          for (int t = 0; t < TX; ++t) {
            const __m512 lane = _mm512_cvtepi32_ps(_mm512_add_epi32(even[t], odd[t]));
            _mm512_store_ps(acc[t][l], _mm512_add_ps(_mm512_load_ps(acc[t][l]), _mm512_mul_ps(lane, step[t])));
          }
        }
      }
    }
  }
  for (int t = 0; t < TX; ++t) {
    __m512 quad[4];
    for (int i = 0; i < 4; ++i) quad[i] = _mm512_add_ps(_mm512_load_ps(acc[t][i]), _mm512_load_ps(acc[t][i + 4]));
    const __m512 total = _mm512_add_ps(_mm512_add_ps(quad[0], quad[2]), _mm512_add_ps(quad[1], quad[3]));
    _mm512_storeu_ps(y[t], _mm512_sub_ps(total, offset[t]));
  }
}

// group_block_pass for the groups g0 and g1: lanes L and L + 4 of their sixteen rows, rows t0 .. t0 + TX
// of x. Q8_0's signs go onto x by a masked negation (no 512-bit vpsignb): the same bytes as vpsignb
// gives, a code of 0 having a magnitude of 0.
template <class B, int TX, int L>
inline void group_pair_block_pass(const ActivationCodes& a, int64_t t0, const uint8_t* group0, const uint8_t* group1,
                                  const int32_t* offset16, __m512 quad[TX]) {
  const int64_t blocks = a.runs;
  __m512 even[TX][2], odd[TX][2];
  for (int t = 0; t < TX; ++t) even[t][0] = even[t][1] = odd[t][0] = odd[t][1] = _mm512_setzero_ps();
  const auto add_block = [&](int64_t b, __m512 (*acc)[2]) {
    const uint8_t* g0 = group0 + b * Group<B>::kBytes;
    const uint8_t* g1 = group1 + b * Group<B>::kBytes;
    if (L == 0 && t0 == 0) {  // as group_pair_tile: the first pass over the blocks reads them from memory
      prefetch_ahead(g0, Group<B>::kBytes);
      prefetch_ahead(g1, Group<B>::kBytes);
    }
    const __m512 d = halves_pair(g0, g1, 0);
    __m512i low, high;  // lanes L and L + 4 of the sixteen rows: Q8_0's magnitudes, Q5_0's codes 0 .. 31
    __mmask64 low_negative = 0, high_negative = 0;
    if constexpr (std::is_same_v<B, Q8_0>) {
      low = load_pair(g0, g1, 16 + 32 * L), high = load_pair(g0, g1, 16 + 32 * (L + 4));
      low_negative = _mm512_movepi8_mask(low), high_negative = _mm512_movepi8_mask(high);
      low = _mm512_abs_epi8(low), high = _mm512_abs_epi8(high);
    } else {
      const __m512i fifth = load_pair(g0, g1, 16), q = load_pair(g0, g1, 48 + 32 * L);
      const __m512i nibbles[2] = {_mm512_and_si512(q, _mm512_set1_epi8(0x0F)),
                                  _mm512_and_si512(_mm512_srli_epi16(q, 4), _mm512_set1_epi8(0x0F))};
      __m512i codes[2];
      for (int i = 0; i < 2; ++i) {  // q5_0_codes: lane l's fifth bits, bit l of four bytes, as 0x10
        const int l = L + 4 * i;
        __m512i top = _mm512_and_si512(fifth, _mm512_set1_epi8(static_cast<char>(1 << l)));
        if (l < 4) top = _mm512_slli_epi16(top, 4 - l);
        if (l > 4) top = _mm512_srli_epi16(top, l - 4);
        codes[i] = _mm512_or_si512(nibbles[i], top);
      }
      low = codes[0], high = codes[1];
    }
#pragma GCC unroll 8
    for (int t = 0; t < TX; ++t) {
      const int64_t run = (t0 + t) * blocks + b;
      const int8_t* x = a.q.data() + run * 32;
      const __m512 factor = _mm512_mul_ps(d, _mm512_set1_ps(a.d[run]));
      __m512i x_low = broadcast32_512(x + 4 * L), x_high = broadcast32_512(x + 4 * (L + 4));
      __m512i start_low = _mm512_setzero_si512(), start_high = _mm512_setzero_si512();
      if constexpr (std::is_same_v<B, Q8_0>) {
        x_low = _mm512_mask_sub_epi8(x_low, low_negative, _mm512_setzero_si512(), x_low);
        x_high = _mm512_mask_sub_epi8(x_high, high_negative, _mm512_setzero_si512(), x_high);
      } else {
        start_low = _mm512_set1_epi32(offset16[run * 8 + L]), start_high = _mm512_set1_epi32(offset16[run * 8 + L + 4]);
      }
      const __m512i lane_low = quad_products512(low, x_low, start_low);
      const __m512i lane_high = quad_products512(high, x_high, start_high);
      acc[t][0] = _mm512_add_ps(acc[t][0], _mm512_mul_ps(_mm512_cvtepi32_ps(lane_low), factor));
      acc[t][1] = _mm512_add_ps(acc[t][1], _mm512_mul_ps(_mm512_cvtepi32_ps(lane_high), factor));
    }
  };
  for (int64_t b = 0; b + 1 < blocks; b += 2) {
    add_block(b, even);
    add_block(b + 1, odd);
  }
  if (blocks % 2) add_block(blocks - 1, even);
  for (int t = 0; t < TX; ++t) {
    quad[t] = _mm512_add_ps(_mm512_add_ps(even[t][0], odd[t][0]), _mm512_add_ps(even[t][1], odd[t][1]));
  }
}

// group_block_tile for the groups g0 and g1, y[t][0 .. 16) as group_pair_tile's.
template <class B, int TX>
inline void group_pair_block_tile(const ActivationCodes& a, int64_t t0, const uint8_t* group0, const uint8_t* group1,
                                  const int32_t* offset16, float y[][16]) {
  __m512 quad[4][TX];
  group_pair_block_pass<B, TX, 0>(a, t0, group0, group1, offset16, quad[0]);
  group_pair_block_pass<B, TX, 1>(a, t0, group0, group1, offset16, quad[1]);
  group_pair_block_pass<B, TX, 2>(a, t0, group0, group1, offset16, quad[2]);
  group_pair_block_pass<B, TX, 3>(a, t0, group0, group1, offset16, quad[3]);
  for (int t = 0; t < TX; ++t) {
    const __m512 total = _mm512_add_ps(_mm512_add_ps(quad[0][t], quad[2][t]), _mm512_add_ps(quad[1][t], quad[3][t]));
    _mm512_storeu_ps(y[t], _mm512_add_ps(total, _mm512_setzero_ps()));  // + the offset of 0.f, as group_block_row
  }
}
#endif

}  // namespace codedraft::gguf
