// isoPointer's compile-time half (G-NET section 4.3): what an NF's kernel may be handed. An NF's
// view, the one argument of its own it receives, may hold only
//   - plain values (arithmetic types, enums),
//   - IsoSpans (core/iso_span.h: bounds-checked views the NF's tables were handed out as),
//     IsoRows (core/iso_walk.h: the same, for tables walked by the row numbers they hold) and
//     IsoDfas and IsoAutomata (core/iso_walk.h: transition tables, and their outputs, checked
//     when handed out),
//   - aggregates made of these (checked field by field), and
//   - table refs with private members that list them (`using iso_fields = IsoFields<...>`,
//     checked one by one and against the ref's size, so that no member is left unlisted).
// A raw pointer, a reference, or a whole batch view is refused: `static_assert(iso_view<V>)`
// stands where views reach kernels (nf/per_packet_nf.h, nf/per_packet_kernel.cuh,
// nf/device_packet_fn.h, and nf/nf_kernel.h for an NF's own kernels). Errors: compile time
// only; there is no run-time cost.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "core/iso_span.h"
#include "core/iso_walk.h"

namespace gpunfv {

template <class... F>
struct IsoFields {};

// Types NF code must never hold (the framework's batch view: every packet of every NF).
template <class T>
inline constexpr bool framework_only = false;

namespace iso_view_detail {

template <class T>
inline constexpr bool is_iso_span = false;
template <class U>
inline constexpr bool is_iso_span<IsoSpan<U>> = true;
template <class U, unsigned W>
inline constexpr bool is_iso_span<IsoRows<U, W>> = true;
template <unsigned W, uint32_t M>
inline constexpr bool is_iso_span<IsoDfa<W, M>> = true;
template <unsigned W, uint32_t M>
inline constexpr bool is_iso_span<IsoAutomaton<W, M>> = true;

// Converts to any member type: counts an aggregate's fields by how many braced initializers it
// takes (braced, so that an array member counts once rather than once per element).
struct AnyField {
  template <class U>
  constexpr operator U() const;
};
template <size_t>
using AnyAt = AnyField;

template <class T, size_t... I>
constexpr bool takes(std::index_sequence<I...>) {
  return requires { T{{AnyAt<I>{}}...}; };
}

template <class T, size_t N = 0>
constexpr size_t field_count() {
  if constexpr (N > 16)
    return ~size_t(0);  // more than the check reads
  else if constexpr (takes<T>(std::make_index_sequence<N + 1>{}))
    return field_count<T, N + 1>();
  else
    return N;
}

template <class... F>
struct List {};

#define GPUNFV_ISO_FIELDS(...)                                              \
  {                                                                         \
    const auto& [__VA_ARGS__] = t;                                          \
    return [](const auto&... f) {                                           \
      return List<std::remove_cvref_t<decltype(f)>...>{};                   \
    }(__VA_ARGS__);                                                         \
  }
// The field types of an aggregate with N fields (N up to 12).
template <class T>
auto fields_of(const T& t) {
  constexpr size_t n = field_count<T>();
  if constexpr (n == 0) return List<>{};
  else if constexpr (n == 1) GPUNFV_ISO_FIELDS(a)
  else if constexpr (n == 2) GPUNFV_ISO_FIELDS(a, b)
  else if constexpr (n == 3) GPUNFV_ISO_FIELDS(a, b, c)
  else if constexpr (n == 4) GPUNFV_ISO_FIELDS(a, b, c, d)
  else if constexpr (n == 5) GPUNFV_ISO_FIELDS(a, b, c, d, e)
  else if constexpr (n == 6) GPUNFV_ISO_FIELDS(a, b, c, d, e, f)
  else if constexpr (n == 7) GPUNFV_ISO_FIELDS(a, b, c, d, e, f, g)
  else if constexpr (n == 8) GPUNFV_ISO_FIELDS(a, b, c, d, e, f, g, h)
  else if constexpr (n == 9) GPUNFV_ISO_FIELDS(a, b, c, d, e, f, g, h, i)
  else if constexpr (n == 10) GPUNFV_ISO_FIELDS(a, b, c, d, e, f, g, h, i, j)
  else if constexpr (n == 11) GPUNFV_ISO_FIELDS(a, b, c, d, e, f, g, h, i, j, k)
  else if constexpr (n == 12) GPUNFV_ISO_FIELDS(a, b, c, d, e, f, g, h, i, j, k, l)
  else return nullptr;  // more fields than the check reads: refused
}
#undef GPUNFV_ISO_FIELDS

// The size of a class whose members are F..., in that order (the layout rule of the ABI).
template <class... F>
constexpr size_t laid_out_size() {
  size_t offset = 0, align = 1;
  ((offset = (offset + alignof(F) - 1) / alignof(F) * alignof(F) + sizeof(F),
    align = alignof(F) > align ? alignof(F) : align),
   ...);
  return (offset + align - 1) / align * align;
}

template <class T>
constexpr bool check();

template <class... F>
constexpr bool all(List<F...>) {
  return (check<F>() && ...);
}
template <class T, class... F>
constexpr bool listed(IsoFields<F...>) {
  return (check<F>() && ...) && laid_out_size<F...>() == sizeof(T);
}

template <class T>
constexpr bool check() {
  if constexpr (framework_only<T> || std::is_pointer_v<T> || std::is_reference_v<T> ||
                std::is_array_v<T> || std::is_member_pointer_v<T>)
    return false;
  else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T> || is_iso_span<T>)
    return true;
  else if constexpr (requires { typename T::iso_fields; })
    return listed<T>(typename T::iso_fields{});
  else if constexpr (std::is_aggregate_v<T> && std::is_class_v<T> &&
                     std::is_default_constructible_v<T>) {  // (a reference member is not)
    using Fields = decltype(fields_of(std::declval<const T&>()));
    if constexpr (std::is_same_v<Fields, std::nullptr_t>)
      return false;
    else
      return all(Fields{});
  } else {
    return false;
  }
}

}  // namespace iso_view_detail

template <class T>
inline constexpr bool iso_view = std::is_trivially_copyable_v<T> && iso_view_detail::check<T>();

}  // namespace gpunfv

#define GPUNFV_ISO_VIEW_MESSAGE                                                                 \
  "isoPointer: an NF's view holds only plain values, IsoSpans and table refs made of them (no " \
  "raw pointer, reference or BatchView): see core/iso_view.h"
