// The repacked layout of Q4_K, Q6_K, Q8_0 and Q5_0 rows (gguf_repacked_products.h reads it): eight
// weight rows' (super-)blocks interleaved; each Group<B> packs eight rows' blocks and unpacks one.
//
// A repacked matrix, uint8: N / 8 groups of eight rows, each its super-blocks in order, one of
// Group<B>::kBytes, then the N % 8 last rows as the file lays them out. Unpacking gives the file's
// bytes back. A group super-block, row r:
//   Q4_K (8 x 144 + 32 bytes: the scales and minimums unpacked to bytes)
//     0    d (float16) at 2r                   16   dmin (float16) at 2r
//     32   scale of sub-block s at 8s + r
//     96   minimums of sub-blocks 2p, 2p + 1 at 16p + 2r, 16p + 2r + 1
//     160  codes: 32 bytes for each (pair p of sub-blocks, lane l), the file's bytes
//          32p + 4l .. 32p + 4l + 3 at 4r (low nibbles: sub-block 2p, high: 2p + 1, as in the file)
//   Q6_K (8 x 210 bytes, the file's size)
//     0    d (float16) at 2r                   16   scale j (of 16 weights) at 8j + r
//     144  96 bytes for each (half h, lane l), in the order they are read (the hardware's prefetch
//          loses track of three interleaved runs): the file's qh[32h + 4l ..] at 4r, then its
//          ql[64h + 4l ..] at 32 + 4r and ql[64h + 32 + 4l ..] at 64 + 4r (low nibbles: sub-blocks
//          4h, 4h + 1; high: 4h + 2, 4h + 3, as in the file)
// A group block (32 weights), row r:
//   Q8_0 (8 x 34 bytes)  0  d (float16) at 2r    16  codes 4l .. 4l + 3 (lane l) at 32l + 4r
//   Q5_0 (8 x 22 bytes)  0  d (float16) at 2r    16  the 32 fifth bits at 4r, transposed: byte k's bit l
//          is the file's bit 4l + k (lane l's fifth bits are bit l of four bytes)
//                        48  the file's nibble bytes 4l .. 4l + 3 (low: lane l, high: lane l + 4) at 32l + 4r
#pragma once
#include "gguf_int8_products.h"

namespace codedraft::gguf {

constexpr int64_t kGroupRows = 8;

template <class B>
struct Group;

// pack and unpack for a layout that only moves byte runs: G::runs(r, f) calls f(group offset, block
// offset, bytes) for each run of row r.
template <class G>
struct CopiedRuns {
  static void pack(const uint8_t* const blocks[8], uint8_t* out) {
    for (int r = 0; r < 8; ++r) G::runs(r, [&](int g, int b, int n) { std::memcpy(out + g, blocks[r] + b, n); });
  }
  static void unpack(const uint8_t* group, int r, uint8_t* block) {
    G::runs(r, [&](int g, int b, int n) { std::memcpy(block + b, group + g, n); });
  }
};

template <>
struct Group<Q4_K> {
  static constexpr int64_t kBytes = 8 * Q4_K::kBytes + 32;
  // Eight rows' block sb (blocks[r]) into one group super-block at out.
  static void pack(const uint8_t* const blocks[8], uint8_t* out) {
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
  // Row r's block back from a group super-block: the file's bytes.
  static void unpack(const uint8_t* group, int r, uint8_t* b) {
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
};

template <>
struct Group<Q6_K> : CopiedRuns<Group<Q6_K>> {
  static constexpr int64_t kBytes = 8 * Q6_K::kBytes;
  // f(at in the group, at in the block, bytes) for each run of row r's bytes (ql 0, qh 128, scales 192, d 208).
  template <class F>
  static void runs(int r, F&& f) {
    f(2 * r, 208, 2);
    for (int j = 0; j < 16; ++j) f(16 + 8 * j + r, 192 + j, 1);
    for (int h = 0; h < 2; ++h) {
      for (int l = 0; l < 8; ++l) {
        const int at = 144 + (8 * h + l) * 96 + 4 * r;
        f(at, 128 + 32 * h + 4 * l, 4);
        f(at + 32, 64 * h + 4 * l, 4);
        f(at + 64, 64 * h + 32 + 4 * l, 4);
      }
    }
  }
};

template <>
struct Group<Q8_0> : CopiedRuns<Group<Q8_0>> {
  static constexpr int64_t kBytes = 8 * Q8_0::kBytes;
  template <class F>
  static void runs(int r, F&& f) {
    f(2 * r, 0, 2);
    for (int l = 0; l < 8; ++l) f(16 + 32 * l + 4 * r, 2 + 4 * l, 4);
  }
};

template <>
struct Group<Q5_0> {
  static constexpr int64_t kBytes = 8 * Q5_0::kBytes;
  // The file's fifth bits (bit j: weight j) of row r at 16 + 4r transposed: byte k's bit l = bit 4l + k.
  static void pack(const uint8_t* const blocks[8], uint8_t* out) {
    for (int r = 0; r < 8; ++r) {
      const uint8_t* b = blocks[r];
      std::memcpy(out + 2 * r, b, 2);
      for (int k = 0; k < 4; ++k) {
        uint8_t byte = 0;
        for (int l = 0; l < 8; ++l) byte |= static_cast<uint8_t>(bit_at(b + 2, 4 * l + k) << l);
        out[16 + 4 * r + k] = byte;
      }
      for (int l = 0; l < 4; ++l) std::memcpy(out + 48 + 32 * l + 4 * r, b + 6 + 4 * l, 4);
    }
  }
  static void unpack(const uint8_t* group, int r, uint8_t* b) {
    std::memcpy(b, group + 2 * r, 2);
    uint32_t bits = 0;
    for (int k = 0; k < 4; ++k) {
      for (int l = 0; l < 8; ++l) bits |= static_cast<uint32_t>((group[16 + 4 * r + k] >> l) & 1) << (4 * l + k);
    }
    std::memcpy(b + 2, &bits, 4);
    for (int l = 0; l < 4; ++l) std::memcpy(b + 6 + 4 * l, group + 48 + 32 * l + 4 * r, 4);
  }
};

template <class B>
constexpr bool repacks() {
  return std::is_same_v<B, Q4_K> || std::is_same_v<B, Q6_K> || std::is_same_v<B, Q8_0> || std::is_same_v<B, Q5_0>;
}

// `blocks`: a row's blocks (super-blocks for the K-quants).
template <class B>
int64_t repacked_bytes(int64_t rows, int64_t blocks) {
  return rows / kGroupRows * blocks * Group<B>::kBytes + rows % kGroupRows * blocks * B::kBytes;
}

// f(tag) for the types that repack.
template <class F>
auto with_repacked_type(int64_t qtype, F&& f) {
  switch (qtype) {
    case 6: return f(Q5_0{});
    case 8: return f(Q8_0{});
    case 12: return f(Q4_K{});
    case 14: return f(Q6_K{});
    default: TORCH_CHECK(false, "only Q5_0, Q8_0, Q4_K and Q6_K rows are repacked, not GGML block type ", qtype);
  }
}

template <class B>
void check_repacked(const at::Tensor& packed, int64_t rows, int64_t width) {
  TORCH_CHECK(packed.dim() == 1 && packed.scalar_type() == at::kByte && packed.is_contiguous() && packed.device().is_cpu(),
              "repacked rows must be 1-D contiguous uint8 on the CPU");
  TORCH_CHECK(width % B::kValues == 0 && packed.numel() == repacked_bytes<B>(rows, width / B::kValues), "repacked rows of ",
              packed.numel(), " bytes do not hold ", rows, " rows of ", width, " weights");
}

}  // namespace codedraft::gguf
