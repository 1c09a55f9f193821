// Memory for repacked weights, in 2 MiB pages where the system gives them on request (transparent huge
// pages in `madvise` mode): a decode step streams each whole matrix, and with 4 KiB pages the hardware's
// prefetch stops at every page (one-row Q6_K products from DRAM ran at half the speed).
//
// A 2 MiB page is committed whole once touched, so a mapping of its own per matrix cost up to 2 MiB
// more than the matrix: Gemma 3 270M's 126 layer matrices (0.1 to 1 MiB each) took 42 MiB more than
// their bytes. Here matrices are cut one after another from large mappings (128 MiB, or a matrix's
// size rounded up to 2 MiB pages where it is larger), each from the first with room left at its end;
// pages never touched cost nothing, so only the page where the bytes end is partly empty. The whole
// pages of a freed tensor are given back at once (the neighbours' pages kept), and a mapping is
// unmapped with the last tensor cut from it.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <vector>

#include <ATen/ATen.h>

namespace codedraft::gguf {

class HugePageArena {
 public:
  // `bytes` of uint8 at a 64-byte boundary, in a mapping of 2 MiB pages shared with other tensors.
  at::Tensor bytes(int64_t bytes) {
    const int64_t size = (std::max<int64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Mapping> mapping;
    int64_t offset = 0;
    for (auto it = mappings_.begin(); it != mappings_.end();) {
      std::shared_ptr<Mapping> alive = it->lock();
      if (!alive) {
        it = mappings_.erase(it);
        continue;
      }
      if (alive->used + size <= alive->size) {
        mapping = std::move(alive);
        break;
      }
      ++it;
    }
    if (!mapping) {
      mapping = std::make_shared<Mapping>(std::max(kChunk, (size + kHuge - 1) / kHuge * kHuge));
      mappings_.push_back(mapping);
    }
    offset = mapping->used;
    mapping->used += size;
    const uintptr_t first = mapping->start + offset;
    return at::from_blob(
        reinterpret_cast<void*>(first), {bytes},
        [mapping, first, size](void*) {
          // The pages wholly inside this tensor's bytes: no other tensor's bytes lie there.
          const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
          const uintptr_t low = (first + page - 1) / page * page, high = (first + size) / page * page;
          if (high > low) madvise(reinterpret_cast<void*>(low), high - low, MADV_DONTNEED);
        },
        at::TensorOptions().dtype(at::kByte));
  }

 private:
  static constexpr int64_t kHuge = int64_t{1} << 21, kAlign = 64, kChunk = int64_t{128} << 20;

  // `size` bytes (whole 2 MiB pages) at a 2 MiB boundary: a mapping 2 MiB longer, aligned within.
  struct Mapping {
    explicit Mapping(int64_t size_) : size(size_), mapped(size_ + kHuge) {
      base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      TORCH_CHECK(base != MAP_FAILED, "could not map ", mapped, " bytes for repacked weights");
      start = (reinterpret_cast<uintptr_t>(base) + kHuge - 1) & ~static_cast<uintptr_t>(kHuge - 1);
#ifdef MADV_HUGEPAGE
      madvise(reinterpret_cast<void*>(start), size, MADV_HUGEPAGE);
#endif
    }
    ~Mapping() { munmap(base, mapped); }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    int64_t size, mapped, used = 0;
    void* base = nullptr;
    uintptr_t start = 0;
  };

  std::mutex mutex_;
  std::vector<std::weak_ptr<Mapping>> mappings_;
};

// The arena every repacked matrix of the process is cut from.
inline at::Tensor huge_page_bytes(int64_t bytes) {
  static HugePageArena arena;
  return arena.bytes(bytes);
}

}  // namespace codedraft::gguf
