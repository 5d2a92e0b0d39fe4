// `gpunfv ctl SOCKET COMMAND [ARGS...] [--nf NAME]`: sends one command to a running gpunfv's
// control socket (cli/control_server.h) and prints the reply. Files named in a command are
// sent as absolute paths, so they are read as the caller means them.
#pragma once

#include <string>
#include <vector>

namespace gpunfv {

// Returns the exit status: 0 the command was done, 1 it was refused or the socket failed,
// 2 a usage error.
int run_ctl(const std::string& socket_path, const std::vector<std::string>& words,
            const std::string& nf);

}  // namespace gpunfv
