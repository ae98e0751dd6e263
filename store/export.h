// The whole record of one run as JSON: `kforge db export` and the report stage read this.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "store/store.h"

namespace kforge {

// Version of the export layout below; bump it when a field changes meaning or disappears.
inline constexpr int kRunExportVersion = 1;

// {
//   "kforge_run_export": 1, "schema_version": N,
//   "run": {id, problem, suite, device_id, status, started_at, finished_at, kforge_version,
//           git_commit, toolchain, options},
//   "devices": [{id, name, uuid, compute_capability, driver, datasheet_key}],
//   "problems": [{id, name, content_hash, created_at, spec}],
//   "candidates": [{id, problem_id, content_hash, proposer, move, parent_ids, created_at,
//                   program, artefacts: [{kind, hash, content}],
//                   evaluations: [{id, device_id, toolchain, shapes_key, tier, status,
//                                  error, evidence, flops, bytes, created_at, cached_from_id,
//                                  median_time_ns, kernel_times_ns,
//                                  measurements: [{label, sample_index, time_ns,
//                                  sm_clock_mhz, mem_clock_mhz, temperature_c,
//                                  throttle_reasons}]}]}]
// }
// JSON columns (options, spec, evidence) are embedded as JSON, not as strings. Keys keep this
// order. median_time_ns is derived from the measurements for convenience (null if none).
Expected<nlohmann::ordered_json> export_run_json(Store& store, int64_t run_id);

}  // namespace kforge
