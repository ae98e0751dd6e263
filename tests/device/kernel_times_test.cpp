// Unit tests of per-kernel times from per-launch times (device/kernel_times.h), and of the
// simulated device's per-kernel times (TimingOptions::per_kernel).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "device/kernel_times.h"
#include "device/sim_device.h"
#include "dsl/parser.h"
#include "perfmodel/sim_model.h"
#include "problem/spec.h"

namespace kforge::eval {
namespace {

TEST(KernelTimes, LaunchesGroupByKernelInTheProgramsOrder) {
    // conv2d-like: k1 runs as three launches, k0 as one launched after them
    KernelGrouping g = group_launches({"k1", "k1", "k0", "k1"}, {"k0", "k1"});
    EXPECT_EQ(g.kernels, 2u);
    EXPECT_EQ(g.kernel_of_launch, (std::vector<size_t>{1, 1, 0, 1}));
    // a launch name the program lacks comes after the program's kernels; a program kernel
    // without a launch gets no index
    g = group_launches({"a", "x", "b"}, {"b", "z", "a"});
    EXPECT_EQ(g.kernels, 3u);
    EXPECT_EQ(g.kernel_of_launch, (std::vector<size_t>{1, 2, 0}));
    // no program: first-launch order
    g = group_launches({"k0", "k0", "k1"}, {});
    EXPECT_EQ(g.kernel_of_launch, (std::vector<size_t>{0, 0, 1}));
}

TEST(KernelTimes, AKernelsTimeIsTheMedianOfItsLaunchesSums) {
    KernelGrouping g = group_launches({"k0", "k1", "k0"}, {"k0", "k1"});
    std::vector<double> t = median_kernel_times(g, {{1, 10, 2}, {5, 30, 5}, {2, 20, 1}});
    // k0: sums 3, 10, 3 -> 3; k1: 10, 30, 20 -> 20
    EXPECT_EQ(t, (std::vector<double>{3, 20}));
    EXPECT_TRUE(median_kernel_times(g, {}).empty());
    EXPECT_TRUE(median_kernel_times(g, {{1, 2}}).empty());  // a row of the wrong size
}

TEST(KernelTimes, SimulatedDeviceReportsTheModelsKernelsOnlyWhenAsked) {
    auto problem = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/swiglu_bf16.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/swiglu_bf16.kf");
    std::stringstream text;
    text << in.rdbuf();
    auto program = dsl::parse_program(text.str(), "swiglu_bf16.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    Candidate c;
    c.problem = &*problem;
    c.program = &*program;
    ASSERT_TRUE((*device)->load(c).ok());
    TimingOptions o;
    o.iterations = 3;
    EXPECT_TRUE((*device)->time(o).kernel_times_ns.empty());
    o.per_kernel = true;
    TimingResult t = (*device)->time(o);
    ASSERT_EQ(t.kernel_times_ns.size(), program->kernels.size());
    ASSERT_EQ(t.kernel_times_ns.size(), 2u);
    double sum = 0;
    for (double k : t.kernel_times_ns) {
        EXPECT_GT(k, perfmodel::kSimLaunchOverheadNs);
        sum += k;
    }
    // the whole program's samples are the sum of the kernels, but never under the SOL floor
    for (const TimingSample& s : t.samples) EXPECT_GE(s.time_ns, 0.97 * sum);
}

}  // namespace
}  // namespace kforge::eval
