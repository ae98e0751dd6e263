// An exported program's folder as the runtime reads it (`kforge export` writes it): runtime.json,
// the manifest, names the launch plan, the cubin and the host library beside it, the target arch,
// the problem's dims (sorted by name, as the param builders take them) and the tensors a call
// passes, in call order (the problem's inputs, parameters included, then its outputs), each with
// its dtype and shape. `built` is false for a package exported without its binaries
// (`kforge export --no-build`): it has a plan but nothing to launch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/launch_plan.h"
#include "common/expected.h"
#include "problem/problem.h"

namespace kforge::runtime {

inline constexpr int kPackageFormat = 1;
inline constexpr const char* kManifestFile = "runtime.json";

struct PackageTensor {
    std::string name;
    DType dtype = DType::kF32;
    std::vector<int64_t> shape;
    bool output = false;
};

struct PackageManifest {
    int format = kPackageFormat;
    std::string name;          // the problem's
    std::string arch;          // "sm_90a"
    bool built = false;
    std::string plan_file = "plan.json";
    std::string cubin_file;         // empty when not built
    std::string host_library_file;  // empty without param builders or when not built
    std::vector<std::pair<std::string, int64_t>> dims;  // sorted by name
    std::vector<PackageTensor> tensors;                 // inputs, then outputs
};

nlohmann::ordered_json to_json(const PackageManifest& m);
Expected<PackageManifest> manifest_from_json(const nlohmann::json& j);

// The manifest of the program's problem (tensor order, dims) for `arch`; files left to the caller.
PackageManifest manifest_of(const Problem& problem, const std::string& arch);

struct Package {
    std::string dir;
    PackageManifest manifest;
    codegen::LaunchPlan plan;
};
// Reads DIR/runtime.json and the plan it names; a missing or malformed file is an Error naming it.
Expected<Package> read_package(const std::string& dir);

}  // namespace kforge::runtime
