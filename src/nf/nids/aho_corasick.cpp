#include "nf/nids/aho_corasick.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace gpunfv {

Pattern canonical_pattern(std::string_view bytes, bool nocase) {
  Pattern p{std::string(bytes), nocase};
  if (!nocase) return p;
  bool letters = false;
  for (char& c : p.bytes) {
    uint8_t folded = ascii_fold(uint8_t(c));
    letters |= folded >= 'a' && folded <= 'z';
    c = char(folded);
  }
  p.nocase = letters;
  return p;
}

uint32_t PatternSet::add(std::string_view bytes, bool nocase) {
  if (bytes.empty()) throw std::invalid_argument("empty pattern");
  Pattern p = canonical_pattern(bytes, nocase);
  std::string key;
  key.reserve(p.bytes.size() + 1);
  key.push_back(p.nocase ? 'i' : 's');
  key += p.bytes;
  auto [it, inserted] = id_of_.try_emplace(std::move(key), uint32_t(patterns_.size()));
  if (inserted) patterns_.push_back(std::move(p));
  return it->second;
}

namespace {

// The trie before it becomes a table: children as small sorted lists (most nodes have one).
struct TrieNode {
  std::vector<std::pair<uint8_t, uint32_t>> kids;  // (folded byte, node), sorted by byte
  std::vector<uint32_t> ends;                      // patterns whose folded form ends here
  uint16_t depth = 0;
};

uint32_t child_or_add(std::vector<TrieNode>& trie, uint32_t node, uint8_t c) {
  auto& kids = trie[node].kids;
  auto it = std::lower_bound(kids.begin(), kids.end(), c,
                             [](const auto& kid, uint8_t b) { return kid.first < b; });
  if (it != kids.end() && it->first == c) return it->second;
  uint32_t id = uint32_t(trie.size());
  uint16_t depth = uint16_t(trie[node].depth + 1);
  kids.insert(it, {c, id});  // may reallocate trie[node].kids only, not `trie`
  trie.emplace_back();
  trie.back().depth = depth;
  return id;
}

}  // namespace

size_t AhoCorasick::state_count_of(std::span<const Pattern> patterns) {
  std::vector<std::string> folded;
  folded.reserve(patterns.size());
  for (const Pattern& p : patterns) {
    std::string f = p.bytes;
    for (char& c : f) c = char(ascii_fold(uint8_t(c)));
    folded.push_back(std::move(f));
  }
  std::sort(folded.begin(), folded.end());
  // In sorted order each pattern adds the trie nodes past its common prefix with the previous.
  size_t states = 1;
  for (size_t i = 0; i < folded.size(); ++i) {
    size_t common = 0;
    if (i > 0) {
      const std::string &a = folded[i - 1], &b = folded[i];
      while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
    }
    states += folded[i].size() - common;
  }
  return states;
}

size_t AhoCorasick::build_bytes_of(std::span<const Pattern> patterns) {
  // Per state: its row, depth and outputs row; during the build its trie node and the child
  // entry naming it, its BFS order, new id, failure state, output flag and output offset.
  constexpr size_t kPerState = 256 * sizeof(uint32_t) + sizeof(uint16_t) + 2 * sizeof(uint32_t) +
                               sizeof(TrieNode) + sizeof(std::pair<uint8_t, uint32_t>) +
                               4 * sizeof(uint32_t) + sizeof(uint8_t);
  size_t pattern_bytes = 0;
  for (const Pattern& p : patterns) pattern_bytes += p.bytes.size();
  // Per pattern: its length, offset and at least one output (its id during the build, then its
  // row of two words).
  return state_count_of(patterns) * kPerState + patterns.size() * 5 * sizeof(uint32_t) +
         pattern_bytes;
}

AhoCorasick::AhoCorasick(std::span<const Pattern> patterns) {
  // 1. The trie over folded bytes, and the patterns' own tables.
  std::vector<TrieNode> trie(1);
  pat_len_.reserve(patterns.size());
  pat_off_.reserve(patterns.size());
  for (uint32_t p = 0; p < patterns.size(); ++p) {
    const Pattern& pat = patterns[p];
    if (pat.bytes.empty()) throw std::invalid_argument("empty pattern");
    if (pat.bytes.size() > ac::kMaxPatternBytes)
      throw std::length_error("pattern of " + std::to_string(pat.bytes.size()) +
                              " bytes (at most " + std::to_string(ac::kMaxPatternBytes) + ")");
    uint32_t node = 0;
    bool letters = false;
    for (char ch : pat.bytes) {
      uint8_t c = uint8_t(ch), f = ascii_fold(c);
      letters |= (f >= 'a' && f <= 'z');
      node = child_or_add(trie, node, f);
    }
    trie[node].ends.push_back(p);
    const uint32_t len = uint32_t(pat.bytes.size());
    pat_len_.push_back(len | (!pat.nocase && letters ? ac::kVerify : 0));
    pat_off_.push_back(uint32_t(pat_bytes_.size()));
    pat_bytes_.insert(pat_bytes_.end(), pat.bytes.begin(), pat.bytes.end());
    max_len_ = std::max(max_len_, len);
  }
  const size_t states = trie.size();
  if (states > ac::kStateMask) throw std::length_error("more than 2^31 automaton states");

  // 2. Breadth-first order: new id of a trie node = its rank.
  std::vector<uint32_t> order;  // trie node of each new id
  order.reserve(states);
  order.push_back(0);
  for (size_t k = 0; k < order.size(); ++k)
    for (const auto& kid : trie[order[k]].kids) order.push_back(kid.second);
  std::vector<uint32_t> new_id(states);
  for (uint32_t k = 0; k < states; ++k) new_id[order[k]] = k;

  // 3. The table, row by row in BFS order. A state's failure state (its longest proper suffix
  // in the trie) is shallower, so its row is complete before it is needed: missing transitions
  // are copied from it, and a child's failure state is read off it.
  delta_.assign(states * 256, 0);
  depth_.resize(states);
  std::vector<uint32_t> fail(states, 0);
  std::vector<uint8_t> has_output(states, 0);  // own or inherited outputs
  has_output[0] = 0;
  for (uint32_t s = 0; s < states; ++s) {
    const TrieNode& node = trie[order[s]];
    depth_[s] = node.depth;
    uint32_t* row = &delta_[size_t(s) << 8];
    const uint32_t* fail_row = s == 0 ? nullptr : &delta_[size_t(fail[s]) << 8];
    if (fail_row) std::copy(fail_row, fail_row + 256, row);
    for (const auto& [c, kid] : node.kids) {
      const uint32_t t = new_id[kid];
      fail[t] = fail_row ? (fail_row[c] & ac::kStateMask) : 0;
      // fail[t] is shallower than t, its own failure state was set with its parent's row.
      has_output[t] = !trie[kid].ends.empty() || has_output[fail[t]];
      row[c] = t | (has_output[t] ? ac::kHasOutput : 0);
    }
    // Upper-case letters behave as their lower-case forms.
    for (int c = 'A'; c <= 'Z'; ++c) row[c] = row[c - 'A' + 'a'];
  }

  // 4. Outputs, flattened: a state ends its own patterns and those of its failure state (whose
  // outputs come before its own, in breadth-first order). Rows [0, states) hold each state's
  // output rows, which follow from row `states` on.
  std::vector<uint32_t> ids;               // every state's output pattern ids, state by state
  std::vector<uint32_t> begin(states + 1);  // state s's ids: [begin[s], begin[s + 1])
  for (uint32_t s = 0; s < states; ++s) {
    const auto& ends = trie[order[s]].ends;
    ids.insert(ids.end(), ends.begin(), ends.end());
    if (s != 0)
      for (uint32_t k = begin[fail[s]]; k < begin[fail[s] + 1]; ++k) ids.push_back(ids[k]);
    if (states + ids.size() > UINT32_MAX / 2) throw std::length_error("too many automaton outputs");
    begin[s + 1] = uint32_t(ids.size());
  }
  outputs_.resize(2 * (states + ids.size()));
  for (uint32_t s = 0; s < states; ++s) {
    outputs_[2 * s] = uint32_t(states) + begin[s];
    outputs_[2 * s + 1] = uint32_t(states) + begin[s + 1];
  }
  for (size_t k = 0; k < ids.size(); ++k) {
    outputs_[2 * (states + k)] = ids[k];
    outputs_[2 * (states + k) + 1] = pat_len_[ids[k]];
  }
  host_automaton_ = AhoCorasickRef::Automaton(
      AhoCorasickRef::Transitions(IsoSpan<const uint32_t>(delta_.data(), delta_.size()), delta_),
      IsoSpan<const uint32_t>(outputs_.data(), outputs_.size()), outputs_);
}

AhoCorasickRef AhoCorasick::ref() const {
  return AhoCorasickRef(host_automaton_, IsoSpan<const uint16_t>(depth_.data(), depth_.size()),
                        IsoSpan<const uint32_t>(pat_len_.data(), pat_len_.size()),
                        IsoSpan<const uint32_t>(pat_off_.data(), pat_off_.size()),
                        IsoSpan<const uint8_t>(pat_bytes_.data(), pat_bytes_.size()), max_len_);
}

size_t AhoCorasick::table_bytes() const {
  return delta_.size() * sizeof(uint32_t) + outputs_.size() * sizeof(uint32_t) +
         depth_.size() * sizeof(uint16_t) +
         pat_len_.size() * sizeof(uint32_t) + pat_off_.size() * sizeof(uint32_t) +
         pat_bytes_.size();
}

std::vector<uint32_t> AhoCorasick::matched_patterns(std::span<const uint8_t> text) const {
  std::vector<uint32_t> ids;
  ref().scan(IsoSpan<const uint8_t>(text.data(), text.size()),
             [&](uint32_t p, uint32_t) { ids.push_back(p); });
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

#if GPUNFV_HAVE_CUDA
void AhoCorasick::upload_to_device() {
  if (d_delta_.size() != 0) return;
  d_delta_.upload(delta_);
  d_outputs_.upload(outputs_);
  device_automaton_ = AhoCorasickRef::Automaton(AhoCorasickRef::Transitions(d_delta_.span(), delta_),
                                                d_outputs_.span(), outputs_);
  d_depth_.upload(depth_);
  d_pat_len_.upload(pat_len_);
  d_pat_off_.upload(pat_off_);
  d_pat_bytes_.upload(pat_bytes_);
}

AhoCorasickRef AhoCorasick::device_ref() const {
  return AhoCorasickRef(device_automaton_, d_depth_.span(), d_pat_len_.span(), d_pat_off_.span(),
                        d_pat_bytes_.span(), max_len_);
}
#endif

}  // namespace gpunfv
