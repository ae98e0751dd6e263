// Worker protocol: round trips of every message type, exception-free decoding of garbage,
// version mismatch, and line framing.
#include <gtest/gtest.h>

#include "eval/evaluate.h"
#include "worker/protocol.h"

namespace kforge::eval {
namespace {

TEST(Protocol, EnumsRoundTrip) {
    for (auto t : {MessageType::kHello, MessageType::kTask, MessageType::kResult,
                   MessageType::kError})
        EXPECT_EQ(message_type_from_string(to_string(t)), t);
    for (auto k : {TaskKind::kEvaluate, TaskKind::kTime, TaskKind::kWarm, TaskKind::kPing,
                   TaskKind::kMemory, TaskKind::kShutdown})
        EXPECT_EQ(task_kind_from_string(to_string(k)), k);
    EXPECT_FALSE(task_kind_from_string("Evaluate"));
    EXPECT_FALSE(message_type_from_string(""));
}

TEST(Protocol, HelloRoundTrip) {
    DeviceInfo d{"NVIDIA H200", false, "h200", 132, 52428800, int64_t{150} << 30, "13.0", "GPU-1"};
    std::string line = encode(make_hello(d, 4242));
    ASSERT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1);
    auto m = decode(line.substr(0, line.size() - 1));
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    EXPECT_EQ(m->type, MessageType::kHello);
    EXPECT_EQ(m->pid, 4242);
    EXPECT_EQ(m->device.name, "NVIDIA H200");
    EXPECT_EQ(m->device.sm_count, 132);
    EXPECT_EQ(m->device.memory_bytes, int64_t{150} << 30);
    EXPECT_FALSE(m->device.simulated);
}

TEST(Protocol, TaskAndResultRoundTrip) {
    nlohmann::json payload{{"program", "line1\nline2"}, {"tier", "quick"}};
    std::string line = encode(make_task(7, TaskKind::kEvaluate, payload));
    EXPECT_EQ(line.find('\n'), line.size() - 1);  // the newline inside is escaped
    auto t = decode(line.substr(0, line.size() - 1));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->id, 7u);
    EXPECT_EQ(t->kind, TaskKind::kEvaluate);
    EXPECT_EQ(t->payload, payload);

    line = encode(make_result(7, EvalStatus::kFlaggedGaming, {{"why", "cached"}}, true));
    auto r = decode(line.substr(0, line.size() - 1));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, EvalStatus::kFlaggedGaming);
    EXPECT_EQ(r->report["why"], "cached");
    EXPECT_TRUE(r->restart);

    line = encode(make_error_message(3, "bad payload"));
    auto e = decode(line.substr(0, line.size() - 1));
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->type, MessageType::kError);
    EXPECT_EQ(e->message, "bad payload");
}

// A worker's result carries the report's per-kernel times and kernels (eval/report_json.cpp)
// through one line of the protocol and back into an EvalReport.
TEST(Protocol, ResultCarriesPerKernelTimesAndKernels) {
    EvalReport report;
    report.kernel_times_ns = {620123.5, 65000.25};
    report.kernels = {KernelSummary{"k0", "gemm", {0, 1}, {"S"}},
                      KernelSummary{"k1", "rowwise", {2}, {"Y"}}};
    std::string line = encode(make_result(9, EvalStatus::kPassed, to_json(report, true)));
    auto m = decode(line.substr(0, line.size() - 1));
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    auto back = report_from_json(m->report);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->kernel_times_ns, report.kernel_times_ns);
    ASSERT_EQ(back->kernels.size(), 2u);
    EXPECT_EQ(back->kernels[0].ops, (std::vector<size_t>{0, 1}));
    EXPECT_EQ(back->kernels[1].kind, "rowwise");
    EXPECT_EQ(back->kernels[1].stores, (std::vector<std::string>{"Y"}));
    // a kernel entry of the wrong shape is the report's error, never a throw
    nlohmann::json bad = m->report;
    bad["kernels"] = nlohmann::json::array({{{"kind", "gemm"}}});
    EXPECT_FALSE(report_from_json(bad).ok());
    bad["kernels"] = nlohmann::json::array({{{"name", "k0"}, {"ops", "x"}}});
    EXPECT_FALSE(report_from_json(bad).ok());
}

TEST(Protocol, InvalidUtf8IsReplacedNotThrown) {
    std::string bad = "ptxas: \xff\xfe";
    std::string line = encode(make_error_message(1, bad));
    auto e = decode(line.substr(0, line.size() - 1));
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->message.substr(0, 7), "ptxas: ");
}

TEST(Protocol, VersionMismatchIsClear) {
    auto m = decode(R"({"type":"task","protocol_version":2,"id":1,"kind":"ping","payload":{}})");
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().where, "protocol_version");
    EXPECT_NE(m.error().message.find("peer speaks 2, this kforge speaks 1"), std::string::npos);
}

TEST(Protocol, GarbageNeverThrows) {
    const char* cases[] = {
        "",
        "Segmentation fault (core dumped)",
        R"({"type":"res)",
        "[1,2,3]",
        "null",
        R"({"protocol_version":1})",
        R"({"protocol_version":"1","type":"task"})",
        R"({"protocol_version":1,"type":"bogus","id":1})",
        R"({"protocol_version":1,"type":"task","id":-1,"kind":"ping","payload":{}})",
        R"({"protocol_version":1,"type":"task","id":1,"kind":"dance","payload":{}})",
        R"({"protocol_version":1,"type":"task","id":1,"kind":"ping","payload":[]})",
        R"({"protocol_version":1,"type":"result","id":1,"status":"great","report":{}})",
        R"({"protocol_version":1,"type":"result","id":1,"status":"passed","report":{},"restart":1})",
        R"({"protocol_version":1,"type":"hello","device":{"name":1,"simulated":true},"pid":1})",
        R"({"protocol_version":1,"type":"hello","device":{"name":"x","simulated":true,"sm_count":"many"},"pid":1})",
        R"({"protocol_version":1,"type":"error","id":1})",
        "\xff\xfe\x00garbage",
    };
    for (const char* c : cases) {
        auto m = decode(c);
        EXPECT_FALSE(m.ok()) << c;
    }
    std::string deep(100000, '[');
    EXPECT_FALSE(decode(deep).ok());
    std::string deep_obj;
    for (int i = 0; i < 50000; ++i) deep_obj += "{\"a\":";
    EXPECT_FALSE(decode(deep_obj).ok());
}

TEST(Protocol, LineReaderSplitsAcrossChunks) {
    LineReader r;
    r.append("{\"a\":");
    EXPECT_FALSE(r.next_line());
    r.append("1}\n{\"b\"");
    auto l1 = r.next_line();
    ASSERT_TRUE(l1);
    EXPECT_EQ(*l1, "{\"a\":1}");
    EXPECT_FALSE(r.next_line());
    EXPECT_EQ(r.pending(), "{\"b\"");
    r.append(":2}\n\n");
    EXPECT_EQ(*r.next_line(), "{\"b\":2}");
    EXPECT_EQ(*r.next_line(), "");
    EXPECT_FALSE(r.next_line());
    EXPECT_FALSE(r.overflowed());
}

TEST(Protocol, LineReaderOverflow) {
    LineReader r;
    std::string chunk(1 << 20, 'x');
    for (size_t i = 0; i <= kMaxMessageBytes / chunk.size(); ++i) r.append(chunk);
    EXPECT_TRUE(r.overflowed());
}

}  // namespace
}  // namespace kforge::eval
