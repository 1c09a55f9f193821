// The 8-bit-activation products on Q4_K, Q6_K, Q8_0 and Q5_0 rows repacked once at load (the layout:
// gguf_repacked_layout.h; one row of x: gguf_repacked_rows.h; tiles of x rows: gguf_repacked_tiles.h,
// and on AVX-512 gguf_repacked_tiles512.h, two groups at once):
// eight weight rows' (super-)blocks interleaved, so that one pass over a super-block of x feeds the
// eight rows, a register holding one integer lane of each of them (llama.cpp's CPU repack of
// block_q4_Kx8 has the same idea). The arithmetic is gguf_int8_products.h's to the bit: per row and
// super-block the same eight integer lanes (lane l: the products of codes 4l .. 4l + 3 of every
// sub-block, times its scale; Q6_K's bias of 32 taken off lane l as there) and the same minimums'
// sum, then the same float32 operations in the same order, lane l of eight rows in one register;
// horizontal_sum's tree is then a sum of registers. Q8_0 and Q5_0 likewise: block_rows_q8's lanes,
// its even and odd float chains, its final add of a zero offset (a sum of -0.f comes out 0.f).
#pragma once
#include "gguf_repacked_tiles512.h"
#include "gguf_repacking.h"

namespace codedraft::gguf {

// y (T, N): columns first .. first + 8 from the group at `group` (every row of x), y's row stride ldy.
template <class B>
void group_rows(const ActivationCodes& a, int64_t T, const uint8_t* group, int64_t first, float* y, int64_t ldy,
                const int32_t* offset16) {
#ifdef CODEDRAFT_AVX2
  float out[8];
  int64_t t = 0;
  for (float tile[kTileRows][8]; t + kTileRows <= T; t += kTileRows) {
    if constexpr (k_quant<B>()) {
      group_tile<B, kTileRows>(a, t, group, tile);
    } else {
      group_block_tile<B, kTileRows>(a, t, group, offset16, tile);
    }
    for (int i = 0; i < kTileRows; ++i) std::memcpy(y + (t + i) * ldy + first, tile[i], sizeof tile[i]);
  }
  for (; t < T; ++t) {
    if constexpr (k_quant<B>()) {
      group_row<B>(a, t, group, out);
    } else {
      group_block_row<B>(a, t, group, offset16, out);
    }
    std::memcpy(y + t * ldy + first, out, sizeof out);
  }
#else
  // The file's blocks of the eight rows back, then the one-row arithmetic of gguf_int8_products.h.
  const int64_t supers = a.runs, row_bytes = supers * B::kBytes;
  std::vector<uint8_t> rows(kGroupRows * row_bytes);
  for (int64_t sb = 0; sb < supers; ++sb) {
    for (int r = 0; r < 8; ++r) Group<B>::unpack(group + sb * Group<B>::kBytes, r, rows.data() + r * row_bytes + sb * B::kBytes);
  }
  const BlockRows w{rows.data(), row_bytes, a.K / 32};
  for (int64_t t = 0; t < T; ++t) q8_rows<B, 1>(a, t, w, 0, kGroupRows, y + t * ldy + first, ldy);
#endif
}

// Whether many rows of x take two groups at once (AVX-512: gguf_repacked_tiles512.h).
constexpr bool pairs_groups() {
#ifdef CODEDRAFT_AVX512
  return true;
#else
  return false;
#endif
}

#ifdef CODEDRAFT_AVX512
// group_rows for the group at `group` and the one after it: columns first .. first + 16.
template <class B>
void group_pair_rows(const ActivationCodes& a, int64_t T, const uint8_t* group, int64_t first, float* y, int64_t ldy,
                     const int32_t* offset16) {
  const uint8_t* next = group + a.runs * Group<B>::kBytes;
  int64_t t = 0;
  for (float tile[kWideTileRows][16]; t + kWideTileRows <= T; t += kWideTileRows) {
    if constexpr (k_quant<B>()) {
      group_pair_tile<B, kWideTileRows>(a, t, group, next, tile);
    } else {
      group_pair_block_tile<B, kWideTileRows>(a, t, group, next, offset16, tile);
    }
    for (int i = 0; i < kWideTileRows; ++i) std::memcpy(y + (t + i) * ldy + first, tile[i], sizeof tile[i]);
  }
  for (float out[8]; t < T; ++t) {
    for (int half = 0; half < 2; ++half) {
      if constexpr (k_quant<B>()) {
        group_row<B>(a, t, half ? next : group, out);
      } else {
        group_block_row<B>(a, t, half ? next : group, offset16, out);
      }
      std::memcpy(y + t * ldy + first + 8 * half, out, sizeof out);
    }
  }
}
#endif

// x (T, K) float32 (rows x.stride(0) apart), quantized to 8 bits, times the `rows` repacked weight rows transposed, into
// y (T, rows) with row stride ldy. Every output equals gguf_q8_linear's on the file's blocks, bit for bit.
inline void repacked_int8_product(const at::Tensor& x, const at::Tensor& packed, int64_t qtype, int64_t rows, float* yp,
                                  int64_t ldy) {
  const int64_t T = x.size(0), K = x.size(1);
  with_repacked_type(qtype, [&](auto tag) {
    using B = decltype(tag);
    check_repacked<B>(packed, rows, K);
    const ActivationCodes a = quantize_activation_rows(x.data_ptr<float>(), T, K, B::kValues, x.stride(0));
    std::vector<int32_t> offset16;  // Q5_0: minus 16 times each run of 4 x codes' sum
    if constexpr (std::is_same_v<B, Q5_0>) {
      offset16.resize(T * K / 4);
      for (int64_t i = 0; i < T * K / 4; ++i) {
        offset16[i] = -16 * (a.q[4 * i] + a.q[4 * i + 1] + a.q[4 * i + 2] + a.q[4 * i + 3]);
      }
    }
    const int64_t supers = K / B::kValues, groups = rows / kGroupRows, tail = rows - groups * kGroupRows;
    const uint8_t* p = packed.data_ptr<uint8_t>();
    // Units of work: groups, or pairs of groups (the last one alone where their count is odd).
    const int64_t per_unit = pairs_groups() && T >= kWideTileRows ? 2 : 1, units = (groups + per_unit - 1) / per_unit;
    at::parallel_for(0, units + (tail ? 1 : 0), 1, [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        if (u < units) {
          const int64_t g = u * per_unit;
          const uint8_t* group = p + g * supers * Group<B>::kBytes;
#ifdef CODEDRAFT_AVX512
          if (per_unit == 2 && g + 1 < groups) {
            group_pair_rows<B>(a, T, group, g * kGroupRows, yp, ldy, offset16.data());
            continue;
          }
#endif
          group_rows<B>(a, T, group, g * kGroupRows, yp, ldy, offset16.data());
          continue;
        }
        const BlockRows w{p + groups * supers * Group<B>::kBytes, supers * B::kBytes, K / 32};  // the last rows
        for (int64_t t = 0; t < T; ++t) q8_rows<B, 1>(a, t, w, 0, tail, yp + t * ldy + groups * kGroupRows, ldy);
      }
    });
  });
}

// x itself where its rows are contiguous (a column slice of a wider tensor is read in place), else a copy.
inline at::Tensor checked_activations(const at::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == at::kFloat && x.device().is_cpu(), "x must be (T, in) float32 on the CPU");
  return x.stride(1) == 1 && x.stride(0) >= x.size(1) ? x : x.contiguous();
}

// repacked_int8_product as a new tensor (T, rows).
inline at::Tensor repacked_int8_linear(const at::Tensor& x_in, const at::Tensor& packed, int64_t qtype, int64_t rows) {
  const at::Tensor x = checked_activations(x_in);
  at::Tensor y = at::empty({x.size(0), rows}, x.options());
  repacked_int8_product(x, packed, qtype, rows, y.data_ptr<float>(), rows);
  return y;
}

// repacked_int8_product into columns first .. first + rows of out (T, N) float32, whose rows are
// contiguous: the parts of a q|k|v or gate|up product written side by side, with no copy.
inline void repacked_int8_linear_into(const at::Tensor& x_in, const at::Tensor& packed, int64_t qtype, int64_t rows,
                                      const at::Tensor& out, int64_t first) {
  const at::Tensor x = checked_activations(x_in);
  TORCH_CHECK(out.dim() == 2 && out.scalar_type() == at::kFloat && out.device().is_cpu() && out.stride(1) == 1 &&
                  out.size(0) == x.size(0) && first >= 0 && first + rows <= out.size(1),
              "out must be (T, N) float32 with contiguous rows and N >= first + rows");
  repacked_int8_product(x, packed, qtype, rows, out.data_ptr<float>() + first, out.stride(0));
}

}  // namespace codedraft::gguf
