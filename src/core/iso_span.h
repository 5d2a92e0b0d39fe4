// IsoSpan: G-NET's isoPointer. A trivially copyable (base, size) view through which NF code
// reaches packet and table memory on either backend. Every access is bounds-checked unless
// the build defines GPUNFV_UNCHECKED. An access out of bounds never reads or writes outside
// the span: it is refused and noted, and the NF's packet dropped as nf_isolation_fault
// (core/iso_fault.h says what happens where).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/compat.h"
#include "core/iso_fault.h"

namespace gpunfv {

// N elements read together from an IsoSpan (IsoSpan::read), by value.
template <typename T, size_t N>
struct IsoRun {
  T v[N];
  GPUNFV_HD GPUNFV_FORCEINLINE const T& operator[](size_t k) const { return v[k]; }
};

template <typename T>
class IsoSpan {
 public:
  using element_type = T;
  constexpr IsoSpan() = default;
  // A view holds at most 2^32 - 1 elements (a larger `size` views that many): a 32-bit size
  // keeps a checking kernel's compares and registers those of 32-bit indices.
  GPUNFV_HD constexpr IsoSpan(T* base, size_t size)
      : base_(base), size_(size < kMaxSize ? uint32_t(size) : kMaxSize) {}

  // A refused element is the scratch's own (not reached from base_ as sub-views and runs reach
  // it, see checked()): that kept the NIDS kernel, which indexes a packet's bytes one by one,
  // within its 32 registers a thread; it spilled otherwise.
  GPUNFV_HD GPUNFV_FORCEINLINE T& operator[](size_t i) const {
#if GPUNFV_CHECKED
    static_assert(sizeof(T) <= kIsoScratchBytes, "IsoSpan element larger than the refusal scratch");
    if (i >= size_) return *static_cast<T*>(iso_refuse(i, size_));
#endif
    return base_[i];
  }
  // N elements from `offset` with one bounds check, for the framework's field helpers
  // (load_be16, load_be32: core/parse.h) that read a field whole; NF code must not call it.
  // Refused: scratch, which holds N elements.
  template <size_t N>
  GPUNFV_HD GPUNFV_FORCEINLINE T* framework_run(size_t offset) const {
    static_assert(N * sizeof(T) <= kIsoScratchBytes, "a run longer than the refusal scratch");
#if GPUNFV_CHECKED
    // Past the first test offset < size_ < 2^32: the second runs in 32 bits.
    return checked(offset, offset >= size_ || N > size_ - uint32_t(offset), offset + N);
#else
    return base_ + offset;
#endif
  }
  // Elements [offset, offset + N) as values, with one bounds check for the run (a refused run
  // reads scratch): for code that reads a few neighbours at once, such as a range's two ends.
  template <size_t N>
  GPUNFV_HD GPUNFV_FORCEINLINE IsoRun<std::remove_const_t<T>, N> read(size_t offset) const {
    const T* p = framework_run<N>(offset);
    IsoRun<std::remove_const_t<T>, N> r;
    for (size_t k = 0; k < N; ++k) r.v[k] = p[k];
    return r;
  }
  GPUNFV_HD constexpr size_t size() const { return size_; }
  GPUNFV_HD constexpr bool empty() const { return size_ == 0; }

  // A sub-view [offset, offset + count); checked so a view never grows past its parent. One
  // that would is refused: it views the refusal's scratch instead, with `count` elements where
  // they fit the scratch (else none). A sub-view of a constant count, a header, then has that
  // count either way, so the compiler drops the checks of its constant indices.
  GPUNFV_HD IsoSpan subspan(size_t offset, size_t count) const {
#if GPUNFV_CHECKED
    // Past the first test offset <= size_ < 2^32: the second subtracts in 32 bits.
    const bool refused = offset > size_ || count > size_ - uint32_t(offset);
    T* base = checked(offset, refused, offset + count);
    return IsoSpan(base, !refused || count <= kIsoScratchBytes / sizeof(T) ? count : 0);
#else
    return IsoSpan(base_ + offset, count);
#endif
  }

  // Read-only view of the same memory.
  template <typename U = T, typename = std::enable_if_t<!std::is_const_v<U>>>
  GPUNFV_HD operator IsoSpan<const U>() const {
    return IsoSpan<const U>(base_, size_);
  }

  // Raw access for the framework (memcpy, DMA); NF code must not call it.
  GPUNFV_HD T* framework_data() const { return base_; }

 private:
  static constexpr uint32_t kMaxSize = UINT32_MAX;

  // Element `offset`, or where `refused`, the scratch of a refusal at `index` (core/iso_fault.h).
  // On the device, for a view of global memory, the scratch is reached as an offset from base_:
  // the compiler then keeps the accesses through the sub-view or run global loads and stores
  // whichever way they go, where a pointer that is either base_'s or the scratch's would make
  // them generic (all of ESP's crypto on a packet's words). Global memory's generic addresses
  // are its global ones. Views of shared or local memory take the scratch's own pointer.
  GPUNFV_HD GPUNFV_FORCEINLINE T* checked(size_t offset, bool refused, size_t index) const {
#if defined(__CUDA_ARCH__)
    if (__isGlobal(base_)) {
      long long at = static_cast<long long>(offset * sizeof(T));
      if (refused) {
        at = static_cast<const char*>(iso_refuse(index, size_)) - reinterpret_cast<const char*>(base_);
        asm("" : "+l"(at));  // opaque: folded, base_ + at would be the scratch pointer again
      }
      using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
      return reinterpret_cast<T*>(reinterpret_cast<Byte*>(base_) + at);
    }
#endif
    return refused ? static_cast<T*>(iso_refuse(index, size_)) : base_ + offset;
  }
  T* base_ = nullptr;
  uint32_t size_ = 0;
};

static_assert(std::is_trivially_copyable_v<IsoSpan<uint8_t>>);

}  // namespace gpunfv
