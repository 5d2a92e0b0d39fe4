#include "peers/rte_acl_peer.h"

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_errno.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cstddef>
#include <string>
#include <vector>

namespace gpunfv {

namespace {

// What rte_acl reads per packet, laid out as an IPv4 header (IHL 5) and its TCP/UDP ports from
// the protocol byte on, so that a pointer to a packet's protocol byte is a valid input (as
// DPDK's l3fwd-acl classifies packets in place): every field in network byte order. The first
// field must be one byte; the others are grouped into 4-byte input words (input_index), both
// ports in one.
struct AclInput {
  uint8_t proto;         // IPv4 header byte 9
  uint8_t checksum[2];   // 10-11, not read
  uint8_t src_addr[4];   // 12-15
  uint8_t dst_addr[4];   // 16-19
  uint8_t src_port[2];   // 20-21: the L4 header's first bytes
  uint8_t dst_port[2];   // 22-23
};
static_assert(sizeof(AclInput) == RteAclPeer::kInputBytes);

void put_be(uint8_t* p, uint32_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) p[i] = uint8_t(v);
}

enum AclField { kProto, kSrc, kDst, kSrcPort, kDstPort, kAclFields };

RTE_ACL_RULE_DEF(AclRule, kAclFields);

rte_acl_config acl_config() {
  rte_acl_config c{};
  c.num_categories = 1;
  c.num_fields = kAclFields;
  c.defs[kProto] = {RTE_ACL_FIELD_TYPE_BITMASK, sizeof(uint8_t), kProto, 0,
                    offsetof(AclInput, proto)};
  c.defs[kSrc] = {RTE_ACL_FIELD_TYPE_MASK, sizeof(uint32_t), kSrc, 1,
                  offsetof(AclInput, src_addr)};
  c.defs[kDst] = {RTE_ACL_FIELD_TYPE_MASK, sizeof(uint32_t), kDst, 2,
                  offsetof(AclInput, dst_addr)};
  c.defs[kSrcPort] = {RTE_ACL_FIELD_TYPE_RANGE, sizeof(uint16_t), kSrcPort, 3,
                      offsetof(AclInput, src_port)};
  c.defs[kDstPort] = {RTE_ACL_FIELD_TYPE_RANGE, sizeof(uint16_t), kDstPort, 3,
                      offsetof(AclInput, dst_port)};
  c.max_size = 0;  // no limit on the run-time structures
  return c;
}

AclRule acl_rule(const FiveTupleRule& r, uint32_t index, uint32_t count) {
  AclRule a{};
  a.data.category_mask = 1;
  a.data.priority = int32_t(count - index);  // rule 0 highest; RTE_ACL_MIN_PRIORITY is 1
  a.data.userdata = index + 1;               // 0 means "no match" in rte_acl's results
  a.field[kProto].value.u8 = r.any_proto ? 0 : r.proto;
  a.field[kProto].mask_range.u8 = r.any_proto ? 0x00 : 0xFF;
  a.field[kSrc].value.u32 = r.src.addr;  // rules in host byte order, prefix length as "mask"
  a.field[kSrc].mask_range.u32 = r.src.len;
  a.field[kDst].value.u32 = r.dst.addr;
  a.field[kDst].mask_range.u32 = r.dst.len;
  a.field[kSrcPort].value.u16 = r.src_port_lo;
  a.field[kSrcPort].mask_range.u16 = r.src_port_hi;
  a.field[kDstPort].value.u16 = r.dst_port_lo;
  a.field[kDstPort].mask_range.u16 = r.dst_port_hi;
  return a;
}

}  // namespace

RteAclPeer::RteAclPeer(std::span<const FiveTupleRule> rules) : rule_count_(rules.size()) {
  ensure_dpdk_eal();
  if (rules.size() >= uint32_t(RTE_ACL_MAX_PRIORITY))
    throw DpdkError("rte_acl peer: too many rules (" + std::to_string(rules.size()) + ")", 0);
  if (rules.empty()) return;  // rte_acl cannot build an empty context: nothing ever matches

  static std::atomic<unsigned> serial{0};
  std::string name = "gpunfv_acl_" + std::to_string(serial.fetch_add(1));
  rte_acl_param param{};
  param.name = name.c_str();
  param.socket_id = SOCKET_ID_ANY;
  param.rule_size = RTE_ACL_RULE_SZ(kAclFields);
  param.max_rule_num = uint32_t(rules.size());
  ctx_ = rte_acl_create(&param);
  if (ctx_ == nullptr)
    throw DpdkError("rte_acl_create failed: " + dpdk_errno_text(rte_errno), rte_errno);

  std::vector<AclRule> acl;
  acl.reserve(rules.size());
  for (size_t i = 0; i < rules.size(); ++i)
    acl.push_back(acl_rule(rules[i], uint32_t(i), uint32_t(rules.size())));
  int rc = rte_acl_add_rules(ctx_, reinterpret_cast<const rte_acl_rule*>(acl.data()),
                             uint32_t(acl.size()));
  if (rc == 0) {
    rte_acl_config config = acl_config();
    rc = rte_acl_build(ctx_, &config);
  }
  if (rc != 0) {
    rte_acl_free(ctx_);
    ctx_ = nullptr;
    throw DpdkError("rte_acl: adding or building " + std::to_string(rules.size()) +
                        " rules failed: " + dpdk_errno_text(-rc),
                    -rc);
  }
  // The widest classify method this CPU (and the EAL's max SIMD width) allows.
  static const std::pair<enum rte_acl_classify_alg, const char*> algs[] = {
      {RTE_ACL_CLASSIFY_AVX512X32, "AVX512X32"}, {RTE_ACL_CLASSIFY_AVX512X16, "AVX512X16"},
      {RTE_ACL_CLASSIFY_AVX2, "AVX2"},           {RTE_ACL_CLASSIFY_SSE, "SSE"},
      {RTE_ACL_CLASSIFY_NEON, "NEON"},           {RTE_ACL_CLASSIFY_ALTIVEC, "ALTIVEC"},
      {RTE_ACL_CLASSIFY_SCALAR, "SCALAR"}};
  for (const auto& [alg, name] : algs)
    if (rte_acl_set_ctx_classify(ctx_, alg) == 0) {
      method_ = name;
      break;
    }
}

RteAclPeer::~RteAclPeer() {
  if (ctx_) rte_acl_free(ctx_);
}

void RteAclPeer::classify(const FiveTuple* tuples, uint32_t* rule_index, size_t n) const {
  if (ctx_ == nullptr) {
    std::fill_n(rule_index, n, kNoRule);
    return;
  }
  AclInput inputs[kBurst];
  const uint8_t* data[kBurst];
  uint32_t results[kBurst];
  for (size_t first = 0; first < n; first += kBurst) {
    const unsigned burst = unsigned(std::min<size_t>(kBurst, n - first));
    for (unsigned i = 0; i < burst; ++i) {
      input_of(tuples[first + i], reinterpret_cast<uint8_t*>(&inputs[i]));
      data[i] = reinterpret_cast<const uint8_t*>(&inputs[i]);
    }
    int rc = rte_acl_classify(ctx_, data, results, burst, 1);
    if (rc != 0)
      throw DpdkError("rte_acl_classify failed: " + dpdk_errno_text(-rc), -rc);
    for (unsigned i = 0; i < burst; ++i)
      rule_index[first + i] = results[i] == 0 ? kNoRule : results[i] - 1;
  }
}

void RteAclPeer::input_of(const FiveTuple& t, uint8_t* out) {
  AclInput in{};
  in.proto = t.proto;
  put_be(in.src_addr, t.src_addr, 4);
  put_be(in.dst_addr, t.dst_addr, 4);
  put_be(in.src_port, t.src_port, 2);
  put_be(in.dst_port, t.dst_port, 2);
  std::memcpy(out, &in, sizeof in);
}

void RteAclPeer::classify_raw(const uint8_t* const* inputs, uint32_t* results, size_t n) const {
  if (ctx_ == nullptr) {
    std::fill_n(results, n, 0u);
    return;
  }
  const int rc = rte_acl_classify(ctx_, const_cast<const uint8_t**>(inputs), results, uint32_t(n), 1);
  if (rc != 0) throw DpdkError("rte_acl_classify failed: " + dpdk_errno_text(-rc), -rc);
}

}  // namespace gpunfv
