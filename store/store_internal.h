// Helpers shared by the store's .cpp files; not part of the store's interface.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"

namespace kforge::store_detail {

// A user error unless `text` parses as JSON; `what` names the field for the message.
Status check_json(std::string_view text, std::string_view what);

// Error for a row that does not exist: "<table> <id> not found".
Error not_found(std::string_view where, std::string_view table, int64_t id);

}  // namespace kforge::store_detail
