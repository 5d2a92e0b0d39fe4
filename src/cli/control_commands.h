// What the control socket's commands do to a running configuration (the socket itself is
// cli/control_server.h). Each request is a JSON object {"cmd": WORD, "args": [WORDS], "nf":
// NAME (optional)}; each reply is {"ok": true, ...} or {"ok": false, "error": REASON}. Table
// updates are applied as one version each between batches (nf/router/live_routes.h,
// nf/live_snapshot.h); a refused update leaves the live table as it was.
//
//   stats                                   counters now: ports, NFs and their table versions
//   routes add PREFIX PORT [PREFIX PORT...] | routes add ROUTE_FILE
//   routes del PREFIX [PREFIX...]           | routes del PREFIX_FILE
//   routes replace PREFIX PORT [...]        (routes that exist) | routes replace ROUTE_FILE
//   firewall replace RULE_FILE
//   nids replace RULE_FILE [RULE_FILE...]
//   ipsec sa add NF spi=SPI enc_key=HEX auth_key=HEX local=ADDR remote=ADDR [match=PREFIX]
//                                           (or one JSON object with those fields)
//   ipsec sa del NF SPI
//   reload                                  every table file of the configuration, as SIGHUP
//   stop                                    ends the run as SIGTERM does
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "chain/runtime_config.h"
#include "chain/run_stats.h"

namespace gpunfv {

// Whether a command word is written as a prefix ("digits and dots/digits"), as opposed to a
// file: a table command's one non-prefix argument is a file.
bool looks_like_prefix(const std::string& word);

class ControlCommands {
 public:
  ControlCommands(RuntimeConfig& rc, std::function<void()> stop) : rc_(rc), stop_(std::move(stop)) {}

  // Never throws: every failure is an {"ok": false} reply.
  nlohmann::json execute(const nlohmann::json& request);
  // Re-reads every table file the configuration names (routes, firewall and NIDS rules), each NF one
  // version; a file that fails is reported and its NF keeps its table.
  nlohmann::json reload();

  // The run's counters while it runs (null before it starts and after it ends).
  void set_live_stats(const RunStats* s) {
    std::lock_guard<std::mutex> lk(stats_m_);
    stats_ = s;
  }

 private:
  nlohmann::json stats() const;
  nlohmann::json routes(const std::vector<std::string>& args, const std::string& nf);
  nlohmann::json firewall(const std::vector<std::string>& args, const std::string& nf);
  nlohmann::json nids(const std::vector<std::string>& args, const std::string& nf);
  nlohmann::json ipsec(const std::vector<std::string>& args);
  template <typename T>
  T& find_nf(const std::string& type, const std::string& name) const;
  uint16_t tx_port(const std::string& name) const;
  ReadLimit limit() const;

  RuntimeConfig& rc_;
  std::function<void()> stop_;
  mutable std::mutex stats_m_;
  const RunStats* stats_ = nullptr;
};

}  // namespace gpunfv
