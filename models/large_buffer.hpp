// large_buffer.hpp: an allocator for the few buffers of a run that grow to
// megabytes (a million latencies and submit lags, RecordSummary).
//
// Mechanism: below 1 MiB it is malloc. From 1 MiB, an anonymous mapping
// aligned to 2 MiB and advised MADV_HUGEPAGE, so the kernel backs it with
// transparent huge pages where it may ("always" or "madvise" in
// /sys/kernel/mm/transparent_hugepage/enabled): one page fault per 2 MiB
// instead of one per 4 KiB. Measured on the development VM (a PVM guest,
// where every fault is a trap to the host): 4,358 faults and 60 ms of system
// time for a million-task `poolsim simulate` before, docs/performance.md.
// Where huge pages are off or none is free, the kernel falls back to small
// pages: the same memory, only the faults it would have taken anyway.
//
// Invariants: allocate(n) and deallocate(p, n) see the same n (the
// std::allocator contract), which picks the same branch both times.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace poolsim {

namespace large_buffer {
inline constexpr std::size_t kThreshold = std::size_t{1} << 20;  // bytes
inline constexpr std::size_t kHuge = std::size_t{2} << 20;       // x86-64 PMD page

inline std::size_t mapped_size(std::size_t bytes) { return (bytes + kHuge - 1) & ~(kHuge - 1); }

inline void* allocate(std::size_t bytes) {
  if (bytes < kThreshold) {
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  const std::size_t size = mapped_size(bytes);
  // Map one huge page more, then unmap the ends that are not 2 MiB aligned.
  void* raw =
      ::mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (base + kHuge - 1) & ~(std::uintptr_t{kHuge} - 1);
  if (aligned > base) ::munmap(raw, aligned - base);
  const std::uintptr_t end = base + size + kHuge;
  if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - aligned - size);
  void* p = reinterpret_cast<void*>(aligned);
  ::madvise(p, size, MADV_HUGEPAGE);  // advice only: small pages where it is refused
  return p;
}

inline void deallocate(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (bytes < kThreshold)
    std::free(p);
  else
    ::munmap(p, mapped_size(bytes));
}
}  // namespace large_buffer

template <class T>
struct LargeBufferAllocator {
  using value_type = T;
  LargeBufferAllocator() = default;
  template <class U>
  LargeBufferAllocator(const LargeBufferAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(large_buffer::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { large_buffer::deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const LargeBufferAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace poolsim
