// The JSON-RPC layer: what a line holds and its error codes; framing under a size limit; the
// tools' argument checks; the operator's limits.
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "mcp/arguments.h"
#include "mcp/jsonrpc.h"
#include "mcp/limits.h"

namespace kforge::mcp {
namespace {

TEST(Classify, RequestNotificationResponse) {
    Incoming r = classify(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}})");
    EXPECT_EQ(r.kind, Incoming::Kind::kRequest);
    EXPECT_EQ(r.id, 7);
    EXPECT_EQ(r.method, "tools/list");
    Incoming n = classify(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    EXPECT_EQ(n.kind, Incoming::Kind::kNotification);
    EXPECT_TRUE(n.params.is_null());
    Incoming s = classify(R"({"jsonrpc":"2.0","id":"a","result":{}})");
    EXPECT_EQ(s.kind, Incoming::Kind::kResponse);
}

TEST(Classify, ErrorsHaveTheirCodes) {
    struct Case {
        const char* line;
        RpcCode code;
        json id;
    };
    const Case cases[] = {
        {"{not json", RpcCode::kParseError, nullptr},
        {R"({"jsonrpc":"2.0","id":1,"method":"x")", RpcCode::kParseError, nullptr},
        {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", RpcCode::kInvalidRequest, nullptr},
        {"[]", RpcCode::kInvalidRequest, nullptr},
        {"42", RpcCode::kInvalidRequest, nullptr},
        {R"({"jsonrpc":"1.0","id":3,"method":"ping"})", RpcCode::kInvalidRequest, 3},
        {R"({"id":4,"method":"ping"})", RpcCode::kInvalidRequest, 4},
        {R"({"jsonrpc":"2.0","id":5})", RpcCode::kInvalidRequest, 5},
        {R"({"jsonrpc":"2.0","id":6,"method":12})", RpcCode::kInvalidRequest, 6},
        {R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})", RpcCode::kInvalidRequest, nullptr},
        {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", RpcCode::kInvalidRequest, nullptr},
        {R"({"jsonrpc":"2.0","id":8,"method":"ping","params":3})", RpcCode::kInvalidRequest, 8},
    };
    for (const Case& c : cases) {
        Incoming in = classify(c.line);
        EXPECT_EQ(in.kind, Incoming::Kind::kError) << c.line;
        EXPECT_EQ(static_cast<int>(in.code), static_cast<int>(c.code)) << c.line;
        EXPECT_EQ(in.id, c.id) << c.line;
        EXPECT_FALSE(in.message.empty());
    }
}

TEST(Classify, ErrorResponseShape) {
    json e = rpc_error(9, RpcCode::kMethodNotFound, "method not found: x");
    EXPECT_EQ(e["jsonrpc"], "2.0");
    EXPECT_EQ(e["id"], 9);
    EXPECT_EQ(e["error"]["code"], -32601);
    EXPECT_FALSE(e.contains("result"));
}

// Writes `text` into a pipe from a thread (it may exceed the pipe's buffer) and reads it back.
std::vector<LineReader::Line> read_all(const std::string& text, size_t limit) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    std::thread writer([&] {
        size_t off = 0;
        while (off < text.size()) {
            ssize_t n = write(fds[1], text.data() + off, text.size() - off);
            if (n <= 0) break;
            off += static_cast<size_t>(n);
        }
        close(fds[1]);
    });
    LineReader reader(fds[0], limit);
    std::vector<LineReader::Line> lines;
    for (;;) {
        LineReader::Line l = reader.next();
        if (l.kind == LineReader::Kind::kEof) break;
        lines.push_back(l);
    }
    writer.join();
    close(fds[0]);
    return lines;
}

TEST(LineReader, LinesCrLfAndALastUnterminatedLine) {
    auto lines = read_all("a\r\nbc\n\nlast", 100);
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[0].text, "a");
    EXPECT_EQ(lines[1].text, "bc");
    EXPECT_EQ(lines[2].text, "");
    EXPECT_EQ(lines[3].text, "last");
}

TEST(LineReader, OversizedLineIsDroppedAndReadingGoesOn) {
    const size_t limit = 1000;
    std::string big(5'000'000, 'x');  // far past the limit and the pipe's buffer
    auto lines = read_all("first\n" + big + "\nafter\n" + std::string(1001, 'y') + "\nend\n", limit);
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[0].text, "first");
    EXPECT_EQ(lines[1].kind, LineReader::Kind::kOversized);
    EXPECT_EQ(lines[1].bytes, big.size());
    EXPECT_EQ(lines[2].text, "after");
    EXPECT_EQ(lines[3].kind, LineReader::Kind::kOversized);
    EXPECT_EQ(lines[4].text, "end");
    // exactly at the limit is accepted
    auto edge = read_all(std::string(limit, 'z') + "\n", limit);
    ASSERT_EQ(edge.size(), 1u);
    EXPECT_EQ(edge[0].kind, LineReader::Kind::kLine);
}

TEST(Arguments, NameTheField) {
    json schema = json::parse(R"({"type":"object","properties":{
        "problem":{"type":"string","minLength":1},
        "tier":{"type":"string","enum":["quick","full"]},
        "rounds":{"type":"integer","minimum":1},
        "files":{"type":"array","items":{"type":"string"}}},"required":["problem"]})");
    EXPECT_TRUE(check_arguments(schema, {{"problem", "p.json"}, {"tier", "full"}}).ok());
    auto expect_error = [&](const json& args, const std::string& where) {
        Status st = check_arguments(schema, args);
        ASSERT_FALSE(st.ok()) << args.dump();
        EXPECT_EQ(st.error().where, where) << st.error().to_string();
    };
    expect_error(json::object(), "arguments.problem");
    expect_error({{"problem", 3}}, "arguments.problem");
    expect_error({{"problem", ""}}, "arguments.problem");
    expect_error({{"problem", "p"}, {"tier", "slow"}}, "arguments.tier");
    expect_error({{"problem", "p"}, {"rounds", 0}}, "arguments.rounds");
    expect_error({{"problem", "p"}, {"rounds", 1.5}}, "arguments.rounds");
    expect_error({{"problem", "p"}, {"rounds", 1e30}}, "arguments.rounds");
    EXPECT_TRUE(check_arguments(schema, {{"problem", "p"}, {"rounds", 3.0}}).ok());
    expect_error({{"problem", "p"}, {"files", {"a", 2}}}, "arguments.files[1]");
    expect_error({{"problem", "p"}, {"shell", "rm -rf /"}}, "arguments.shell");
    EXPECT_FALSE(check_arguments(schema, json::array()).ok());
}

TEST(Ledger, LimitsCannotBeExceeded) {
    OperatorLimits lim;
    lim.concurrent_evaluations = 1;
    lim.gpu_seconds = 10;
    lim.compiles = 2;
    Ledger ledger(lim);
    ASSERT_TRUE(ledger.begin("evaluate", false).ok());
    Status second = ledger.begin("evaluate", false);
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().message.find("in flight"), std::string::npos);
    ledger.end();
    ledger.charge(4, 2);
    EXPECT_DOUBLE_EQ(ledger.gpu_seconds_left(), 6);
    EXPECT_EQ(ledger.compiles_left(), 0);
    Status compile = ledger.begin("compile", true);
    ASSERT_FALSE(compile.ok());
    EXPECT_NE(compile.error().message.find("compile limit"), std::string::npos);
    EXPECT_FALSE(ledger.check_compiles("export").ok());
    ASSERT_TRUE(ledger.begin("evaluate", false).ok());  // no compile needed
    ledger.end();
    ledger.charge(7, 0);
    EXPECT_DOUBLE_EQ(ledger.gpu_seconds_left(), 0);
    Status gpu = ledger.begin("evaluate", false);
    ASSERT_FALSE(gpu.ok());
    EXPECT_NE(gpu.error().message.find("GPU-seconds"), std::string::npos);
}

}  // namespace
}  // namespace kforge::mcp
