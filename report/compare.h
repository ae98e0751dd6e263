// The comparison of several runs of one problem (`kforge report --compare`): per run, the best
// so far against search wall seconds and against GPU-seconds, for one chart with a curve per
// run (report/compare_render.h). The runs may come from different stores (bench/search keeps
// each proposer mode in its own, so no run is served another's evaluation cache).
//
// Per run (evaluations on the run's device; qualified candidates as in report/model.h):
//   tier        the highest timed tier among the run's ranked evaluations (full/profile over
//               quick): only its medians count, as for the report's best.
//   best so far smallest median of "candidate" samples over that tier's passed evaluations so
//               far, in evaluation order.
//   start       the first such median of the run's start program (proposer "start"), else the
//               run's first such median ("first timing"); speedup = start / best so far.
//   gpu_s       cumulative GPU-seconds, as the report's progress curve: every measured sample
//               and the compile gate's time_compile_ns; evaluations copied from the cache cost 0.
//   wall_s      seconds from the run's start (runs.started_at) to the evaluation's row.
//   search_s    wall_s less the wall of the run's first ranked timing: a wall budget does not
//               count the start program's evaluation, which comes before the search.
//   steps       one point per improvement of the best so far, then one at the run's last
//               evaluation: the step curve, exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"

namespace kforge {
class Store;
}

namespace kforge::report {

struct CompareInput {
    Store* store = nullptr;
    int64_t run_id = 0;
};

struct ComparePoint {
    int64_t evaluation_id = 0;
    double wall_s = 0, search_s = 0, gpu_s = 0;
    double best_ns = 0;
    double speedup = 0;  // start / best so far
};

struct CompareRun {
    int64_t run_id = 0;
    std::string store;   // the store's path
    std::string mode;    // the run's proposers, "diagnosis,parameter"; else its command
    std::string label;   // legend: "#3 random", with the store's file name when several stores
    std::string device_name, status, tier;
    bool simulated = false;
    int evaluations = 0;  // of qualified candidates
    std::optional<double> start_ns, best_ns;
    std::string start_source;  // "start program" or "first timing"
    std::vector<ComparePoint> steps;
};

struct Comparison {
    std::string problem;
    bool simulated = false;  // any run on the simulated device
    std::vector<CompareRun> runs;
    std::vector<std::string> notes;  // e.g. the runs' specs of the problem differ
};

// Builds the comparison. User errors: no run, an unknown run id (naming its store), a run over
// several problems (a suite run), runs of different problems (naming each run's problem).
Expected<Comparison> build_comparison(const std::vector<CompareInput>& inputs);

}  // namespace kforge::report
