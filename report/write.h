// Writing a report's files: DIR/report.md, DIR/report.html, DIR/report.json.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "report/model.h"

namespace kforge::report {

enum class ReportFormat { kMarkdown, kHtml, kJson };
std::string_view to_string(ReportFormat f);  // "md", "html", "json"
std::optional<ReportFormat> report_format_from_string(std::string_view s);

// "md,html,json" -> formats; an unknown or empty entry is a user error.
Expected<std::vector<ReportFormat>> parse_report_formats(std::string_view list);

// Renders and writes each format into `out_dir` (created if absent); returns the paths written.
// Each file is written atomically (common/atomic_file.h: a temporary file in `out_dir` renamed
// over report.FMT), so a reader never sees half a report and a symlink at report.html is
// replaced itself, never written through.
Expected<std::vector<std::string>> write_report(const Report& report, const std::string& out_dir,
                                                const std::vector<ReportFormat>& formats);

// Writes each (file name, text) into `out_dir` (created if absent), each atomically as above;
// returns the paths written. write_report and the comparison's writer (compare_render.h) use it.
Expected<std::vector<std::string>> write_report_files(
    const std::string& out_dir, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace kforge::report
