// y = x W^T with W in one of GGUF's block types (gguf_blocks.h), read where it lies: (N, row bytes)
// uint8, each row its blocks in file order. Activations and sums are float32 (weight-only):
//   up to `few` rows of x: each output is the sum over sub-blocks of 32 weights of
//     mul[0] * (x . c)[0..16) + mul[1] * (x . c)[16..32)  (+ add * sum(x) over the sub-block),
//     the dequantized weights' own factors applied to the block's products (eight rows of x
//     share one pass over the weights);
//   more rows: the weights are dequantized a tile at a time, exactly as gguf's dequantizer, and
//     multiplied by ATen's float32 product.
// Both equal a float32 product on gguf's dequantized weights up to the order of rounding; the
// portable and AVX2 paths give the same numbers (lanes.h).
#pragma once
#include "gguf_blocks.h"
#include "lanes.h"

namespace codedraft::gguf {

constexpr int64_t kSub = 32;        // weights per sub-block: every type's codes come 32 at a time
constexpr int64_t kFewRows = 8;     // rows of x sharing one pass over the weights
constexpr int64_t kTile = 256;      // weight rows dequantized at a time for many-row products

// Which types carry an additive term (a minimum), so sums of x are needed.
template <class B>
constexpr bool adds() {
  return std::is_same_v<B, Q4_1> || std::is_same_v<B, Q5_1> || std::is_same_v<B, Q4_K> || std::is_same_v<B, Q5_K>;
}

struct BlockRows {
  const uint8_t* data;
  int64_t row_bytes;
  int64_t subs;  // sub-blocks of 32 per row
};

// y[r, n] for rows r < R of x and weight rows n0 <= n < n1; xsums (R, subs): each sub-block's sum of x.
template <class B, int R>
void rows_times_blocks(const float* x, int64_t ldx, const float* xsums, const BlockRows& w, int64_t n0,
                       int64_t n1, float* y, int64_t ldy) {
  const int64_t blocks = w.subs / B::kSubs;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* row = w.data + n * w.row_bytes;
    Lanes low_acc[R], high_acc[R];  // two chains of fused multiply-adds per row, not one twice as long
    float offset[R];
    for (int r = 0; r < R; ++r) low_acc[r] = zero(), high_acc[r] = zero(), offset[r] = 0.f;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* block = row + b * B::kBytes;
      for (int s = 0; s < B::kSubs; ++s) {
        const int64_t sub = b * B::kSubs + s;
        Lanes c[4];
        block_codes<B>(block, s, c);
        float factor[2], term;
        B::factors(block, s, factor, term);
        const Lanes low_factor = splat(factor[0]), high_factor = splat(factor[1]);
        for (int r = 0; r < R; ++r) {
          const float* xb = x + r * ldx + sub * kSub;
          const Lanes low = fmadd(load(xb + 8), c[1], mul(load(xb), c[0]));
          const Lanes high = fmadd(load(xb + 24), c[3], mul(load(xb + 16), c[2]));
          low_acc[r] = fmadd(low, low_factor, low_acc[r]);
          high_acc[r] = fmadd(high, high_factor, high_acc[r]);
          if constexpr (adds<B>()) offset[r] += term * xsums[r * w.subs + sub];
        }
      }
    }
    for (int r = 0; r < R; ++r) y[r * ldy + n] = sum(add(low_acc[r], high_acc[r])) + offset[r];
  }
}

// One weight row as float32 (subs * 32 values at out): mul * c + add, rounded twice, as gguf.
template <class B>
void dequantize_row(const uint8_t* row, int64_t subs, float* out) {
  for (int64_t sub = 0; sub < subs; ++sub) {
    const uint8_t* block = row + (sub / B::kSubs) * B::kBytes;
    const int s = static_cast<int>(sub % B::kSubs);
    Lanes c[4];
    block_codes<B>(block, s, c);
    float factor[2], term;
    B::factors(block, s, factor, term);
    for (int i = 0; i < 4; ++i) {
      Lanes w = mul(splat(factor[i / 2]), c[i]);
      if constexpr (adds<B>()) w = add(w, splat(term));
      store(out + sub * kSub + 8 * i, w);
    }
  }
}

template <class B>
void few_rows(const at::Tensor& x, const BlockRows& w, at::Tensor& y) {
  const int64_t T = x.size(0), K = x.size(1), N = y.size(1);
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  std::vector<float> sums;  // each sub-block's sum of x, for the additive terms
  if constexpr (adds<B>()) {
    sums.resize(T * w.subs);
    for (int64_t i = 0; i < T * w.subs; ++i) {
      float s = 0.f;
      for (int j = 0; j < kSub; ++j) s += xp[i * kSub + j];
      sums[i] = s;
    }
  }
  for (int64_t t0 = 0; t0 < T; t0 += kFewRows) {
    const int64_t rows = std::min(kFewRows, T - t0);
    const float* xr = xp + t0 * K;
    const float* sr = sums.empty() ? nullptr : sums.data() + t0 * w.subs;
    float* yr = yp + t0 * N;
    at::parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
      switch (rows) {
        case 1: rows_times_blocks<B, 1>(xr, K, sr, w, n0, n1, yr, N); break;
        case 2: rows_times_blocks<B, 2>(xr, K, sr, w, n0, n1, yr, N); break;
        case 3: rows_times_blocks<B, 3>(xr, K, sr, w, n0, n1, yr, N); break;
        case 4: rows_times_blocks<B, 4>(xr, K, sr, w, n0, n1, yr, N); break;
        case 5: rows_times_blocks<B, 5>(xr, K, sr, w, n0, n1, yr, N); break;
        case 6: rows_times_blocks<B, 6>(xr, K, sr, w, n0, n1, yr, N); break;
        case 7: rows_times_blocks<B, 7>(xr, K, sr, w, n0, n1, yr, N); break;
        default: rows_times_blocks<B, 8>(xr, K, sr, w, n0, n1, yr, N); break;
      }
    });
  }
}

template <class B>
void many_rows(const at::Tensor& x, const BlockRows& w, at::Tensor& y) {
  const int64_t K = x.size(1), N = y.size(1);
  at::Tensor tile = at::empty({std::min(kTile, N), K}, x.options());
  for (int64_t n0 = 0; n0 < N; n0 += kTile) {
    const int64_t rows = std::min(kTile, N - n0);
    at::Tensor part = tile.narrow(0, 0, rows);
    float* base = part.data_ptr<float>();
    at::parallel_for(0, rows, 8, [&](int64_t a, int64_t b) {
      for (int64_t n = a; n < b; ++n) dequantize_row<B>(w.data + (n0 + n) * w.row_bytes, w.subs, base + n * K);
    });
    y.narrow(1, n0, rows).copy_(at::mm(x, part.t()));
  }
}

// The block type `qtype` (ggml's enum) as a type tag passed to `f`.
template <class F>
auto with_type(int64_t qtype, F&& f) {
  switch (qtype) {
    case 2: return f(Q4_0{});
    case 3: return f(Q4_1{});
    case 6: return f(Q5_0{});
    case 7: return f(Q5_1{});
    case 8: return f(Q8_0{});
    case 12: return f(Q4_K{});
    case 13: return f(Q5_K{});
    case 14: return f(Q6_K{});
    default: TORCH_CHECK(false, "no kernel for GGML block type ", qtype);
  }
}

template <class B>
BlockRows block_rows(const at::Tensor& blocks, int64_t width) {
  TORCH_CHECK(blocks.dim() == 2 && blocks.scalar_type() == at::kByte && blocks.is_contiguous() && blocks.device().is_cpu(),
              "blocks must be (rows, bytes) contiguous uint8 on the CPU");
  TORCH_CHECK(width % B::kValues == 0 && blocks.size(1) == width / B::kValues * B::kBytes,
              "blocks of shape ", blocks.sizes(), " do not hold rows of ", width, " weights");
  return BlockRows{blocks.data_ptr<uint8_t>(), blocks.size(1), width / kSub};
}

// x (T, K) float32 times the (N, K) weights in `blocks` transposed: (T, N).
inline at::Tensor linear(const at::Tensor& x_in, const at::Tensor& blocks, int64_t qtype, int64_t few) {
  TORCH_CHECK(x_in.dim() == 2 && x_in.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "x must be (T, in) float32 on the CPU");
  const at::Tensor x = x_in.contiguous();
  at::Tensor y = at::empty({x.size(0), blocks.size(0)}, x.options());
  with_type(qtype, [&](auto tag) {
    using B = decltype(tag);
    const BlockRows w = block_rows<B>(blocks, x.size(1));
    if (x.size(0) <= few) {
      few_rows<B>(x, w, y);
    } else {
      many_rows<B>(x, w, y);
    }
  });
  return y;
}

// The weight rows `rows` (int64) of `blocks` (rows of `width` weights) as float32 (len(rows), width).
inline at::Tensor dequantize(const at::Tensor& blocks, const at::Tensor& rows_in, int64_t qtype, int64_t width) {
  const at::Tensor rows = rows_in.contiguous();
  TORCH_CHECK(rows.scalar_type() == at::kLong, "rows must be int64");
  at::Tensor out = at::empty({rows.numel(), width}, at::TensorOptions().dtype(at::kFloat));
  const int64_t* index = rows.data_ptr<int64_t>();
  for (int64_t i = 0; i < rows.numel(); ++i) {
    TORCH_CHECK(index[i] >= 0 && index[i] < blocks.size(0), "row ", index[i], " out of range");
  }
  with_type(qtype, [&](auto tag) {
    using B = decltype(tag);
    const BlockRows w = block_rows<B>(blocks, width);
    float* base = out.data_ptr<float>();
    at::parallel_for(0, rows.numel(), 8, [&](int64_t a, int64_t b) {
      for (int64_t i = a; i < b; ++i) dequantize_row<B>(w.data + index[i] * w.row_bytes, w.subs, base + i * width);
    });
  });
  return out;
}

}  // namespace codedraft::gguf
