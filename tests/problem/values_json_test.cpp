// problem/values_json.h: the interpreter's JSON inputs and outputs - a spec rebound to a tiny
// shape run on an inputs file, non-finite values both ways, and the errors naming the file, the
// tensor and the index; tensors as raw float64 files ({"f64_file": ...}) both ways, and their
// errors (missing file, wrong size for the tensor's shape, malformed entry).
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
    // a raw file of float64 values as numpy's tofile writes them (this host is little-endian)
    void write_f64(const std::string& name, const std::vector<double>& v) {
        std::ofstream((dir_ / name).string(), std::ios::binary)
            .write(reinterpret_cast<const char*>(v.data()),
                   static_cast<std::streamsize>(v.size() * sizeof(double)));
    }
    std::vector<double> read_f64(const fs::path& p) {
        std::vector<double> v(fs::file_size(p) / sizeof(double));
        std::ifstream(p, std::ios::binary)
            .read(reinterpret_cast<char*>(v.data()),
                  static_cast<std::streamsize>(v.size() * sizeof(double)));
        return v;
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

TEST_F(ValuesJson, RawFloat64FilesFeedTheInterpreterAndTakeItsOutputs) {
    // Y = gelu(X + b) * G at R=2, C=2; X and b as raw files (b in a subfolder: the path is
    // relative to the JSON file), G as a list; gelu(0) = 0, inf * 0 = nan
    fs::create_directories(dir_ / "w");
    write_f64("X.bin", {0.0, 0.0, INFINITY, 0.0});
    write_f64("w/b.bin", {0.0, 0.0});
    const std::string in = write("in.json", R"({"X": {"f64_file": "X.bin"},
                                                "b": {"f64_file": "w/b.bin"}, "G": [5, 7, 0, 1]})");
    auto v = read_values_file(in);
    ASSERT_TRUE(v) << v.error().to_string();
    EXPECT_EQ(v->at("X").size(), 4u);
    EXPECT_EQ(v->at("X")[2], INFINITY);
    const fs::path outs = dir_ / "outs";
    auto out = interpret_files(spec_, {{"R", 2}, {"C", 2}}, in, {outs.string(), dir_.string()});
    ASSERT_TRUE(out) << out.error().to_string();
    const auto& y = (*out)["outputs"]["Y"];
    EXPECT_EQ(y["shape"], nlohmann::ordered_json::parse("[2, 2]"));
    EXPECT_FALSE(y.contains("data"));
    ASSERT_EQ(y["f64_file"], "outs/Y.bin");  // relative to the document's folder
    const auto data = read_f64(dir_ / "outs" / "Y.bin");
    ASSERT_EQ(data.size(), 4u);
    EXPECT_EQ(data[0], 0.0);
    EXPECT_EQ(data[1], 0.0);
    EXPECT_TRUE(std::isnan(data[2]));
    EXPECT_EQ(data[3], 0.0);
    // the same inputs as lists give the same outputs
    const std::string lists =
        write("lists.json", R"({"X": [0, 0, "inf", 0], "b": [0, 0], "G": [5, 7, 0, 1]})");
    auto inline_out = interpret_files(spec_, {{"R", 2}, {"C", 2}}, lists);
    ASSERT_TRUE(inline_out) << inline_out.error().to_string();
    EXPECT_EQ((*inline_out)["outputs"]["Y"]["data"][2], "nan");
}

TEST_F(ValuesJson, RawFileErrorsNameTheTensorAndTheFile) {
    // missing: the tensor and the path
    const std::string missing = write("missing.json", R"({"X": {"f64_file": "nope.bin"}})");
    auto m = read_values_file(missing);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().where, missing + ": X");
    EXPECT_NE(m.error().message.find("tensor \"X\""), std::string::npos) << m.error().message;
    EXPECT_NE(m.error().message.find("nope.bin"), std::string::npos) << m.error().message;
    // a size that is no whole number of doubles, read without a problem
    write("odd.bin", "12345");
    const std::string odd = write("odd.json", R"({"X": {"f64_file": "odd.bin"}})");
    auto o = read_values_file(odd);
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("not a whole number"), std::string::npos);
    // the wrong count for the tensor's shape at the rebound dims: 3 values for X [2, 2]
    write_f64("X3.bin", {1, 2, 3});
    write_f64("b.bin", {0, 0});
    const std::string wrong = write("wrong.json", R"({"X": {"f64_file": "X3.bin"},
                                                      "b": {"f64_file": "b.bin"},
                                                      "G": [1, 1, 1, 1]})");
    auto w = interpret_files(spec_, {{"R", 2}, {"C", 2}}, wrong);
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().where, wrong + ": X");
    EXPECT_NE(w.error().message.find("24 bytes"), std::string::npos) << w.error().message;
    EXPECT_NE(w.error().message.find("[2, 2]"), std::string::npos) << w.error().message;
    EXPECT_NE(w.error().message.find("4 float64 values = 32 bytes"), std::string::npos)
        << w.error().message;
    // an object that is not {"f64_file": "..."}
    const std::string malformed = write("malformed.json", R"({"X": {"f64_file": 3}})");
    auto bad = read_values_file(malformed);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().where, malformed + ": X");
    const std::string extra = write("extra.json", R"({"X": {"f64_file": "X3.bin", "n": 3}})");
    EXPECT_FALSE(read_values_file(extra));
}

}  // namespace
}  // namespace kforge
