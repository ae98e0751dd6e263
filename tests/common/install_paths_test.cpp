// Run-time path resolution (common/install_paths.h): an installed tree found beside the binary,
// the overrides and their errors, CUTLASS from a Python environment, the source-tree fallback.
#include "common/install_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kforge {
namespace {

namespace fs = std::filesystem;

class InstallPathsTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("kforge-paths-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }
    void touch(const fs::path& p, bool executable = false) {
        fs::create_directories(p.parent_path());
        std::ofstream(p) << "x\n";
        if (executable) ::chmod(p.c_str(), 0755);
    }
    fs::path root_;
};

TEST_F(InstallPathsTest, AnInstalledTreeIsFoundBesideTheBinary) {
    const fs::path prefix = root_ / "prefix";
    touch(prefix / "bin" / "kforge", true);
    touch(prefix / "share" / "kforge" / "kernels" / "cstdint.cuh");
    touch(prefix / "lib" / "python3.11" / "site-packages" / "cutlass_library" / "source" /
          "include" / "cutlass" / "cutlass.h");
    touch(prefix / "bin" / "python3", true);
    auto p = resolve_install_paths({}, (prefix / "bin" / "kforge").string());
    ASSERT_TRUE(p) << p.error().to_string();
    EXPECT_EQ(p->data_dir, (prefix / "share" / "kforge").string());
    EXPECT_EQ(p->data_from, "installed");
    EXPECT_EQ(p->python_dir, (prefix / "share" / "kforge" / "python").string());
    EXPECT_EQ(p->cutlass_include,
              (prefix / "lib" / "python3.11" / "site-packages" / "cutlass_library" / "source" /
               "include").string());
    EXPECT_EQ(p->cutlass_from, "python package");
    EXPECT_EQ(p->python, (prefix / "bin" / "python3").string());
}

TEST_F(InstallPathsTest, WithoutAnInstalledTreeTheSourceTreeIsTheLastResort) {
    touch(root_ / "bin" / "kforge", true);
    auto p = resolve_install_paths({}, (root_ / "bin" / "kforge").string());
    ASSERT_TRUE(p) << p.error().to_string();
    EXPECT_EQ(p->data_dir, KFORGE_SOURCE_DIR);
    EXPECT_EQ(p->data_from, "source tree");
    EXPECT_EQ(p->python, "");
}

TEST_F(InstallPathsTest, OverridesWinAndAcceptACutlassCheckoutOrPackage) {
    touch(root_ / "home" / "kernels" / "cstdint.cuh");
    touch(root_ / "checkout" / "include" / "cutlass" / "cutlass.h");
    auto p = resolve_install_paths({(root_ / "home").string(), (root_ / "checkout").string()},
                                   "/nonexistent/bin/kforge");
    ASSERT_TRUE(p) << p.error().to_string();
    EXPECT_EQ(p->data_dir, (root_ / "home").string());
    EXPECT_EQ(p->data_from, "KFORGE_HOME");
    EXPECT_EQ(p->cutlass_include, (root_ / "checkout" / "include").string());
    EXPECT_EQ(p->cutlass_from, "KFORGE_CUTLASS_DIR");
}

TEST_F(InstallPathsTest, AnOverrideWithoutTheDataIsAnErrorNamingTheVariable) {
    auto home = resolve_install_paths({(root_ / "empty").string(), ""}, "/nonexistent/kforge");
    ASSERT_FALSE(home);
    EXPECT_EQ(home.error().where, "KFORGE_HOME");
    EXPECT_NE(home.error().message.find("kernels/cstdint.cuh"), std::string::npos);
    auto cutlass = resolve_install_paths({"", (root_ / "empty").string()}, "/nonexistent/kforge");
    ASSERT_FALSE(cutlass);
    EXPECT_EQ(cutlass.error().where, "KFORGE_CUTLASS_DIR");
    EXPECT_NE(cutlass.error().message.find("cutlass/cutlass.h"), std::string::npos);
}

TEST_F(InstallPathsTest, TheProcessPathsCanBeSetOnceAtStartUp) {
    InstallPaths set;
    set.data_dir = "/opt/kforge/share/kforge";
    set.nvcc = "/opt/cuda/bin/nvcc";
    const InstallPaths before = install_paths();
    set_install_paths(set);
    EXPECT_EQ(install_paths().data_dir, "/opt/kforge/share/kforge");
    EXPECT_NE(describe(install_paths()).find("nvcc: /opt/cuda/bin/nvcc"), std::string::npos);
    set_install_paths(before);
}

}  // namespace
}  // namespace kforge
