// A one-page Markdown reference of the kernel language, generated from the knob, chain-op and
// row-op tables (dsl/knobs.h, dsl/chain_ops.h), so it always matches what the parser accepts.
// Meant for LLM prompts and `kforge fmt --card`.
#pragma once

#include <string>

namespace kforge::dsl {

std::string reference_card();

}  // namespace kforge::dsl
