// Firewall: each generated packet gets a new 5-tuple (outside timed regions), 3 in 4 drawn
// inside a random rule's ranges (the way ClassBench's trace generator aims at rules), 1 in 4
// uniformly random; protocol TCP or UDP where the rule allows any (a real TCP header is written
// for TCP), checksums recomputed. Rows: our bit-vector classify alone over the 5-tuples
// (extracted per batch beforehand), and DPDK's rte_acl as its users run it: rte_acl_classify
// with the widest classify method the CPU offers, reading the fields from the packets in place
// (one pointer per packet at its IPv4 protocol byte, as DPDK's l3fwd-acl does; ICMP packets,
// which have no ports, point at their 5-tuple written beforehand), one call per batch. Both are
// classification only, where the NF's rows also parse and write verdicts. Every rte_acl answer
// (first matching rule) is checked against the rule index our CPU backend wrote into the
// packet's results slice.
#include <fmt/format.h>

#include <cstring>

#include "nf_case.h"
#include "core/clock.h"
#include "core/parse.h"
#include "nf/firewall/firewall.h"

#if GPUNFV_HAVE_DPDK
#include "peers/rte_acl_peer.h"
#endif

namespace gpunfv::bench {

namespace {

void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
void put32(uint8_t* p, uint32_t v) { put16(p, uint16_t(v >> 16)), put16(p + 2, uint16_t(v)); }

FiveTuple draw_tuple(const std::vector<FiveTupleRule>& rules, Rng& rng) {
  FiveTuple t;
  if (!rules.empty() && rng.below(4) != 3) {
    const FiveTupleRule& r = rules[rng.below(uint32_t(rules.size()))];
    t.src_addr = rng.in(FiveTupleRule::first_address(r.src), FiveTupleRule::last_address(r.src));
    t.dst_addr = rng.in(FiveTupleRule::first_address(r.dst), FiveTupleRule::last_address(r.dst));
    t.src_port = uint16_t(rng.in(r.src_port_lo, r.src_port_hi));
    t.dst_port = uint16_t(rng.in(r.dst_port_lo, r.dst_port_hi));
    t.proto = r.any_proto ? (rng.below(2) ? kProtoTcp : kProtoUdp) : r.proto;
  } else {
    t.src_addr = uint32_t(rng.next());
    t.dst_addr = uint32_t(rng.next());
    t.src_port = uint16_t(rng.next());
    t.dst_port = uint16_t(rng.next());
    const uint8_t protos[] = {kProtoTcp, kProtoUdp, kProtoIcmp, kProtoTcp};
    t.proto = protos[rng.below(4)];
  }
  return t;
}

// Rewrites the generator's Ethernet/IPv4/UDP frame (IP header at 14, 20 bytes) to carry `t`.
void write_tuple(uint8_t* f, uint32_t len, const FiveTuple& t, Rng& rng) {
  uint8_t* ip = f + 14;
  const uint32_t l4_len = uint32_t(ip[2] << 8 | ip[3]) - 20;
  uint8_t* l4 = ip + 20;
  ip[9] = t.proto;
  put32(ip + 12, t.src_addr);
  put32(ip + 16, t.dst_addr);
  if (t.proto == kProtoUdp) {
    put16(l4, t.src_port), put16(l4 + 2, t.dst_port), put16(l4 + 4, uint16_t(l4_len));
  } else if (t.proto == kProtoTcp && l4_len >= 20) {
    put16(l4, t.src_port), put16(l4 + 2, t.dst_port);
    put32(l4 + 4, uint32_t(rng.next())), put32(l4 + 8, uint32_t(rng.next()));
    l4[12] = 0x50, l4[13] = 0x10;  // 20-byte header, ACK
    put16(l4 + 14, 65535), put16(l4 + 18, 0);
  }
  refresh_checksums(f, len);
}

// The 5-tuples of a round's IPv4 packets, per batch, with their packet indices.
class TupleRows : public Peer {
 public:
  bool repeatable() const override { return true; }
  bool lookup_only() const override { return true; }
  std::string scope() const override { return "classify only (5-tuples extracted beforehand)"; }
  uint64_t prepare(const RoundData& r) override {
    tuples_.resize(r.used), index_.resize(r.used), out_.resize(r.used);
    uint64_t n = 0;
    for (size_t b = 0; b < r.used; ++b) {
      BatchView v = r.in[b]->view();
      tuples_[b].clear(), index_[b].clear();
      for (uint32_t i = 0; i < v.count; ++i) {
        IsoSpan<const uint8_t> f = v.data.subspan(size_t(i) * v.stride, v.len[i]);
        PacketHeaders h;
        if (parse_headers(f, h) != DropReason::none || h.ip_version != 4) continue;
        tuples_[b].push_back(ipv4_five_tuple(f, h));
        index_[b].push_back(i);
      }
      out_[b].resize(tuples_[b].size());
      n += tuples_[b].size();
    }
    return n;
  }

 protected:
  std::vector<std::vector<FiveTuple>> tuples_;
  std::vector<std::vector<uint32_t>> index_, out_;
};

class OursClassify final : public TupleRows {
 public:
  explicit OursClassify(BitVectorClassifierRef ref) : ref_(ref) {}
  std::string name() const override { return "gpunfv bit-vector classify only"; }
  bool is_peer() const override { return false; }
  void work(size_t b, unsigned) override {
    for (size_t k = 0; k < tuples_[b].size(); ++k) out_[b][k] = ref_.classify(tuples_[b][k]);
  }

 private:
  BitVectorClassifierRef ref_;
};

#if GPUNFV_HAVE_DPDK
class RteAclClassify final : public TupleRows {
 public:
  explicit RteAclClassify(const Firewall& fw) : acl_(fw.rules()), offset_(fw.result_offset()) {}
  std::string name() const override {
    return fmt::format("DPDK rte_acl classify {}", acl_.method());
  }
  std::string scope() const override {
    return "classify only (fields read in place from the packets)";
  }
  const char* method() const { return acl_.method(); }
  uint64_t prepare(const RoundData& r) override {
    const uint64_t n = TupleRows::prepare(r);
    at_.resize(r.used), side_.resize(r.used);
    for (size_t b = 0; b < r.used; ++b) {
      BatchView v = r.in[b]->view();
      at_[b].clear();
      side_[b].assign(tuples_[b].size() * RteAclPeer::kInputBytes, 0);
      for (size_t k = 0; k < tuples_[b].size(); ++k) {
        const uint32_t i = index_[b][k];
        const uint8_t* f = v.data.framework_data() + size_t(i) * v.stride;
        PacketHeaders h;
        parse_headers(v.data.subspan(size_t(i) * v.stride, v.len[i]), h);
        const uint8_t* ip = f + h.l3_off;
        const bool in_place = (ip[0] & 0x0F) == 5 && (ip[9] == kProtoTcp || ip[9] == kProtoUdp);
        uint8_t* own = side_[b].data() + k * RteAclPeer::kInputBytes;
        if (!in_place) RteAclPeer::input_of(tuples_[b][k], own);
        at_[b].push_back(in_place ? ip + 9 : own);
      }
    }
    return n;
  }
  void work(size_t b, unsigned) override {
    acl_.classify_raw(at_[b].data(), out_[b].data(), at_[b].size());
  }
  // Against the rule index our CPU backend wrote (little-endian) into each packet's slice.
  Check check(const RoundData& r) override {
    Check c;
    for (size_t b = 0; b < tuples_.size(); ++b) {
      BatchView v = r.cpu_out[b]->view();
      for (size_t k = 0; k < tuples_[b].size(); ++k) {
        const uint8_t* s = v.results.framework_data() + size_t(index_[b][k]) * v.result_stride + offset_;
        uint32_t ours = uint32_t(s[0]) | uint32_t(s[1]) << 8 | uint32_t(s[2]) << 16 | uint32_t(s[3]) << 24;
        const uint32_t theirs = out_[b][k] == 0 ? kNoRule : out_[b][k] - 1;
        ++c.compared;
        if (ours != theirs && c.mismatches++ == 0)
          c.first = fmt::format("batch {} packet {}: gpunfv rule {}, rte_acl rule {}", b,
                                index_[b][k], int32_t(ours), int32_t(theirs));
      }
    }
    return c;
  }

 private:
  RteAclPeer acl_;
  uint32_t offset_;
  std::vector<std::vector<const uint8_t*>> at_;  // per packet: its protocol byte, or side_
  std::vector<std::vector<uint8_t>> side_;       // inputs written for packets without ports
};
#endif

}  // namespace

NfCase make_firewall_case(RuntimeConfig& rc, const CaseOptions& o) {
  NfCase c;
  c.nf_scope = "the whole NF: parse + classify + verdict + results record";
  const auto& fw = dynamic_cast<const Firewall&>(*rc.nfs[rc.chains[0].path[0]]);
  c.notes.push_back(
      "traffic: generated frames, 5-tuples rewritten: 3 in 4 inside a random rule's ranges, 1 in "
      "4 uniformly random (TCP/UDP/ICMP); TCP or UDP where a rule allows any protocol");
  const std::vector<FiveTupleRule>* rules = &fw.rules();
  c.shape = [rules](Batch& b, uint64_t seed) {
    Rng rng(seed);
    BatchView v = b.view();
    for (uint32_t i = 0; i < v.count; ++i) {
      const uint32_t len = v.len[i];
      if (len > b.stride() || len < 14 + 20 + 8) continue;
      write_tuple(frame_of(b, i), len, draw_tuple(*rules, rng), rng);
    }
  };
  c.peers.push_back(std::make_unique<OursClassify>(fw.classifier().ref()));
  if (!o.peers) return c;
#if GPUNFV_HAVE_DPDK
  uint64_t t0 = monotonic_ns();
  auto acl = std::make_unique<RteAclClassify>(fw);
  c.notes.push_back(fmt::format("peer: {} rte_acl ({} rules), built in {:.1f} s, classify method "
                                "{} (the widest this CPU allows), rte_acl_classify once per batch "
                                "on pointers into the packets, one category; EAL {}",
                                dpdk_version(), fw.rule_count(), (monotonic_ns() - t0) / 1e9,
                                acl->method(), dpdk_eal_args()));
  c.peers.push_back(std::move(acl));
#else
  c.notes.push_back(peer_missing("DPDK rte_acl", "libdpdk-dev"));
#endif
  return c;
}

}  // namespace gpunfv::bench
