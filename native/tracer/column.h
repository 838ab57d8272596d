// Storage for decoded columns. Large columns are mapped directly and asked for transparent huge pages: a
// 10-million-event capture touches hundreds of megabytes, and faulting them in 4 KiB at a time cost more
// than decoding them.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
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
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
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

  template <typename U>
  bool operator==(const ColumnAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const ColumnAllocator<U>&) const { return false; }
};

template <typename T>
using Column = std::vector<T, ColumnAllocator<T>>;

}  // namespace flagprof
