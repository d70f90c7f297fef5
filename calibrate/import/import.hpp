#pragma once
// One entry point for every measurement file `clustersim calibrate fit` and `clustersim validate` take:
// a file whose text starts with '{' or '[' is JSON (calibrate/import/measurement_json.hpp), anything else an
// nccl-tests log (calibrate/import/nccl_tests_log.hpp). Problems of all files are collected; a file that yields
// nothing usable is an error, bad rows inside a usable file are notes.
#include <string>
#include <vector>

#include "calibrate/import/measurement.hpp"
#include "calibrate/import/nccl_tests_log.hpp"

namespace cs::calibrate {

// `hints` (--op, --ranks, --nodes, --gpu) fill in what an nccl-tests log does not say; JSON files ignore them.
MeasurementSet import_file(const std::string& path, const NcclTestsHints& hints = {});
// All files merged; throws InputError with every file's problems when any file is unusable.
MeasurementSet import_files(const std::vector<std::string>& paths, const NcclTestsHints& hints = {});
// The parsed log of one nccl-tests file (`clustersim calibrate import`), read a line at a time. Throws
// InputError when the file cannot be read or is JSON.
NcclTestsLog read_nccl_tests_log(const std::string& path, const NcclTestsHints& hints = {});

}  // namespace cs::calibrate
