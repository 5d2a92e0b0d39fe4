// The router's per-packet path: a route table and frames, both from the input, through ingress
// classification and the Router on the CPU backend (run_chain_cpu), checked packet by packet
// against a reference written from RFC 1812 and a linear longest-prefix match over the same
// routes.
//
// Input: a route count byte (at most 48 routes), then per route 4 address bytes, a length
// byte (mod 33) and a next-hop byte (mod 4); the rest is frames (fuzz_util.h read_frames).
#include <cstdint>
#include <vector>

#include "core/parse.h"
#include "fuzz/fuzz_util.h"
#include "nf/router/router.h"
#include "nf/router/router_logic.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

constexpr uint32_t kStride = 256;

uint32_t mask_of(uint8_t len) { return len == 0 ? 0 : 0xFFFFFFFFu << (32 - len); }

// Ones' complement sum of `n` bytes (n even), folded.
uint32_t ones_sum(const uint8_t* p, uint32_t n) {
  uint32_t s = 0;
  for (uint32_t i = 0; i < n; i += 2) s += be16(p + i);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  std::vector<Route> routes;
  const uint32_t count = in.u8() % 49;
  for (uint32_t k = 0; k < count; ++k) {
    uint32_t addr = in.u32();
    uint8_t len = in.u8() % 33;
    uint32_t hop = in.u8() % 4;
    Ipv4Prefix p{addr & mask_of(len), len};
    bool seen = false;
    for (const Route& r : routes) seen |= r.prefix == p;
    if (!seen) routes.push_back(Route{p, hop});  // a route file refuses a repeated prefix
  }
  const std::vector<uint16_t> ports = {1, 2, 3, 4};
  // The router keeps no per-packet state: the one built for the previous input's table serves
  // again while the table is the same (a DIR-24-8 table is 64 MiB to build; most mutations
  // change only the frames).
  static std::vector<Route> cached_routes;
  static std::unique_ptr<OneNfChain> cached;
  const auto same = [](const std::vector<Route>& a, const std::vector<Route>& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k)
      if (!(a[k].prefix == b[k].prefix) || a[k].next_hop != b[k].next_hop) return false;
    return true;
  };
  if (!cached || !same(cached_routes, routes)) {
    cached.reset();
    cached = std::make_unique<OneNfChain>(std::make_unique<Router>(
        "r", routes, ports, std::vector<std::string>{"p1", "p2", "p3", "p4"}));
    cached_routes = routes;
  }
  const OneNfChain& chain = *cached;

  const auto frames = read_frames(in, 64, 300);
  auto batch = make_batch(frames, kStride, 0);
  const BatchView v = batch->view();
  chain.run(v);
  check_accounted(v);

  for (uint32_t i = 0; i < v.count; ++i) {
    const std::vector<uint8_t>& f = frames[i];
    const uint8_t* out = v.data.framework_data() + size_t(i) * kStride;
    PacketHeaders h{};
    DropReason parsed = f.size() > kStride
                            ? DropReason::oversize
                            : parse_headers(IsoSpan<const uint8_t>(f.data(), f.size()), h);
    const DropReason got = DropReason(v.verdict[i]);
    if (parsed != DropReason::none) {  // classification's drop, the router never saw it
      FUZZ_CHECK(got == parsed);
      continue;
    }
    // The reference router.
    DropReason want = DropReason::none;
    uint16_t want_port = kNoPort;
    uint32_t ip = h.l3_off, ihl = 0;
    if (h.ip_version != 4) {
      want = DropReason::not_ipv4;
    } else {
      ihl = (f[ip] & 0x0F) * 4u;
      if (ones_sum(f.data() + ip, ihl) != 0xFFFF) {
        want = drop_reason(RouterDrop::ipv4_bad_checksum);
      } else {
        const uint32_t dst = be32(f.data() + ip + 16);
        int best = -1;
        for (size_t r = 0; r < routes.size(); ++r)
          if ((dst & mask_of(routes[r].prefix.len)) == routes[r].prefix.addr &&
              (best < 0 || routes[r].prefix.len > routes[size_t(best)].prefix.len))
            best = int(r);
        if (best < 0)
          want = drop_reason(RouterDrop::no_route);
        else if (f[ip + 8] <= 1)
          want = drop_reason(RouterDrop::ttl_expired);
        else
          want_port = ports[routes[size_t(best)].next_hop];
      }
    }
    FUZZ_CHECK(got == want);
    if (want != DropReason::none) {
      FUZZ_CHECK(std::memcmp(out, f.data(), f.size()) == 0);  // a dropped packet is untouched
      continue;
    }
    FUZZ_CHECK(v.out_port[i] == want_port);
    FUZZ_CHECK(v.len[i] == f.size());
    // Forwarded: TTL one less, header checksum still right, every other byte as it was.
    FUZZ_CHECK(out[ip + 8] == uint8_t(f[ip + 8] - 1));
    FUZZ_CHECK(ones_sum(out + ip, ihl) == 0xFFFF);
    for (uint32_t k = 0; k < f.size(); ++k)
      if (k != ip + 8 && k != ip + 10 && k != ip + 11) FUZZ_CHECK(out[k] == f[k]);
  }
  return 0;
}
