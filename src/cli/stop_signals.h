// SIGINT and SIGTERM during `gpunfv run`: the first asks the run to stop as its deadline would
// (ports stop, what is in flight drains, captures, alert logs, summary and report are written
// whole, exit 0); a second quits at once (exit 128 + signal), for a drain that cannot finish.
#pragma once

#include <atomic>

namespace gpunfv {

// Installs the handlers (sigaction) and returns the flag they set, for RunOptions::stop.
const std::atomic<bool>& install_stop_signals();

}  // namespace gpunfv
