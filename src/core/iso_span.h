// IsoSpan: G-NET's isoPointer. A trivially copyable (base, size) view through which NF code
// reaches packet and table memory on either backend. Every access is bounds-checked unless
// the build defines GPUNFV_UNCHECKED. An out-of-bounds access never reads or writes outside
// the span: on the host it aborts with a message; on the device it traps the kernel, which the
// executor reports as a CUDA error (the NF is faulty, and its packets are not silently lost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/compat.h"

#if !defined(__CUDA_ARCH__)
#include <cstdio>
#include <cstdlib>
#endif

namespace gpunfv {

[[noreturn]] GPUNFV_HD inline void iso_violation(size_t index, size_t size) {
#if defined(__CUDA_ARCH__)
  printf("gpunfv: IsoSpan access %llu out of bounds (size %llu)\n", (unsigned long long)index,
         (unsigned long long)size);
  __trap();
#else
  std::fprintf(stderr, "gpunfv: IsoSpan access %zu out of bounds (size %zu)\n", index, size);
  std::abort();
#endif
}

template <typename T>
class IsoSpan {
 public:
  using element_type = T;
  constexpr IsoSpan() = default;
  GPUNFV_HD constexpr IsoSpan(T* base, size_t size) : base_(base), size_(size) {}

  GPUNFV_HD GPUNFV_FORCEINLINE T& operator[](size_t i) const {
#if GPUNFV_CHECKED
    if (i >= size_) iso_violation(i, size_);
#endif
    return base_[i];
  }
  GPUNFV_HD constexpr size_t size() const { return size_; }
  GPUNFV_HD constexpr bool empty() const { return size_ == 0; }

  // A sub-view [offset, offset + count); checked so a view never grows past its parent.
  GPUNFV_HD IsoSpan subspan(size_t offset, size_t count) const {
#if GPUNFV_CHECKED
    if (offset > size_ || count > size_ - offset) iso_violation(offset + count, size_);
#endif
    return IsoSpan(base_ + offset, count);
  }

  // Read-only view of the same memory.
  template <typename U = T, typename = std::enable_if_t<!std::is_const_v<U>>>
  GPUNFV_HD operator IsoSpan<const U>() const {
    return IsoSpan<const U>(base_, size_);
  }

  // Raw access for the framework (memcpy, DMA); NF code must not call it.
  GPUNFV_HD T* framework_data() const { return base_; }

 private:
  T* base_ = nullptr;
  size_t size_ = 0;
};

static_assert(std::is_trivially_copyable_v<IsoSpan<uint8_t>>);

}  // namespace gpunfv
