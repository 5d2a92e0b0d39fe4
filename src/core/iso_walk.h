// IsoWalk: isoPointer for a table walked by row numbers it holds itself, as a DFA's transitions
// are (each entry names the next state's row). A row past the table is refused as an IsoSpan
// access out of bounds is (core/iso_fault.h: the NF's packet is dropped as
// nf_isolation_fault) and the access goes to the table's last row instead. On the device the
// refusal is a predicated store, so a step costs a compare and a min, no branch, and a walk
// keeps nothing but its table's base and size. A table of no whole row (a default-made
// one) is refused when its walk starts, and the walk reads the refusal's scratch row. Nothing
// outside the table is reached either way.
//
// IsoRows is the table as a ref holds it (a view, like IsoSpan); IsoWalk one walk over it.
//
// IsoDfa: a DFA's transition table, whose entries name the next row, checked once where it is
// handed out (every entry names a row of the table) instead of at every step. An IsoDfaWalk
// keeps its row to itself: it starts at row 0 and moves only to rows the table names, so it
// never leaves the table, with no instruction per step for it. NF code reads the entries a walk
// gives but cannot set its row (a row it computes itself goes through an IsoWalk). A table must
// not change once handed out: automata are built whole and replaced whole.
//
// IsoAutomaton: an IsoDfa whose rows each name a range of output entries in a second table,
// both checked once where handed out. An IsoAutomatonWalk reads its current row's outputs with
// no check: the row is one the DFA names, and its range one that was checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "core/compat.h"
#include "core/iso_fault.h"
#include "core/iso_span.h"

namespace gpunfv {

template <unsigned Log2W, uint32_t Mask>
class IsoDfaWalk;
template <unsigned Log2W, uint32_t Mask>
class IsoAutomatonWalk;

// A table as rows of 2^Log2W elements (a trailing partial row is not reached), for walks: a
// view like IsoSpan, which a table ref holds.
template <typename T, unsigned Log2W>
class IsoRows {
 public:
  static constexpr size_t kWidth = size_t(1) << Log2W;
  static_assert(kWidth * sizeof(T) <= kIsoScratchBytes, "a row larger than the refusal scratch");

  constexpr IsoRows() = default;
  GPUNFV_HD explicit IsoRows(IsoSpan<T> table)
      : base_(table.framework_data()), rows_(uint32_t(table.size() >> Log2W)) {}
  GPUNFV_HD uint32_t rows() const { return rows_; }

 private:
  template <typename, unsigned>
  friend class IsoWalk;
  T* base_ = nullptr;
  uint32_t rows_ = 0;
};

// One walk over a table's rows (a scan's, a packet's).
template <typename T, unsigned Log2W>
class IsoWalk {
 public:
  static constexpr size_t kWidth = size_t(1) << Log2W;

  GPUNFV_HD explicit IsoWalk(const IsoRows<T, Log2W>& table)
      : base_(table.base_), rows_(table.rows_), last_(table.rows_ == 0 ? 0 : table.rows_ - 1) {
#if GPUNFV_CHECKED
    if (rows_ == 0) base_ = static_cast<T*>(iso_refuse(kWidth, 0));  // its steps read scratch
#endif
  }
  GPUNFV_HD explicit IsoWalk(IsoSpan<T> table) : IsoWalk(IsoRows<T, Log2W>(table)) {}
  // The same, where a table without a row is walked over `spare` instead, and is not refused
  // for it: for a table in shared memory that may be empty (a bitmap of no ids) with a spare row
  // there too, every access the walk makes stays in the kernel's own shared memory, and the
  // compiler keeps shared-memory instructions for it (with the refusal's scratch, in global
  // memory, beside it, it would have to use generic ones).
  template <size_t N>
  GPUNFV_HD IsoWalk(IsoSpan<T> table, T (&spare)[N])
      : rows_(uint32_t(table.size() >> Log2W)), last_(rows_ == 0 ? 0 : rows_ - 1) {
    static_assert(N >= kWidth, "the spare must hold a row");
    base_ = rows_ == 0 ? spare : table.framework_data();
  }
  IsoWalk(const IsoWalk&) = delete;
  IsoWalk& operator=(const IsoWalk&) = delete;

  GPUNFV_HD uint32_t rows() const { return rows_; }

  // Element `col` (taken modulo the row width) of row `row`. A row past the table is refused
  // and reads the last row.
  GPUNFV_HD GPUNFV_FORCEINLINE T& at(uint32_t row, uint32_t col = 0) {
    return base_[(size_t(reached(row)) << Log2W) | (col & (kWidth - 1))];
  }
  // Rows `row` and `row + 1` of a table of single elements (a CSR range's two ends), with one
  // check: either past the table is refused and reads the last row.
  GPUNFV_HD GPUNFV_FORCEINLINE IsoRun<std::remove_const_t<T>, 2> pair(uint32_t row) {
    static_assert(Log2W == 0, "pairs of rows of one element");
    uint32_t next = row + 1;
#if GPUNFV_CHECKED
    if (row >= last_) {
      iso_refuse(row + 1, rows_);
      row = row < last_ ? row : last_;
      next = last_;
    }
#endif
    return IsoRun<std::remove_const_t<T>, 2>{{base_[row], base_[next]}};
  }
  // Row `row` whole, by value, with one check (past the table: refused, the last row).
  GPUNFV_HD GPUNFV_FORCEINLINE IsoRun<std::remove_const_t<T>, kWidth> row(uint32_t row) {
    const size_t at = size_t(reached(row)) << Log2W;
    IsoRun<std::remove_const_t<T>, kWidth> r;
    for (size_t k = 0; k < kWidth; ++k) r.v[k] = base_[at | k];
    return r;
  }

 private:
  // The row an access to `row` reaches: itself, or past the table refused and the last row.
  GPUNFV_HD GPUNFV_FORCEINLINE uint32_t reached(uint32_t row) const {
#if GPUNFV_CHECKED
    if (row > last_) {
      iso_refuse(row, rows_);
      return last_;
    }
#endif
    return row;
  }

  T* base_ = nullptr;
  uint32_t rows_ = 0;
  uint32_t last_ = 0;
};

// A transition table: rows of 2^Log2W entries, (entry & Mask) the next row.
template <unsigned Log2W, uint32_t Mask>
class IsoDfa {
 public:
  static constexpr size_t kWidth = size_t(1) << Log2W;

  constexpr IsoDfa() = default;
  // `table` as the ref reads it, and `contents`: the same entries on the host (the table itself
  // on the CPU backend; the host copy a device table was uploaded from). Throws
  // std::invalid_argument for an entry that names a row past the table, a table of no whole
  // row or of a partial one, or contents of another size.
  IsoDfa(IsoSpan<const uint32_t> table, std::span<const uint32_t> contents)
      : base_(table.framework_data()) {
    if (table.size() != contents.size() || table.size() % kWidth != 0 || table.empty())
      throw std::invalid_argument("a transition table of " + std::to_string(table.size()) +
                                  " entries (" + std::to_string(contents.size()) +
                                  " on the host), not whole rows of " + std::to_string(kWidth));
    const size_t rows = table.size() >> Log2W;
    if (rows - 1 > size_t(Mask))
      throw std::invalid_argument("a transition table with more rows than its entries can name");
    rows_ = uint32_t(rows);
    for (size_t k = 0; k < contents.size(); ++k)
      if ((contents[k] & Mask) >= rows_)
        throw std::invalid_argument("transition table entry " + std::to_string(k) +
                                    " names row " + std::to_string(contents[k] & Mask) + " of " +
                                    std::to_string(rows_));
  }
  GPUNFV_HD uint32_t rows() const { return rows_; }

 private:
  friend class IsoDfaWalk<Log2W, Mask>;
  friend class IsoAutomatonWalk<Log2W, Mask>;
  const uint32_t* base_ = nullptr;
  uint32_t rows_ = 0;
};

// One walk over an IsoDfa from row 0. A walk over a table of no row (a default-made one) is
// refused when it starts and stays on scratch's row 0.
template <unsigned Log2W, uint32_t Mask>
class IsoDfaWalk {
 public:
  static constexpr size_t kWidth = size_t(1) << Log2W;
  static_assert(kWidth * sizeof(uint32_t) <= kIsoScratchBytes, "a row larger than the refusal scratch");

  GPUNFV_HD explicit IsoDfaWalk(const IsoDfa<Log2W, Mask>& dfa) : base_(dfa.base_) {
#if GPUNFV_CHECKED
    if (dfa.rows_ == 0) {
      base_ = static_cast<const uint32_t*>(iso_refuse(kWidth, 0));
      mask_ = 0;
    }
#endif
  }
  IsoDfaWalk(const IsoDfaWalk&) = delete;
  IsoDfaWalk& operator=(const IsoDfaWalk&) = delete;

  // The entry for the current row and `col` (modulo the row width); the walk moves to the row
  // it names.
  GPUNFV_HD GPUNFV_FORCEINLINE uint32_t step(uint32_t col) {
    const uint32_t e = base_[(size_t(row_) << Log2W) | (col & (kWidth - 1))];
#if GPUNFV_CHECKED
    row_ = e & mask_;
#else
    row_ = e & Mask;
#endif
    return e;
  }
  GPUNFV_HD uint32_t row() const { return row_; }

 private:
  const uint32_t* base_;
  uint32_t row_ = 0;
#if GPUNFV_CHECKED
  uint32_t mask_ = Mask;
#endif
};

namespace iso_walk_detail {
// The outputs of a walk over a default-made automaton: every row's range empty.
inline constexpr uint32_t host_no_outputs[2] = {0, 0};
#if defined(__CUDACC__)
static __device__ const uint32_t device_no_outputs[2] = {0, 0};
#endif
GPUNFV_HD GPUNFV_FORCEINLINE const uint32_t* no_outputs() {
#if defined(__CUDA_ARCH__)
  return device_no_outputs;
#else
  return host_no_outputs;
#endif
}
}  // namespace iso_walk_detail

// A DFA with outputs. The output table is rows of two elements: first one (first, last) row
// per DFA row, the range of rows [first, last) holding that row's outputs; then the outputs,
// two elements each, whatever the NF keeps there.
template <unsigned Log2W, uint32_t Mask>
class IsoAutomaton {
 public:
  constexpr IsoAutomaton() = default;
  // `outputs` as the ref reads it, and `contents`: the same entries on the host. Throws
  // std::invalid_argument for contents of another size, a table of fewer rows than the DFA
  // has, or a DFA row whose range is reversed or reaches outside the rows after the ranges.
  IsoAutomaton(IsoDfa<Log2W, Mask> dfa, IsoSpan<const uint32_t> outputs,
               std::span<const uint32_t> contents)
      : dfa_(dfa), outputs_(outputs.framework_data()) {
    const size_t rows = outputs.size() / 2, states = dfa.rows();
    if (outputs.size() != contents.size() || outputs.size() % 2 != 0 || rows < states)
      throw std::invalid_argument("an output table of " + std::to_string(outputs.size()) +
                                  " entries (" + std::to_string(contents.size()) +
                                  " on the host) for " + std::to_string(states) + " DFA rows");
    for (size_t s = 0; s < states; ++s) {
      const uint32_t first = contents[2 * s], last = contents[2 * s + 1];
      if (first < states || first > last || last > rows)
        throw std::invalid_argument("DFA row " + std::to_string(s) + " names output rows [" +
                                    std::to_string(first) + ", " + std::to_string(last) +
                                    ") outside [" + std::to_string(states) + ", " +
                                    std::to_string(rows) + ")");
    }
  }
  GPUNFV_HD uint32_t rows() const { return dfa_.rows(); }

 private:
  friend class IsoAutomatonWalk<Log2W, Mask>;
  IsoDfa<Log2W, Mask> dfa_;
  const uint32_t* outputs_ = nullptr;
};

// One walk over an IsoAutomaton from row 0: an IsoDfaWalk that also reads its row's outputs. A
// walk over a default-made automaton is refused when it starts (IsoDfaWalk) and has no outputs.
template <unsigned Log2W, uint32_t Mask>
class IsoAutomatonWalk {
 public:
  GPUNFV_HD explicit IsoAutomatonWalk(const IsoAutomaton<Log2W, Mask>& a)
      : dfa_(a.dfa_), outputs_(a.outputs_) {
#if GPUNFV_CHECKED
    if (a.dfa_.rows_ == 0) outputs_ = iso_walk_detail::no_outputs();
#endif
  }
  IsoAutomatonWalk(const IsoAutomatonWalk&) = delete;
  IsoAutomatonWalk& operator=(const IsoAutomatonWalk&) = delete;

  GPUNFV_HD GPUNFV_FORCEINLINE uint32_t step(uint32_t col) { return dfa_.step(col); }
  GPUNFV_HD uint32_t row() const { return dfa_.row(); }
  // Calls f(a, b) with the two elements of each output of the current row, in table order.
  template <typename F>
  GPUNFV_HD GPUNFV_FORCEINLINE void for_each_output(F&& f) const {
    const uint32_t* range = outputs_ + 2 * size_t(dfa_.row());
    const uint32_t last = range[1];
    for (uint32_t k = range[0]; k < last; ++k) f(outputs_[2 * size_t(k)], outputs_[2 * size_t(k) + 1]);
  }

 private:
  IsoDfaWalk<Log2W, Mask> dfa_;
  const uint32_t* outputs_;
};

}  // namespace gpunfv
