// Every path a tool takes stays inside the operator's working folder: relative and absolute
// paths inside pass; an absolute path outside, a `..` escape and a symbolic link leading out
// (to a folder, to a file, dangling) are refused naming the argument.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"
#include "mcp/paths.h"

namespace kforge::mcp {
namespace {

namespace fs = std::filesystem;

class PathsTest : public ::testing::Test {
protected:
    void SetUp() override {
        base_ = *make_private_temp_dir("kforge-mcp-paths");
        fs::create_directories(base_ / "root" / "sub");
        fs::create_directories(base_ / "outside");
        std::ofstream(base_ / "root" / "sub" / "p.json") << "{}";
        std::ofstream(base_ / "outside" / "secret.json") << "{}";
        fs::create_directory_symlink(base_ / "outside", base_ / "root" / "out_link");
        fs::create_symlink(base_ / "outside" / "secret.json", base_ / "root" / "secret_link.json");
        fs::create_symlink(base_ / "outside" / "new.json", base_ / "root" / "dangling.json");
        fs::create_directory_symlink(base_ / "root" / "sub", base_ / "root" / "in_link");
        root_.emplace(*Root::open((base_ / "root").string()));
    }
    void TearDown() override { fs::remove_all(base_); }
    void expect_refused(const std::string& path, Root::Access access) {
        auto r = root_->resolve("arguments.program", path, access);
        ASSERT_FALSE(r.ok()) << path << " resolved to " << r->string();
        EXPECT_EQ(r.error().where, "arguments.program");
    }
    fs::path base_;
    std::optional<Root> root_;
};

TEST_F(PathsTest, InsideResolves) {
    auto rel = root_->resolve("arguments.problem", "sub/p.json", Root::Access::kRead);
    ASSERT_TRUE(rel.ok()) << rel.error().to_string();
    EXPECT_EQ(*rel, fs::canonical(base_ / "root" / "sub" / "p.json"));
    auto abs = root_->resolve("arguments.problem", (base_ / "root" / "sub" / "p.json").string(),
                              Root::Access::kRead);
    EXPECT_TRUE(abs.ok());
    auto dots = root_->resolve("arguments.problem", "sub/../sub/./p.json", Root::Access::kRead);
    EXPECT_TRUE(dots.ok());
    auto link = root_->resolve("arguments.problem", "in_link/p.json", Root::Access::kRead);
    EXPECT_TRUE(link.ok());
    auto fresh = root_->resolve("arguments.out", "new/dir", Root::Access::kWrite);
    EXPECT_TRUE(fresh.ok());
    EXPECT_EQ(root_->relative(*rel), "sub/p.json");
}

TEST_F(PathsTest, EscapesAreRefused) {
    expect_refused((base_ / "outside" / "secret.json").string(), Root::Access::kRead);
    expect_refused("/etc/passwd", Root::Access::kRead);
    expect_refused("../outside/secret.json", Root::Access::kRead);
    expect_refused("sub/../../outside/secret.json", Root::Access::kRead);
    expect_refused("out_link/secret.json", Root::Access::kRead);
    expect_refused("out_link/new.json", Root::Access::kWrite);
    expect_refused("secret_link.json", Root::Access::kRead);
    expect_refused("dangling.json", Root::Access::kWrite);
    expect_refused("", Root::Access::kRead);
    expect_refused(std::string("sub/p.json\0x", 12), Root::Access::kRead);
    expect_refused("sub/missing.json", Root::Access::kRead);
}

TEST_F(PathsTest, OutputTreesWithLinksLeadingOutAreRefused) {
    fs::create_directories(base_ / "root" / "out" / "deep");
    EXPECT_TRUE(root_->check_tree("arguments.out", base_ / "root" / "out").ok());
    EXPECT_TRUE(root_->check_tree("arguments.out", base_ / "root" / "not_yet").ok());
    fs::create_directory_symlink(base_ / "root" / "sub", base_ / "root" / "out" / "inside");
    EXPECT_TRUE(root_->check_tree("arguments.out", base_ / "root" / "out").ok());
    fs::create_directory_symlink(base_ / "outside", base_ / "root" / "out" / "deep" / "leak");
    Status st = root_->check_tree("arguments.out", base_ / "root" / "out");
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().where, "arguments.out");
    EXPECT_NE(st.error().message.find("out/deep/leak"), std::string::npos) << st.error().message;
}

TEST_F(PathsTest, TheProgramBesideASpecMustStayInside) {
    EXPECT_TRUE(root_->check_beside("arguments.problem", base_ / "root" / "sub" / "p.json").ok());
    std::ofstream(base_ / "root" / "sub" / "q.json") << "{}";
    fs::create_symlink(base_ / "outside" / "secret.json", base_ / "root" / "sub" / "q.kf");
    EXPECT_FALSE(root_->check_beside("arguments.problem", base_ / "root" / "sub" / "q.json").ok());
}

TEST(Root, MustBeAFolder) {
    EXPECT_FALSE(Root::open("/nonexistent/kforge-mcp-root").ok());
    EXPECT_FALSE(Root::open("").ok());
}

}  // namespace
}  // namespace kforge::mcp
