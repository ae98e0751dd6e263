// The server in process, on the simulated device (a labelled test double): version negotiation,
// the tool list with its schemas, a malformed stream answered with JSON-RPC errors while serving
// goes on, unknown tools and methods, invalid arguments as tool errors naming the field, a path
// outside the working folder refused, the resource, and an evaluation recorded in the store with
// the client as its proposer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/atomic_file.h"
#include "mcp/server.h"

namespace kforge::mcp {
namespace {

namespace fs = std::filesystem;

class ServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = *make_private_temp_dir("kforge-mcp-server");
        fs::create_directories(dir_ / "root");
        const fs::path problems = fs::path(KFORGE_TEST_DATA_DIR) / ".." / ".." / "problems";
        fs::copy_file(problems / "row_sum_f32.json", dir_ / "root" / "row_sum_f32.json");
        fs::copy_file(problems / "row_sum_f32.kf", dir_ / "root" / "row_sum_f32.kf");
        std::ofstream(dir_ / "secret.json") << "{}";
        ServerConfig c;
        c.device = driver::DeviceChoice::kSim;
        c.kforge_version = "test";
        c.limits.gpu_seconds = 100;
        services_ = std::make_unique<Services>(c, *Root::open((dir_ / "root").string()));
        server_ = std::make_unique<Server>(
            *services_,
            [this](const std::string& line) {
                std::lock_guard lock(mutex_);
                out_.push_back(json::parse(line));
            },
            [](const std::string&) {});
    }
    void TearDown() override {
        server_.reset();
        services_.reset();
        fs::remove_all(dir_);
    }
    // Sends one line; returns the message answering `id` (waits for tool calls).
    json ask(const std::string& line, const json& id) {
        server_->handle_line(line);
        server_->wait_idle();
        std::lock_guard lock(mutex_);
        for (auto m = out_.rbegin(); m != out_.rend(); ++m)  // the newest answer
            if (m->contains("id") && (*m)["id"] == id && !m->contains("method")) return *m;
        return nullptr;
    }
    json request(const std::string& method, const json& params, int id) {
        return ask(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump(), id);
    }
    json call(const std::string& tool, const json& args, int id) {
        return request("tools/call", {{"name", tool}, {"arguments", args}}, id);
    }
    fs::path dir_;
    std::unique_ptr<Services> services_;
    std::unique_ptr<Server> server_;
    std::mutex mutex_;
    std::vector<json> out_;
};

TEST_F(ServerTest, InitializeNegotiatesTheVersion) {
    json r = request("initialize", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()},
                                    {"clientInfo", {{"name", "test-client"}, {"version", "1"}}}}, 1);
    EXPECT_EQ(r["result"]["protocolVersion"], "2025-06-18");
    EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
    EXPECT_EQ(r["result"]["serverInfo"]["name"], "kforge");
    json later = request("initialize", {{"protocolVersion", "2099-01-01"}}, 2);
    EXPECT_EQ(later["result"]["protocolVersion"], "2025-11-25");
    json bad = request("initialize", json::object(), 3);
    EXPECT_EQ(bad["error"]["code"], -32602);
}

TEST_F(ServerTest, ToolsHaveInputAndOutputSchemas) {
    json r = request("tools/list", json::object(), 1);
    std::set<std::string> names;
    for (const json& t : r["result"]["tools"]) {
        names.insert(t["name"].get<std::string>());
        EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
        EXPECT_EQ(t["outputSchema"]["type"], "object") << t["name"];
        EXPECT_FALSE(t["description"].get<std::string>().empty());
    }
    for (const char* n : {"check_problem", "sol", "language_reference", "check_program", "compile",
                          "evaluate", "profile", "optimize", "report", "export",
                          "import_kernelbench"})
        EXPECT_TRUE(names.count(n)) << n;
}

TEST_F(ServerTest, MalformedStreamGetsErrorsAndServingGoesOn) {
    EXPECT_EQ(ask("{oops", nullptr)["error"]["code"], -32700);
    EXPECT_EQ(ask(R"({"jsonrpc":"1.0","id":5,"method":"ping"})", 5)["error"]["code"], -32600);
    EXPECT_EQ(ask(R"({"jsonrpc":"2.0","id":6})", 6)["error"]["code"], -32600);
    EXPECT_EQ(ask(R"([{"jsonrpc":"2.0","id":7,"method":"ping"}])", nullptr)["error"]["code"], -32600);
    EXPECT_EQ(request("no/such", json::object(), 8)["error"]["code"], -32601);
    server_->handle_oversized(10 << 20);
    json ping = request("ping", json::object(), 9);
    EXPECT_TRUE(ping.contains("result"));
}

TEST_F(ServerTest, ToolErrorsNameTheField) {
    json unknown = call("no_such_tool", json::object(), 1);
    EXPECT_EQ(unknown["error"]["code"], -32602);
    json missing = call("check_problem", json::object(), 2);
    EXPECT_TRUE(missing["result"]["isError"].get<bool>());
    EXPECT_EQ(missing["result"]["structuredContent"]["error"]["where"], "arguments.problem");
    json wrong = call("evaluate", {{"problem", "row_sum_f32.json"}, {"program", "row_sum_f32.kf"},
                                   {"tier", "fastest"}}, 3);
    EXPECT_TRUE(wrong["result"]["isError"].get<bool>());
    EXPECT_EQ(wrong["result"]["structuredContent"]["error"]["where"], "arguments.tier");
    json outside = call("check_problem", {{"problem", "../secret.json"}}, 4);
    EXPECT_TRUE(outside["result"]["isError"].get<bool>());
    EXPECT_NE(outside["result"]["content"][0]["text"].get<std::string>().find("outside the working"),
              std::string::npos);
    json abs = call("check_problem", {{"problem", (dir_ / "secret.json").string()}}, 5);
    EXPECT_TRUE(abs["result"]["isError"].get<bool>());
}

TEST_F(ServerTest, ReferenceResource) {
    json list = request("resources/list", json::object(), 1);
    EXPECT_EQ(list["result"]["resources"][0]["uri"], kReferenceUri);
    json read = request("resources/read", {{"uri", kReferenceUri}}, 2);
    EXPECT_NE(read["result"]["contents"][0]["text"].get<std::string>().find("kernel"),
              std::string::npos);
    EXPECT_EQ(request("resources/read", {{"uri", "kforge://nope"}}, 3)["error"]["code"], -32002);
}

TEST_F(ServerTest, EvaluateRecordsTheAgentAsProposer) {
    request("initialize", {{"protocolVersion", "2025-11-25"},
                           {"clientInfo", {{"name", "test-client"}, {"version", "1"}}}}, 1);
    json r = call("evaluate", {{"problem", "row_sum_f32.json"}, {"program", "row_sum_f32.kf"}}, 2);
    ASSERT_FALSE(r["result"]["isError"].get<bool>()) << r.dump();
    const json& s = r["result"]["structuredContent"];
    EXPECT_EQ(s["status"], "passed");
    EXPECT_TRUE(s["simulated"].get<bool>());
    EXPECT_EQ(s["proposer"], "agent:test-client");
    ASSERT_TRUE(s["candidate_id"].is_number_integer());
    auto store = services_->store();
    ASSERT_TRUE(store.ok());
    auto cand = (*store)->get_candidate(s["candidate_id"].get<int64_t>());
    ASSERT_TRUE(cand.ok());
    EXPECT_EQ(cand->proposer, "agent:test-client");
    EXPECT_EQ(cand->run_id, s["run_id"].get<int64_t>());
    // a second program lands in the same run
    json text = call("evaluate", {{"problem", "row_sum_f32.json"},
                                  {"program_text", cand->program_text}, {"tier", "full"}}, 3);
    EXPECT_EQ(text["result"]["structuredContent"]["run_id"], s["run_id"]);
}

TEST_F(ServerTest, CheckProgramGivesTheCheckersMessages) {
    json ok = call("check_program", {{"problem", "row_sum_f32.json"}, {"program", "row_sum_f32.kf"}}, 1);
    EXPECT_TRUE(ok["result"]["structuredContent"]["ok"].get<bool>()) << ok.dump();
    json bad = call("check_program", {{"problem", "row_sum_f32.json"},
                                      {"program_text", "program row_sum_f32 for \"row_sum_f32\"\n"
                                                       "kernel k0 = rowwise sum(X[R,C]) threads 100000\n"
                                                       "    { store Y[R] }\n"}}, 2);
    const json& s = bad["result"]["structuredContent"];
    EXPECT_FALSE(s["ok"].get<bool>()) << bad.dump();
    ASSERT_FALSE(s["errors"].empty());
    EXPECT_NE(s["errors"][0]["where"].get<std::string>().find("<program_text>:"), std::string::npos)
        << s.dump();
}

}  // namespace
}  // namespace kforge::mcp
