// isoPointer's compile-time check (core/iso_view.h): what an NF's view may hold. A regression
// here fails the build; tests/compile_fail/ checks that the NF base refuses such views.
#include "core/iso_view.h"

#include <gtest/gtest.h>

#include "core/batch.h"
#include "nf/firewall/firewall_logic.h"
#include "nf/ipsec/esp.h"
#include "nf/nids/nids_logic.h"
#include "nf/router/router_logic.h"

namespace gpunfv {
namespace {

struct Plain {
  uint32_t a;
  bool b;
  enum class Mode : uint8_t { x, y } mode;
};
struct Nested {
  Plain plain;
  IsoSpan<const uint32_t> table;
  IsoSpan<uint8_t> scratch;
};
struct Empty {};
struct WithPointer {
  IsoSpan<const uint32_t> table;
  const uint32_t* raw;
};
struct NestedPointer {
  Nested ok;
  struct {
    int* p;
  } inner;
};
struct WithReference {
  const uint32_t& r;
};
struct WithArray {
  uint32_t a[4];
};
struct WithBatch {
  BatchView b;
};
class Listed {
 public:
  using iso_fields = IsoFields<IsoSpan<const uint8_t>, uint32_t>;

 private:
  IsoSpan<const uint8_t> bytes_;
  uint32_t n_ = 0;
};
class ListedShort {  // leaves its pointer out of the list: the size gives it away
 public:
  using iso_fields = IsoFields<IsoSpan<const uint8_t>, uint32_t>;

 private:
  IsoSpan<const uint8_t> bytes_;
  uint32_t n_ = 0;
  const void* hidden_ = nullptr;
};
class Unlisted {
 private:
  IsoSpan<const uint8_t> bytes_;
};

static_assert(iso_view<Plain> && iso_view<Nested> && iso_view<Empty> && iso_view<Listed>);
static_assert(!iso_view<WithPointer> && !iso_view<NestedPointer> && !iso_view<WithReference>);
static_assert(!iso_view<WithArray> && !iso_view<WithBatch> && !iso_view<BatchView>);
static_assert(!iso_view<ListedShort> && !iso_view<Unlisted> && !iso_view<const uint8_t*>);
static_assert(iso_view<RouterView> && iso_view<FirewallView> && iso_view<NidsView> &&
              iso_view<esp::EspView>);

// An NF that takes a PacketReader is handed its packet's bytes and headers read-only.
static_assert(std::is_same_v<decltype(std::declval<PacketReader>().frame()), IsoSpan<const uint8_t>>);
static_assert(std::is_same_v<decltype(std::declval<PacketReader>().headers()), const PacketHeaders&>);
template <class P>
concept ChangesPackets = requires(P p) { p.set_egress_port(1); } || requires(P p) { p.set_length(1); };
static_assert(!ChangesPackets<PacketReader> && ChangesPackets<PacketRef>);

TEST(IsoView, FieldCountsOfAggregates) {
  EXPECT_EQ(iso_view_detail::field_count<Plain>(), 3u);
  EXPECT_EQ(iso_view_detail::field_count<Nested>(), 3u);
  EXPECT_EQ(iso_view_detail::field_count<Empty>(), 0u);
  EXPECT_EQ((iso_view_detail::laid_out_size<IsoSpan<const uint8_t>, uint32_t>()), sizeof(Listed));
}

}  // namespace
}  // namespace gpunfv
