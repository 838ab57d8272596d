// Storage for decoded columns. Large columns are mapped directly and asked for transparent huge pages: a
// 10-million-event capture touches hundreds of megabytes, and faulting them in 4 KiB at a time cost more
// than decoding them.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace flagprof {

template <typename T>
struct ColumnAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(2) << 20;

  ColumnAllocator() = default;
  template <typename U>
  ColumnAllocator(const ColumnAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    // Aligned to 2 MiB so that every part of the column can be a huge page, not only the aligned middle.
    const size_t mapped = bytes + kHuge;
    void* raw = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + kHuge - 1) & ~uintptr_t(kHuge - 1);
    const uintptr_t end = (aligned + bytes + 4095) & ~uintptr_t(4095);
    if (aligned > start) ::munmap(raw, aligned - start);
    if (start + mapped > end) ::munmap(reinterpret_cast<void*>(end), start + mapped - end);
    void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
    ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
  }

  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) {
      ::operator delete(p);
    } else {
      ::munmap(p, bytes);
    }
  }

  // Growing a column leaves the new elements uninitialised (the decoder writes each one exactly once): value-
  // initialising them would zero memory the kernel already zeroed, touching every page twice.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const ColumnAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const ColumnAllocator<U>&) const { return false; }
};

template <typename T>
using Column = std::vector<T, ColumnAllocator<T>>;

// Faults in the pages under [begin, end) with one call rather than one trap per page: writers call it a chunk
// ahead of where they write. On virtual machines a fault per (huge) page measured 30x slower than populating
// the range at once. A no-op where the kernel lacks MADV_POPULATE_WRITE (before Linux 5.14).
inline void populate(const void* begin, const void* end) {
#ifdef MADV_POPULATE_WRITE
  constexpr uintptr_t kPage = 4096;
  const uintptr_t b = reinterpret_cast<uintptr_t>(begin) & ~(kPage - 1);
  const uintptr_t e = (reinterpret_cast<uintptr_t>(end) + kPage - 1) & ~(kPage - 1);
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE);
#else
  (void)begin;
  (void)end;
#endif
}


}  // namespace flagprof
