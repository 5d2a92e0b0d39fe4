#include "chain/egress.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "chain/egress_impl.h"
#include "core/clock.h"
#include "core/thread_name.h"

namespace gpunfv {

namespace {

// How long an egress thread polls its queue after a batch before it sleeps on it.
constexpr uint64_t kPollBeforeSleepNs = 50'000;

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

}  // namespace

Egress::Impl::Impl(const RuntimeConfig& rc_, RunStats& stats_, const BatchShape& shape_,
                   Hooks hooks_)
    : rc(rc_), stats(stats_), shape(shape_), hooks(std::move(hooks_)) {
  hooks.feeds.resize(rc.chains.size(), nullptr);
  is_ring_port.assign(rc.ports.size(), false);
  for (size_t p = 0; p < rc.ports.size(); ++p) is_ring_port[p] = rc.ports[p]->type() == "gpuring";
  for (size_t c = 0; c < rc.chains.size(); ++c) turns.push_back(std::make_unique<ChainTurn>());
  plan();
}

// Chains that share an NF are one group (its counters and collect() see one chain's batches
// in order through the turn, and one set's threads keep its hand-offs together); groups go
// round robin to the sets, at most egress_threads threads in all.
void Egress::Impl::plan() {
  const size_t chains = rc.chains.size();
  std::vector<size_t> group(chains);
  for (size_t c = 0; c < chains; ++c) group[c] = c;
  auto root = [&](size_t c) {
    while (group[c] != c) c = group[c] = group[group[c]];
    return c;
  };
  std::map<uint16_t, size_t> chain_of_nf;
  for (size_t c = 0; c < chains; ++c)
    for (uint16_t nf : rc.chains[c].path) {
      auto [it, fresh] = chain_of_nf.emplace(nf, c);
      if (!fresh) group[root(c)] = root(it->second);
    }
  const size_t cap = rc.settings.egress_threads;
  size_t per_set = threads_per_chain(rc.settings);
  if (cap) per_set = std::min(per_set, cap);
  const size_t max_sets = cap ? std::max<size_t>(1, cap / per_set) : SIZE_MAX;
  std::map<size_t, size_t> set_of_group;
  set_of_chain.resize(chains);
  for (size_t c = 0; c < chains; ++c) {
    auto [it, fresh] = set_of_group.emplace(root(c), set_of_group.size() % max_sets);
    set_of_chain[c] = it->second;
  }
  const size_t n_sets = std::max<size_t>(1, std::min(set_of_group.size(), max_sets));
  for (size_t s = 0; s < n_sets; ++s) {
    sets.push_back(std::make_unique<Set>());
    for (size_t t = 0; t < per_set; ++t) {
      auto w = std::make_unique<Worker>();
      w->set = sets.back().get();
      w->index = workers.size();
      w->used.assign(rc.ports.size(), false);
      w->held.assign(rc.ports.size(), false);
      w->sent.assign(rc.ports.size(), 0);
      w->sent_bytes.assign(rc.ports.size(), 0);
      w->node_drops.resize(kMaxChainNodes);
      w->node_drop_bytes.assign(kMaxChainNodes, 0);
      w->port_drops.resize(rc.ports.size());
      w->nfs.resize(rc.nfs.size());
      w->latency.resize(rc.chains.size());
      workers.push_back(std::move(w));
    }
  }
  tx_locks.resize(rc.ports.size());
  for (size_t p = 0; p < rc.ports.size(); ++p)
    if (workers.size() > 1 && rc.ports[p]->has_tx() && !rc.ports[p]->tx_thread_safe())
      tx_locks[p] = std::make_unique<std::mutex>();
}

Egress::Impl::Prepared* Egress::Impl::take_prepared() {
  {
    std::lock_guard<std::mutex> lk(spare_m);
    if (!spare.empty()) {
      Prepared* p = spare.back();
      spare.pop_back();
      return p;
    }
  }
  auto p = std::make_unique<Prepared>();
  p->lists.assign(rc.ports.size(), std::vector<uint32_t>(shape.capacity));
  for (auto& l : p->lists) p->list_data.push_back(l.data());
  p->list_len.assign(rc.ports.size(), 0);
  p->list_bytes.assign(rc.ports.size(), 0);
  p->ok.resize(shape.capacity);
  std::lock_guard<std::mutex> lk(spare_m);
  prepared.push_back(std::move(p));
  return prepared.back().get();
}

void Egress::Impl::give_prepared(Prepared* p) {
  p->batch = nullptr;
  std::lock_guard<std::mutex> lk(spare_m);
  spare.push_back(p);
}

void Egress::Impl::work(Worker& w) {
  set_thread_name(fmt::format("gn-egress{}", w.index));
  use_fine_timer_slack();
  for (;;) {
    // Polls a moment before sleeping on the queue: a thread woken from a condition variable
    // starts tens of microseconds late, and small batches follow each other closer than that.
    auto got = w.set->finished.try_pop();
    for (const uint64_t until = monotonic_ns() + kPollBeforeSleepNs; !got && monotonic_ns() < until;) {
      std::this_thread::yield();
      got = w.set->finished.try_pop();
    }
    if (!got) got = w.set->finished.pop_for(std::chrono::milliseconds(10));
    if (!got) {
      if (w.set->finished.closed_and_empty()) break;
      continue;
    }
    Prepared* p = take_prepared();
    prepare(w, *p, **got);
    take_turn(w, p);
  }
  w.cpu_ns = thread_cpu_ns();
}

// Parks p under its batch_seq; if no thread is sending for its chain, sends every parked
// batch that is next, in order, until the next one is not here yet.
void Egress::Impl::take_turn(Worker& w, Prepared* p) {
  ChainTurn& t = *turns[p->chain];
  std::unique_lock<std::mutex> lk(t.m);
  t.parked.emplace(p->seq, p);
  if (t.busy) return;
  t.busy = true;
  const uint64_t cpu0 = thread_cpu_ns();
  for (auto it = t.parked.begin(); it != t.parked.end() && it->first == t.next;
       it = t.parked.begin()) {
    Prepared* q = it->second;
    t.parked.erase(it);
    lk.unlock();
    Batch* b = q->batch;
    if (b->is_external())
      transmit_frames(w, *b);
    else
      transmit_lists(w, *q);
    give_prepared(q);
    hooks.hand_off(b);
    lk.lock();
    ++t.next;
  }
  t.busy = false;
  w.turn_cpu_ns += thread_cpu_ns() - cpu0;
}

void Egress::Impl::finish() {
  if (finished) return;
  finished = true;
  for (auto& s : sets) s->finished.close();
  for (auto& w : workers)
    if (w->thread.joinable()) w->thread.join();
  // A batch that never arrived holds back the ones after it: their packets are missing from
  // the counters, which the report's accounting check then names; say why here.
  for (size_t c = 0; c < turns.size(); ++c)
    if (!turns[c]->parked.empty())
      std::fprintf(stderr,
                   "gpunfv: egress: chain %zu: %zu batches never sent (batch %llu never arrived)\n",
                   c, turns[c]->parked.size(), static_cast<unsigned long long>(turns[c]->next));
  uint64_t cpu_ns = 0, turn_cpu_ns = 0;
  for (auto& w : workers) {
    cpu_ns += w->cpu_ns;
    turn_cpu_ns += w->turn_cpu_ns;
    stats.chain_latency.resize(w->latency.size());
    for (size_t c = 0; c < w->latency.size(); ++c) {
      stats.latency.merge(w->latency[c]);
      stats.chain_latency[c].merge(w->latency[c]);
    }
    for (size_t p = 0; p < w->port_drops.size(); ++p)
      for (int r = 0; r < kMaxDropReasons; ++r)
        stats.ports[p]->dropped.by_reason[r] += w->port_drops[p].by_reason[r];
    for (size_t n = 0; n < w->nfs.size(); ++n) {
      NfCounters& nc = stats.nfs[n];
      nc.in += w->nfs[n].in;
      nc.out += w->nfs[n].out;
      nc.in_bytes += w->nfs[n].in_bytes;
      nc.out_bytes += w->nfs[n].out_bytes;
      for (int r = 0; r < kMaxDropReasons; ++r)
        nc.drops.by_reason[r] += w->nfs[n].drops.by_reason[r];
    }
  }
  // What the threads cost: if in_turn_cpu_s nears a core's share of the run, the ordered
  // part (tx calls, hand-off) is the limit and more threads will not help.
  stats.egress = {{"threads", workers.size()},
                  {"threads_per_chain", workers.size() / sets.size()},
                  {"cpu_s", cpu_ns * 1e-9},
                  {"in_turn_cpu_s", turn_cpu_ns * 1e-9}};
}

Egress::Egress(const RuntimeConfig& rc, RunStats& stats, const BatchShape& shape, Hooks hooks)
    : impl_(std::make_unique<Impl>(rc, stats, shape, std::move(hooks))) {}

Egress::~Egress() {
  for (auto& s : impl_->sets) s->finished.close();
  for (auto& w : impl_->workers)
    if (w->thread.joinable()) w->thread.join();
}

uint32_t Egress::threads_per_chain(const Settings& s) {
  if (s.egress_threads_per_chain) return s.egress_threads_per_chain;
  return std::thread::hardware_concurrency() >= 8 ? 2 : 1;
}

void Egress::start() {
  for (auto& w : impl_->workers) w->thread = std::thread([this, w = w.get()] { impl_->work(*w); });
}

void Egress::push(Batch* b) { impl_->sets[impl_->set_of_chain[b->chain]]->finished.push(b); }

void Egress::finish() { impl_->finish(); }

Egress::Live Egress::live() const {
  Live out;
  out.port_drops.resize(impl_->rc.ports.size());
  out.nfs.resize(impl_->rc.nfs.size());
  out.chain_latency.resize(impl_->rc.chains.size());
  for (const auto& w : impl_->workers) {
    for (size_t p = 0; p < w->port_drops.size(); ++p) out.port_drops[p].merge(w->port_drops[p].load_relaxed());
    for (size_t n = 0; n < w->nfs.size(); ++n) {
      out.nfs[n].in += load_relaxed(w->nfs[n].in);
      out.nfs[n].out += load_relaxed(w->nfs[n].out);
      out.nfs[n].in_bytes += load_relaxed(w->nfs[n].in_bytes);
      out.nfs[n].out_bytes += load_relaxed(w->nfs[n].out_bytes);
      out.nfs[n].drops.merge(w->nfs[n].drops.load_relaxed());
    }
    for (size_t c = 0; c < w->latency.size(); ++c) out.chain_latency[c].merge_relaxed(w->latency[c]);
  }
  return out;
}

size_t Egress::threads() const { return impl_->workers.size(); }

}  // namespace gpunfv
