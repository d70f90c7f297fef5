// training.framework from the command line: a layout the framework cannot run is one line with the rule
// named and exit code 2; the layout search under megatron-core and deepspeed lists no ZeRO-2/3 layout
// with pipeline parallelism (docs/frameworks.md).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_helpers.hpp"

using namespace clitest;

namespace {

// One CSV line split into cells (quoted cells may hold commas and doubled quotes).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

struct SearchRows {
  std::size_t rows = 0, zero23_with_pp = 0, zero1_with_pp = 0, zero3_without_pp = 0;
};

// The rows of a search's --csv (every enumerated layout) by ZeRO stage and pipeline size.
SearchRows search_rows(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  const auto header = csv_cells(line);
  const auto col = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE(it != header.end());
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t pp_col = col("pp"), zero_col = col("zero_stage");
  SearchRows r;
  while (std::getline(in, line)) {
    const auto cells = csv_cells(line);
    REQUIRE(cells.size() == header.size());
    ++r.rows;
    if (cells[pp_col].empty()) continue;  // a layout the validator refused: no report
    const int pp = std::stoi(cells[pp_col]), zero = std::stoi(cells[zero_col]);
    r.zero23_with_pp += zero >= 2 && pp > 1;
    r.zero1_with_pp += zero == 1 && pp > 1;
    r.zero3_without_pp += zero == 3 && pp == 1;
  }
  return r;
}

}  // namespace

TEST_CASE("run: a layout the framework cannot run is refused with its rule named", "[cli]") {
  const auto scenario = (scenarios_dir() / "llama3-70b-h100x256.json").string();
  const CliResult r = run_cli({"run", scenario, "--set", "training.framework=deepspeed", "--set", "training.zero_stage=3"});
  CHECK(r.exit_code == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err_lines()[0] ==
        scenario +
            ": training.zero_stage: zero_stage 3, pipeline_model_parallel_size 4: training.framework \"deepspeed\" cannot run this "
            "(rule zero2-3-without-pp): ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism (ZeRO-1 is what combines "
            "with PP) [deepspeed/runtime/pipe/engine.py PipelineEngine.__init__: assert zero_optimization_stage() < "
            "ZeroStageEnum.gradients] (the value given by --set training.zero_stage=3)");
  CHECK(r.out.empty());
}

TEST_CASE("run: the report names the framework and the release whose defaults applied", "[cli]") {
  const auto scenario = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  const CliResult text = run_cli({"run", scenario, "--set", "training.framework=megatron-core"});
  REQUIRE(text.exit_code == 0);
  CHECK(contains(text.out, "recompute selective  (megatron-core core_r0.14)\n"));
  const CliResult json = run_cli({"run", scenario, "--json", "--set", "training.framework=nemo"});
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out).at("framework") == nlohmann::json({{"name", "nemo"}, {"release", "2.x-performance"}}));
  // generic: nothing on the layout line, the name in --json.
  const CliResult plain = run_cli({"run", scenario, "--json"});
  CHECK(nlohmann::json::parse(plain.out).at("framework").at("name") == "generic");
}

TEST_CASE("sweep --search under megatron-core and deepspeed lists no ZeRO-2/3 with pipeline parallelism", "[cli][slow]") {
  // scenarios/llama3-70b-h100x256.json (Llama-3 70B on 256 H100) with its global batch cut to 64
  // sequences, so that each layout simulates few micro-batches and the test stays short: the framework's
  // rules do not depend on the batch. The CSV holds every enumerated layout (ranked, not fitting,
  // dominated, invalid). DeepSpeed does not drive Transformer Engine's tp_comm_overlap, which the
  // scenario sets: the deepspeed run turns it off.
  const TempDir dir;
  const auto scenario = (scenarios_dir() / "llama3-70b-h100x256.json").string();
  const auto mc_csv = (dir / "megatron-core.csv").string(), ds_csv = (dir / "deepspeed.csv").string();
  CliProcess mc({"sweep", scenario, "--search", "--set", "training.framework=megatron-core", "--set", "training.global_batch_size=64",
                 "--threads", "1", "--csv", mc_csv});
  CliProcess ds({"sweep", scenario, "--search", "--set", "training.framework=deepspeed", "--set", "training.tp_comm_overlap=false",
                 "--set", "training.global_batch_size=64", "--threads", "1", "--csv", ds_csv});
  const CliResult mr = mc.wait(), dr = ds.wait();
  REQUIRE(mr.exit_code == 0);
  REQUIRE(dr.exit_code == 0);
  CHECK(contains(mr.out, "layout search on 256 x H100-SXM"));
  const SearchRows m = search_rows(read_text(mc_csv)), d = search_rows(read_text(ds_csv));
  INFO("megatron-core: " << m.rows << " rows; deepspeed: " << d.rows << " rows");
  CHECK(m.zero23_with_pp == 0);
  CHECK(d.zero23_with_pp == 0);
  // What the frameworks do run is still there: the distributed optimizer (ZeRO-1) with PP, ZeRO-3 without.
  CHECK(m.zero1_with_pp > 0);
  CHECK(m.zero3_without_pp > 0);
  CHECK(d.zero1_with_pp > 0);
  CHECK(d.zero3_without_pp > 0);
}
