// Q4_K, Q6_K, Q8_0 and Q5_0 rows repacked once at load for the 8-bit-activation products: eight weight
// rows' (super-)blocks interleaved, so that one pass over a super-block of x feeds the eight rows, a
// register holding one integer lane of each of them (llama.cpp's CPU repack of block_q4_Kx8 has the
// same idea). The arithmetic is gguf_int8_products.h's to the bit: per row and super-block the same
// eight integer lanes (lane l: the products of codes 4l .. 4l + 3 of every sub-block, times its
// scale; Q6_K's bias of 32 taken off lane l as there) and the same minimums' sum, then the same
// float32 operations in the same order, lane l of eight rows in one register; horizontal_sum's tree
// is then a sum of registers. Q8_0 and Q5_0 likewise: block_rows_q8's lanes, its even and odd float
// chains, its final add of a zero offset (a sum of -0.f comes out 0.f).
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
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>

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

// `bytes` of uint8 in their own mapping, in 2 MiB pages where the system gives them on request
// (transparent huge pages in `madvise` mode): a decode step streams the whole matrix, and with 4 KiB
// pages the hardware's prefetch stops at every page (one-row Q6_K products from DRAM ran at half
// the speed).
inline at::Tensor huge_page_bytes(int64_t bytes) {
  constexpr int64_t kHuge = int64_t{1} << 21;
  const int64_t size = std::max<int64_t>(bytes, 1) + kHuge;
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  TORCH_CHECK(base != MAP_FAILED, "could not map ", size, " bytes for repacked weights");
  const auto start = (reinterpret_cast<uintptr_t>(base) + kHuge - 1) & ~static_cast<uintptr_t>(kHuge - 1);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void*>(start), size - (start - reinterpret_cast<uintptr_t>(base)), MADV_HUGEPAGE);
#endif
  return at::from_blob(
      reinterpret_cast<void*>(start), {bytes}, [base, size](void*) { munmap(base, size); },
      at::TensorOptions().dtype(at::kByte));
}

// Whether [p, p + bytes) lies in one read-only mapping of a file (Linux's /proc/self/maps): a GGUF
// file's blocks, whose pages can be dropped and are read from the file again if touched.
inline bool in_read_only_file(const void* p, int64_t bytes) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return false;
  const auto start = reinterpret_cast<uintptr_t>(p), end = start + static_cast<uintptr_t>(bytes);
  bool found = false;
  char line[4096];
  while (!found && std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long low = 0, high = 0, inode = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s %*s %*s %lu", &low, &high, perms, &inode) == 4) {
      found = low <= start && end <= high && inode != 0 && perms[1] == '-';
    }
  }
  std::fclose(maps);
  return found;
}

// blocks (N, row bytes) -> the repacked layout (1-D). Blocks that lie in a read-only file mapping
// have their whole pages dropped from this process's memory as they are repacked (read again from
// the file if touched), so the two copies are never both resident: the peak stays near the file's
// size plus a slice.
inline at::Tensor repack(const at::Tensor& blocks, int64_t qtype) {
  return with_repacked_type(qtype, [&](auto tag) {
    using B = decltype(tag);
    TORCH_CHECK(blocks.dim() == 2 && blocks.size(1) % B::kBytes == 0, "blocks must be (rows, bytes) of whole blocks");
    const BlockRows w = block_rows<B>(blocks, blocks.size(1) / B::kBytes * B::kValues);
    const int64_t N = blocks.size(0), supers = w.row_bytes / B::kBytes, groups = N / kGroupRows;
    at::Tensor out = huge_page_bytes(repacked_bytes<B>(N, supers));
    uint8_t* o = out.data_ptr<uint8_t>();
    const int64_t page = sysconf(_SC_PAGESIZE);
    const auto source = reinterpret_cast<uintptr_t>(w.data);
    const bool release = N * w.row_bytes >= 4 * page && in_read_only_file(w.data, N * w.row_bytes);
    uintptr_t released = (source + page - 1) / page * page;  // pages before this one are dropped
    const auto release_to = [&](uintptr_t end) {
      end = end / page * page;
      if (!release || end <= released) return;
      madvise(reinterpret_cast<void*>(released), end - released, MADV_DONTNEED);
      released = end;
    };
    const int64_t slice = std::max<int64_t>(1, (int64_t{4} << 20) / (kGroupRows * w.row_bytes));  // ~4 MiB of groups
    for (int64_t first = 0; first < groups; first += slice) {
      const int64_t last = std::min(groups, first + slice);
      at::parallel_for(first, last, 1, [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          for (int64_t sb = 0; sb < supers; ++sb) {
            const uint8_t* b[8];
            for (int r = 0; r < 8; ++r) b[r] = w.data + (g * kGroupRows + r) * w.row_bytes + sb * B::kBytes;
            Group<B>::pack(b, o + (g * supers + sb) * Group<B>::kBytes);
          }
        }
      });
      release_to(source + last * kGroupRows * w.row_bytes);
    }
    std::memcpy(o + groups * supers * Group<B>::kBytes, w.data + groups * kGroupRows * w.row_bytes,
                (N - groups * kGroupRows) * w.row_bytes);
    release_to(source + N * w.row_bytes);
    return out;
  });
}

// Weight row n of a repacked matrix as the file's bytes (row bytes at out).
template <class B>
void unpack_row(const uint8_t* packed, int64_t rows, int64_t supers, int64_t n, uint8_t* out) {
  const int64_t groups = rows / kGroupRows, row_bytes = supers * B::kBytes;
  if (n >= groups * kGroupRows) {
    std::memcpy(out, packed + groups * supers * Group<B>::kBytes + (n - groups * kGroupRows) * row_bytes, row_bytes);
    return;
  }
  const uint8_t* group = packed + n / kGroupRows * supers * Group<B>::kBytes;
  for (int64_t sb = 0; sb < supers; ++sb) {
    Group<B>::unpack(group + sb * Group<B>::kBytes, static_cast<int>(n % kGroupRows), out + sb * B::kBytes);
  }
}

// The repacked layout -> the file's blocks (rows, row bytes), byte for byte.
inline at::Tensor unpack(const at::Tensor& packed, int64_t qtype, int64_t rows, int64_t width) {
  return with_repacked_type(qtype, [&](auto tag) {
    using B = decltype(tag);
    check_repacked<B>(packed, rows, width);
    const int64_t supers = width / B::kValues, row_bytes = supers * B::kBytes;
    at::Tensor out = at::empty({rows, row_bytes}, packed.options());
    for (int64_t n = 0; n < rows; ++n) {
      unpack_row<B>(packed.data_ptr<uint8_t>(), rows, supers, n, out.data_ptr<uint8_t>() + n * row_bytes);
    }
    return out;
  });
}

// Rows `index` (int64) of a repacked matrix as float32 (len(index), width): gguf_dequantize's values.
inline at::Tensor dequantize_repacked(const at::Tensor& packed, const at::Tensor& index_in, int64_t qtype, int64_t rows,
                                      int64_t width) {
  const at::Tensor index = index_in.contiguous();
  TORCH_CHECK(index.scalar_type() == at::kLong, "rows must be int64");
  const int64_t* at = index.data_ptr<int64_t>();
  for (int64_t i = 0; i < index.numel(); ++i) TORCH_CHECK(at[i] >= 0 && at[i] < rows, "row ", at[i], " out of range");
  at::Tensor out = at::empty({index.numel(), width}, at::TensorOptions().dtype(at::kFloat));
  with_repacked_type(qtype, [&](auto tag) {
    using B = decltype(tag);
    check_repacked<B>(packed, rows, width);
    const int64_t supers = width / B::kValues;
    std::vector<uint8_t> row(supers * B::kBytes);
    for (int64_t i = 0; i < index.numel(); ++i) {
      unpack_row<B>(packed.data_ptr<uint8_t>(), rows, supers, at[i], row.data());
      dequantize_row<B>(row.data(), width / 32, out.data_ptr<float>() + i * width);
    }
  });
  return out;
}

#ifdef CODEDRAFT_AVX2
inline __m256i broadcast32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}
// Eight bytes at p (one per row) as int16 words 2r, 2r + 1 = byte r (sign-extended if `is_signed`).
template <bool is_signed>
inline __m256i row_words(const uint8_t* p) {
  const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  const __m128i twice = _mm_unpacklo_epi8(bytes, bytes);
  return is_signed ? _mm256_cvtepi8_epi16(twice) : _mm256_cvtepu8_epi16(twice);
}

// Integer lanes of one group super-block g for the 256 x codes at x: lanes[l] holds lane l of the
// eight rows; for Q4_K also the eight rows' minimums' sums.
template <class B>
inline void group_lanes(const uint8_t* g, const int8_t* x, const int16_t* sums16, const int16_t* sums32,
                        __m256i lanes[8], __m256i& minimums) {
  const __m256i mask = _mm256_set1_epi8(0x0F);
  if constexpr (std::is_same_v<B, Q4_K>) {
    for (int l = 0; l < 8; ++l) lanes[l] = _mm256_setzero_si256();
    __m256i scale[8];
    for (int s = 0; s < 8; ++s) scale[s] = row_words<false>(g + 32 + 8 * s);
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {
        const __m256i v = load32(g + 160 + (8 * p + l) * 32);
        const __m256i low = _mm256_and_si256(v, mask), high = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
        const __m256i x0 = broadcast32(x + 64 * p + 4 * l), x1 = broadcast32(x + 64 * p + 32 + 4 * l);
        lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(low, x0), scale[2 * p]);
        lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(high, x1), scale[2 * p + 1]);
      }
    }
    minimums = _mm256_setzero_si256();
    for (int p = 0; p < 4; ++p) {
      const __m256i m = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 96 + 16 * p)));
      minimums = scaled_add(minimums, m, broadcast32(sums32 + 2 * p));
    }
  } else {
    const __m256i pair_mask = _mm256_set1_epi8(0x30);
    __m256i scale[16];  // scale j of the eight rows: sub-block s's are 2s (its lanes 0 .. 3) and 2s + 1
    for (int j = 0; j < 16; ++j) scale[j] = row_words<true>(g + 16 + 8 * j);
    for (int l = 0; l < 8; ++l) lanes[l] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {  // eight chains of integer adds, one a lane
        const uint8_t* run = g + 144 + (8 * h + l) * 96;
        const __m256i bits = load32(run);
        const __m256i top[4] = {_mm256_and_si256(_mm256_slli_epi16(bits, 4), pair_mask),
                                _mm256_and_si256(_mm256_slli_epi16(bits, 2), pair_mask),
                                _mm256_and_si256(bits, pair_mask),
                                _mm256_and_si256(_mm256_srli_epi16(bits, 2), pair_mask)};
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {  // chunk 2h + half: sub-blocks 4h + half (low), 4h + 2 + half (high)
          const __m256i v = load32(run + 32 + 32 * half);
          const int s0 = 4 * h + half, s1 = 4 * h + 2 + half;
          const __m256i c0 = _mm256_or_si256(_mm256_and_si256(v, mask), top[half]);
          const __m256i c1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), mask), top[2 + half]);
          lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(c0, broadcast32(x + 32 * s0 + 4 * l)), scale[2 * s0 + l / 4]);
          lanes[l] = scaled_add(lanes[l], _mm256_maddubs_epi16(c1, broadcast32(x + 32 * s1 + 4 * l)), scale[2 * s1 + l / 4]);
        }
      }
    }
    for (int l = 0; l < 8; ++l) {  // lane l loses 32 (sc_2l bs_2l + sc_2l+1 bs_2l+1)
      const __m128i two = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l))),
                                            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l + 1))));
      const __m256i bias = scaled_add(_mm256_setzero_si256(), _mm256_cvtepi8_epi16(two), broadcast32(sums16 + 2 * l));
      lanes[l] = _mm256_sub_epi32(lanes[l], _mm256_slli_epi32(bias, 5));
    }
  }
}

// y[0 .. 8) for row t of x and the group whose super-blocks start at `group`.
template <class B>
inline void group_row(const ActivationCodes& a, int64_t t, const uint8_t* group, float* y) {
  const int64_t supers = a.runs;
  __m256 acc[8];
  for (int l = 0; l < 8; ++l) acc[l] = _mm256_setzero_ps();
  __m256 offset = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < supers; ++sb) {
    const uint8_t* g = group + sb * Group<B>::kBytes;
    __m256i lanes[8], minimums;
    group_lanes<B>(g, a.q.data() + t * a.K + sb * 256, a.sums16.data() + (t * supers + sb) * 16,
                   a.sums32.data() + (t * supers + sb) * 8, lanes, minimums);
    const __m256 dx = _mm256_set1_ps(a.d[t * supers + sb]);
    const __m256 step = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g))), dx);
    for (int l = 0; l < 8; ++l) acc[l] = _mm256_add_ps(acc[l], _mm256_mul_ps(_mm256_cvtepi32_ps(lanes[l]), step));
    if constexpr (std::is_same_v<B, Q4_K>) {
      const __m256 min_step =
          _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16))), dx);
      offset = _mm256_add_ps(offset, _mm256_mul_ps(_mm256_cvtepi32_ps(minimums), min_step));
    }
  }
  __m256 quad[4];
  for (int i = 0; i < 4; ++i) quad[i] = _mm256_add_ps(acc[i], acc[i + 4]);
  const __m256 total = _mm256_add_ps(_mm256_add_ps(quad[0], quad[2]), _mm256_add_ps(quad[1], quad[3]));
  _mm256_storeu_ps(y, _mm256_sub_ps(total, offset));
}

// Sums of four u8 x s8 products in each int32 lane: code magnitudes (or Q5_0's unsigned codes) by x.
inline __m256i quad_products(__m256i magnitude, __m256i v) {
#ifdef CODEDRAFT_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), magnitude, v);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude, v), _mm256_set1_epi16(1));
#endif
}

// Q5_0's codes 0 .. 31 for lane l: the nibbles with the fifth bits' bit l (see the layout) as 0x10.
inline __m256i q5_0_codes(__m256i fifth, __m256i nibbles, int l) {
  __m256i top = _mm256_and_si256(fifth, _mm256_set1_epi8(static_cast<char>(1 << l)));  // bit l -> 0x10
  if (l < 4) top = _mm256_slli_epi16(top, 4 - l);
  if (l > 4) top = _mm256_srli_epi16(top, l - 4);
  return _mm256_or_si256(nibbles, top);
}

// Integer lanes of one group block (a 32-weight type) for the 32 x codes at x: lanes[l] holds lane l
// of the eight rows. Q5_0's codes are taken as 0 .. 31 and lane l then loses 16 times the sum of its
// 4 x codes (bias16[l]): the same integers as the signed codes give.
template <class B>
inline void group_block_lanes(const uint8_t* g, const int8_t* x, const int32_t* bias16, __m256i lanes[8]) {
  if constexpr (std::is_same_v<B, Q8_0>) {
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) {
      const __m256i c = load32(g + 16 + 32 * l);
      const __m256i v = _mm256_sign_epi8(broadcast32(x + 4 * l), c);
      lanes[l] = quad_products(_mm256_abs_epi8(c), v);
    }
  } else {
    const __m256i mask = _mm256_set1_epi8(0x0F);
    const __m256i fifth = load32(g + 16);
    const auto lane = [&](int l, __m256i nibbles) {
      const __m256i products = quad_products(q5_0_codes(fifth, nibbles, l), broadcast32(x + 4 * l));
      lanes[l] = _mm256_sub_epi32(products, _mm256_set1_epi32(bias16[l]));
    };
#pragma GCC unroll 4
    for (int l = 0; l < 4; ++l) {
      const __m256i q = load32(g + 48 + 32 * l);
      lane(l, _mm256_and_si256(q, mask));
      lane(l + 4, _mm256_and_si256(_mm256_srli_epi16(q, 4), mask));
    }
  }
}

// The same as group_row for a 32-weight type: block_rows_q8's even and odd float chains, lane l of
// eight rows a register; bias16 (blocks, 8): Q5_0's.
template <class B>
inline void group_block_row(const ActivationCodes& a, int64_t t, const uint8_t* group, const int32_t* bias16,
                            float* y) {
  const int64_t blocks = a.runs;
  __m256 even[8], odd[8];
  for (int l = 0; l < 8; ++l) even[l] = odd[l] = _mm256_setzero_ps();
  const auto add_block = [&](int64_t b, __m256 acc[8]) {
    const uint8_t* g = group + b * Group<B>::kBytes;
    __m256i lanes[8];
    const int32_t* bias = std::is_same_v<B, Q5_0> ? bias16 + (t * blocks + b) * 8 : nullptr;
    group_block_lanes<B>(g, a.q.data() + (t * blocks + b) * 32, bias, lanes);
    const __m256 factor = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g))),
                                        _mm256_set1_ps(a.d[t * blocks + b]));
    for (int l = 0; l < 8; ++l) acc[l] = _mm256_add_ps(acc[l], _mm256_mul_ps(_mm256_cvtepi32_ps(lanes[l]), factor));
  };
  for (int64_t b = 0; b + 1 < blocks; b += 2) {
    add_block(b, even);
    add_block(b + 1, odd);
  }
  if (blocks % 2) add_block(blocks - 1, even);
  __m256 quad[4];
  for (int i = 0; i < 4; ++i) {
    quad[i] = _mm256_add_ps(_mm256_add_ps(even[i], odd[i]), _mm256_add_ps(even[i + 4], odd[i + 4]));
  }
  const __m256 total = _mm256_add_ps(_mm256_add_ps(quad[0], quad[2]), _mm256_add_ps(quad[1], quad[3]));
  _mm256_storeu_ps(y, _mm256_add_ps(total, _mm256_setzero_ps()));  // + the offset of 0.f, as a -0.f sum becomes 0.f
}

// x rows taken together by the many-rows products: each group (super-)block's codes are loaded and
// unpacked once for kTileRows rows of x instead of once a row.
constexpr int kTileRows = 4;

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
      const __m256i pair_mask = _mm256_set1_epi8(0x30);
      __m256i scale[16];
      for (int j = 0; j < 16; ++j) scale[j] = row_words<true>(g + 16 + 8 * j);
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {
        __m256i lane[TX];
        for (int t = 0; t < TX; ++t) lane[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          const uint8_t* run = g + 144 + (8 * h + l) * 96;
          const __m256i bits = load32(run);
          const __m256i top[4] = {_mm256_and_si256(_mm256_slli_epi16(bits, 4), pair_mask),
                                  _mm256_and_si256(_mm256_slli_epi16(bits, 2), pair_mask),
                                  _mm256_and_si256(bits, pair_mask),
                                  _mm256_and_si256(_mm256_srli_epi16(bits, 2), pair_mask)};
#pragma GCC unroll 2
          for (int half = 0; half < 2; ++half) {
            const __m256i v = load32(run + 32 + 32 * half);
            const int s0 = 4 * h + half, s1 = 4 * h + 2 + half;
            const __m256i c0 = _mm256_or_si256(_mm256_and_si256(v, mask), top[half]);
            const __m256i c1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), mask), top[2 + half]);
#pragma GCC unroll 4
            for (int t = 0; t < TX; ++t) {
              lane[t] = scaled_add(lane[t], _mm256_maddubs_epi16(c0, broadcast32(x[t] + 32 * s0 + 4 * l)), scale[2 * s0 + l / 4]);
              lane[t] = scaled_add(lane[t], _mm256_maddubs_epi16(c1, broadcast32(x[t] + 32 * s1 + 4 * l)), scale[2 * s1 + l / 4]);
            }
          }
        }
        const __m256i two = _mm256_cvtepi8_epi16(
            _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l))),
                              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + 16 + 8 * (2 * l + 1)))));
        for (int t = 0; t < TX; ++t) {
          const int16_t* sums16 = a.sums16.data() + ((t0 + t) * supers + sb) * 16;
          const __m256i bias = scaled_add(_mm256_setzero_si256(), two, broadcast32(sums16 + 2 * l));
          lane[t] = _mm256_sub_epi32(lane[t], _mm256_slli_epi32(bias, 5));
          acc[t][l] = _mm256_add_ps(acc[t][l], _mm256_mul_ps(_mm256_cvtepi32_ps(lane[t]), step[t]));
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

// group_block_row for rows t0 .. t0 + TX of x, as group_tile is to group_row.
template <class B, int TX>
inline void group_block_tile(const ActivationCodes& a, int64_t t0, const uint8_t* group, const int32_t* bias16,
                             float y[][8]) {
  const int64_t blocks = a.runs;
  __m256 even[TX][8], odd[TX][8];
  for (int t = 0; t < TX; ++t) {
    for (int l = 0; l < 8; ++l) even[t][l] = odd[t][l] = _mm256_setzero_ps();
  }
  const auto add_block = [&](int64_t b, __m256 (*acc)[8]) {
    const uint8_t* g = group + b * Group<B>::kBytes;
    const int8_t* x[TX];
    __m256 factor[TX];
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g)));
    for (int t = 0; t < TX; ++t) {
      x[t] = a.q.data() + ((t0 + t) * blocks + b) * 32;
      factor[t] = _mm256_mul_ps(d, _mm256_set1_ps(a.d[(t0 + t) * blocks + b]));
    }
    const auto add = [&](int t, int l, __m256i lane) {
      acc[t][l] = _mm256_add_ps(acc[t][l], _mm256_mul_ps(_mm256_cvtepi32_ps(lane), factor[t]));
    };
    if constexpr (std::is_same_v<B, Q8_0>) {
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) {
        const __m256i c = load32(g + 16 + 32 * l), magnitude = _mm256_abs_epi8(c);
#pragma GCC unroll 4
        for (int t = 0; t < TX; ++t) {
          const __m256i v = _mm256_sign_epi8(broadcast32(x[t] + 4 * l), c);
          add(t, l, quad_products(magnitude, v));
        }
      }
    } else {
      const __m256i mask = _mm256_set1_epi8(0x0F);
      const __m256i fifth = load32(g + 16);
      const auto lane = [&](int l, __m256i nibbles) {
        const __m256i c = q5_0_codes(fifth, nibbles, l);
#pragma GCC unroll 4
        for (int t = 0; t < TX; ++t) {
          const __m256i products = quad_products(c, broadcast32(x[t] + 4 * l));
          add(t, l, _mm256_sub_epi32(products, _mm256_set1_epi32(bias16[((t0 + t) * blocks + b) * 8 + l])));
        }
      };
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        const __m256i q = load32(g + 48 + 32 * l);
        lane(l, _mm256_and_si256(q, mask));
        lane(l + 4, _mm256_and_si256(_mm256_srli_epi16(q, 4), mask));
      }
    }
  };
  for (int64_t b = 0; b + 1 < blocks; b += 2) {
    add_block(b, even);
    add_block(b + 1, odd);
  }
  if (blocks % 2) add_block(blocks - 1, even);
  for (int t = 0; t < TX; ++t) {
    __m256 quad[4];
    for (int i = 0; i < 4; ++i) {
      quad[i] = _mm256_add_ps(_mm256_add_ps(even[t][i], odd[t][i]), _mm256_add_ps(even[t][i + 4], odd[t][i + 4]));
    }
    const __m256 total = _mm256_add_ps(_mm256_add_ps(quad[0], quad[2]), _mm256_add_ps(quad[1], quad[3]));
    _mm256_storeu_ps(y[t], _mm256_add_ps(total, _mm256_setzero_ps()));
  }
}
#endif

// y (T, N): columns first .. first + 8 from the group at `group` (every row of x), y's row stride ldy.
template <class B>
void group_rows(const ActivationCodes& a, int64_t T, const uint8_t* group, int64_t first, float* y, int64_t ldy,
                const int32_t* bias16) {
#ifdef CODEDRAFT_AVX2
  float out[8];
  int64_t t = 0;
  for (float tile[kTileRows][8]; t + kTileRows <= T; t += kTileRows) {
    if constexpr (k_quant<B>()) {
      group_tile<B, kTileRows>(a, t, group, tile);
    } else {
      group_block_tile<B, kTileRows>(a, t, group, bias16, tile);
    }
    for (int i = 0; i < kTileRows; ++i) std::memcpy(y + (t + i) * ldy + first, tile[i], sizeof tile[i]);
  }
  for (; t < T; ++t) {
    if constexpr (k_quant<B>()) {
      group_row<B>(a, t, group, out);
    } else {
      group_block_row<B>(a, t, group, bias16, out);
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

// x (T, K) float32, quantized to 8 bits, times the `rows` repacked weight rows transposed: (T, rows).
// Every output equals gguf_q8_linear's on the file's blocks, bit for bit.
inline at::Tensor repacked_int8_linear(const at::Tensor& x_in, const at::Tensor& packed, int64_t qtype, int64_t rows) {
  TORCH_CHECK(x_in.dim() == 2 && x_in.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "x must be (T, in) float32 on the CPU");
  const at::Tensor x = x_in.contiguous();
  const int64_t T = x.size(0), K = x.size(1);
  at::Tensor y = at::empty({T, rows}, x.options());
  with_repacked_type(qtype, [&](auto tag) {
    using B = decltype(tag);
    check_repacked<B>(packed, rows, K);
    const ActivationCodes a = quantize_activation_rows(x.data_ptr<float>(), T, K, B::kValues);
    std::vector<int32_t> bias16;  // Q5_0: 16 times each run of 4 x codes' sum
    if constexpr (std::is_same_v<B, Q5_0>) {
      bias16.resize(T * K / 4);
      for (int64_t i = 0; i < T * K / 4; ++i) bias16[i] = 16 * (a.q[4 * i] + a.q[4 * i + 1] + a.q[4 * i + 2] + a.q[4 * i + 3]);
    }
    const int64_t supers = K / B::kValues, groups = rows / kGroupRows, tail = rows - groups * kGroupRows;
    const uint8_t* p = packed.data_ptr<uint8_t>();
    float* yp = y.data_ptr<float>();
    at::parallel_for(0, groups + (tail ? 1 : 0), 1, [&](int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g) {
        if (g < groups) {
          group_rows<B>(a, T, p + g * supers * Group<B>::kBytes, g * kGroupRows, yp, rows, bias16.data());
          continue;
        }
        const BlockRows w{p + groups * supers * Group<B>::kBytes, supers * B::kBytes, K / 32};  // the last rows
        for (int64_t t = 0; t < T; ++t) q8_rows<B, 1>(a, t, w, 0, tail, yp + t * rows + groups * kGroupRows, rows);
      }
    });
  });
  return y;
}

}  // namespace codedraft::gguf
