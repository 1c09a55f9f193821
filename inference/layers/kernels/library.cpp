// The CPU kernels of the q4_1, q4_1_q8, native and native_q8 weights forms (inference/layers/block_linear.py,
// int8_activation_linear.py, norm.py, attention.py), registered as torch.ops.codedraft_cpu. Built and loaded by inference/layers/cpu_kernels.py.
#include <torch/library.h>

#include "attention.h"
#include "block_products.h"
#include "gguf_int8_products.h"
#include "gguf_repacked_products.h"
#include "gguf_products.h"
#include "int8_products.h"

namespace codedraft {
namespace {

at::Tensor q4_1_linear(const at::Tensor& x, const at::Tensor& q, const at::Tensor& d, const at::Tensor& m,
                       int64_t few) {
  return linear<Q4_1>(x, q, d, m, few);
}

at::Tensor q4_1_q8_linear(const at::Tensor& x, const at::Tensor& q, const at::Tensor& d, const at::Tensor& m,
                          int64_t few) {
  return int8_product<Nibbles>(x, q, d, m);  // one path for every number of rows: `few` only keeps the schema
}

at::Tensor q8_0_q8_linear(const at::Tensor& x, const at::Tensor& q, const at::Tensor& d) {
  return int8_product<Bytes>(x, q, d, std::nullopt);
}

at::Tensor q8_0_linear(const at::Tensor& x, const at::Tensor& q, const at::Tensor& d, int64_t few) {
  return linear<Q8_0>(x, q, d, std::nullopt, few);
}

// The native weights form: x times weights in a GGUF block type (ggml's enum `qtype`), its blocks
// as they lie in the file (gguf_products.h).
at::Tensor gguf_linear(const at::Tensor& x, const at::Tensor& blocks, int64_t qtype, int64_t few) {
  return gguf::linear(x, blocks, qtype, few);
}

// The native_q8 weights form: the same blocks times x quantized to 8 bits per call (gguf_int8_products.h).
at::Tensor gguf_q8_linear(const at::Tensor& x, const at::Tensor& blocks, int64_t qtype) {
  return gguf::int8_linear(x, blocks, qtype);
}

// The same products on Q4_K / Q6_K / Q8_0 / Q5_0 rows repacked at load (gguf_repacked_products.h): the same outputs, bit for bit.
at::Tensor gguf_q8_linear_repacked(const at::Tensor& x, const at::Tensor& packed, int64_t qtype, int64_t rows) {
  return gguf::repacked_int8_linear(x, packed, qtype, rows);
}

// The same into columns first .. first + rows of out: the parts of a concatenated product, side by side.
void gguf_q8_linear_repacked_into(const at::Tensor& x, const at::Tensor& packed, int64_t qtype, int64_t rows,
                                  const at::Tensor& out, int64_t first) {
  gguf::repacked_int8_linear_into(x, packed, qtype, rows, out, first);
}

at::Tensor gguf_q8_repack(const at::Tensor& blocks, int64_t qtype) { return gguf::repack(blocks, qtype); }

at::Tensor gguf_q8_unpack(const at::Tensor& packed, int64_t qtype, int64_t rows, int64_t width) {
  return gguf::unpack(packed, qtype, rows, width);
}

at::Tensor gguf_dequantize_repacked(const at::Tensor& packed, const at::Tensor& index, int64_t qtype, int64_t rows,
                                    int64_t width) {
  return gguf::dequantize_repacked(packed, index, qtype, rows, width);
}

at::Tensor gguf_dequantize(const at::Tensor& blocks, const at::Tensor& rows, int64_t qtype, int64_t width) {
  return gguf::dequantize(blocks, rows, qtype, width);
}

// paged_attention: `attend` for q (T, H, D), over the last `window` positions where window > 0; returns (T, H, D).
at::Tensor paged_attention(const at::Tensor& q_in, const at::Tensor& k_cache, const at::Tensor& v_cache,
                           const at::Tensor& block_table, int64_t context_len, double scale, int64_t window) {
  TORCH_CHECK(window >= 0, "window must be 0 (none) or positive");
  TORCH_CHECK(q_in.dim() == 3 && q_in.scalar_type() == at::kFloat, "q must be (T, H, D) float32");
  const Pool pool = pool_of(k_cache, v_cache);
  TORCH_CHECK(q_in.size(2) == pool.head_dim, "q and the pool disagree on the head size");
  const at::Tensor q = q_in.contiguous();
  at::Tensor out = at::empty_like(q);
  attend(q.data_ptr<float>(), q.size(0), q.size(1), pool, block_table.contiguous(), context_len, scale,
         out.data_ptr<float>(), window);
  return out;
}

// A whole attention step after the q|k|v product, for one sequence's few new rows: qkv (T, H + 2 KvH,
// D) is rotated (q and k heads, rotate-half RoPE by cos, sin (T, D)), its K and V are written to the
// pool at `slots` (T,), and the rows attend as in `attend`. Returns (T, H * D).
at::Tensor rotate_store_attend(const at::Tensor& qkv_in, const at::Tensor& cos_in, const at::Tensor& sin_in,
                               const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& slots_in,
                               const at::Tensor& block_table, int64_t context_len, int64_t heads, double scale) {
  const Pool pool = pool_of(k_cache, v_cache);
  const at::Tensor qkv = qkv_in.contiguous(), cos = cos_in.contiguous(), sin = sin_in.contiguous();
  const at::Tensor slots = slots_in.contiguous();
  const int64_t T = qkv.size(0), KvH = pool.kv_heads, D = pool.head_dim, half = D / 2;
  TORCH_CHECK(qkv.dim() == 3 && qkv.scalar_type() == at::kFloat && qkv.size(1) == heads + 2 * KvH &&
                  qkv.size(2) == D && D % 2 == 0,
              "qkv must be (T, heads + 2 KvH, D) float32");
  TORCH_CHECK(cos.scalar_type() == at::kFloat && sin.scalar_type() == at::kFloat && cos.numel() == T * D &&
                  sin.numel() == T * D,
              "cos and sin must be (T, D) float32");
  TORCH_CHECK(slots.scalar_type() == at::kLong && slots.numel() == T, "slots must be (T,) int64");
  const float* src = qkv.data_ptr<float>();
  const int64_t* slot = slots.data_ptr<int64_t>();
  const int64_t head_stride = pool.blocks * pool.block_size * D;
  for (int64_t t = 0; t < T; ++t) {  // all checked before anything is written
    TORCH_CHECK(slot[t] >= 0 && slot[t] < pool.blocks * pool.block_size, "slot ", slot[t], " out of range");
  }
  at::Tensor q = at::empty({T, heads, D}, qkv.options());
  float* qp = q.data_ptr<float>();
  for (int64_t t = 0; t < T; ++t) {
    const float* c = cos.data_ptr<float>() + t * D;
    const float* s = sin.data_ptr<float>() + t * D;
    for (int64_t h = 0; h < heads + 2 * KvH; ++h) {
      const float* x = src + (t * (heads + 2 * KvH) + h) * D;
      float* dest;
      if (h < heads) {
        dest = qp + (t * heads + h) * D;
      } else if (h < heads + KvH) {
        dest = const_cast<float*>(pool.k) + (h - heads) * head_stride + slot[t] * D;
      } else {
        float* v = const_cast<float*>(pool.v) + (h - heads - KvH) * head_stride + slot[t] * D;
        std::copy(x, x + D, v);
        continue;
      }
      for (int64_t e = 0; e < half; ++e) {
        const float lo = x[e], hi = x[e + half];
        dest[e] = lo * c[e] + (-hi) * s[e];
        dest[e + half] = hi * c[e + half] + lo * s[e + half];
      }
    }
  }
  at::Tensor out = at::empty({T, heads * D}, qkv.options());
  attend(qp, T, heads, pool, block_table.contiguous(), context_len, scale, out.data_ptr<float>());
  return out;
}

// y = weight * x / sqrt(mean(x^2) + eps) over each row of x (T, D), in float32.
at::Tensor rms_norm(const at::Tensor& x_in, const at::Tensor& weight, double eps) {
  TORCH_CHECK(x_in.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "rms_norm takes float32 on the CPU");
  const at::Tensor x = x_in.contiguous();
  const int64_t D = x.size(-1), rows = D == 0 ? 0 : x.numel() / D;
  TORCH_CHECK(weight.numel() == D && weight.is_contiguous(), "weight must be (", D, ")");
  at::Tensor y = at::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* wp = weight.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = xp + r * D;
      float squares = 0.f;
      for (int64_t j = 0; j < D; ++j) squares += xr[j] * xr[j];
      const float inverse = 1.f / std::sqrt(squares / static_cast<float>(D) + static_cast<float>(eps));
      float* yr = yp + r * D;
      for (int64_t j = 0; j < D; ++j) yr[j] = wp[j] * (xr[j] * inverse);
    }
  });
  return y;
}

// One Llama decoder layer for a sequence's few new rows, its four products in Q4_1 blocks without
// biases (`weights`: the codes, scales and minimums of q|k|v, o, gate|up and down, in that order, as
// `Product` takes them: q4_1_linear, or q4_1_q8_linear with its packed layout):
//   h = hidden + o(rotate_store_attend(qkv(rms_norm(hidden))));  returns h + down(silu(gate) * up)
// of rms_norm(h). The same kernels and ATen operations as the layer's modules, in one call.
template <at::Tensor (*Product)(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t)>
at::Tensor decoder_layer(const at::Tensor& hidden, const at::Tensor& input_norm, const at::Tensor& post_norm,
                         double eps, at::TensorList weights, const at::Tensor& cos, const at::Tensor& sin,
                         const at::Tensor& k_cache, const at::Tensor& v_cache, const at::Tensor& slots,
                         const at::Tensor& block_table, int64_t context_len, int64_t heads, double scale,
                         int64_t few) {
  TORCH_CHECK(weights.size() == 12, "decoder_layer takes 4 x (codes, scales, minimums)");
  TORCH_CHECK(hidden.dim() == 2 && k_cache.dim() == 4, "hidden must be (T, hidden), the pool 4-D");
  const int64_t T = hidden.size(0), kv_heads = k_cache.size(0), head_dim = k_cache.size(3);
  const auto product = [&](const at::Tensor& x, size_t i) {
    return Product(x, weights[i], weights[i + 1], weights[i + 2], few);
  };
  const at::Tensor qkv = product(rms_norm(hidden, input_norm, eps), 0).view({T, heads + 2 * kv_heads, head_dim});
  const at::Tensor attended =
      rotate_store_attend(qkv, cos, sin, k_cache, v_cache, slots, block_table, context_len, heads, scale);
  const at::Tensor h = hidden + product(attended, 3);
  const at::Tensor gate_up = product(rms_norm(h, post_norm, eps), 6);
  const int64_t inner = gate_up.size(1) / 2;
  return h + product(at::silu(gate_up.narrow(1, 0, inner)) * gate_up.narrow(1, inner, inner), 9);
}

}  // namespace
}  // namespace codedraft

TORCH_LIBRARY(codedraft_cpu, lib) {
  lib.def("q4_1_linear(Tensor x, Tensor q, Tensor d, Tensor m, int few) -> Tensor", &codedraft::q4_1_linear);
  lib.def("q4_1_q8_linear(Tensor x, Tensor q, Tensor d, Tensor m, int few) -> Tensor", &codedraft::q4_1_q8_linear);
  lib.def("q8_0_q8_linear(Tensor x, Tensor q, Tensor d) -> Tensor", &codedraft::q8_0_q8_linear);
  lib.def("q8_0_linear(Tensor x, Tensor q, Tensor d, int few) -> Tensor", &codedraft::q8_0_linear);
  lib.def("gguf_linear(Tensor x, Tensor blocks, int qtype, int few) -> Tensor", &codedraft::gguf_linear);
  lib.def("gguf_q8_linear(Tensor x, Tensor blocks, int qtype) -> Tensor", &codedraft::gguf_q8_linear);
  lib.def("gguf_q8_linear_repacked(Tensor x, Tensor packed, int qtype, int rows) -> Tensor",
          &codedraft::gguf_q8_linear_repacked);
  lib.def("gguf_q8_linear_repacked_into(Tensor x, Tensor packed, int qtype, int rows, Tensor(a!) out, int first) -> ()",
          &codedraft::gguf_q8_linear_repacked_into);
  lib.def("gguf_q8_repack(Tensor blocks, int qtype) -> Tensor", &codedraft::gguf_q8_repack);
  lib.def("gguf_q8_unpack(Tensor packed, int qtype, int rows, int width) -> Tensor", &codedraft::gguf_q8_unpack);
  lib.def("gguf_dequantize_repacked(Tensor packed, Tensor index, int qtype, int rows, int width) -> Tensor",
          &codedraft::gguf_dequantize_repacked);
  lib.def("gguf_dequantize(Tensor blocks, Tensor rows, int qtype, int width) -> Tensor", &codedraft::gguf_dequantize);
  lib.def("rms_norm(Tensor x, Tensor weight, float eps) -> Tensor", &codedraft::rms_norm);
  lib.def("paged_attention(Tensor q, Tensor k_cache, Tensor v_cache, Tensor block_table, int context_len, "
          "float scale, int window=0) -> Tensor", &codedraft::paged_attention);
  lib.def("rotate_store_attend(Tensor qkv, Tensor cos, Tensor sin, Tensor(a!) k_cache, Tensor(b!) v_cache, "
          "Tensor slots, Tensor block_table, int context_len, int heads, float scale) -> Tensor",
          &codedraft::rotate_store_attend);
  lib.def("decoder_layer(Tensor hidden, Tensor input_norm, Tensor post_norm, float eps, Tensor[] weights, "
          "Tensor cos, Tensor sin, Tensor(a!) k_cache, Tensor(b!) v_cache, Tensor slots, Tensor block_table, "
          "int context_len, int heads, float scale, int few) -> Tensor",
          &codedraft::decoder_layer<codedraft::q4_1_linear>);
  lib.def("decoder_layer_q8(Tensor hidden, Tensor input_norm, Tensor post_norm, float eps, Tensor[] weights, "
          "Tensor cos, Tensor sin, Tensor(a!) k_cache, Tensor(b!) v_cache, Tensor slots, Tensor block_table, "
          "int context_len, int heads, float scale, int few) -> Tensor",
          &codedraft::decoder_layer<codedraft::q4_1_q8_linear>);
}
