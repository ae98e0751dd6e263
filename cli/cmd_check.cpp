// `kforge check SPEC... [--json]`: validates problem specs and prints what each one defines
// (dims, tensors, ops, FLOPs and compulsory bytes). Exit 2 if any spec is invalid.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "problem/spec.h"
#include "problem/work.h"

namespace kforge::cli {
namespace {

std::string shape_text(const Tensor& t) {
    std::string s = "[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
        s += (i ? ", " : "") + (t.dim_names[i].empty() ? "" : t.dim_names[i] + "=") +
             std::to_string(t.shape[i]);
    }
    return s + "]";
}

std::string human(double x, const char* unit) {
    const std::pair<double, const char*> scales[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    char buf[64];
    for (const auto& [scale, prefix] : scales) {
        if (x >= scale) {
            std::snprintf(buf, sizeof buf, "%.4g %s%s", x / scale, prefix, unit);
            return buf;
        }
    }
    std::snprintf(buf, sizeof buf, "%.4g %s", x, unit);
    return buf;
}

void print_summary(const Problem& p, const WorkCount& work) {
    std::printf("%s: ok (policy %s, atol %g, rtol %g, min_fraction %g, max_error %g)\n",
                p.name.c_str(), std::string(to_string(p.policy)).c_str(), p.tolerance.atol,
                p.tolerance.rtol, p.tolerance.min_fraction, effective_max_error(p.tolerance));
    if (!p.description.empty()) std::printf("  %s\n", p.description.c_str());
    std::string dims;
    for (const auto& [name, value] : p.dims) {
        dims += (dims.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    }
    std::printf("  dims: %s\n  tensors:\n", dims.empty() ? "(none)" : dims.c_str());
    for (const Tensor& t : p.tensors) {
        std::printf("    %-16s %-12s %-5s %s\n", t.name.c_str(),
                    std::string(to_string(t.role)).c_str(), std::string(to_string(t.dtype)).c_str(),
                    shape_text(t).c_str());
    }
    std::printf("  ops:\n");
    for (const Op& op : p.ops) {
        std::string args;
        for (const std::string& in : op.inputs) args += (args.empty() ? "" : ", ") + in;
        std::printf("    %s = %s(%s)\n", op.output.c_str(), std::string(to_string(op.kind)).c_str(),
                    args.c_str());
    }
    std::printf("  work: %s matrix + %s other; bytes %s fused (compulsory), %s unfused\n",
                human(work.flops_matrix, "FLOP").c_str(), human(work.flops_other, "FLOP").c_str(),
                human(work.bytes_fused, "B").c_str(), human(work.bytes_unfused, "B").c_str());
}

nlohmann::ordered_json work_json(const WorkCount& w) {
    nlohmann::ordered_json j;
    j["flops_matrix"] = w.flops_matrix;
    j["flops_other"] = w.flops_other;
    j["bytes_fused"] = w.bytes_fused;
    j["bytes_unfused"] = w.bytes_unfused;
    return j;
}

int run_check(const std::vector<std::string>& files, bool json) {
    int rc = kExitOk;
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    nlohmann::ordered_json errors = nlohmann::ordered_json::array();
    auto report_error = [&](const std::string& file, const Error& e) {
        eprintf("kforge: %s: %s\n", file.c_str(), e.to_string().c_str());
        errors.push_back({{"file", file}, {"error", e.to_string()}});
    };
    for (const std::string& file : files) {
        auto problem = load_problem(file);
        if (!problem) {
            // load_problem names the file itself when it cannot read it.
            Error e = problem.error();
            if (e.where == file) e.where.clear();
            report_error(file, e);
            rc = kExitUserError;
            continue;
        }
        auto work = count_work(*problem);
        if (!work) {
            report_error(file, work.error());
            rc = kExitUserError;
            continue;
        }
        if (json) {
            nlohmann::ordered_json entry;
            entry["file"] = file;
            entry["problem"] = problem_to_json(*problem);
            entry["work"] = work_json(*work);
            results.push_back(entry);
        } else {
            print_summary(*problem, *work);
        }
    }
    if (json) {
        // {"specs": [...], "errors": [...], "exit": N, "error": the first one's message}
        nlohmann::ordered_json j{{"specs", results}, {"errors", errors}, {"exit", rc}};
        if (!errors.empty())
            j["error"] = errors[0]["file"].get<std::string>() + ": " +
                         errors[0]["error"].get<std::string>();
        print_json(j);
    }
    return rc;
}

}  // namespace

void register_check(CLI::App& app) {
    auto* cmd = app.add_subcommand("check", "Validate problem specs and summarize them");
    static std::vector<std::string> files;
    static bool json = false;
    cmd->add_option("spec", files, "problem spec files (JSON)")->required();
    cmd->add_flag("--json", json, "print the normalized specs and work counts as JSON");
    cmd->callback([] { exit_code() = run_check(files, json); });
}

}  // namespace kforge::cli
