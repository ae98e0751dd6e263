// CudaDevice::time(): the timing protocol (CONVENTIONS "Measurement"), in code:
//   - warm-up iterations apart from measured ones (not recorded);
//   - before each iteration, outside the event pair: zero_init buffers and builder workspaces
//     reset, then (flush_l2) a cuMemsetD8Async over a buffer of 2x L2 so every iteration starts
//     with a cold L2;
//   - one CUDA event pair around the launch sequence only (use_graph: one cuGraphLaunch of the
//     captured sequence), nothing else between the events;
//   - every iteration is polled to completion against Candidate::run_timeout_s (kTimedOut, never
//     a blocking wait), then NVML clocks/temperature/throttle reasons are sampled;
//   - audit_iteration: the outputs are copied back after that iteration (outside the events);
//   - stops early once the measured time exceeds max_seconds.
// per_kernel: after the samples, a pass of its own (so the samples keep nothing between their
// events) times each program kernel: min(kKernelPassIterations, samples) iterations, each with
// the same resets and L2 flush before it, an event recorded ahead of every launch and one after
// the last (the whole sequence launched directly, never as a graph); a kernel's time is the
// sum of its launches' event intervals (device/kernel_times.h), its median over the
// iterations. An interval includes the gap the event record leaves between two launches (a few
// microseconds at most), so the kernels' times sum to a little more than the samples' median.
// A program of one kernel takes the samples' median and needs no pass.
#include <algorithm>

#include "common/stats.h"
#include "device/cuda_device.h"

namespace kforge::eval {
namespace {
constexpr int kKernelPassIterations = 5;  // a quick tier of 3 + 20 runs: +22% launches
}  // namespace

TimingResult CudaDevice::time(const TimingOptions& options) {
    TimingResult t;
    if (!loaded_ || !have_inputs_) {
        t.status = EvalStatus::kLaunchFailed;
        t.message = "time() needs a loaded candidate and a run() first";
        return t;
    }
    if (!nvml_->available()) t.clock_note = nvml_->note();
    return time_with(options, std::move(t));
}

TimingResult CudaDevice::time_with(const TimingOptions& options, TimingResult t) {
    auto finish = [&](const Failure& f) {
        t.status = f.status;
        t.message = f.message;
        t.context_lost = f.context_lost;
        return t;
    };
    CUevent start = nullptr, stop = nullptr;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    struct Cleanup {
        CudaDevice* d;
        CUevent& a;
        CUevent& b;
        CUgraph& g;
        CUgraphExec& e;
        ~Cleanup() {
            if (a) d->api_->cuEventDestroy(a);
            if (b) d->api_->cuEventDestroy(b);
            if (e) d->api_->cuGraphExecDestroy(e);
            if (g) d->api_->cuGraphDestroy(g);
        }
    } cleanup{this, start, stop, graph, exec};
    CUresult r = api_->cuEventCreate(&start, CU_EVENT_DEFAULT);
    if (r == CUDA_SUCCESS) r = api_->cuEventCreate(&stop, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS) return finish(fail(r, "event creation"));

    if (options.use_graph) {
        r = api_->cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        if (r != CUDA_SUCCESS) return finish(fail(r, "graph capture"));
        Failure f = enqueue_launches();
        CUresult end = api_->cuStreamEndCapture(stream_, &graph);
        if (!f.ok()) return finish(f);
        if (end != CUDA_SUCCESS) return finish(fail(end, "graph capture"));
        r = api_->cuGraphInstantiateWithFlags(&exec, graph, 0);
        if (r != CUDA_SUCCESS) return finish(fail(r, "graph instantiation"));
    }
    auto sequence = [&]() -> Failure {
        if (!exec) return enqueue_launches();
        CUresult g = api_->cuGraphLaunch(exec, stream_);
        return g == CUDA_SUCCESS ? Failure{} : fail(g, "graph launch");
    };

    double measured_ns = 0;
    int total = options.warmup_iterations + options.iterations;
    for (int i = 0; i < total; ++i) {
        bool timed = i >= options.warmup_iterations;
        int index = i - options.warmup_iterations;
        Failure f = enqueue_resets(false);
        if (f.ok() && options.flush_l2) {
            r = api_->cuMemsetD8Async(flush_, static_cast<unsigned char>(i), flush_bytes_, stream_);
            if (r != CUDA_SUCCESS) f = fail(r, "L2 flush");
        }
        if (f.ok() && timed && (r = api_->cuEventRecord(start, stream_)) != CUDA_SUCCESS)
            f = fail(r, "event record");
        if (f.ok()) f = sequence();
        if (f.ok() && timed && (r = api_->cuEventRecord(stop, stream_)) != CUDA_SUCCESS)
            f = fail(r, "event record");
        Failure w = wait(run_timeout_s_);
        if (!f.ok()) return finish(f);
        if (!w.ok()) return finish(w);
        if (!timed) continue;
        float ms = 0;
        r = api_->cuEventElapsedTime(&ms, start, stop);
        if (r != CUDA_SUCCESS) return finish(fail(r, "event elapsed time"));
        TimingSample s;
        s.time_ns = static_cast<double>(ms) * 1e6;
        nvml_->sample(s);
        t.samples.push_back(s);
        if (index == options.audit_iteration) {
            Failure c = copy_outputs(t.audit_outputs);
            if (!c.ok()) return finish(c);
        }
        measured_ns += s.time_ns;
        if (measured_ns > options.max_seconds * 1e9) break;
    }
    if (options.per_kernel && !t.samples.empty() && kernel_groups_.kernels == 1) {
        std::vector<double> times;
        for (const TimingSample& s : t.samples) times.push_back(s.time_ns);
        t.kernel_times_ns = {median(std::move(times))};
    } else if (options.per_kernel && !t.samples.empty() && kernel_groups_.kernels > 1) {
        int iterations = std::min<int>(kKernelPassIterations, static_cast<int>(t.samples.size()));
        Failure f = time_kernels(iterations, options.flush_l2, t.kernel_times_ns);
        if (!f.ok()) return finish(f);
    }
    return t;
}

CudaDevice::Failure CudaDevice::time_kernels(int iterations, bool flush_l2,
                                             std::vector<double>& kernel_times_ns) {
    const size_t n = launches_.size();
    std::vector<CUevent> events(n + 1, nullptr);
    struct Cleanup {
        CudaDevice* d;
        std::vector<CUevent>& events;
        ~Cleanup() {
            for (CUevent e : events)
                if (e) d->api_->cuEventDestroy(e);
        }
    } cleanup{this, events};
    for (CUevent& e : events)
        if (CUresult r = api_->cuEventCreate(&e, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
            return fail(r, "event creation");
    auto record_before = [&](size_t launch) -> runtime::LaunchFailure {
        CUresult r = api_->cuEventRecord(events[launch], stream_);
        return r == CUDA_SUCCESS ? runtime::LaunchFailure{} : runtime::LaunchFailure{r, "event record"};
    };
    std::vector<std::vector<double>> launch_ns;
    for (int i = 0; i < iterations; ++i) {
        Failure f = enqueue_resets(false);
        CUresult r = CUDA_SUCCESS;
        if (f.ok() && flush_l2 &&
            (r = api_->cuMemsetD8Async(flush_, static_cast<unsigned char>(i), flush_bytes_,
                                       stream_)) != CUDA_SUCCESS)
            f = fail(r, "L2 flush");
        if (f.ok()) {
            runtime::LaunchFailure l = runtime::enqueue_launches(*api_, launches_, stream_,
                                                                 record_before);
            if (!l.ok()) f = fail(l.result, l.what);
        }
        if (f.ok() && (r = api_->cuEventRecord(events[n], stream_)) != CUDA_SUCCESS)
            f = fail(r, "event record");
        Failure w = wait(run_timeout_s_);
        if (!f.ok()) return f;
        if (!w.ok()) return w;
        std::vector<double> row;
        for (size_t l = 0; l < n; ++l) {
            float ms = 0;
            r = api_->cuEventElapsedTime(&ms, events[l], events[l + 1]);
            if (r != CUDA_SUCCESS) return fail(r, "event elapsed time");
            row.push_back(static_cast<double>(ms) * 1e6);
        }
        launch_ns.push_back(std::move(row));
    }
    kernel_times_ns = median_kernel_times(kernel_groups_, launch_ns);
    return {};
}

}  // namespace kforge::eval
