// parse_ptxas_report: see ptxas_report.h. The report is a sequence of lines such as
//   ptxas info    : Compiling entry function 'kforge_k0' for 'sm_90a'
//   ptxas info    : Function properties for kforge_k0
//       16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
//   ptxas info    : Used 168 registers, used 1 barriers, 16 bytes smem, 784 bytes cmem[0]
#include "compile/ptxas_report.h"

#include <cstdlib>
#include <regex>
#include <sstream>

namespace kforge::compile {
namespace {

int64_t number_before(const std::string& line, const std::string& unit) {
    std::regex re("(\\d+) " + unit);
    std::smatch m;
    if (std::regex_search(line, m, re)) return std::strtoll(m[1].str().c_str(), nullptr, 10);
    return 0;
}

}  // namespace

std::vector<KernelResources> parse_ptxas_report(std::string_view log) {
    static const std::regex entry_re(R"(Compiling entry function '([^']+)' for '([^']+)')");
    static const std::regex props_re(R"(Function properties for (\S+))");
    std::vector<KernelResources> out;
    std::istringstream in{std::string(log)};
    std::string line;
    KernelResources* current = nullptr;  // the entry whose "Used ..." line comes next
    std::string props_name;              // the function of the last "Function properties"
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_search(line, m, entry_re)) {
            out.push_back(KernelResources{});
            out.back().name = m[1];
            out.back().arch = m[2];
            current = &out.back();
        } else if (std::regex_search(line, m, props_re)) {
            props_name = m[1];
        } else if (line.find("stack frame") != std::string::npos) {
            // ptxas prints the properties block before or after the "Used" line.
            for (auto it = out.rbegin(); it != out.rend(); ++it) {
                if (it->name != props_name) continue;
                it->stack_bytes = number_before(line, "bytes stack frame");
                it->spill_stores_bytes = number_before(line, "bytes spill stores");
                it->spill_loads_bytes = number_before(line, "bytes spill loads");
                break;
            }
            props_name.clear();
        } else if (line.find("Used ") != std::string::npos && current) {
            current->registers = static_cast<int>(number_before(line, "registers"));
            current->barriers = static_cast<int>(number_before(line, "barriers"));
            current->smem_bytes = number_before(line, "bytes smem");
            std::smatch c;
            static const std::regex cmem_re(R"((\d+) bytes cmem\[0\])");
            if (std::regex_search(line, c, cmem_re))
                current->cmem_bytes = std::strtoll(c[1].str().c_str(), nullptr, 10);
            current = nullptr;
        }
    }
    return out;
}

std::string format_ptxas_report(const std::vector<KernelResources>& kernels) {
    std::string s;
    for (const auto& k : kernels) {
        s += k.name + " " + k.arch + ": " + std::to_string(k.registers) + " registers, " +
             std::to_string(k.smem_bytes) + " B static smem, " + std::to_string(k.stack_bytes) +
             " B stack, ";
        if (k.spills())
            s += "SPILLS " + std::to_string(k.spill_stores_bytes) + " B stores / " +
                 std::to_string(k.spill_loads_bytes) + " B loads\n";
        else
            s += "no spills\n";
    }
    return s;
}

}  // namespace kforge::compile
