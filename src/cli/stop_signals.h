// SIGINT and SIGTERM during `gpunfv run`: the first asks the run to stop as its deadline would
// (ports stop, what is in flight drains, captures, alert logs, summary and report are written
// whole, exit 0); a second quits at once (exit 128 + signal), for a drain that cannot finish.
#pragma once

#include <atomic>

namespace gpunfv {

// Installs the handlers (sigaction) and returns the flag they set, for RunOptions::stop.
const std::atomic<bool>& install_stop_signals();
// After the run, before the metrics endpoint lingers (settings.metrics.linger_s): clears the
// flag, so the next signal (the first, or the one after the one that stopped the run) ends the
// linger cleanly instead of quitting at once.
void rearm_stop_signals_for_linger();

// Asks the run to stop as the first SIGTERM would (the control socket's `stop`).
void request_stop();

// SIGHUP asks for every table file of the configuration to be read again: installs its
// handler; take_reload_request() returns whether one came since it was last called.
void install_reload_signal();
bool take_reload_request();

}  // namespace gpunfv
