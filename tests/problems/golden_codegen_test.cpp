// Golden codegen (tinygrad's process replay): a refactor must not change what kforge generates.
// For every problem spec the repository keeps (the built-in suite problems/*.json, the benches'
// inputs, the test fixtures; kSpecDirs), this hashes
//   - the hand-written program's lowered CUDA and launch plan (problems/<name>.kf, when present),
//   - the fusion planner's seed program (its canonical text), its lowered CUDA and plan,
//   - the canonical text of every seed variant,
// on the H200's limits with the evaluator's lowering options (sm_90a, 132 SMs, the program's
// hash), and compares each line with tests/problems/golden_codegen.txt. A line that differs
// names the problem and the artefact.
//
// Regenerate the manifest (only when a change of generated code is intended, and say why in the
// commit): KFORGE_GOLDEN_WRITE=tests/problems/golden_codegen.txt build/ci/tests/problems/test_problems_golden
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "common/hash.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "sol/device.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(KFORGE_SOURCE_DIR);

// Every folder of the repository that keeps problem specs (a JSON that is no spec, or a spec the
// planner cannot express, gives an "error:" line, which is golden too).
const char* const kSpecDirs[] = {
    "problems",
    "bench/kernels/conv/inputs",
    "bench/kernels/fp32acc",
    "bench/kernels/letval",
    "bench/kernels/normalize",
    "bench/kernels/rowpro",
    "bench/kernels/scan",
    "tests/codegen/batched",
    "tests/faults",
    "tests/problem/fuzz/corpus",
};

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

std::vector<fs::path> specs_in(const fs::path& dir) {
    std::vector<fs::path> specs;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".json")
            specs.push_back(entry.path());
    std::sort(specs.begin(), specs.end());
    return specs;
}

// "<name> <artefact> <sha256>" lines, or "<name> <artefact> error: <first line>" when a step
// fails (a failure is golden too: a refactor must not make a program lower or stop lowering).
using Manifest = std::map<std::string, std::string>;

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

void add_lowering(Manifest& m, const std::string& key, const dsl::Program& program,
                  const Problem& problem) {
    codegen::LowerOptions options;
    options.arch = "sm_90a";
    options.sm_count = 132;
    options.program_hash = dsl::program_hash(program);
    auto lowered = codegen::lower_program(program, problem, options);
    if (!lowered) {
        m[key + ".cu"] = "error: " + first_line(lowered.error().to_string());
        return;
    }
    m[key + ".cu"] = sha256_hex(lowered->cuda_source);
    m[key + ".plan"] = sha256_hex(codegen::to_json(lowered->plan).dump());
}

void add_problem(Manifest& m, const fs::path& spec, const dsl::DeviceLimits& limits) {
    const std::string name = fs::relative(spec, kRoot).replace_extension().string();
    auto problem = load_problem(spec.string());
    if (!problem) {
        m[name + " problem"] = "error: " + first_line(problem.error().to_string());
        return;
    }
    const fs::path kf = fs::path(spec).replace_extension(".kf");
    if (fs::exists(kf)) {
        const std::string text = read_text(kf);
        auto program = dsl::parse_program(text, kf.filename().string());
        if (!program) {
            m[name + " kf"] = "error: " + first_line(program.error().to_string());
        } else {
            dsl::CheckResult checked = dsl::check_program(*program, *problem, limits, {});
            if (!checked.ok())
                m[name + " kf"] = "error: " + first_line(checked.errors.front().to_string());
            else
                add_lowering(m, name + " kf", *program, *problem);
        }
    }
    auto seed = planner::seed_program(*problem, limits);
    if (!seed) {
        m[name + " seed"] = "error: " + first_line(seed.error().to_string());
    } else {
        m[name + " seed.kf"] = sha256_hex(dsl::print_canonical(*seed));
        add_lowering(m, name + " seed", *seed, *problem);
    }
    int i = 0;
    for (const dsl::Program& v : planner::seed_variants(*problem, limits))
        m[name + " variant" + std::to_string(i++) + ".kf"] = sha256_hex(dsl::print_canonical(v));
}

Manifest compute_manifest() {
    auto device = find_device("h200");
    EXPECT_TRUE(device.ok());
    const dsl::DeviceLimits limits = device.ok() ? dsl::device_limits(*device) : dsl::DeviceLimits{};
    Manifest m;
    for (const char* dir : kSpecDirs)
        for (const fs::path& spec : specs_in(kRoot / dir)) add_problem(m, spec, limits);
    return m;
}

Manifest read_manifest(const fs::path& path) {
    Manifest m;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        // "<name> <artefact> <value...>": the key is the first two fields.
        size_t a = line.find(' ');
        size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
        if (b == std::string::npos) continue;
        m[line.substr(0, b)] = line.substr(b + 1);
    }
    return m;
}

TEST(GoldenCodegen, GeneratedCodeMatchesTheManifest) {
    const fs::path golden = fs::path(KFORGE_TEST_DATA_DIR) / "golden_codegen.txt";
    const Manifest now = compute_manifest();
    ASSERT_GT(now.size(), 100u) << "too few artefacts: are problems/ and bench/ there?";
    if (const char* out = std::getenv("KFORGE_GOLDEN_WRITE")) {
        std::ofstream f(out);
        f << "# sha256 of generated code per problem; written by test_problems_golden "
             "(tests/problems/golden_codegen_test.cpp)\n";
        for (const auto& [key, value] : now) f << key << " " << value << "\n";
        GTEST_SKIP() << "wrote " << now.size() << " lines to " << out;
    }
    const Manifest want = read_manifest(golden);
    ASSERT_FALSE(want.empty()) << "cannot read " << golden;
    for (const auto& [key, value] : want) {
        auto it = now.find(key);
        if (it == now.end()) {
            ADD_FAILURE() << key << ": in the manifest, no longer generated";
            continue;
        }
        EXPECT_EQ(it->second, value) << key << ": generated code changed";
    }
    for (const auto& [key, value] : now)
        EXPECT_TRUE(want.count(key)) << key << ": generated, not in the manifest (" << value << ")";
}

}  // namespace
}  // namespace kforge
