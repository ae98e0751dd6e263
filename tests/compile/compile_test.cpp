// compile_cuda with the real nvcc (and NVRTC) on tiny kernels: cubin, ptxas report, compile
// errors as a status, the content-addressed cache (miss, hit, a changed flag misses), and the
// parallel pool. Integration: needs the CUDA toolkit, no GPU.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "compile/compile.h"
#include "tests/compile/compile_fixture.h"

namespace kforge::compile {
namespace {
namespace fs = std::filesystem;
using testing::kKernel;
using testing::options_in;

fs::path fresh_dir(const std::string& name) { return testing::fresh_dir("compile_test", name); }


// A cubin depends on kforge's headers as well as on the generated source: two include dirs
// whose kernels/*.cuh differ give different keys, the same contents the same key.
TEST(CompileKey, KforgeHeadersAreInTheKey) {
    auto tree = [](const std::string& name, const std::string& body) {
        fs::path d = fresh_dir(name);
        fs::create_directories(d / "kernels");
        std::ofstream(d / "kernels" / "act.cuh") << body;
        return d;
    };
    const fs::path a = tree("hdr_a", "float f(float x) { return x; }\n");
    const fs::path b = tree("hdr_b", "float f(float x) { return -x; }\n");
    const fs::path a2 = tree("hdr_a2", "float f(float x) { return x; }\n");
    const fs::path none = fresh_dir("hdr_none");
    EXPECT_EQ(kforge_headers_digest(a.string()), kforge_headers_digest(a2.string()));
    EXPECT_NE(kforge_headers_digest(a.string()), kforge_headers_digest(b.string()));
    EXPECT_EQ(kforge_headers_digest(none.string()), "");
    auto key_with = [](const fs::path& dir) {
        CompileOptions o;
        o.arch = "sm_90a";
        o.include_dirs = {dir.string()};
        return compile_key(kKernel, "nvcc 13", o);
    };
    EXPECT_NE(key_with(a), key_with(b));
    // kforge's own include dir (the source root) has headers, so its key carries them
    bool kforge_dir = false;
    for (const auto& d : default_compile_options("sm_90a").include_dirs)
        kforge_dir |= !kforge_headers_digest(d).empty();
    EXPECT_TRUE(kforge_dir);
    for (const auto& d : {a, b, a2, none}) fs::remove_all(d);
}

TEST(CompileCuda, NvccCubinReportAndCache) {
    fs::path cache = fresh_dir("cache");
    CompileOptions o = options_in(cache);
    auto first = compile_cuda(kKernel, o);
    ASSERT_TRUE(first.ok()) << first.error().to_string();
    ASSERT_EQ(first->status, CompileStatus::kOk) << first->log;
    EXPECT_FALSE(first->cache_hit);
    EXPECT_GT(first->time_compile_ns, 0);
    EXPECT_TRUE(fs::file_size(first->cubin_path) > 0);
    EXPECT_EQ(fs::path(first->cubin_path).parent_path().filename().string(), first->key);
    EXPECT_EQ(fs::path(first->cubin_path).parent_path().parent_path().filename().string(),
              first->key.substr(0, 2));
    ASSERT_EQ(first->kernels.size(), 1u) << first->log;
    EXPECT_EQ(first->kernels[0].name, "kforge_scale");
    EXPECT_GT(first->kernels[0].registers, 0);

    auto second = compile_cuda(kKernel, o);
    ASSERT_TRUE(second.ok());
    EXPECT_TRUE(second->cache_hit);
    EXPECT_EQ(second->key, first->key);
    EXPECT_EQ(second->cubin_path, first->cubin_path);
    EXPECT_EQ(second->kernels[0].registers, first->kernels[0].registers);

    o.extra_flags = {"-lineinfo"};
    auto third = compile_cuda(kKernel, o);
    ASSERT_TRUE(third.ok());
    EXPECT_FALSE(third->cache_hit);
    EXPECT_NE(third->key, first->key);
    EXPECT_FALSE(fs::exists(cache / "tmp") && !fs::is_empty(cache / "tmp"));
    fs::remove_all(cache);
}

TEST(CompileCuda, CompileErrorIsAStatusWithTheMessage) {
    fs::path cache = fresh_dir("error");
    auto r = compile_cuda("extern \"C\" __global__ void k() { undefined_name = 1; }\n",
                          options_in(cache));
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->status, CompileStatus::kCompileFailed);
    EXPECT_NE(r->log.find("undefined_name"), std::string::npos) << r->log;
    auto again = compile_cuda("extern \"C\" __global__ void k() { undefined_name = 1; }\n",
                              options_in(cache));
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->cache_hit);  // a failure is deterministic: not compiled twice
    EXPECT_EQ(again->status, CompileStatus::kCompileFailed);
    fs::remove_all(cache);
}

TEST(CompileCuda, MissingNvccIsToolchainMissing) {
    CompileOptions o = options_in(fresh_dir("missing"));
    o.nvcc = "/nonexistent/nvcc";
    auto r = compile_cuda(kKernel, o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, CompileStatus::kToolchainMissing);
    fs::remove_all(o.cache_dir);
}

TEST(CompileCuda, NvrtcCompilesPlainKernels) {
    fs::path cache = fresh_dir("nvrtc");
    CompileOptions o = options_in(cache);
    o.try_nvrtc = true;
    auto r = compile_cuda(kKernel, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->status, CompileStatus::kOk) << r->log;
    EXPECT_EQ(r->backend, CompileBackend::kNvrtc) << r->log;
    ASSERT_EQ(r->kernels.size(), 1u) << r->log;
    EXPECT_EQ(r->kernels[0].name, "kforge_scale");
    fs::remove_all(cache);
}

TEST(CompileCuda, PoolCompilesManyAndSharesTheCache) {
    fs::path cache = fresh_dir("pool");
    std::vector<std::string> sources;
    for (int i = 0; i < 3; ++i)
        sources.push_back(std::string(kKernel) + "// variant " + std::to_string(i % 2) + "\n");
    auto results = compile_many(sources, options_in(cache), 2);
    ASSERT_EQ(results.size(), 3u);
    for (const auto& r : results) {
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(r->status, CompileStatus::kOk) << r->log;
    }
    EXPECT_EQ(results[0]->key, results[2]->key);
    EXPECT_NE(results[0]->key, results[1]->key);
    EXPECT_EQ(results[0]->cubin_path, results[2]->cubin_path);
    fs::remove_all(cache);
}

}  // namespace
}  // namespace kforge::compile
