// gpunfv: run chains of network functions on a GPU (or the CPU) over real traffic.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "chain/executor.h"
#include "cli/html_report.h"
#include "cli/metrics_endpoint.h"
#include "cli/control_client.h"
#include "cli/control_commands.h"
#include "cli/control_server.h"
#include "cli/nf_process_command.h"
#include "cli/profile_command.h"
#include "cli/stop_signals.h"
#include "config/config.h"
#include "core/debug_switches.h"
#include "core/error.h"
#include "gpu/device.h"
#include "telemetry/report.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#endif

namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitConfig = 2;

int cmd_run(const std::string& config, const std::string& backend_name, const std::string& report,
            const std::string& report_html, double duration, bool quiet) {
  using namespace gpunfv;
  debug_switches();  // a mistyped switch stops the run before anything starts
  RuntimeConfig rc = load_runtime_config(config);
  RunOptions opt;
  const bool automatic = backend_name == "auto";
  opt.backend = backend_name == "gpu" || (automatic && cuda_device_available())
                    ? Backend::gpu
                    : Backend::cpu;
  opt.duration_s = duration;
  if (!quiet)
    opt.progress = [](const ProgressSample& s) {
      std::fputs(format_progress(s).c_str(), stderr);
      std::fflush(stderr);
    };

  if (!quiet) {
    std::fprintf(stderr, "gpunfv: %s, %zu port(s), %zu NF(s), %zu chain(s), %s backend%s\n",
                 config.c_str(), rc.ports.size(), rc.nfs.size(), rc.chains.size(),
                 opt.backend == Backend::gpu ? "GPU" : "CPU",
                 !automatic ? ""
                 : opt.backend == Backend::gpu ? " (auto: a CUDA device is present)"
                 : GPUNFV_HAVE_CUDA ? " (auto: no CUDA device)"
                                    : " (auto: built without CUDA)");
    for (const auto& p : rc.ports)
      std::fprintf(stderr, "  port %s: %s\n", p->name().c_str(), p->describe().c_str());
    for (const auto& n : rc.nfs) std::fprintf(stderr, "  %s\n", n->describe().c_str());
    for (const auto& c : rc.chains) {
      std::string path;
      for (uint16_t nf : c.path) path += " -> " + rc.nfs[nf]->name();
      std::fprintf(stderr, "  chain %s: %s%s%s\n", c.name.c_str(), rc.ports[c.from]->name().c_str(),
                   path.c_str(),
                   c.to != kNoPort ? (" -> " + rc.ports[c.to]->name()).c_str() : " -> (NF choice)");
      for (size_t k = 0; k < c.graph.next.size(); ++k) {
        const auto& next = c.graph.next[k];
        const bool straight = next.size() == 1 && next[0] == k + 1;
        const bool last = next.empty() && k + 1 == c.graph.next.size();
        if (straight || last) continue;
        std::string to;
        for (uint8_t t : next) to += (to.empty() ? "" : " | ") + (t == kChainDone ? std::string("done") : c.graph.name[t]);
        std::fprintf(stderr, "    %s -> %s%s\n", c.graph.name[k].c_str(), to.empty() ? "done" : to.c_str(),
                     next.size() > 1 ? " (by flow hash)" : "");
      }
      if (!c.graph.routes.empty())
        std::fprintf(stderr, "    routing table: %zu entries (destination, current NF) -> next NF\n",
                     c.graph.routes.size());
      if (c.backpressure) std::fprintf(stderr, "    backpressure on, qt %.1f batches\n", c.qt);
    }
    for (const auto& f : rc.forwards)
      if (f.on_rings)
        std::fprintf(stderr, "  forward %s: on the gpuring ports' rings, variant %s%s%s\n", f.name.c_str(),
                     f.gpu_variant.empty() ? "rd" : f.gpu_variant.c_str(), f.route ? ", routed" : "",
                     f.integrity ? ", integrity" : "");
      else
        std::fprintf(stderr, "  forward %s: %s, descriptor_batch %u%s%s\n", f.name.c_str(),
                     f.mode == ForwardMode::zerocopy ? "zerocopy" : "copy", f.descriptor_batch,
                     f.route ? ", routed" : "", f.integrity ? ", integrity" : "");
  }
  MetricsEndpoint metrics(rc.settings.metrics, config, quiet);
  opt.metrics = metrics.board();
  // The control socket is bound now (a bad path is a configuration error) and served once the
  // NFs have prepared their tables, while packets flow.
  ControlCommands commands(rc, [] { request_stop(); });
  ControlServer control(rc.settings.control, commands);
  opt.live_stats = [&](const RunStats* s) {
    commands.set_live_stats(s);
    if (s) control.start();
  };
  // Only now: a signal while the config loads still ends gpunfv at once, nothing has run yet.
  opt.stop = &install_stop_signals();
  RunStats stats = run(rc, opt);
  control.stop();
  std::fputs(summary_table(stats).c_str(), stdout);
  std::fflush(stdout);
  const nlohmann::json json = report_json(stats);
  if (!report.empty()) {
    std::ofstream out(report);
    if (!out) throw ConfigError(report, "cannot write the report");
    out << json.dump(2) << "\n";
  }
  int status = stats.accounting_errors().empty() ? 0 : kExitRuntime;
  if (!report_html.empty() && render_html_report(json, report, report_html) != 0) status = kExitRuntime;
  metrics.linger(*opt.stop);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Load every kernel when the GPU context starts, not at its first launch, so the first
  // batches' latency does not include module loading.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  CLI::App app{
      "gpunfv runs chains of network functions (router, ...) on a GPU shared by the NFs,\n"
      "or on the CPU with the same NF code. Packets enter from ports (pcap files, a traffic\n"
      "generator), cross the chain, and leave on ports; every packet is transmitted or\n"
      "dropped with a named reason."};
  app.require_subcommand(1);
  app.footer("Examples:\n  gpunfv run examples/router.yaml\n"
             "  gpunfv run examples/router-fulltable.yaml --backend gpu --duration 10 --report r.json\n"
             "  gpunfv report r.json --html r.html");

  std::string config, backend = "auto", report, report_html;
  double duration = 0;
  bool quiet = false;
  CLI::App* run = app.add_subcommand("run", "Run the chains of a YAML configuration");
  run->add_option("config", config, "Chain configuration (ports:, nfs:, chains:)")->required();
  run->add_option("--backend", backend,
                  "Where NFs run: gpu, cpu, or auto (the GPU where a CUDA device is present)")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  run->add_option("--report", report, "Write a JSON report (counters, drops, latency) to FILE");
  run->add_option("--report-html", report_html, "Write the report as an HTML page with plots to FILE");
  run->add_option("--duration", duration, "Stop after S seconds (default: when inputs end)")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("-q,--quiet", quiet, "No startup summary or progress lines");

  gpunfv::ProfileOptions profile_options;
  CLI::App* profile = gpunfv::add_profile_command(app, profile_options);
  gpunfv::NfProcessOptions nf_process_options;
  CLI::App* nf_process = gpunfv::add_nf_process_command(app, nf_process_options);
  gpunfv::ReportOptions report_options;
  CLI::App* report_cmd = gpunfv::add_report_command(app, report_options);

  std::string ctl_socket, ctl_nf;
  std::vector<std::string> ctl_words;
  CLI::App* ctl = app.add_subcommand("ctl", "Send a command to a running gpunfv's control socket (settings.control)");
  ctl->add_option("socket", ctl_socket, "The control socket's path")->required();
  ctl->add_option("command", ctl_words,
                  "stats | stop | reload | routes add|del|replace PREFIX/LEN PORT ... or FILE | "
                  "firewall replace FILE | nids replace FILE [FILE...] | "
                  "ipsec sa add NF spi=SPI enc_key=HEX auth_key=HEX local=ADDR remote=ADDR "
                  "[match=PREFIX/LEN] (or one JSON object) | ipsec sa del NF SPI")
      ->required();
  ctl->add_option("--nf", ctl_nf,
                  "The NF to update, where the configuration has several of its type (ipsec names it "
                  "after add|del)");
  ctl->footer("Examples:\n  gpunfv ctl /tmp/gpunfv.sock stats\n"
              "  gpunfv ctl /tmp/gpunfv.sock routes replace 10.0.0.0/8 p2\n"
              "  gpunfv ctl /tmp/gpunfv.sock routes replace data/router/example.routes\n"
              "  gpunfv ctl /tmp/gpunfv.sock nids replace local.rules et-web.rules.gz\n"
              "  gpunfv ctl /tmp/gpunfv.sock ipsec sa add esp-out spi=0x2001 enc_key=HEX40 \\\n"
              "      auth_key=HEX40 local=198.51.100.1 remote=203.0.113.9 match=192.168.7.0/24\n"
              "  gpunfv ctl /tmp/gpunfv.sock ipsec sa del esp-out 0x2001");

  app.add_subcommand("version", "Print the version and build options")->callback([] {
    fmt::print("gpunfv 0.1.0, CUDA backend: {}, NF types: {}\n", GPUNFV_HAVE_CUDA ? "yes" : "no",
               gpunfv::known_nf_types());
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitConfig;
  }
  if (nf_process->parsed()) return gpunfv::run_nf_process_command(nf_process_options);
  if (profile->parsed()) return gpunfv::run_profile_command(profile_options);
  if (report_cmd->parsed()) return gpunfv::run_report_command(report_options);
  if (ctl->parsed()) return gpunfv::run_ctl(ctl_socket, ctl_words, ctl_nf);
  if (!run->parsed()) return 0;
  try {
    return cmd_run(config, backend, report, report_html, duration, quiet);
  } catch (const gpunfv::ConfigError& e) {
    std::fprintf(stderr, "gpunfv: error: %s\n", e.what());
    return kExitConfig;
#if GPUNFV_HAVE_CUDA
  } catch (const gpunfv::GpuError& e) {
    std::fprintf(stderr, "gpunfv: GPU error: %s\n", e.what());
    return kExitRuntime;
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpunfv: error: %s\n", e.what());
    return kExitRuntime;
  }
}
