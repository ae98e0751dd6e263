// runtime.json, an exported folder's manifest (runtime/package.h): written from a problem, read
// back the same; a malformed or missing manifest is an Error naming what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "problem/spec.h"
#include "runtime/package.h"

namespace kforge::runtime {
namespace {

namespace fs = std::filesystem;

Problem gemm_problem() {
    auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/linear_bias_relu_bf16.json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return *p;
}

TEST(RuntimePackage, ManifestOfAProblemListsInputsThenOutputsAndSortedDims) {
    Problem p = gemm_problem();
    PackageManifest m = manifest_of(p, "sm_90a");
    ASSERT_EQ(m.tensors.size(), p.graph_inputs().size() + p.outputs.size());
    for (size_t i = 0; i < m.tensors.size(); ++i)
        EXPECT_EQ(m.tensors[i].output, i >= p.graph_inputs().size()) << m.tensors[i].name;
    EXPECT_EQ(m.tensors.back().name, p.outputs.back());
    ASSERT_EQ(m.dims.size(), p.dims.size());
    for (size_t i = 1; i < m.dims.size(); ++i) EXPECT_LT(m.dims[i - 1].first, m.dims[i].first);
}

TEST(RuntimePackage, ManifestRoundTripsThroughJson) {
    PackageManifest m = manifest_of(gemm_problem(), "sm_90a");
    m.built = true;
    m.cubin_file = "kernels.cubin";
    m.host_library_file = "kernels_host.so";
    auto back = manifest_from_json(nlohmann::json::parse(to_json(m).dump()));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(to_json(*back).dump(), to_json(m).dump());
}

TEST(RuntimePackage, MalformedManifestsAreErrors) {
    nlohmann::json good = nlohmann::json::parse(to_json(manifest_of(gemm_problem(), "sm_90a")).dump());
    auto expect_error = [](nlohmann::json j, const std::string& fragment) {
        auto m = manifest_from_json(j);
        ASSERT_FALSE(m.ok()) << j.dump();
        EXPECT_NE(m.error().to_string().find(fragment), std::string::npos) << m.error().to_string();
    };
    nlohmann::json j = good;
    j["format"] = 99;
    expect_error(j, "unsupported format 99");
    j = good;
    j.erase("tensors");
    expect_error(j, "malformed");
    j = good;
    j["tensors"][0]["dtype"] = "f8";
    expect_error(j, "unknown dtype");
    j = good;
    j["tensors"][0]["role"] = "both";
    expect_error(j, "role must be input or output");
    j = good;
    j["built"] = true;
    expect_error(j, "names its cubin");
    expect_error(nlohmann::json::array(), "expected an object");
}

TEST(RuntimePackage, MissingFolderOrPlanIsAnError) {
    auto p = read_package("/nonexistent/kforge-package");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().to_string().find("not an exported kforge program"), std::string::npos);
    fs::path dir = fs::temp_directory_path() / ("kforge-package-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / kManifestFile) << to_json(manifest_of(gemm_problem(), "sm_90a")).dump();
    p = read_package(dir.string());
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().to_string().find("plan.json"), std::string::npos) << p.error().to_string();
    std::ofstream(dir / "plan.json") << "{not json";
    p = read_package(dir.string());
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().to_string().find("not valid JSON"), std::string::npos);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::runtime
