// y = x W^T with W in Q4_1 or Q8_0 blocks and x quantized to 8 bits per block of 32, as llama.cpp's
// Q4_1 x Q8_1 and Q8_0 x Q8_0 products: each row of x, each block alone: dx = max|x| / 127,
// q = round(x / dx) (ties to even), s = dx * sum(q). Then y = sum over blocks of d_w dx (q_w . q_x)
// (+ m_w s for Q4_1), the code products in integers (exact), the rest in float32. Every row of
// every call goes through the same arithmetic: a row's quantization and its order of float
// operations depend on nothing but the row, so an output row is bit-identical alone or among any
// other rows, in a decode step, a verification or a prompt. The integer block sums are the same with
// AVX-512 VNNI, AVX2 and the plain loops, and so are the outputs.
//
// Layout (packed by inference/layers/int8_activation_linear.py, the same rule): a row's blocks are
// cut into groups of 8 blocks, then one of 4, 2, 1 for the rest. A group of G blocks fills 8 lanes
// of 32 bits, L = 8 / G lanes per block, in G steps: at step k, lane j holds the 4 codes of chunk
// (j % L) * G + k (codes 4c .. 4c + 3) of block j / L, so one u8 x s8 dot product per step sums
// each lane's codes and lane j ends up with 1 / L of block j / L. Weights: Q4_1's steps 2t and
// 2t + 1 share 32 bytes (low and high nibble; a lone step leaves the high nibbles 0), Q8_0's take 32
// signed bytes each; scales and Q4_1's minimums per lane (float16; a minimum only in its block's
// first lane, 0 in the others). x, once per call: the steps' bytes (K bytes a row), and per lane
// dx, s (float32) and the lane's sum of codes.
#pragma once
#include "activation_codes.h"
#include "vector_math.h"

namespace codedraft {

constexpr int64_t kLanes = 8;
constexpr int kQ8Rows = 8;          // rows of x sharing one unpacking of the weights
constexpr int64_t kQ8TileRows = 32;  // weight rows kept hot in L1 while every row chunk passes

struct Group {
  int G;              // blocks
  int64_t block;      // first block
  int64_t bytes;      // offset of its weight bytes in a row
  int64_t lane;       // offset of its lanes in a row
};

template <class F>
std::vector<Group> groups_of(int64_t blocks, int64_t* row_bytes) {
  std::vector<Group> out;
  int64_t b = 0, bytes = 0;
  for (int G : {8, 4, 2, 1}) {
    while (blocks - b >= G) {
      out.push_back({G, b, bytes, static_cast<int64_t>(out.size()) * kLanes});
      b += G;
      bytes += F::bytes(G);
    }
  }
  *row_bytes = bytes;
  return out;
}

// T rows of x (T, K) into q (T, K) int8 laid out in steps; per lane (T, lanes): dx, s and the
// lane's sum of codes xs.
inline void quantize_rows(const float* x, int64_t T, int64_t K, const std::vector<Group>& groups, int8_t* q,
                          float* dx, float* s, int32_t* xs) {
  const int64_t lanes = static_cast<int64_t>(groups.size()) * kLanes;
  for (int64_t t = 0; t < T; ++t) {
    for (const Group& g : groups) {
      const int L = static_cast<int>(kLanes) / g.G;
      for (int i = 0; i < g.G; ++i) {
        const int64_t block = g.block + i;
        int8_t codes[kBlock];
        int sum = 0;
        const float d = quantize_activations(x + t * K + block * kBlock, kBlock, codes, &sum);
        for (int l = 0; l < L; ++l) {
          const int lane = i * L + l;
          dx[t * lanes + g.lane + lane] = d;
          s[t * lanes + g.lane + lane] = d * static_cast<float>(sum);
          int32_t& lane_sum = xs[t * lanes + g.lane + lane];
          lane_sum = 0;
          for (int k = 0; k < g.G; ++k) {
            const int chunk = l * g.G + k;
            for (int e = 4 * chunk; e < 4 * chunk + 4; ++e) lane_sum += codes[e];
            std::copy(codes + 4 * chunk, codes + 4 * chunk + 4, q + t * K + g.block * kBlock + 32 * k + 4 * lane);
          }
        }
      }
    }
  }
}

struct Packed {
  const uint8_t* q;
  const at::Half* d;
  const at::Half* m;  // nullptr: no minimums (Q8_0)
  int64_t row_bytes, lanes;
};

// Q4_1's codes: steps 2t and 2t + 1 share 32 bytes (low and high nibble); with minimums.
struct Nibbles {
  static constexpr int64_t bytes(int G) { return 32 * ((G + 1) / 2); }
  static int code(const uint8_t* group, int k, int byte) { return (group[32 * (k / 2) + byte] >> (4 * (k % 2))) & 0x0F; }
#ifdef CODEDRAFT_AVX2
  template <int G>
  static void unpack(const uint8_t* w, __m256i W[G]) {
    const __m256i low = _mm256_set1_epi8(0x0F);
    for (int t = 0; t < (G + 1) / 2; ++t) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * t));
      W[2 * t] = _mm256_and_si256(v, low);
      if (2 * t + 1 < G) W[2 * t + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
    }
  }

  // Lane j: the sum over the G steps of codes x bytes 4j .. 4j + 3 (int32, exact).
  template <int G>
  static __m256i lane_sums(const __m256i W[G], const int8_t* x, const int32_t*) {
    const auto load = [x](int k) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * k)); };
#ifdef CODEDRAFT_VNNI
    __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();  // two chains: latency
    for (int k = 0; k < G; ++k) {
      if (k % 2 == 0) {
        even = _mm256_dpbusd_epi32(even, W[k], load(k));
      } else {
        odd = _mm256_dpbusd_epi32(odd, W[k], load(k));
      }
    }
    return _mm256_add_epi32(even, odd);
#else
    // Pairs of 15 x 127 summed over 8 steps stay below 2^15: no saturation in 16 bits.
    __m256i pairs = _mm256_maddubs_epi16(W[0], load(0));
    for (int k = 1; k < G; ++k) pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(W[k], load(k)));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
#endif
  }
#endif
};

// Q8_0's codes: signed bytes, 32 a step; no minimums.
struct Bytes {
  static constexpr int64_t bytes(int G) { return 32 * G; }
  static int code(const uint8_t* group, int k, int byte) { return static_cast<int8_t>(group[32 * k + byte]); }
#ifdef CODEDRAFT_AVX2
  template <int G>
  static void unpack(const uint8_t* w, __m256i W[G]) {
    for (int k = 0; k < G; ++k) {
      W[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32 * k));
#ifdef CODEDRAFT_VNNI
      W[k] = _mm256_xor_si256(W[k], _mm256_set1_epi8(static_cast<char>(0x80)));  // w + 128, unsigned
#endif
    }
  }

  // As Nibbles::lane_sums; xsums: each lane's sum of x codes, for the 128 added to every weight.
  template <int G>
  static __m256i lane_sums(const __m256i W[G], const int8_t* x, const int32_t* xsums) {
    const auto load = [x](int k) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * k)); };
#ifdef CODEDRAFT_VNNI
    __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
    for (int k = 0; k < G; ++k) {
      if (k % 2 == 0) {
        even = _mm256_dpbusd_epi32(even, W[k], load(k));
      } else {
        odd = _mm256_dpbusd_epi32(odd, W[k], load(k));
      }
    }
    const __m256i offset = _mm256_slli_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xsums)), 7);
    return _mm256_sub_epi32(_mm256_add_epi32(even, odd), offset);
#else
    // |w| x (x with w's sign): products of 127 x 127, two to a 16-bit pair, widened every step.
    __m256i sums = _mm256_setzero_si256();
    for (int k = 0; k < G; ++k) {
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(W[k]), _mm256_sign_epi8(load(k), W[k]));
      sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
    }
    return sums;
#endif
  }
#endif
};

#ifdef CODEDRAFT_AVX2
template <class F, int G, int R>
inline void group_step(const Group& g, const uint8_t* wq, const at::Half* wd, const at::Half* wm, const int8_t* xq,
                       const float* dx, const float* s, const int32_t* xs, int64_t K, int64_t lanes, __m256 acc[R]) {
  __m256i W[G];
  F::template unpack<G>(wq + g.bytes, W);
  const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wd + g.lane)));
  const __m256 m = wm == nullptr ? _mm256_setzero_ps()
                                 : _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wm + g.lane)));
  for (int r = 0; r < R; ++r) {
    const __m256i sums = F::template lane_sums<G>(W, xq + r * K + g.block * kBlock, xs + r * lanes + g.lane);
    const __m256 scale = _mm256_mul_ps(d, _mm256_loadu_ps(dx + r * lanes + g.lane));
    acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, acc[r]);
    if (wm != nullptr) acc[r] = _mm256_fmadd_ps(m, _mm256_loadu_ps(s + r * lanes + g.lane), acc[r]);
  }
}
#else
// The same lanes and float operations in plain loops (std::fma rounds once, as the FMA instruction).
template <class F, int G, int R>
inline void group_step(const Group& g, const uint8_t* wq, const at::Half* wd, const at::Half* wm, const int8_t* xq,
                       const float* dx, const float* s, const int32_t*, int64_t K, int64_t lanes,
                       float acc[R][kLanes]) {
  for (int r = 0; r < R; ++r) {
    const int8_t* x = xq + r * K + g.block * kBlock;
    for (int j = 0; j < kLanes; ++j) {
      int sum = 0;
      for (int k = 0; k < G; ++k) {
        for (int i = 0; i < 4; ++i) sum += F::code(wq + g.bytes, k, 4 * j + i) * x[32 * k + 4 * j + i];
      }
      const float scale = to_float(wd + g.lane + j) * dx[r * lanes + g.lane + j];
      acc[r][j] = std::fma(static_cast<float>(sum), scale, acc[r][j]);
      if (wm != nullptr) acc[r][j] = std::fma(to_float(wm + g.lane + j), s[r * lanes + g.lane + j], acc[r][j]);
    }
  }
}

inline float horizontal_sum(const float a[kLanes]) {  // horizontal_sum's order on 8 lanes
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}
#endif

// y[r, n] for rows r < R of the quantized x and weight rows n0 <= n < n1.
template <class F, int R>
void q8_rows_times_weights(const int8_t* xq, const float* dx, const float* s, const int32_t* xs, int64_t K,
                           const std::vector<Group>& groups, const Packed& w, int64_t n0, int64_t n1, float* y,
                           int64_t ldy) {
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* wq = w.q + n * w.row_bytes;
    const at::Half* wd = w.d + n * w.lanes;
    const at::Half* wm = w.m == nullptr ? nullptr : w.m + n * w.lanes;
#ifdef CODEDRAFT_AVX2
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
#else
    float acc[R][kLanes] = {};
#endif
    for (const Group& g : groups) {
      switch (g.G) {
        case 8: group_step<F, 8, R>(g, wq, wd, wm, xq, dx, s, xs, K, w.lanes, acc); break;
        case 4: group_step<F, 4, R>(g, wq, wd, wm, xq, dx, s, xs, K, w.lanes, acc); break;
        case 2: group_step<F, 2, R>(g, wq, wd, wm, xq, dx, s, xs, K, w.lanes, acc); break;
        default: group_step<F, 1, R>(g, wq, wd, wm, xq, dx, s, xs, K, w.lanes, acc); break;
      }
    }
    for (int r = 0; r < R; ++r) y[r * ldy + n] = horizontal_sum(acc[r]);
  }
}

// y = x W^T for packed blocks of format F (Nibbles: Q4_1 with minimums m; Bytes: Q8_0, m absent).
template <class F>
at::Tensor int8_product(const at::Tensor& x_in, const at::Tensor& q, const at::Tensor& d,
                        const std::optional<at::Tensor>& m) {
  TORCH_CHECK(x_in.dim() == 2 && x_in.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "x must be (T, in) float32 on the CPU");
  const at::Tensor x = x_in.contiguous();
  const int64_t T = x.size(0), K = x.size(1), N = q.size(0);
  TORCH_CHECK(K % kBlock == 0, "an input of width ", K, " is not whole blocks of 32");
  int64_t row_bytes = 0;
  const std::vector<Group> groups = groups_of<F>(K / kBlock, &row_bytes);
  const int64_t lanes = static_cast<int64_t>(groups.size()) * kLanes;
  TORCH_CHECK(q.dim() == 2 && q.scalar_type() == at::kByte && q.is_contiguous(), "codes must be (out, bytes) uint8");
  TORCH_CHECK(d.scalar_type() == at::kHalf && d.is_contiguous(), "lane scales must be float16");
  TORCH_CHECK(q.size(1) == row_bytes && d.numel() == N * lanes, "packed blocks of shape ", q.sizes(), " and ",
              d.sizes(), " do not take an input of width ", K);
  if (m.has_value()) {
    TORCH_CHECK(m->scalar_type() == at::kHalf && m->is_contiguous() && m->numel() == N * lanes,
                "lane minimums must be float16, as many as the scales");
  }
  std::vector<int8_t> xq(T * K);
  std::vector<float> dx(T * lanes), s(T * lanes);
  std::vector<int32_t> xs(T * lanes);
  quantize_rows(x.data_ptr<float>(), T, K, groups, xq.data(), dx.data(), s.data(), xs.data());
  at::Tensor y = at::empty({T, N}, x.options());
  const Packed w{q.data_ptr<uint8_t>(), d.data_ptr<at::Half>(), m.has_value() ? m->data_ptr<at::Half>() : nullptr,
                 row_bytes, lanes};
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, N, 16, [&](int64_t n0, int64_t n1) {
    for (int64_t a = n0; a < n1; a += kQ8TileRows) {
      const int64_t b = std::min(n1, a + kQ8TileRows);
      for (int64_t t0 = 0; t0 < T; t0 += kQ8Rows) {
        const int8_t* xr = xq.data() + t0 * K;
        const float* dr = dx.data() + t0 * lanes;
        const float* sr = s.data() + t0 * lanes;
        const int32_t* cr = xs.data() + t0 * lanes;
        float* yr = yp + t0 * N;
        switch (std::min<int64_t>(kQ8Rows, T - t0)) {
          case 1: q8_rows_times_weights<F, 1>(xr, dr, sr, cr, K, groups, w, a, b, yr, N); break;
          case 2: q8_rows_times_weights<F, 2>(xr, dr, sr, cr, K, groups, w, a, b, yr, N); break;
          case 3: q8_rows_times_weights<F, 3>(xr, dr, sr, cr, K, groups, w, a, b, yr, N); break;
          case 4: q8_rows_times_weights<F, 4>(xr, dr, sr, cr, K, groups, w, a, b, yr, N); break;
          case 5: q8_rows_times_weights<F, 5>(xr, dr, sr, cr, K, groups, w, a, b, yr, N); break;
          case 6: q8_rows_times_weights<F, 6>(xr, dr, sr, cr, K, groups, w, a, b, yr, N); break;
          case 7: q8_rows_times_weights<F, 7>(xr, dr, sr, cr, K, groups, w, a, b, yr, N); break;
          default: q8_rows_times_weights<F, 8>(xr, dr, sr, cr, K, groups, w, a, b, yr, N); break;
        }
      }
    }
  });
  return y;
}
}  // namespace codedraft
