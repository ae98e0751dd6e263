// The compiler's own account of a compile that produced no cubin, for the user and the store:
// never a bare status. From the compile log: the first error lines, the header or template the
// compiler could not open (named), and the command that ran.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compile/compile.h"

namespace kforge::compile {

// The first `max_lines` error lines of a compiler log (nvcc's "file:line: fatal error: ...",
// cicc's "file(line): error: ...", NVRTC's "catastrophic error"), each cut to 300 characters,
// duplicates dropped; the first non-empty lines when the log has no line that says "error".
std::vector<std::string> first_error_lines(std::string_view log, size_t max_lines = 6);

// The header or template file a compiler could not open ("kernels/rowwise.cuh"), "" when the
// log says no such thing: nvcc/gcc "fatal error: F: No such file or directory", NVRTC/cicc
// "cannot open source file "F"".
std::string missing_include(std::string_view log);

// "compile_failed: cannot find the header or template F (...)" when one is missing, then the
// first error lines and "command: ..." (the nvcc command line, when nvcc ran), one per line
// indented by two spaces. For kOk: "".
std::string failure_message(const CompileResult& result);

}  // namespace kforge::compile
