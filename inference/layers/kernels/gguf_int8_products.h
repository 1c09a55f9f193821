// y = x W^T with W in GGUF's blocks as they lie in the file (gguf_blocks.h) and x quantized to 8 bits
// in each call (activation_codes.h), as llama.cpp's CPU products do: the native_q8 weights form.
//
//   x per run of 32 for the 32-weight types (Q4_0 .. Q8_0: llama.cpp's Q8_0 / Q8_1 activations),
//   per run of 256 for the K-quants (Q4_K, Q5_K, Q6_K: its Q8_K), with the runs' sums of codes.
//   Integer lanes: lane l of a sub-block's 32 weights = sum over j in 4l .. 4l + 3 of code_j * xq_j.
//   32-weight blocks: y = sum over blocks b of lanes_b * (d_w * dx_b) in 8 float lanes, the even and
//     the odd blocks in two sums added at the end (+ m_w * (dx_b * sum of b's codes) summed in block
//     order, a scalar, for Q4_1 / Q5_1).
//   K-quants, per super-block: lanes = sum over sub-blocks s of scale_s * lanes_s (integers, exact;
//     Q6_K's codes are taken as 0 .. 63 and lane l then loses 32 (sc_2l bs_2l + sc_2l+1 bs_2l+1),
//     bs_i the sum of the i-th 16 x codes), then y = sum of lanes * (d * dx) in 8 float lanes
//     - sum over super-blocks of (sum_s min_s * bs32_s) * (dmin * dx) (Q4_K / Q5_K, a scalar).
// Every float operation is a separate rounding (no fused multiply-add), the lanes are summed in
// horizontal_sum's tree and the scalar is added last, so the arithmetic can be written out in
// numpy and checked bit for bit (tests/inference/layers/test_gguf_int8_products.py). The integer
// lanes are the same with AVX-512 VNNI, AVX2 and the plain loops (no saturation: a pair of products
// is at most 2 * 127 * 127 < 2^15), and so are the outputs. Each row of x is quantized and summed
// alone: a row's output does not depend on the other rows of its call.
#pragma once
#include "activation_codes.h"
#include "gguf_int8_lanes.h"

namespace codedraft::gguf {

constexpr int64_t kQ8Tile = 32;  // weight rows kept hot while every chunk of x rows passes

// x (T, K) quantized per run of `run` values (32 or 256).
struct ActivationCodes {
  int64_t K = 0, runs = 0;            // width; runs a row
  std::vector<int8_t> q;              // (T, K)
  std::vector<float> d, s;            // (T, runs): each run's scale, and scale * sum of its codes
  std::vector<int16_t> sums16, sums32;  // (T, K / 16), (T, K / 32): sums of codes (K-quants only)
};

// At least this many values of x a thread when a call's rows are quantized side by side (fewer,
// and waking a thread costs more than it saves).
constexpr int64_t kQuantizeGrain = 32768;

// x's rows `ldx` floats apart (K when contiguous). Rows are quantized side by side on the threads
// (each row alone, so the codes do not depend on how the rows are split): a prompt's quantization
// had run on one thread before the product's parallel part.
inline ActivationCodes quantize_activation_rows(const float* x, int64_t T, int64_t K, int64_t run, int64_t ldx = -1) {
  ActivationCodes a;
  a.K = K, a.runs = K / run;
  if (ldx < 0) ldx = K;
  a.q.resize(T * K), a.d.resize(T * a.runs), a.s.resize(T * a.runs);
  if (run == 256) a.sums16.resize(T * K / 16), a.sums32.resize(T * K / 32);
  at::parallel_for(0, T, std::max<int64_t>(1, kQuantizeGrain / std::max<int64_t>(K, 1)), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t r = 0; r < a.runs; ++r) {
        const int64_t i = t * a.runs + r;
        int sum = 0;
        a.d[i] = quantize_activations(x + t * ldx + r * run, static_cast<int>(run), a.q.data() + i * run, &sum);
        a.s[i] = a.d[i] * static_cast<float>(sum);
      }
      if (run != 256) continue;
      for (int64_t i = t * K / 16; i < (t + 1) * K / 16; ++i) {
        int sum = 0;
        for (int j = 0; j < 16; ++j) sum += a.q[i * 16 + j];
        a.sums16[i] = static_cast<int16_t>(sum);
      }
      for (int64_t i = t * K / 32; i < (t + 1) * K / 32; ++i) {
        a.sums32[i] = static_cast<int16_t>(a.sums16[2 * i] + a.sums16[2 * i + 1]);
      }
    }
  });
  return a;
}

// y[r, n] for rows t0 .. t0 + R of x and weight rows n0 <= n < n1: the K-quants.
template <class B, int R>
void super_block_rows(const ActivationCodes& a, int64_t t0, const BlockRows& w, int64_t n0, int64_t n1, float* y,
                      int64_t ldy) {
  const int64_t supers = a.runs;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* row = w.data + n * w.row_bytes;
    Lanes acc[R];
    float offset[R];
    for (int r = 0; r < R; ++r) acc[r] = zero(), offset[r] = 0.f;
    for (int64_t sb = 0; sb < supers; ++sb) {
      const uint8_t* block = row + sb * B::kBytes;
      const int8_t* xq[R];
      const int16_t *sums16[R], *sums32[R];
      for (int r = 0; r < R; ++r) {
        xq[r] = a.q.data() + (t0 + r) * a.K + sb * 256;
        sums16[r] = a.sums16.data() + ((t0 + r) * supers + sb) * 16;
        sums32[r] = a.sums32.data() + ((t0 + r) * supers + sb) * 8;
      }
      Ints lanes[R];
      int minimums[R];
      super_block_lanes<B, R>(block, xq, sums16, sums32, lanes, minimums);
      const float d = std::is_same_v<B, Q6_K> ? half_at(block + 208) : half_at(block);
      for (int r = 0; r < R; ++r) {
        const float dx = a.d[(t0 + r) * supers + sb];
        acc[r] = add(acc[r], mul(to_lanes(lanes[r]), splat(d * dx)));
        if constexpr (!std::is_same_v<B, Q6_K>) {
          offset[r] = offset[r] + static_cast<float>(minimums[r]) * (half_at(block + 2) * dx);
        }
      }
    }
    for (int r = 0; r < R; ++r) y[r * ldy + n] = sum(acc[r]) - offset[r];
  }
}

// The same for the 32-weight types.
template <class B, int R>
void block_rows_q8(const ActivationCodes& a, int64_t t0, const BlockRows& w, int64_t n0, int64_t n1, float* y,
                   int64_t ldy) {
  const int64_t blocks = a.runs;
  // Block b of the row into acc (R rows of x), offset: the minimums' terms.
  const auto add_block = [&](const uint8_t* row, int64_t b, Lanes acc[R], float offset[R]) {
    const uint8_t* block = row + b * B::kBytes;
    float factor[2], minimum;
    B::factors(block, 0, factor, minimum);
#ifdef CODEDRAFT_AVX2
    const Codes32 c = codes32<B>(block, 0);
#else
    int8_t c[32];
    B::codes(block, 0, c);
#endif
    for (int r = 0; r < R; ++r) {
      const int64_t at = (t0 + r) * blocks + b;
#ifdef CODEDRAFT_AVX2
      const Ints lanes = lane_products<B>(c, a.q.data() + at * 32);
#else
      const Ints lanes = lanes_of(c, a.q.data() + at * 32);
#endif
      acc[r] = add(acc[r], mul(to_lanes(lanes), splat(factor[0] * a.d[at])));
      if constexpr (adds<B>()) offset[r] = offset[r] + minimum * a.s[at];
    }
  };
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* row = w.data + n * w.row_bytes;
    Lanes even[R], odd[R];  // even and odd blocks: two chains of float adds, not one twice as long
    float offset[R];
    for (int r = 0; r < R; ++r) even[r] = odd[r] = zero(), offset[r] = 0.f;
    for (int64_t b = 0; b + 1 < blocks; b += 2) {
      add_block(row, b, even, offset);
      add_block(row, b + 1, odd, offset);
    }
    if (blocks % 2) add_block(row, blocks - 1, even, offset);
    for (int r = 0; r < R; ++r) y[r * ldy + n] = sum(add(even[r], odd[r])) + offset[r];
  }
}

template <class B, int R>
void q8_rows(const ActivationCodes& a, int64_t t0, const BlockRows& w, int64_t n0, int64_t n1, float* y,
             int64_t ldy) {
  if constexpr (k_quant<B>()) {
    super_block_rows<B, R>(a, t0, w, n0, n1, y, ldy);
  } else {
    block_rows_q8<B, R>(a, t0, w, n0, n1, y, ldy);
  }
}

// x (T, K) float32, quantized to 8 bits, times the (N, K) weights in `blocks` transposed: (T, N).
inline at::Tensor int8_linear(const at::Tensor& x_in, const at::Tensor& blocks, int64_t qtype) {
  TORCH_CHECK(x_in.dim() == 2 && x_in.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "x must be (T, in) float32 on the CPU");
  const at::Tensor x = x_in.contiguous();
  const int64_t T = x.size(0), K = x.size(1), N = blocks.size(0);
  at::Tensor y = at::empty({T, N}, x.options());
  with_type(qtype, [&](auto tag) {
    using B = decltype(tag);
    const BlockRows w = block_rows<B>(blocks, K);
    const ActivationCodes a = quantize_activation_rows(x.data_ptr<float>(), T, K, B::kValues);
    float* yp = y.data_ptr<float>();
    at::parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
      for (int64_t first = n0; first < n1; first += kQ8Tile) {
        const int64_t last = std::min(n1, first + kQ8Tile);
        for (int64_t t0 = 0; t0 < T; t0 += kFewRows) {
          float* yr = yp + t0 * N;
          switch (std::min(kFewRows, T - t0)) {
            case 1: q8_rows<B, 1>(a, t0, w, first, last, yr, N); break;
            case 2: q8_rows<B, 2>(a, t0, w, first, last, yr, N); break;
            case 3: q8_rows<B, 3>(a, t0, w, first, last, yr, N); break;
            case 4: q8_rows<B, 4>(a, t0, w, first, last, yr, N); break;
            case 5: q8_rows<B, 5>(a, t0, w, first, last, yr, N); break;
            case 6: q8_rows<B, 6>(a, t0, w, first, last, yr, N); break;
            case 7: q8_rows<B, 7>(a, t0, w, first, last, yr, N); break;
            default: q8_rows<B, 8>(a, t0, w, first, last, yr, N); break;
          }
        }
      }
    });
  });
  return y;
}

}  // namespace codedraft::gguf
