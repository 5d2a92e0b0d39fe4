// `gpunfv report REPORT.json --html OUT.html` and `gpunfv run ... --report-html OUT.html`: one
// self-contained HTML page from a JSON report, drawn by the renderer shipped with gpunfv
// (scripts/report_html.py, matplotlib; inline SVG plots). The renderer is looked for at
// BIN/../share/gpunfv/, beside the binary, then in the source tree gpunfv was built from; it
// runs on $GPUNFV_PYTHON, else /usr/bin/python3, else python3 from PATH.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>

namespace gpunfv {

struct ReportOptions {
  std::string json, html;
};

CLI::App* add_report_command(CLI::App& app, ReportOptions& o);
// 0 on success; 2 on a missing or malformed report, a missing renderer or Python package
// (the renderer's message on stderr).
int run_report_command(const ReportOptions& o);
// Runs the renderer: json_path -> html_path; returns its exit status (127: not found).
int render_html_report(const std::string& json_path, const std::string& html_path);
// gpunfv run --report-html: from the report written to json_path, or, where none was asked
// for (json_path empty), from a temporary copy of `report`.
int render_html_report(const nlohmann::json& report, const std::string& json_path, const std::string& html_path);

}  // namespace gpunfv
