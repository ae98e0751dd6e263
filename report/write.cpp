// Writing report files (report/write.h).
#include "report/write.h"

#include <algorithm>
#include <filesystem>

#include "common/atomic_file.h"
#include "report/html.h"
#include "report/json.h"
#include "report/kernel_breakdown.h"
#include "report/markdown.h"
#include "report/svg.h"

namespace kforge::report {

std::string_view to_string(ReportFormat f) {
    switch (f) {
        case ReportFormat::kMarkdown: return "md";
        case ReportFormat::kHtml: return "html";
        case ReportFormat::kJson: return "json";
    }
    return "md";
}

std::optional<ReportFormat> report_format_from_string(std::string_view s) {
    for (ReportFormat f : {ReportFormat::kMarkdown, ReportFormat::kHtml, ReportFormat::kJson})
        if (to_string(f) == s) return f;
    return std::nullopt;
}

Expected<std::vector<ReportFormat>> parse_report_formats(std::string_view list) {
    std::vector<ReportFormat> out;
    size_t pos = 0;
    while (pos <= list.size()) {
        size_t comma = list.find(',', pos);
        if (comma == std::string_view::npos) comma = list.size();
        std::string_view item = list.substr(pos, comma - pos);
        auto f = report_format_from_string(item);
        if (!f)
            return make_error("--format", "unknown report format '" + std::string(item) +
                                              "' (expected md, html, json)");
        out.push_back(*f);
        pos = comma + 1;
    }
    return out;
}

Expected<std::vector<std::string>> write_report_files(
    const std::string& out_dir, const std::vector<std::pair<std::string, std::string>>& files) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec) return make_error(out_dir, "cannot create the report folder: " + ec.message());
    std::vector<std::string> written;
    for (const auto& [name, text] : files) {
        std::string path = (fs::path(out_dir) / name).string();
        // atomically, replacing a symlink planted at the name rather than writing through it
        if (auto st = write_file_atomic(path, text); !st)
            return make_error(path, "cannot write the report: " + st.error().message);
        written.push_back(path);
    }
    return written;
}

Expected<std::vector<std::string>> write_report(const Report& report, const std::string& out_dir,
                                                const std::vector<ReportFormat>& formats) {
    std::vector<std::pair<std::string, std::string>> files;
    for (ReportFormat f : formats)
        files.emplace_back("report." + std::string(to_string(f)),
                           f == ReportFormat::kMarkdown ? render_markdown(report)
                           : f == ReportFormat::kHtml   ? render_html(report)
                                                        : report_to_json(report).dump(2) + "\n");
    // the Markdown report links each best program's kernel chart: written beside it
    if (std::find(formats.begin(), formats.end(), ReportFormat::kMarkdown) != formats.end())
        for (const ProblemReport& p : report.problems)
            if (p.best && !p.best->kernels.empty())
                files.emplace_back(kernel_chart_file(p),
                                   svg_document(svg_kernel_chart(p.best->kernels)));
    return write_report_files(out_dir, files);
}

}  // namespace kforge::report
