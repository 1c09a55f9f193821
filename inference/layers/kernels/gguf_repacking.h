// Whole matrices to and from the repacked layout (gguf_repacked_layout.h): repacked once at load, into
// 2 MiB pages shared by the matrices (huge_pages.h); unpacked (a row, a matrix, rows as float32) to
// check and to look rows up.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>

#include "gguf_repacked_layout.h"
#include "huge_pages.h"

namespace codedraft::gguf {

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

}  // namespace codedraft::gguf
