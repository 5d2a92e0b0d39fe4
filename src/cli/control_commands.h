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
//
// A table command for an NF that runs in an NF process (`process: NAME`), and that NF's part of
// a reload, is handed on to that process, which performs it on its NF as gpunfv run would, and
// whose reply comes back as it is.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chain/runtime_config.h"
#include "chain/run_stats.h"

namespace gpunfv {

// Whether a command word is written as a prefix ("digits and dots/digits"), as opposed to a
// file: a table command's one non-prefix argument is a file.
bool looks_like_prefix(const std::string& word);

class NfProcessProxy;

// What the commands act on: the NFs, the ports a route may send to, and the size limit on the
// files they read.
struct ControlScope {
  std::vector<std::unique_ptr<NetworkFunction>>* nfs = nullptr;
  // The id of the port named, if a route may send there; else throws, saying why not.
  std::function<uint16_t(const std::string&)> tx_port;
  ReadLimit limit;
};

class ControlCommands {
 public:
  // gpunfv run's: the configuration's NFs and ports.
  ControlCommands(RuntimeConfig& rc, std::function<void()> stop);
  // An NF process's: its own NFs; the table commands and reload only, handed on by gpunfv run.
  explicit ControlCommands(ControlScope scope) : scope_(std::move(scope)) {}

  // Never throws: every failure is an {"ok": false} reply.
  nlohmann::json execute(const nlohmann::json& request);
  // Re-reads every table file the configuration names (routes, firewall and NIDS rules), each NF one
  // version; a file that fails is reported and its NF keeps its table. `only`: that NF alone.
  nlohmann::json reload(const std::string& only = {});

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
  uint16_t tx_port(const std::string& name) const;  // scope_.tx_port
  // The NF in an NF process that a table command for `type` named `name` (or the one NF of that
  // type, name empty) is for; null when it is not in one.
  const NfProcessProxy* process_nf(const std::string& type, const std::string& name) const;
  // The command performed in `nf`'s process; its reply.
  nlohmann::json hand_on(const NfProcessProxy& nf, const std::string& cmd,
                         const std::vector<std::string>& args) const;

  RuntimeConfig* rc_ = nullptr;  // null in an NF process
  ControlScope scope_;
  std::function<void()> stop_;
  mutable std::mutex stats_m_;
  const RunStats* stats_ = nullptr;
};

// An NF process's answer to the control requests gpunfv run hands on (nf/nf_process/nf_process.h),
// performed on `nfs` (the process's NFs, which must outlive it).
std::function<std::string(const std::string&)> nf_process_control(
    std::vector<std::unique_ptr<NetworkFunction>>& nfs);

}  // namespace gpunfv
