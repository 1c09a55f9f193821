// Q4_K rows repacked once at load for the one-row (decode) 8-bit-activation products: eight weight
// rows' super-blocks interleaved, so that one pass over a super-block of x feeds the eight rows, a
// register holding one integer lane of each of them (llama.cpp's CPU repack of block_q4_Kx8 has the
// same idea). The arithmetic is gguf_int8_products.h's to the bit: per row and super-block the same
// eight integer lanes (lane l: the products of codes 4l .. 4l + 3 of every sub-block, times its
// scale) and the same minimums' sum, then the same float32 operations in the same order, lane l of
// eight rows in one register; horizontal_sum's tree is then a sum of registers.
//
// The repacked matrix, uint8: N / 8 groups of eight rows, each its super-blocks in order, one of
// kGroupBytes (= 8 file blocks of 144 bytes + 32: the scales and minimums unpacked to bytes):
//   0    d of the 8 rows (float16)             16   dmin of the 8 rows (float16)
//   32   scale of sub-block s of row r at 8s + r
//   96   minimums of sub-blocks 2p, 2p + 1 of row r at 16p + 2r, 16p + 2r + 1
//   160  codes: 32 bytes for each (pair p of sub-blocks, lane l), row r's file bytes
//        32p + 4l .. 32p + 4l + 3 at 4r (low nibbles: sub-block 2p, high: 2p + 1, as in the file)
// then the N % 8 last rows as the file lays them out. Unpacking gives the file's bytes back.
#pragma once
#include "gguf_int8_products.h"

namespace codedraft::gguf {

constexpr int64_t kGroupRows = 8;
constexpr int64_t kGroupBytes = 8 * Q4_K::kBytes + 32;

inline int64_t repacked_bytes(int64_t rows, int64_t supers) {
  return rows / kGroupRows * supers * kGroupBytes + rows % kGroupRows * supers * Q4_K::kBytes;
}

// Eight rows' block sb (blocks[r]) into one group super-block at out.
inline void repack_q4_k(const uint8_t* const blocks[8], uint8_t* out) {
  for (int r = 0; r < 8; ++r) {
    const uint8_t* b = blocks[r];
    std::memcpy(out + 2 * r, b, 2);
    std::memcpy(out + 16 + 2 * r, b + 2, 2);
    for (int s = 0; s < 8; ++s) {
      int scale, minimum;
      scale_min_k4(b + 4, s, scale, minimum);
      out[32 + 8 * s + r] = static_cast<uint8_t>(scale);
      out[96 + 16 * (s / 2) + 2 * r + s % 2] = static_cast<uint8_t>(minimum);
    }
    for (int p = 0; p < 4; ++p) {
      for (int l = 0; l < 8; ++l) std::memcpy(out + 160 + (8 * p + l) * 32 + 4 * r, b + 16 + 32 * p + 4 * l, 4);
    }
  }
}

// Row r's block back from a group super-block: the file's 144 bytes.
inline void unpack_q4_k(const uint8_t* group, int r, uint8_t* b) {
  std::memcpy(b, group + 2 * r, 2);
  std::memcpy(b + 2, group + 16 + 2 * r, 2);
  int scale[8], minimum[8];
  for (int s = 0; s < 8; ++s) scale[s] = group[32 + 8 * s + r], minimum[s] = group[96 + 16 * (s / 2) + 2 * r + s % 2];
  for (int t = 0; t < 4; ++t) {  // scale_min_k4 inverted
    b[4 + t] = static_cast<uint8_t>(scale[t] | ((scale[t + 4] >> 4) << 6));
    b[8 + t] = static_cast<uint8_t>(minimum[t] | ((minimum[t + 4] >> 4) << 6));
    b[12 + t] = static_cast<uint8_t>((scale[t + 4] & 0x0F) | ((minimum[t + 4] & 0x0F) << 4));
  }
  for (int p = 0; p < 4; ++p) {
    for (int l = 0; l < 8; ++l) std::memcpy(b + 16 + 32 * p + 4 * l, group + 160 + (8 * p + l) * 32 + 4 * r, 4);
  }
}

inline void check_repacked(const at::Tensor& packed, int64_t qtype, int64_t rows, int64_t width) {
  TORCH_CHECK(qtype == 12, "only Q4_K rows are repacked, not GGML block type ", qtype);
  TORCH_CHECK(packed.dim() == 1 && packed.scalar_type() == at::kByte && packed.is_contiguous() && packed.device().is_cpu(),
              "repacked rows must be 1-D contiguous uint8 on the CPU");
  TORCH_CHECK(width % 256 == 0 && packed.numel() == repacked_bytes(rows, width / 256), "repacked rows of ",
              packed.numel(), " bytes do not hold ", rows, " rows of ", width, " weights");
}

// blocks (N, row bytes) in Q4_K -> the repacked layout (1-D).
inline at::Tensor repack(const at::Tensor& blocks, int64_t qtype) {
  TORCH_CHECK(qtype == 12, "only Q4_K rows are repacked, not GGML block type ", qtype);
  TORCH_CHECK(blocks.dim() == 2 && blocks.size(1) % Q4_K::kBytes == 0, "blocks must be (rows, bytes) of Q4_K blocks");
  const BlockRows w = block_rows<Q4_K>(blocks, blocks.size(1) / Q4_K::kBytes * 256);
  const int64_t N = blocks.size(0), supers = w.row_bytes / Q4_K::kBytes, groups = N / kGroupRows;
  at::Tensor out = at::empty({repacked_bytes(N, supers)}, blocks.options());
  uint8_t* o = out.data_ptr<uint8_t>();
  at::parallel_for(0, groups, 1, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) {
      for (int64_t sb = 0; sb < supers; ++sb) {
        const uint8_t* b[8];
        for (int r = 0; r < 8; ++r) b[r] = w.data + (g * kGroupRows + r) * w.row_bytes + sb * Q4_K::kBytes;
        repack_q4_k(b, o + (g * supers + sb) * kGroupBytes);
      }
    }
  });
  std::memcpy(o + groups * supers * kGroupBytes, w.data + groups * kGroupRows * w.row_bytes,
              (N - groups * kGroupRows) * w.row_bytes);
  return out;
}

// The repacked layout -> the file's blocks (rows, row bytes), byte for byte.
inline at::Tensor unpack(const at::Tensor& packed, int64_t qtype, int64_t rows, int64_t width) {
  check_repacked(packed, qtype, rows, width);
  const int64_t supers = width / 256, row_bytes = supers * Q4_K::kBytes, groups = rows / kGroupRows;
  at::Tensor out = at::empty({rows, row_bytes}, packed.options());
  const uint8_t* p = packed.data_ptr<uint8_t>();
  uint8_t* o = out.data_ptr<uint8_t>();
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t sb = 0; sb < supers; ++sb) {
      for (int r = 0; r < 8; ++r) {
        unpack_q4_k(p + (g * supers + sb) * kGroupBytes, r, o + (g * kGroupRows + r) * row_bytes + sb * Q4_K::kBytes);
      }
    }
  }
  std::memcpy(o + groups * kGroupRows * row_bytes, p + groups * supers * kGroupBytes, (rows - groups * kGroupRows) * row_bytes);
  return out;
}

#ifdef CODEDRAFT_AVX2
inline __m256i broadcast32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// y[0 .. 8) for row t of x and the group whose super-blocks start at `group`.
inline void q4_k_group_row(const ActivationCodes& a, int64_t t, const uint8_t* group, float* y) {
  const int64_t supers = a.runs;
  __m256 acc[8];
  for (int l = 0; l < 8; ++l) acc[l] = _mm256_setzero_ps();
  __m256 offset = _mm256_setzero_ps();
  const __m256i mask = _mm256_set1_epi8(0x0F);
  for (int64_t sb = 0; sb < supers; ++sb) {
    const uint8_t* g = group + sb * kGroupBytes;
    const int8_t* x = a.q.data() + t * a.K + sb * 256;
    __m256i scale[8], lanes[8];
    for (int s = 0; s < 8; ++s) {
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 32 + 8 * s));
      scale[s] = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(bytes, bytes));  // row r's scale in words 2r, 2r + 1
    }
    for (int l = 0; l < 8; ++l) lanes[l] = _mm256_setzero_si256();
    for (int p = 0; p < 4; ++p) {
      for (int l = 0; l < 8; ++l) {
        const __m256i v = load32(g + 160 + (8 * p + l) * 32);
        const __m256i low = _mm256_and_si256(v, mask), high = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
        const __m256i x0 = broadcast32(x + 64 * p + 4 * l), x1 = broadcast32(x + 64 * p + 32 + 4 * l);
        lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(low, x0), scale[2 * p]);
        lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(high, x1), scale[2 * p + 1]);
      }
    }
    __m256i minimums = _mm256_setzero_si256();
    const int16_t* sums32 = a.sums32.data() + (t * supers + sb) * 8;
    for (int p = 0; p < 4; ++p) {
      const __m256i m = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 96 + 16 * p)));
      minimums = scaled_add(minimums, m, broadcast32(sums32 + 2 * p));
    }
    const __m256 dx = _mm256_set1_ps(a.d[t * supers + sb]);
    const __m256 step = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g))), dx);
    for (int l = 0; l < 8; ++l) acc[l] = _mm256_add_ps(acc[l], _mm256_mul_ps(_mm256_cvtepi32_ps(lanes[l]), step));
    const __m256 min_step =
        _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16))), dx);
    offset = _mm256_add_ps(offset, _mm256_mul_ps(_mm256_cvtepi32_ps(minimums), min_step));
  }
  __m256 quad[4];
  for (int i = 0; i < 4; ++i) quad[i] = _mm256_add_ps(acc[i], acc[i + 4]);
  const __m256 total = _mm256_add_ps(_mm256_add_ps(quad[0], quad[2]), _mm256_add_ps(quad[1], quad[3]));
  _mm256_storeu_ps(y, _mm256_sub_ps(total, offset));
}
#endif

// y (T, N) for the rows of group g (every row of x), y's row stride ldy.
inline void q4_k_group(const ActivationCodes& a, int64_t T, const uint8_t* group, int64_t first, float* y, int64_t ldy) {
#ifdef CODEDRAFT_AVX2
  float out[8];
  for (int64_t t = 0; t < T; ++t) {
    q4_k_group_row(a, t, group, out);
    std::memcpy(y + t * ldy + first, out, sizeof out);
  }
#else
  // The file's blocks of the eight rows back, then the one-row arithmetic of gguf_int8_products.h.
  const int64_t supers = a.runs, row_bytes = supers * Q4_K::kBytes;
  std::vector<uint8_t> rows(kGroupRows * row_bytes);
  for (int64_t sb = 0; sb < supers; ++sb) {
    for (int r = 0; r < 8; ++r) unpack_q4_k(group + sb * kGroupBytes, r, rows.data() + r * row_bytes + sb * Q4_K::kBytes);
  }
  const BlockRows w{rows.data(), row_bytes, supers * 8};
  for (int64_t t = 0; t < T; ++t) super_block_rows<Q4_K, 1>(a, t, w, 0, kGroupRows, y + t * ldy + first, ldy);
#endif
}

// x (T, K) float32, quantized to 8 bits, times the `rows` repacked Q4_K weight rows transposed: (T, rows).
// Every output equals gguf_q8_linear's on the file's blocks, bit for bit.
inline at::Tensor repacked_int8_linear(const at::Tensor& x_in, const at::Tensor& packed, int64_t qtype, int64_t rows) {
  TORCH_CHECK(x_in.dim() == 2 && x_in.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "x must be (T, in) float32 on the CPU");
  const at::Tensor x = x_in.contiguous();
  const int64_t T = x.size(0), K = x.size(1);
  check_repacked(packed, qtype, rows, K);
  at::Tensor y = at::empty({T, rows}, x.options());
  const ActivationCodes a = quantize_activation_rows(x.data_ptr<float>(), T, K, 256);
  const int64_t supers = K / 256, groups = rows / kGroupRows, tail = rows - groups * kGroupRows;
  const uint8_t* p = packed.data_ptr<uint8_t>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, groups + (tail ? 1 : 0), 1, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) {
      if (g < groups) {
        q4_k_group(a, T, p + g * supers * kGroupBytes, g * kGroupRows, yp, rows);
        continue;
      }
      const BlockRows w{p + groups * supers * kGroupBytes, supers * Q4_K::kBytes, supers * 8};  // the last rows
      for (int64_t t = 0; t < T; ++t) super_block_rows<Q4_K, 1>(a, t, w, 0, tail, yp + t * rows + groups * kGroupRows, rows);
    }
  });
  return y;
}

}  // namespace codedraft::gguf
