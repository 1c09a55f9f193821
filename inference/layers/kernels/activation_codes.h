// The one rule by which the 8-bit-activation products (int8_products.h, gguf_int8_products.h) quantize
// a run of activations, as llama.cpp's Q8_0 / Q8_1 / Q8_K do: one scale d = max|x| / 127 for the
// run, codes q = round(x / d) with ties to even (x times the float32 reciprocal of d, then rounded),
// all codes 0 where the run is all zeros. |q| <= 127, so no code is -128.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace codedraft {

// x[0 .. n) into q[0 .. n); returns d, and the sum of the codes in *sum.
inline float quantize_activations(const float* x, int n, int8_t* q, int* sum) {
  float amax = 0.f;
  for (int e = 0; e < n; ++e) amax = std::max(amax, std::fabs(x[e]));
  const float d = amax / 127.f;
  const float inverse = d != 0.f ? 1.f / d : 0.f;
  int total = 0;
  for (int e = 0; e < n; ++e) {
    q[e] = static_cast<int8_t>(std::nearbyint(x[e] * inverse));
    total += q[e];
  }
  *sum = total;
  return d;
}

}  // namespace codedraft
