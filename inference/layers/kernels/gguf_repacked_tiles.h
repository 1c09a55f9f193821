// The tiled prompt products on a repacked group, AVX2: the one-row products of gguf_repacked_rows.h
// for kTileRows rows of x at once, each group (super-)block's codes unpacked once a tile.
#pragma once
#include "gguf_repacked_rows.h"

namespace codedraft::gguf {

#ifdef CODEDRAFT_AVX2
// x rows taken together by the many-rows products: each group (super-)block's codes are loaded and
// unpacked once for kTileRows rows of x instead of once a row.
constexpr int kTileRows = 4;

// Keeps a lane's chain of integer adds as written. Without VNNI, GCC reassociated each lane's sum
// into a tree of its products, each stored to the stack and added back, on 16 vector registers;
// held to the chain, a Zen 3's cold prompt ran about 7% faster. The integers are the same either way.
inline void keep_chain(__m256i& lane) {
#ifndef CODEDRAFT_VNNI
  __asm__("" : "+x"(lane));
#endif
}

// group_row for rows t0 .. t0 + TX of x: y[t][0 .. 8). Per (weight row, x row) the same integer lanes
// (their integer adds reordered, which is exact) and the same float32 operations in the same order.
template <class B, int TX>
inline void group_tile(const ActivationCodes& a, int64_t t0, const uint8_t* group, float y[][8]) {
  const int64_t supers = a.runs;
  const __m256i mask = _mm256_set1_epi8(0x0F);
  __m256 acc[TX][8], offset[TX];
  for (int t = 0; t < TX; ++t) {
    offset[t] = _mm256_setzero_ps();
    for (int l = 0; l < 8; ++l) acc[t][l] = _mm256_setzero_ps();
  }
  for (int64_t sb = 0; sb < supers; ++sb) {
    const uint8_t* g = group + sb * Group<B>::kBytes;
    const int8_t* x[TX];
    __m256 step[TX];
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g)));
    for (int t = 0; t < TX; ++t) {
      x[t] = a.q.data() + (t0 + t) * a.K + sb * 256;
      step[t] = _mm256_mul_ps(d, _mm256_set1_ps(a.d[(t0 + t) * supers + sb]));
    }
    if constexpr (std::is_same_v<B, Q4_K>) {
      __m256i scale[8];
      for (int s = 0; s < 8; ++s) scale[s] = row_words<false>(g + 32 + 8 * s);
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {
        __m256i lane[TX];
        for (int t = 0; t < TX; ++t) lane[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int p = 0; p < 4; ++p) {
          const __m256i v = load32(g + 160 + (8 * p + l) * 32);
          const __m256i low = _mm256_and_si256(v, mask), high = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
#pragma GCC unroll 4
          for (int t = 0; t < TX; ++t) {
            const __m256i x0 = broadcast32(x[t] + 64 * p + 4 * l), x1 = broadcast32(x[t] + 64 * p + 32 + 4 * l);
            lane[t] = scaled_add(lane[t], _mm256_maddubs_epi16(low, x0), scale[2 * p]);
            lane[t] = scaled_add(lane[t], _mm256_maddubs_epi16(high, x1), scale[2 * p + 1]);
            keep_chain(lane[t]);
          }
        }
        for (int t = 0; t < TX; ++t) acc[t][l] = _mm256_add_ps(acc[t][l], _mm256_mul_ps(_mm256_cvtepi32_ps(lane[t]), step[t]));
      }
      const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16)));
      for (int t = 0; t < TX; ++t) {
        const int16_t* sums32 = a.sums32.data() + ((t0 + t) * supers + sb) * 8;
        __m256i minimums = _mm256_setzero_si256();
        for (int p = 0; p < 4; ++p) {
          const __m256i m = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 96 + 16 * p)));
          minimums = scaled_add(minimums, m, broadcast32(sums32 + 2 * p));
        }
        const __m256 min_step = _mm256_mul_ps(dmin, _mm256_set1_ps(a.d[(t0 + t) * supers + sb]));
        offset[t] = _mm256_add_ps(offset[t], _mm256_mul_ps(_mm256_cvtepi32_ps(minimums), min_step));
      }
    } else {
      // Lanes 0 .. 3 take sub-block s's scale 2s, lanes 4 .. 7 its scale 2s + 1: eight scale registers
      // a half (all sixteen held at once spilled the float accumulators).
#pragma GCC unroll 2
      for (int upper = 0; upper < 2; ++upper) {
        __m256i scale[8];
        for (int s = 0; s < 8; ++s) scale[s] = row_words<true>(g + 16 + 8 * (2 * s + upper));
#pragma GCC unroll 4
        for (int l = 4 * upper; l < 4 * upper + 4; ++l) {
          // Lane l starts from minus 32 (sc_2l bs_2l + sc_2l+1 bs_2l+1): Q6_K's bias of 32, the scales
          // times -32 (int16: |sc| <= 128) by the sums of 16 x codes.
          const __m256i two = _mm256_cvtepi8_epi16(
              _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l))),
                                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l + 1)))));
          const __m256i minus32 = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(two, 5));
          __m256i lane[TX];
          for (int t = 0; t < TX; ++t) {
            const int16_t* sums16 = a.sums16.data() + ((t0 + t) * supers + sb) * 16;
            lane[t] = scaled_add(_mm256_setzero_si256(), minus32, broadcast32(sums16 + 2 * l));
          }
#pragma GCC unroll 2
          for (int h = 0; h < 2; ++h) {
            const uint8_t* run = g + 144 + (8 * h + l) * 96;
            __m256i top[4];
            q6_k_top_bits(load32(run), top);
#pragma GCC unroll 2
            for (int half = 0; half < 2; ++half) {
              const __m256i v = load32(run + 32 + 32 * half);
              const int s0 = 4 * h + half, s1 = 4 * h + 2 + half;
              const __m256i c0 = _mm256_or_si256(_mm256_and_si256(v, mask), top[half]);
              const __m256i c1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), mask), top[2 + half]);
#pragma GCC unroll 4
              for (int t = 0; t < TX; ++t) {
                lane[t] = scaled_add(lane[t], _mm256_maddubs_epi16(c0, broadcast32(x[t] + 32 * s0 + 4 * l)), scale[s0]);
                lane[t] = scaled_add(lane[t], _mm256_maddubs_epi16(c1, broadcast32(x[t] + 32 * s1 + 4 * l)), scale[s1]);
                keep_chain(lane[t]);
              }
            }
          }
          for (int t = 0; t < TX; ++t) {
            acc[t][l] = _mm256_add_ps(acc[t][l], _mm256_mul_ps(_mm256_cvtepi32_ps(lane[t]), step[t]));
          }
        }
      }
    }
  }
  for (int t = 0; t < TX; ++t) {
    __m256 quad[4];
    for (int i = 0; i < 4; ++i) quad[i] = _mm256_add_ps(acc[t][i], acc[t][i + 4]);
    const __m256 total = _mm256_add_ps(_mm256_add_ps(quad[0], quad[2]), _mm256_add_ps(quad[1], quad[3]));
    _mm256_storeu_ps(y[t], _mm256_sub_ps(total, offset[t]));
  }
}

// group_block_tile's pass for lanes L and L + 4 (the two its final tree adds first) of rows t0 ..
// t0 + TX of x: quad[t] = (even_L + odd_L) + (even_L+4 + odd_L+4), block_rows_q8's chains. A pass's
// 4 TX float accumulators stay in registers (all 16 TX of the eight lanes would not: 4 TX spilled to
// the stack and back every block). The block's factor d * dx is the same float product each pass.
template <class B, int TX, int L>
inline void group_block_pass(const ActivationCodes& a, int64_t t0, const uint8_t* group, const int32_t* offset16,
                             __m256 quad[TX]) {
  const int64_t blocks = a.runs;
  __m256 even[TX][2], odd[TX][2];
  for (int t = 0; t < TX; ++t) even[t][0] = even[t][1] = odd[t][0] = odd[t][1] = _mm256_setzero_ps();
  const auto add_block = [&](int64_t b, __m256 (*acc)[2]) {
    const uint8_t* g = group + b * Group<B>::kBytes;
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g)));
    __m256i low, high;  // lanes L and L + 4 of the eight rows: Q8_0's signed codes, Q5_0's 0 .. 31
    if constexpr (std::is_same_v<B, Q8_0>) {
      low = load32(g + 16 + 32 * L), high = load32(g + 16 + 32 * (L + 4));
    } else {
      const __m256i mask = _mm256_set1_epi8(0x0F), fifth = load32(g + 16), q = load32(g + 48 + 32 * L);
      low = q5_0_codes(fifth, _mm256_and_si256(q, mask), L);
      high = q5_0_codes(fifth, _mm256_and_si256(_mm256_srli_epi16(q, 4), mask), L + 4);
    }
#pragma GCC unroll 8
    for (int t = 0; t < TX; ++t) {
      const int64_t run = (t0 + t) * blocks + b;
      const int8_t* x = a.q.data() + run * 32;
      const __m256 factor = _mm256_mul_ps(d, _mm256_set1_ps(a.d[run]));
      __m256i lane_low, lane_high;
      if constexpr (std::is_same_v<B, Q8_0>) {
        lane_low = quad_products(_mm256_abs_epi8(low), _mm256_sign_epi8(broadcast32(x + 4 * L), low));
        lane_high = quad_products(_mm256_abs_epi8(high), _mm256_sign_epi8(broadcast32(x + 4 * (L + 4)), high));
      } else {
        lane_low = quad_products(low, broadcast32(x + 4 * L), _mm256_set1_epi32(offset16[run * 8 + L]));
        lane_high = quad_products(high, broadcast32(x + 4 * (L + 4)), _mm256_set1_epi32(offset16[run * 8 + L + 4]));
      }
      acc[t][0] = _mm256_add_ps(acc[t][0], _mm256_mul_ps(_mm256_cvtepi32_ps(lane_low), factor));
      acc[t][1] = _mm256_add_ps(acc[t][1], _mm256_mul_ps(_mm256_cvtepi32_ps(lane_high), factor));
    }
  };
  for (int64_t b = 0; b + 1 < blocks; b += 2) {
    add_block(b, even);
    add_block(b + 1, odd);
  }
  if (blocks % 2) add_block(blocks - 1, even);
  for (int t = 0; t < TX; ++t) {
    quad[t] = _mm256_add_ps(_mm256_add_ps(even[t][0], odd[t][0]), _mm256_add_ps(even[t][1], odd[t][1]));
  }
}

// group_block_row for rows t0 .. t0 + TX of x, as group_tile is to group_row: four passes over the
// group's blocks, a pair of lanes each.
template <class B, int TX>
inline void group_block_tile(const ActivationCodes& a, int64_t t0, const uint8_t* group, const int32_t* offset16,
                             float y[][8]) {
  __m256 quad[4][TX];
  group_block_pass<B, TX, 0>(a, t0, group, offset16, quad[0]);
  group_block_pass<B, TX, 1>(a, t0, group, offset16, quad[1]);
  group_block_pass<B, TX, 2>(a, t0, group, offset16, quad[2]);
  group_block_pass<B, TX, 3>(a, t0, group, offset16, quad[3]);
  for (int t = 0; t < TX; ++t) {
    const __m256 total = _mm256_add_ps(_mm256_add_ps(quad[0][t], quad[2][t]), _mm256_add_ps(quad[1][t], quad[3][t]));
    _mm256_storeu_ps(y[t], _mm256_add_ps(total, _mm256_setzero_ps()));  // + the offset of 0.f, as group_block_row
  }
}
#endif

}  // namespace codedraft::gguf
