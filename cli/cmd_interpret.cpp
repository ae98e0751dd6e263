// `kforge interpret SPEC --inputs IN.json [-o OUT.json] [--dims M=16,N=8] [--outputs-binary DIR]
// [--max-elements N]`: runs the fp64 CPU reference interpreter (problem/interpret.h) on given
// inputs and writes the outputs (problem/values_json.h: interpret_files). Used by the KernelBench
// importer (python/kforge_py) to compare an imported spec with its PyTorch module. IN is
// {"X": [row-major values], "W": {"f64_file": "W.bin"}, ...} (a raw little-endian float64 file,
// relative to IN's folder); OUT is {"dims": {...}, "outputs": {"Y": {"shape": [...],
// "data": [...]}}}, or with --outputs-binary each output's "f64_file" in DIR (relative to OUT's
// folder). Non-finite values in a list are the strings "nan", "inf", "-inf" (both ways).
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "problem/values_json.h"

namespace kforge::cli {
namespace {

struct InterpretArgs {
    std::string spec;
    std::string inputs;
    std::string output;
    std::string dims;
    std::string outputs_binary;
    int64_t max_elements = kInterpretMaxElements;
};

Expected<std::map<std::string, int64_t>> parse_dims(const std::string& text) {
    std::map<std::string, int64_t> dims;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty()) continue;
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
            return make_error("--dims", "expected NAME=VALUE, got \"" + item + "\"");
        try {
            size_t used = 0;
            int64_t v = std::stoll(item.substr(eq + 1), &used);
            if (used != item.size() - eq - 1) throw std::invalid_argument("trailing text");
            dims[item.substr(0, eq)] = v;
        } catch (const std::exception&) {
            return make_error("--dims", "\"" + item + "\" is not NAME=INTEGER");
        }
    }
    return dims;
}

int run_interpret(const InterpretArgs& a) {
    auto fail = [&](const Error& e, int rc) {
        eprintf("kforge: %s: %s\n", a.spec.c_str(), e.to_string().c_str());
        return rc;
    };
    std::map<std::string, int64_t> dims;
    if (!a.dims.empty()) {
        auto parsed = parse_dims(a.dims);
        if (!parsed) return fail(parsed.error(), kExitUserError);
        dims = std::move(*parsed);
    }
    OutputFiles files;
    if (!a.outputs_binary.empty()) {
        files.dir = a.outputs_binary;
        const bool to_file = !a.output.empty() && a.output != "-";
        const auto folder = std::filesystem::path(a.output).parent_path();
        files.base = to_file && !folder.empty() ? folder.string() : "";
    }
    auto out = interpret_files(a.spec, dims, a.inputs, files, a.max_elements);
    if (!out) return fail(out.error(), kExitUserError);
    std::string text = out->dump() + "\n";
    if (json_mode() && (a.output.empty() || a.output == "-")) {
        print_json(*out);
        return kExitOk;
    }
    if (a.output.empty() || a.output == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return kExitOk;
    }
    if (auto st = write_file_atomic(a.output, text); !st) return fail(st.error(), kExitUserError);
    return kExitOk;
}

}  // namespace

void register_interpret(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "interpret", "Run the fp64 reference interpreter on a problem with given inputs");
    static InterpretArgs args;
    cmd->add_option("spec", args.spec, "problem spec (JSON)")->required();
    cmd->add_option("--inputs", args.inputs,
                    "JSON object: graph input name -> row-major values, or {\"f64_file\": "
                    "\"NAME.bin\"} (raw little-endian float64, relative to the JSON file)")
        ->required();
    cmd->add_option("-o,--out,--output", args.output, "output JSON file (default: stdout)");
    cmd->add_option("--dims", args.dims, "rebind dims first, e.g. M=16,N=8");
    cmd->add_option("--outputs-binary", args.outputs_binary,
                    "write each output to DIR/NAME.bin (raw little-endian float64); the output "
                    "JSON names the files");
    cmd->add_option("--max-elements", args.max_elements,
                    "the most elements the interpreter may hold, all tensors together (default " +
                        std::to_string(kInterpretMaxElements) + ")")
        ->check(CLI::PositiveNumber);
    cmd->callback([] { exit_code() = run_interpret(args); });
}

}  // namespace kforge::cli
