// `gpunfv nf-process CONFIG --process NAME ...`: one NF process (nf/nf_process/nf_process.h).
// `gpunfv run` starts it with its socket and the shared batch memory as inherited descriptors;
// it is not meant to be started by hand, and is left out of --help.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gpunfv {

struct NfProcessOptions {
  std::string config, process;
  int socket_fd = -1, sockets = 1, arena_fd = -1;
  size_t arena_bytes = 0;
  bool mid_run = false;  // started again after a loss
  std::string backend = "cpu";  // gpu: its GPU calls go to the Manager
  std::vector<uint32_t> count_on_device;  // NFs (by index) that count on the device
};

CLI::App* add_nf_process_command(CLI::App& app, NfProcessOptions& o);
// Serves until `gpunfv run` closes the socket: 0, or 2 on a configuration error, 1 otherwise
// (the message on stderr).
int run_nf_process_command(const NfProcessOptions& o);

}  // namespace gpunfv
