// IPsec outbound: generated traffic as it is (UDP/IPv4 to the SAs' prefixes). Peer rows: the
// same ESP tunnel-mode transform (AES-128-CTR + HMAC-SHA1-96) done by OpenSSL's EVP API (one
// context per SA per thread, a packet per call) and by intel-ipsec-mb (one job manager per thread
// for all SAs, many jobs in flight), in place on fresh copies of the generated frames, with
// the SA index and sequence number our CPU backend chose for each packet (read from its results
// record) and the IV our NF derives from them. Every peer output frame (length and bytes) must
// equal our CPU backend's output frame. The peers' SA keys come from the same configuration
// file (the NF itself keeps only derived key material).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstring>
#include <mutex>

#include "nf_case.h"
#include "core/config_node.h"
#include "core/parse.h"
#include "nf/ipsec/esp.h"
#include "nf/ipsec/ipsec.h"
#include "peers/esp_peer_sa.h"

#if GPUNFV_HAVE_OPENSSL
#include <openssl/crypto.h>

#include "peers/openssl_esp_peer.h"
#endif
#if GPUNFV_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>

#include "peers/ipsec_mb_peer.h"
#endif

namespace gpunfv::bench {

namespace {

template <size_t N>
void hex_key(const ConfigNode& sa, const char* key, uint8_t* out) {
  const std::string s = sa.str(key);
  size_t at = s.rfind("0x", 0) == 0 ? 2 : 0;
  if (s.size() != at + 2 * N) sa[key].fail(std::string(key) + ": expected " + std::to_string(2 * N) + " hex digits");
  for (size_t i = 0; i < N; ++i) out[i] = uint8_t(std::stoul(s.substr(at + 2 * i, 2), nullptr, 16));
}

// The SAs of NF `name` as the peers want them (keys included), in configuration order, which is
// the NF's SA index order.
std::vector<peers::EspPeerSa> read_sas(const RuntimeConfig& rc, const IpsecGateway& nf,
                                       uint32_t& iv_epoch) {
  std::vector<peers::EspPeerSa> out;
  for (YAML::Node n : YAML::LoadFile(rc.file)["nfs"]) {
    ConfigNode node(n, rc.file);
    if (node.str("name") != nf.name()) continue;
    iv_epoch = uint32_t(node.int_or("iv_epoch", 0, 0, 0xFFFFFFFFll));
    for (const ConfigNode& s : node["sas"].items()) {
      peers::EspPeerSa sa;
      sa.spi = uint32_t(s["spi"].as_int(0, 0xFFFFFFFFll));
      uint8_t enc[20];
      hex_key<20>(s, "enc_key", enc);
      std::memcpy(sa.enc_key.data(), enc, 16);
      std::memcpy(sa.nonce.data(), enc + 16, 4);
      hex_key<20>(s, "auth_key", sa.auth_key.data());
      sa.local = *parse_ipv4(s.str("local"));
      sa.remote = *parse_ipv4(s.str("remote"));
      out.push_back(sa);
    }
  }
  if (out.size() != nf.table().size())
    throw std::runtime_error("ipsec case: cannot read the SAs of '" + nf.name() + "'");
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].spi != nf.table().sa(i).spi)
      throw std::runtime_error("ipsec case: SA order differs from the NF's");
  return out;
}

// One packet the NF encapsulated: where it is, its SA and sequence number, the peer's length.
struct EspEntry {
  uint32_t packet, sa, seq;
  uint16_t l3_off, len;
};

class EspRows : public Peer {
 public:
  EspRows(const IpsecGateway& nf, uint32_t iv_epoch) : offset_(nf.result_offset()), epoch_(iv_epoch) {}

  uint64_t prepare(const RoundData& r) override {
    const BatchLayout& L = r.in[0]->layout();
    if (frames_.size() < r.used || frames_[0]->stride() != L.stride)
      frames_ = make_batches(uint32_t(r.used), BatchShape{L.capacity, L.stride, L.result_stride},
                             MemoryKind::host);
    entries_.resize(r.used);
    uint64_t n = 0;
    for (size_t b = 0; b < r.used; ++b) {
      BatchView in = r.in[b]->view(), out = r.cpu_out[b]->view();
      entries_[b].clear();
      for (uint32_t i = 0; i < out.count; ++i) {
        if (out.verdict[i] != uint8_t(DropReason::none)) continue;
        const esp::EspRecord rec = esp::read_record(out, i, offset_);
        if (rec.sa == esp::kNoSa) continue;
        PacketHeaders h;
        parse_headers(in.data.subspan(size_t(i) * in.stride, in.len[i]), h);
        entries_[b].push_back({i, rec.sa, rec.seq, h.l3_off, in.len[i]});
      }
      n += entries_[b].size();
    }
    return n;
  }
  void before_run(const RoundData& r) override {
    copy_batches(r.in, frames_, r.used, r.threads);
    for (auto& es : entries_)
      for (EspEntry& e : es) e.len = 0;
  }
  Check check(const RoundData& r) override {
    Check total;
    std::mutex m;
    run_batches(r.used, r.threads, [&](size_t b) {
      Check c;
      BatchView out = r.cpu_out[b]->view();
      for (const EspEntry& e : entries_[b]) {
        ++c.compared;
        bool same = e.len == out.len[e.packet] &&
                    std::memcmp(frame(b, e), frame_of(*r.cpu_out[b], e.packet), e.len) == 0;
        if (!same && c.mismatches++ == 0)
          c.first = fmt::format("batch {} packet {} (SA {}, seq {}): length gpunfv {}, peer {}{}", b,
                                e.packet, e.sa, e.seq, out.len[e.packet], e.len,
                                e.len == out.len[e.packet] ? ", bytes differ" : "");
      }
      std::lock_guard<std::mutex> lk(m);
      total.add(c);
    });
    return total;
  }

 protected:
  // An entry's frame in this run's copy.
  uint8_t* frame(size_t b, const EspEntry& e) const { return frame_of(*frames_[b], e.packet); }
  uint64_t iv(uint32_t seq) const { return esp::iv_of(epoch_, seq); }

  uint32_t offset_, epoch_;
  Batches frames_;  // the peer's own copy of the round, transformed in place
  std::vector<std::vector<EspEntry>> entries_;
};

// Our NF's encapsulation step alone (esp::Encapsulate, what the CPU backend runs per packet),
// given the same SA and sequence number as the peers: the narrow work beside theirs, where the
// NF's rows also parse, select the SA and number the packets.
class OursEsp final : public EspRows {
 public:
  OursEsp(const IpsecGateway& nf, uint32_t epoch) : EspRows(nf, epoch), view_(nf.host_view()) {}
  std::string name() const override { return "gpunfv ESP encapsulation only"; }
  std::string scope() const override {
    return "ESP framing + AES-CTR + HMAC-SHA1 (SA and sequence number given)";
  }
  bool is_peer() const override { return false; }
  bool checked() const override { return true; }  // its frames against the CPU backend's
  // Fresh frames with their parsed headers and the SA record our CPU backend chose.
  void before_run(const RoundData& r) override {
    EspRows::before_run(r);
    run_batches(r.used, r.threads, [&](size_t b) {
      BatchView v = frames_[b]->view(), ref = r.cpu_out[b]->view();
      for (const EspEntry& e : entries_[b]) {
        const size_t at = size_t(e.packet) * v.result_stride + offset_;
        parse_headers(v.data.subspan(size_t(e.packet) * v.stride, v.len[e.packet]),
                      v.headers[e.packet]);
        std::memcpy(v.results.framework_data() + at, ref.results.framework_data() + at,
                    esp::kRecordBytes);
      }
    });
  }
  void work(size_t b, unsigned) override {
    BatchView v = frames_[b]->view();
    for (EspEntry& e : entries_[b]) {
      PacketRef p(v, e.packet);
      e.len = esp::Encapsulate{}(view_, p) == DropReason::none ? v.len[e.packet] : 0;
    }
  }

 private:
  esp::EspView view_;
};

#if GPUNFV_HAVE_OPENSSL
class OpenSslEsp final : public EspRows {
 public:
  OpenSslEsp(const IpsecGateway& nf, const std::vector<peers::EspPeerSa>& sas, uint32_t epoch,
             unsigned threads)
      : EspRows(nf, epoch) {
    ctx_.resize(threads);
    for (auto& per_sa : ctx_)
      for (const auto& sa : sas) per_sa.push_back(std::make_unique<peers::OpenSslEspPeer>(sa));
  }
  std::string name() const override { return "OpenSSL EVP ESP"; }
  std::string scope() const override {
    return "ESP framing + AES-CTR + HMAC-SHA1 (SA and sequence number given)";
  }
  void work(size_t b, unsigned t) override {
    BatchView v = frames_[b]->view();
    for (EspEntry& e : entries_[b])
      e.len = uint16_t(ctx_[t][e.sa]->encapsulate(frame(b, e), v.len[e.packet], e.l3_off, e.seq, iv(e.seq)));
  }

 private:
  std::vector<std::vector<std::unique_ptr<peers::OpenSslEspPeer>>> ctx_;  // [thread][SA]
};
#endif

#if GPUNFV_HAVE_IPSEC_MB
class IpsecMbEsp final : public EspRows {
 public:
  IpsecMbEsp(const IpsecGateway& nf, const std::vector<peers::EspPeerSa>& sas, uint32_t epoch,
             unsigned threads)
      : EspRows(nf, epoch), burst_(threads) {
    for (unsigned t = 0; t < threads; ++t)
      mb_.push_back(std::make_unique<peers::IpsecMbEspPeer>(sas));
  }
  std::string name() const override { return std::string("intel-ipsec-mb ESP (") + arch() + ")"; }
  std::string scope() const override {
    return "ESP framing + AES-CTR + HMAC-SHA1 (SA and sequence number given)";
  }
  const char* arch() const { return mb_[0]->arch(); }
  // A batch's packets in one call: the library keeps up to a burst of jobs in flight at a time
  // and flushes once at the end.
  void work(size_t b, unsigned t) override {
    BatchView v = frames_[b]->view();
    auto& burst = burst_[t];
    burst.clear();
    for (EspEntry& e : entries_[b])
      burst.push_back({frame(b, e), v.len[e.packet], e.l3_off, e.seq, iv(e.seq), e.sa});
    mb_[t]->encapsulate_burst(burst.data(), burst.size());
    for (size_t k = 0; k < burst.size(); ++k) entries_[b][k].len = uint16_t(burst[k].len);
  }

 private:
  std::vector<std::unique_ptr<peers::IpsecMbEspPeer>> mb_;          // one manager per thread
  std::vector<std::vector<peers::IpsecMbEspPeer::Packet>> burst_;  // per thread
};
#endif

}  // namespace

NfCase make_ipsec_case(RuntimeConfig& rc, const CaseOptions& o) {
  NfCase c;
  const auto& nf = dynamic_cast<const IpsecGateway&>(*rc.nfs[rc.chains[0].path[0]]);
  if (nf.direction() != IpsecDirection::outbound)
    throw std::runtime_error("nf_bench: the IPsec case measures outbound SAs only");
  c.nf_scope = "the whole NF: parse + SA lookup + sequence numbers + ESP + AES-CTR + HMAC-SHA1";
  c.notes.push_back("traffic: generated UDP/IPv4 frames as they are; every run starts each SA's "
                    "sequence numbers at 1 again, so all paths produce the same ESP bytes");
  uint32_t epoch = 0;
  const std::vector<peers::EspPeerSa> sas = read_sas(rc, nf, epoch);
  c.peers.push_back(std::make_unique<OursEsp>(nf, epoch));
  if (!o.peers) return c;
  // intel-ipsec-mb first: the faster library is the ratio baseline.
#if GPUNFV_HAVE_IPSEC_MB
  try {
    auto mb = std::make_unique<IpsecMbEsp>(nf, sas, epoch, o.threads);
    c.notes.push_back(fmt::format("peer: intel-ipsec-mb {} ({} code path): a chained AES-128-CTR "
                                  "+ HMAC-SHA1-96 job per packet, job API with up to {} jobs in "
                                  "flight (one flush per batch), one manager per thread for all "
                                  "SAs",
                                  IMB_VERSION_STR, mb->arch(), IMB_MAX_JOBS));
    c.peers.push_back(std::move(mb));
  } catch (const std::exception& e) {
    c.notes.push_back(std::string("intel-ipsec-mb rows skipped: ") + e.what());
  }
#else
  c.notes.push_back(peer_missing("intel-ipsec-mb", "libipsec-mb-dev"));
#endif
#if GPUNFV_HAVE_OPENSSL
  c.peers.push_back(std::make_unique<OpenSslEsp>(nf, sas, epoch, o.threads));
  c.notes.push_back(fmt::format("peer: {}, EVP AES-128-CTR + EVP_MAC HMAC-SHA1, one keyed "
                                "context per SA per thread, one packet per call",
                                OpenSSL_version(OPENSSL_VERSION)));
#else
  c.notes.push_back(peer_missing("OpenSSL", "libssl-dev"));
#endif
  return c;
}

}  // namespace gpunfv::bench
