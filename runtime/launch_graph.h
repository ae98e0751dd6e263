// A launch sequence as a CUDA graph (the runtime's graph launch mode, codegen::LaunchMode): the
// work an `enqueue` function issues on a stream is captured (thread-local capture mode: other
// threads' work is never caught) and instantiated, or written into an existing executable
// graph by cuGraphExecUpdate when one is given (its kernel and memset nodes take the new
// pointers; launches of it already in flight are not affected). Nothing here synchronizes.
//   capture_graph       the captured and instantiated (or updated) graph; a capture the stream
//                       refuses (the legacy stream, a stream already capturing) is an Error that
//                       names it, and leaves the stream out of capture mode. A caller launching
//                       on a stream it cannot capture (the legacy stream, torch's default)
//                       captures on a stream of its own: a graph is tied to no stream
//   stream_takes_graph  false (with why) for a stream being captured by its caller (kforge's
//                       kernels then simply join the caller's capture, launched one by one)
#pragma once

#include <cuda.h>

#include <functional>
#include <string>

#include "common/expected.h"
#include "runtime/cuda_driver.h"
#include "runtime/launch.h"

namespace kforge::runtime {

struct CapturedGraph {
    CUgraphExec exec = nullptr;
    bool updated = false;  // `reuse` took the new graph; else exec is new (the caller retires reuse)
};

Expected<CapturedGraph> capture_graph(const DriverApi& api, CUstream stream,
                                      const std::function<LaunchFailure()>& enqueue,
                                      CUgraphExec reuse = nullptr);

bool stream_takes_graph(const DriverApi& api, CUstream stream, std::string& why);

}  // namespace kforge::runtime
