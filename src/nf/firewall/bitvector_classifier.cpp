#include "nf/firewall/bitvector_classifier.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "nf/firewall/classbench_file.h"

namespace gpunfv {

namespace {

struct Range {
  uint32_t lo, hi;  // inclusive
};

// Distinct bit vectors, each stored once as its summary words followed by its rule words.
class VectorPool {
 public:
  VectorPool(size_t rules, size_t max_bytes)
      : rule_words_(bitvector::rule_words(rules)),
        summary_words_(bitvector::summary_words(rules)),
        max_words_(max_bytes / sizeof(uint64_t)) {}

  // The id of the vector whose rule words are `bits` (rule_words_ of them), added if new.
  uint32_t intern(const std::vector<uint64_t>& bits) {
    const uint64_t h = hash(bits);
    std::vector<uint32_t>& same_hash = by_hash_[h];
    for (uint32_t id : same_hash)
      if (std::equal(bits.begin(), bits.end(), words_.begin() + offset(id) + summary_words_))
        return id;
    const size_t stride = size_t(summary_words_) + rule_words_;
    if (words_.size() + stride > max_words_)
      throw std::length_error("bit-vector tables would exceed " +
                              std::to_string(max_words_ * sizeof(uint64_t) >> 20) +
                              " MiB (" + std::to_string(count() + 1) + " distinct vectors of " +
                              std::to_string(stride * sizeof(uint64_t)) + " B so far)");
    const uint32_t id = uint32_t(count());
    const size_t base = words_.size();
    words_.resize(base + stride, 0);
    for (uint32_t w = 0; w < rule_words_; ++w)
      if (bits[w] != 0) words_[base + w / 64] |= uint64_t(1) << (w % 64);
    std::copy(bits.begin(), bits.end(), words_.begin() + base + summary_words_);
    same_hash.push_back(id);
    ++count_;
    return id;
  }

  size_t count() const { return count_; }
  std::vector<uint64_t> take() { return std::move(words_); }

 private:
  size_t offset(uint32_t id) const { return size_t(id) * (size_t(summary_words_) + rule_words_); }

  static uint64_t hash(const std::vector<uint64_t>& bits) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (uint64_t w : bits) {
      h ^= w + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
      h *= 0xBF58476D1CE4E5B9ull;
    }
    return h;
  }

  uint32_t rule_words_, summary_words_;
  size_t max_words_;
  size_t count_ = 0;
  std::vector<uint64_t> words_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash_;
};

struct Intervals {
  std::vector<uint32_t> starts;     // ascending, starts[0] == 0
  std::vector<uint32_t> vector_of;  // vector id per interval
};

// Splits [0, domain_max] at the ends of `ranges` (ranges[i] belongs to rule i) and interns the
// rule set of every elementary interval. A sweep from low to high values: a rule's bit is set
// at the interval its range starts in and cleared after the interval it ends in.
Intervals elementary_intervals(const std::vector<Range>& ranges, uint32_t domain_max,
                               VectorPool& pool) {
  std::vector<uint32_t> starts = {0};
  for (const Range& r : ranges) {
    starts.push_back(r.lo);
    if (r.hi < domain_max) starts.push_back(r.hi + 1);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  const size_t m = starts.size();

  auto interval_of = [&](uint32_t v) {
    return size_t(std::upper_bound(starts.begin(), starts.end(), v) - starts.begin()) - 1;
  };
  std::vector<std::vector<uint32_t>> begins(m), ends(m + 1);
  for (uint32_t i = 0; i < ranges.size(); ++i) {
    begins[interval_of(ranges[i].lo)].push_back(i);
    ends[interval_of(ranges[i].hi) + 1].push_back(i);
  }

  Intervals out;
  out.vector_of.reserve(m);
  std::vector<uint64_t> bits(bitvector::rule_words(ranges.size()), 0);
  for (size_t k = 0; k < m; ++k) {
    for (uint32_t i : ends[k]) bits[i / 64] &= ~(uint64_t(1) << (i % 64));
    for (uint32_t i : begins[k]) bits[i / 64] |= uint64_t(1) << (i % 64);
    out.vector_of.push_back(pool.intern(bits));
  }
  out.starts = std::move(starts);
  return out;
}

// A port or protocol field as a table of every value's vector id.
std::vector<uint32_t> value_table(const Intervals& iv, uint32_t domain_max) {
  std::vector<uint32_t> table(size_t(domain_max) + 1);
  for (size_t k = 0; k < iv.starts.size(); ++k) {
    size_t end = k + 1 < iv.starts.size() ? iv.starts[k + 1] : table.size();
    std::fill(table.begin() + iv.starts[k], table.begin() + end, iv.vector_of[k]);
  }
  return table;
}

// The interval holding b << 16 for every 16-bit block b, then the last interval.
std::vector<uint32_t> block_index(const std::vector<uint32_t>& starts) {
  std::vector<uint32_t> index(bitvector::kBlockIndexEntries);
  size_t k = 0;
  for (size_t b = 0; b + 1 < index.size(); ++b) {
    const uint64_t addr = uint64_t(b) << 16;
    while (k + 1 < starts.size() && starts[k + 1] <= addr) ++k;
    index[b] = uint32_t(k);
  }
  index.back() = uint32_t(starts.size() - 1);
  return index;
}

void check_rule(const FiveTupleRule& r, size_t i) {
  auto host_bits = [](const Ipv4Prefix& p) {
    return p.len > 32 || (p.len < 32 && (p.addr & (0xFFFFFFFFu >> p.len)) != 0);
  };
  if (host_bits(r.src) || host_bits(r.dst))
    throw std::invalid_argument("bit-vector classifier: rule " + std::to_string(i) +
                                " has a prefix with host bits set or a length above 32");
  if (r.src_port_lo > r.src_port_hi || r.dst_port_lo > r.dst_port_hi)
    throw std::invalid_argument("bit-vector classifier: rule " + std::to_string(i) +
                                " has a port range with lo > hi");
}

}  // namespace

BitVectorClassifier::BitVectorClassifier(std::span<const FiveTupleRule> rules,
                                         size_t max_table_bytes)
    : rule_count_(rules.size()),
      rule_words_(bitvector::rule_words(rules.size())),
      summary_words_(bitvector::summary_words(rules.size())) {
  if (rules.size() > kMaxFirewallRules)
    throw std::length_error("bit-vector classifier: " + std::to_string(rules.size()) +
                            " rules, more than the limit of " +
                            std::to_string(kMaxFirewallRules));
  std::array<std::vector<Range>, kTupleFields> ranges;
  for (auto& r : ranges) r.reserve(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    const FiveTupleRule& r = rules[i];
    check_rule(r, i);
    ranges[0].push_back({FiveTupleRule::first_address(r.src), FiveTupleRule::last_address(r.src)});
    ranges[1].push_back({FiveTupleRule::first_address(r.dst), FiveTupleRule::last_address(r.dst)});
    ranges[2].push_back({r.src_port_lo, r.src_port_hi});
    ranges[3].push_back({r.dst_port_lo, r.dst_port_hi});
    ranges[4].push_back(r.any_proto ? Range{0, 0xFF} : Range{r.proto, r.proto});
  }

  VectorPool pool(rules.size(), max_table_bytes);
  auto address_field = [&](const std::vector<Range>& rs, AddressField& field, size_t f) {
    Intervals iv = elementary_intervals(rs, 0xFFFFFFFFu, pool);
    intervals_[f] = iv.starts.size();
    field.block_first = block_index(iv.starts);
    field.starts = std::move(iv.starts);
    field.vector_of = std::move(iv.vector_of);
  };
  auto value_field = [&](const std::vector<Range>& rs, uint32_t domain_max,
                         std::vector<uint32_t>& table, size_t f) {
    Intervals iv = elementary_intervals(rs, domain_max, pool);
    intervals_[f] = iv.starts.size();
    table = value_table(iv, domain_max);
  };
  address_field(ranges[0], src_, 0);
  address_field(ranges[1], dst_, 1);
  value_field(ranges[2], 0xFFFF, src_port_, 2);
  value_field(ranges[3], 0xFFFF, dst_port_, 3);
  value_field(ranges[4], 0xFF, proto_, 4);
  vector_count_ = pool.count();
  vectors_ = pool.take();
}

size_t BitVectorClassifier::table_bytes() const {
  size_t words32 = 0;
  for (const AddressField* f : {&src_, &dst_})
    words32 += f->starts.size() + f->vector_of.size() + f->block_first.size();
  words32 += src_port_.size() + dst_port_.size() + proto_.size();
  return words32 * sizeof(uint32_t) + vectors_.size() * sizeof(uint64_t);
}

namespace {

template <typename T>
IsoSpan<const T> host_span(const std::vector<T>& v) {
  return IsoSpan<const T>(v.data(), v.size());
}

}  // namespace

BitVectorClassifierRef BitVectorClassifier::ref() const {
  auto address = [](const AddressField& f) {
    return AddressFieldRef{host_span(f.starts), host_span(f.vector_of), host_span(f.block_first)};
  };
  return BitVectorClassifierRef(address(src_), address(dst_), ValueFieldRef{host_span(src_port_)},
                                ValueFieldRef{host_span(dst_port_)}, ValueFieldRef{host_span(proto_)},
                                host_span(vectors_), uint32_t(rule_count_));
}

#if GPUNFV_HAVE_CUDA
void BitVectorClassifier::upload_to_device() {
  if (on_device_) return;
  for (auto [host, dev] : {std::pair{&src_, &device_src_}, std::pair{&dst_, &device_dst_}}) {
    dev->starts.upload(host->starts);
    dev->vector_of.upload(host->vector_of);
    dev->block_first.upload(host->block_first);
  }
  device_src_port_.upload(src_port_);
  device_dst_port_.upload(dst_port_);
  device_proto_.upload(proto_);
  device_vectors_.upload(vectors_);
  on_device_ = true;
}

BitVectorClassifierRef BitVectorClassifier::device_ref() const {
  auto u32 = [](const DeviceBuffer<uint32_t>& b) { return IsoSpan<const uint32_t>(b.span()); };
  auto address = [&](const DeviceAddressField& f) {
    return AddressFieldRef{u32(f.starts), u32(f.vector_of), u32(f.block_first)};
  };
  return BitVectorClassifierRef(address(device_src_), address(device_dst_),
                                ValueFieldRef{u32(device_src_port_)},
                                ValueFieldRef{u32(device_dst_port_)}, ValueFieldRef{u32(device_proto_)},
                                IsoSpan<const uint64_t>(device_vectors_.span()),
                                uint32_t(rule_count_));
}
#endif

}  // namespace gpunfv
