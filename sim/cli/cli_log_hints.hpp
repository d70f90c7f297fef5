#pragma once
// What the command line says about nccl-tests logs that do not say it themselves: --op NAME, --ranks N,
// --nodes N, and --gpu NAME (calibrate/import/nccl_tests_log.hpp, NcclTestsHints: the log's own device and
// NCCL INFO lines win; a hint they contradict is ignored with a note). Shared by `calibrate import`,
// `calibrate fit` and `validate`; `calibrate import` itself lives in cli_calibrate_import.cpp.
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "calibrate/import/nccl_tests_log.hpp"

namespace cs::sim::cli {

// Adds --op, --ranks and --nodes (each command has its own --gpu).
void add_log_hint_options(boost::program_options::options_description& opts);
// The hints of `vm`, checked: throws InputError ("clustersim COMMAND: --op ...") on a bad value. `gpu` is the
// catalog name --gpu gave, or empty.
calibrate::NcclTestsHints log_hints(const boost::program_options::variables_map& vm, const std::string& command,
                                    const std::string& gpu);

// clustersim calibrate import LOG... [--op NAME] [--ranks N] [--nodes N] [--gpu NAME] [--json]
int calibrate_import(const std::vector<std::string>& args);

}  // namespace cs::sim::cli
