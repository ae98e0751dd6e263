// Canonical printer and content hash of kernel-language programs. Runs on a parsed Program
// (dsl/parser.h); equal programs print equal, whatever their formatting and knob order.
#pragma once

#include <string>
#include <vector>

#include "dsl/ast.h"

namespace kforge::dsl {

// The canonical text: the program line, then per kernel one header line (head and every knob
// in table order, defaults included; optional knobs such as `over`/`eps` only when set, flags
// only when on) and the chain, indented, on the next line. Numbers are printed in their
// shortest form that reads back to the same double. parse(print(p)) equals p up to locations.
std::string print_canonical(const Program& p);

// SHA-256 (lower-case hex) of print_canonical(p): the identity of a program.
std::string program_hash(const Program& p);

// Dims as a program writes them: "[B,M,K]" (also how messages show a tensor's dims).
std::string dims_text(const std::vector<std::string>& dims);

// The shortest text that reads back to `v` ("1", "0.01", "1e-05", "-2.5").
std::string format_number(double v);

}  // namespace kforge::dsl
