// The JSON form of tensor values the fp64 interpreter reads and writes (`kforge interpret`, which
// the KernelBench importer in python/kforge_py calls to compare a spec with its PyTorch module).
// Inputs: {"X": [row-major values], ...}. Outputs: {"dims": {...}, "outputs": {"Y": {"shape":
// [...], "data": [...]}}}. Non-finite values are the strings "nan", "inf", "-inf", both ways.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "problem/interpret.h"
#include "problem/problem.h"

namespace kforge {

// The values of an inputs file; an Error names the file (and the tensor and index) when it
// cannot be read, is no JSON object of arrays, or holds something other than a number.
Expected<TensorValues> read_values_file(const std::string& path);

// The outputs document of `problem` (its dims, then each graph output's shape and data).
nlohmann::ordered_json outputs_to_json(const Problem& problem, const TensorValues& outputs);

// What `kforge interpret` computes: the spec at `spec_path` with `dims` rebound (empty: as
// written), the interpreter run on the inputs file, the outputs document.
Expected<nlohmann::ordered_json> interpret_files(const std::string& spec_path,
                                                 const std::map<std::string, int64_t>& dims,
                                                 const std::string& inputs_path);

}  // namespace kforge
