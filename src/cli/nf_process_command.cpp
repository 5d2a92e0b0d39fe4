#include "cli/nf_process_command.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>

#include "cli/control_commands.h"
#include "config/config.h"
#include "core/error.h"
#include "core/shared_arena.h"
#include "nf/nf_process/nf_process.h"

namespace gpunfv {

CLI::App* add_nf_process_command(CLI::App& app, NfProcessOptions& o) {
  CLI::App* c = app.add_subcommand("nf-process", "One NF process, started by gpunfv run");
  c->group("");  // internal: not listed in --help
  c->add_option("config", o.config)->required();
  c->add_option("--process", o.process)->required();
  c->add_option("--socket", o.socket_fd)->required();  // the first of --sockets descriptors
  c->add_option("--sockets", o.sockets);
  c->add_option("--arena", o.arena_fd)->required();
  c->add_option("--arena-bytes", o.arena_bytes)->required();
  c->add_flag("--mid-run", o.mid_run);
  c->add_option("--backend", o.backend)->check(CLI::IsMember({"cpu", "gpu"}));
  c->add_option("--count-on-device", o.count_on_device);
  return c;
}

int run_nf_process_command(const NfProcessOptions& o) {
  // The process lives no longer than the gpunfv run that started it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;
  try {
    use_manager_drop_codes(o.socket_fd);
    std::vector<std::unique_ptr<NetworkFunction>> nfs = load_nf_process_nfs(o.config, o.process);
    uint8_t* arena = SharedArena::map(o.arena_fd, o.arena_bytes);
    std::vector<int> socks;
    for (int k = 0; k < o.sockets; ++k) socks.push_back(o.socket_fd + k);
    return serve_nf_process(nfs, socks, arena, o.arena_bytes, o.mid_run,
                            o.backend == "gpu" ? Backend::gpu : Backend::cpu, o.count_on_device,
                            nf_process_control(nfs));
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "gpunfv: NF process %s: error: %s\n", o.process.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpunfv: NF process %s: error: %s\n", o.process.c_str(), e.what());
    return 1;
  }
}

}  // namespace gpunfv
