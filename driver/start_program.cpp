// The start program of a search (driver/start_program.h).
#include "driver/start_program.h"

#include <fstream>
#include <sstream>

#include "dsl/check.h"
#include "dsl/printer.h"
#include "planner/plan.h"
#include "sol/device.h"

namespace kforge::driver {

Expected<StartProgram> start_program(const std::string& spec, const std::string& program,
                                     const Problem& problem, const eval::DeviceInfo& device) {
    std::string path = program;
    if (path.empty()) {
        path = spec;
        if (path.size() > 5 && path.substr(path.size() - 5) == ".json") path.resize(path.size() - 5);
        path += ".kf";
    }
    if (std::ifstream in(path); in) {
        std::stringstream s;
        s << in.rdbuf();
        return StartProgram{s.str(), false, ""};
    }
    if (!program.empty()) return make_error(program, "cannot read the start program");
    auto spec_entry = find_device(device.datasheet_key);
    if (!spec_entry) return spec_entry.error();
    auto seeded = planner::seed_program(problem, dsl::device_limits(*spec_entry));
    if (!seeded) {
        Error e = seeded.error();
        e.message = "no start program (no --program, no " + path + ") and none can be "
                    "synthesized: " + e.message;
        return e;
    }
    return StartProgram{dsl::print_canonical(*seeded), true,
                        planner::describe_fusion_plan(*seeded)};
}

}  // namespace kforge::driver
