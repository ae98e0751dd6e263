// Self-contained HTML page of a report model: inline CSS, inline SVG charts (report/svg.h),
// no JavaScript, no network, no external fonts. Every text from the store is HTML-escaped.
// A simulated run shows a "simulated" banner and tag.
#pragma once

#include <string>

#include "report/model.h"

namespace kforge::report {

std::string render_html(const Report& report);

// A self-contained page: `title` (escaped) and `body` (HTML) with the reports' style sheet.
std::string html_document(const std::string& title, const std::string& body);

}  // namespace kforge::report
