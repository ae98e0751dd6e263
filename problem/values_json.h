// The JSON form of tensor values the fp64 interpreter reads and writes (`kforge interpret`, which
// the KernelBench importer in python/kforge_py calls to compare a spec with its PyTorch module).
// Inputs: {"X": [row-major values], "W": {"f64_file": "W.bin"}, ...}: a tensor is a list of
// numbers, or a raw file of little-endian float64 values in row-major order (numpy's
// `a.astype('<f8').tofile(path)`; the path relative to the JSON file's folder) - a network's
// millions of weights read as bytes instead of parsed as text. Outputs: {"dims": {...},
// "outputs": {"Y": {"shape": [...], "data": [...]}}}, or with OutputFiles {"Y": {"shape": [...],
// "f64_file": "Y.bin"}}. Non-finite values are the strings "nan", "inf", "-inf" in a list, both
// ways (a raw file holds them as they are).
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
// cannot be read, is no JSON object of arrays and {"f64_file": ...} objects, or holds something
// other than a number. With `problem`, a tensor's raw file must hold exactly its tensor's numel
// doubles there (checked before it is read); without, a whole number of doubles. A missing or
// unreadable raw file is an Error naming the tensor and the file.
Expected<TensorValues> read_values_file(const std::string& path, const Problem* problem = nullptr);

// The outputs document of `problem` (its dims, then each graph output's shape and data).
nlohmann::ordered_json outputs_to_json(const Problem& problem, const TensorValues& outputs);

// Where the outputs go as raw files: each graph output to `dir`/NAME.bin (NAME the output's
// name where it is a plain file name, else "output<i>"), little-endian float64, row-major; the
// document names each file relative to `base` (the folder the document itself is written to).
struct OutputFiles {
    std::string dir;   // empty: the outputs are inline lists (outputs_to_json)
    std::string base;  // empty: the current folder
};

// The outputs document with every output written to `files.dir` as a raw file (created if
// missing); an Error names the file that cannot be written.
Expected<nlohmann::ordered_json> write_outputs_binary(const Problem& problem,
                                                      const TensorValues& outputs,
                                                      const OutputFiles& files);

// What `kforge interpret` computes: the spec at `spec_path` with `dims` rebound (empty: as
// written), the interpreter run on the inputs file, the outputs document (inline, or as raw
// files where `files.dir` is set). `max_elements` bounds the tensors the interpreter holds
// (interpret()).
Expected<nlohmann::ordered_json> interpret_files(const std::string& spec_path,
                                                 const std::map<std::string, int64_t>& dims,
                                                 const std::string& inputs_path,
                                                 const OutputFiles& files = {},
                                                 int64_t max_elements = kInterpretMaxElements);

}  // namespace kforge
