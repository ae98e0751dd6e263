// Capture of a launch sequence into a CUDA graph (runtime/launch_graph.h).
#include "runtime/launch_graph.h"

namespace kforge::runtime {

bool stream_takes_graph(const DriverApi& api, CUstream stream, std::string& why) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = api.cuStreamIsCapturing(stream, &status);
    if (r != CUDA_SUCCESS) {
        why = "cuStreamIsCapturing: " + driver_error_string(api, r);
        return false;
    }
    if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
        why = "the stream is being captured by the caller";
        return false;
    }
    return true;
}

Expected<CapturedGraph> capture_graph(const DriverApi& api, CUstream stream,
                                      const std::function<LaunchFailure()>& enqueue,
                                      CUgraphExec reuse) {
    CUresult r = api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS)
        return make_error("graph capture", "cuStreamBeginCapture: " + driver_error_string(api, r));
    LaunchFailure f = enqueue();
    CUgraph graph = nullptr;
    CUresult end = api.cuStreamEndCapture(stream, &graph);  // always: the stream leaves capture
    struct Destroy {
        const DriverApi& api;
        CUgraph& g;
        ~Destroy() {
            if (g) api.cuGraphDestroy(g);
        }
    } destroy{api, graph};
    if (!f.ok())
        return make_error("graph capture", f.what + " while capturing: " +
                                               driver_error_string(api, f.result));
    if (end != CUDA_SUCCESS || !graph)
        return make_error("graph capture", "cuStreamEndCapture: " + driver_error_string(api, end));
    if (reuse) {
        CUgraphExecUpdateResultInfo info{};
        if (api.cuGraphExecUpdate(reuse, graph, &info) == CUDA_SUCCESS)
            return CapturedGraph{reuse, true};
    }
    CapturedGraph out;
    r = api.cuGraphInstantiateWithFlags(&out.exec, graph, 0);
    if (r != CUDA_SUCCESS)
        return make_error("graph capture", "cuGraphInstantiateWithFlags: " +
                                               driver_error_string(api, r));
    return out;
}

}  // namespace kforge::runtime
