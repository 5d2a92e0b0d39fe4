// IsoWalk: isoPointer for a table walked by row numbers it holds itself, as a DFA's transitions
// are (each entry names the next state's row). A checked access per step costs a compare, a
// branch and the branch's convergence barrier: about as much as the step itself. A walk instead
// clamps each row number into the table (one min, no branch) and remembers the highest row
// asked for; when the walk ends, a row past the table is refused once, as an IsoSpan access out
// of bounds is (core/iso_fault.h): the NF's packet is dropped as nf_isolation_fault. Nothing
// outside the table is reached either way. A walk over a table with no whole row is refused
// when it starts (tables that may be walked are made with at least one).
//
// IsoRows is the table as a ref holds it (a view, like IsoSpan); IsoWalk one walk over it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/compat.h"
#include "core/iso_fault.h"
#include "core/iso_span.h"

namespace gpunfv {

// A table as rows of 2^Log2W elements (a trailing partial row is not reached), for walks: a
// view like IsoSpan, which a table ref holds, with its last row worked out once where the
// table is handed out rather than at every walk.
template <typename T, unsigned Log2W>
class IsoRows {
 public:
  static constexpr size_t kWidth = size_t(1) << Log2W;
  static_assert(kWidth * sizeof(T) <= kIsoScratchBytes, "a row larger than the refusal scratch");

  constexpr IsoRows() = default;
  GPUNFV_HD explicit IsoRows(IsoSpan<T> table) : base_(table.framework_data()) {
    const size_t rows = table.size() >> Log2W;
    rows_ = rows > size_t(UINT32_MAX) ? UINT32_MAX : uint32_t(rows);
    last_ = rows_ == 0 ? 0 : rows_ - 1;
  }
  GPUNFV_HD uint32_t rows() const { return rows_; }

 private:
  template <typename, unsigned>
  friend class IsoWalk;
  T* base_ = nullptr;
  uint32_t rows_ = 0;
  uint32_t last_ = 0;
};

// One walk over a table's rows (a scan's, a packet's): clamps the rows it is asked for and
// refuses, when it ends, the highest one past the table.
template <typename T, unsigned Log2W>
class IsoWalk {
 public:
  static constexpr size_t kWidth = size_t(1) << Log2W;

  GPUNFV_HD explicit IsoWalk(const IsoRows<T, Log2W>& table)
      : base_(table.base_), rows_(table.rows_), last_(table.last_) {
#if GPUNFV_CHECKED
    if (rows_ == 0) base_ = static_cast<T*>(iso_refuse(kWidth, 0));  // steps read scratch
#endif
  }
  GPUNFV_HD explicit IsoWalk(IsoSpan<T> table) : IsoWalk(IsoRows<T, Log2W>(table)) {}
  // The same, where a table without a row is walked over `spare` instead, and is not refused
  // for it: for a table in shared memory that may be empty (a bitmap of no ids) with a spare row
  // there too, every access the walk makes stays in the kernel's own shared memory, and the
  // compiler keeps shared-memory instructions for it (with the refusal's scratch, in global
  // memory, beside it, it would have to use generic ones).
  template <size_t N>
  GPUNFV_HD IsoWalk(IsoSpan<T> table, T (&spare)[N]) {
    static_assert(N >= kWidth, "the spare must hold a row");
    const IsoRows<T, Log2W> rows(table);
    base_ = rows.rows_ == 0 ? spare : rows.base_;
    rows_ = rows.rows_;
    last_ = rows.last_;
  }
  IsoWalk(const IsoWalk&) = delete;
  IsoWalk& operator=(const IsoWalk&) = delete;
  GPUNFV_HD ~IsoWalk() {
#if GPUNFV_CHECKED
    if (highest_ > last_) iso_refuse(highest_, rows_);
#endif
  }

  GPUNFV_HD uint32_t rows() const { return rows_; }

  // Element `col` (taken modulo the row width) of row `row`. A row past the table reads the
  // last row and is refused when the walk ends.
  GPUNFV_HD GPUNFV_FORCEINLINE T& at(uint32_t row, uint32_t col = 0) {
#if GPUNFV_CHECKED
    highest_ = row > highest_ ? row : highest_;  // a max, not a flag: one instruction
    row = row < last_ ? row : last_;
#endif
    return base_[(size_t(row) << Log2W) | (col & (kWidth - 1))];
  }

 private:
  T* base_ = nullptr;
  uint32_t rows_ = 0;
  uint32_t last_ = 0;
  uint32_t highest_ = 0;  // the highest row asked for
};

}  // namespace gpunfv
