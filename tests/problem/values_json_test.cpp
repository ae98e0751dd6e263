// problem/values_json.h: the interpreter's JSON inputs and outputs - a spec rebound to a tiny
// shape run on an inputs file, non-finite values both ways, and the errors naming the file, the
// tensor and the index.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "problem/values_json.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

class ValuesJson : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kforge_values_json_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string write(const std::string& name, const std::string& text) {
        const std::string p = (dir_ / name).string();
        std::ofstream(p) << text;
        return p;
    }
    const std::string spec_ = std::string(KFORGE_SOURCE_DIR) + "/problems/bias_gelu_mul_f32.json";
    fs::path dir_;
};

TEST_F(ValuesJson, InterpretsASpecReboundToATinyShape) {
    // Y = gelu(X + b) * G at R=1, C=2: gelu(0) * 5 = 0, and "inf" * 0 gives nan
    const std::string in = write("in.json", R"({"X": [0, "inf"], "b": [0, 0], "G": [5, 0]})");
    auto out = interpret_files(spec_, {{"R", 1}, {"C", 2}}, in);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ((*out)["dims"]["R"], 1);
    EXPECT_EQ((*out)["dims"]["C"], 2);
    const auto& y = (*out)["outputs"]["Y"];
    EXPECT_EQ(y["shape"], nlohmann::ordered_json::parse("[1, 2]"));
    ASSERT_EQ(y["data"].size(), 2u);
    EXPECT_EQ(y["data"][0].get<double>(), 0.0);
    EXPECT_EQ(y["data"][1], "nan");
}

TEST_F(ValuesJson, NonFiniteValuesAreRead) {
    const std::string in = write("in.json", R"({"X": ["nan", "-inf", 1.5]})");
    auto v = read_values_file(in);
    ASSERT_TRUE(v) << v.error().to_string();
    ASSERT_EQ(v->at("X").size(), 3u);
    EXPECT_TRUE(std::isnan(v->at("X")[0]));
    EXPECT_EQ(v->at("X")[1], -INFINITY);
    EXPECT_EQ(v->at("X")[2], 1.5);
}

TEST_F(ValuesJson, ErrorsNameTheFileTheTensorAndTheIndex) {
    auto missing = read_values_file((dir_ / "none.json").string());
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message, "cannot read the inputs file");
    const std::string bad = write("bad.json", R"({"X": [1, "two"]})");
    auto v = read_values_file(bad);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().where, bad + ": X[1]");
    const std::string not_object = write("list.json", "[1, 2]");
    EXPECT_FALSE(read_values_file(not_object));
    auto unknown_dim = interpret_files(spec_, {{"Q", 1}}, bad);
    ASSERT_FALSE(unknown_dim);
    EXPECT_EQ(unknown_dim.error().where, "dims.Q");
}

}  // namespace
}  // namespace kforge
