// Bad input through the `clustersim` executable: every kind of mistake a user makes in a scenario file,
// on the command line or with --set ends with exit code 2 and one line on stderr per problem, each line
// naming the file and the JSON path and saying what was expected (shared/DESIGN.md, "Bars every change
// keeps"). Each case starts from a real scenario of scenarios/, breaks one thing and writes it to a
// temporary folder.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

// The one-line error of a scenario problem: "FILE: JSON.PATH: what (expected ...)".
void check_single_error(const CliResult& r, const fs::path& file, const std::string& json_path,
                        const std::vector<std::string>& also) {
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  const std::string prefix = file.string() + ": " + json_path + ": ";
  CHECK(lines[0].rfind(prefix, 0) == 0);
  for (const auto& part : also) {
    INFO("expected in the message: " << part);
    CHECK(contains(lines[0], part));
  }
}

// Several problems: one line each, each starting with the file name.
void check_every_line_names_file(const CliResult& r, const fs::path& file, std::size_t min_lines) {
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  CHECK(lines.size() >= min_lines);
  for (const auto& l : lines) CHECK(l.rfind(file.string() + ": ", 0) == 0);
}

// Writes `doc` as a scenario file and runs `clustersim run` on it.
CliResult run_doc(const TempDir& dir, const json& doc, fs::path& file, const std::vector<std::string>& extra = {}) {
  file = dir.write_json("scenario.json", doc);
  std::vector<std::string> args = {"run", file.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

const char* const k8b = "llama3-8b-h100x8.json";
const char* const k13b = "llama2-13b-a100x64-hdr200.json";

}  // namespace

TEST_CASE("malformed JSON is reported with line and column", "[cli]") {
  TempDir dir;
  // Line 4 has a doubled comma; the parser stops at the second one: "    \"nodes\": 1,," has it in column 16.
  const auto file = dir.write("broken.json",
                              "{\n"
                              "  \"name\": \"broken\",\n"
                              "  \"cluster\": {\n"
                              "    \"nodes\": 1,,\n"
                              "    \"gpus_per_node\": 8\n"
                              "  }\n"
                              "}\n");
  const auto r = run_cli({"run", file.string()});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(file.string() + ":4:16: ", 0) == 0);
  CHECK(contains(lines[0], "invalid JSON"));
}

TEST_CASE("malformed JSON: an unterminated document names the last line", "[cli]") {
  TempDir dir;
  const auto file = dir.write("truncated.json", "{\n  \"name\": \"x\",\n  \"cluster\": {\n");
  const auto r = run_cli({"run", file.string()});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(file.string() + ":", 0) == 0);
  CHECK(contains(lines[0], "invalid JSON"));
}

TEST_CASE("a missing scenario file is named", "[cli]") {
  TempDir dir;
  const auto file = dir / "no-such-scenario.json";
  const auto r = run_cli({"run", file.string()});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(file.string() + ": ", 0) == 0);
  CHECK(contains(lines[0], "cannot open"));
}

TEST_CASE("an unknown top-level key suggests the near key", "[cli]") {
  TempDir dir;
  fs::path file;
  SECTION("an extra misspelt key") {
    json doc = scenario_json(k8b);
    doc["trainig"] = doc["training"];
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "trainig", {"unknown key", "did you mean \"training\""});
  }
  SECTION("the real key misspelt: also reported missing, every line names the file") {
    json doc = scenario_json(k8b);
    doc["trainig"] = doc["training"];
    doc.erase("training");
    const auto r = run_doc(dir, doc, file);
    check_every_line_names_file(r, file, 2);
    CHECK(contains(r.err, file.string() + ": trainig: unknown key (did you mean \"training\"?)"));
    CHECK(contains(r.err, file.string() + ": training: missing"));
  }
}

TEST_CASE("an unknown nested key suggests the near key", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["training"]["tensor_parallel_size"] = doc["training"]["tensor_model_parallel_size"];
  doc["training"].erase("tensor_model_parallel_size");
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.tensor_parallel_size",
                     {"unknown key", "did you mean \"tensor_model_parallel_size\""});
}

TEST_CASE("a value of the wrong type names the expected type", "[cli]") {
  TempDir dir;
  fs::path file;
  SECTION("a string for an integer") {
    json doc = scenario_json(k8b);
    doc["training"]["seq_length"] = "8192";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.seq_length", {"expected an integer", "a string"});
  }
  SECTION("a fraction for an integer") {
    json doc = scenario_json(k8b);
    doc["training"]["micro_batch_size"] = 1.5;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.micro_batch_size", {"expected an integer"});
  }
  SECTION("a number for a boolean") {
    json doc = scenario_json(k8b);
    doc["training"]["sequence_parallel"] = 1;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.sequence_parallel", {"expected true or false"});
  }
  SECTION("a number for an object") {
    json doc = scenario_json(k8b);
    doc["training"] = 5;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training", {"expected an object"});
  }
}

TEST_CASE("non-positive sizes are out of range", "[cli]") {
  struct Case {
    const char* section;
    const char* key;
    int value;
  };
  const std::vector<Case> cases = {
      {"cluster", "nodes", 0},
      {"cluster", "gpus_per_node", 0},
      {"training", "global_batch_size", -1},
      {"training", "seq_length", 0},
      {"training", "micro_batch_size", 0},
      {"training", "tensor_model_parallel_size", 0},
  };
  for (const auto& c : cases) {
    const std::string path = std::string(c.section) + "." + c.key;
    INFO(path << " = " << c.value);
    TempDir dir;
    fs::path file;
    json doc = scenario_json(k8b);
    doc[c.section][c.key] = c.value;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, path, {"out of range", "expected an integer >= 1"});
  }
}

TEST_CASE("an unknown GPU lists the known ones and suggests a near name", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["cluster"]["gpu"] = "H100";
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "cluster.gpu", {"unknown GPU \"H100\"", "did you mean", "H100-SXM", "H100-PCIe"});
}

TEST_CASE("an unknown model preset suggests a near name", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["model"]["preset"] = "llama-3-8b";
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "model.preset", {"unknown preset \"llama-3-8b\"", "did you mean \"llama3-8b\"?"});
}

TEST_CASE("an unknown enumerated value suggests a near one", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["training"]["recompute_granularity"] = "selectiv";
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.recompute_granularity", {"did you mean \"selective\"", "none, selective, full"});
}

TEST_CASE("a parallel layout that does not multiply to the GPU count", "[cli]") {
  TempDir dir;
  fs::path file;
  SECTION("TP 3 on 8 GPUs") {
    json doc = scenario_json(k8b);
    doc["training"]["tensor_model_parallel_size"] = 3;
    doc["training"]["sequence_parallel"] = false;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training", {"tensor (3)", "does not divide", "8 GPUs"});
  }
  SECTION("data_parallel_size inconsistent with TP x PP and the GPUs") {
    json doc = scenario_json(k8b);  // TP 2 on 8 GPUs: DP is 4
    doc["training"]["data_parallel_size"] = 8;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.data_parallel_size", {"8 x tensor 2", "= 16", "not the 8 GPUs"});
  }
  SECTION("data_parallel_size consistent is accepted") {
    json doc = scenario_json(k8b);
    doc["training"]["data_parallel_size"] = 4;
    file = dir.write_json("scenario.json", doc);
    const auto r = run_cli({"run", file.string(), "--json"});
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("TP must divide the attention heads", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  // 12 GPUs so that TP 6 divides the GPU count and the heads check is reached (DP 2).
  doc["cluster"]["gpus_per_node"] = 12;
  doc["training"]["tensor_model_parallel_size"] = 6;
  doc["training"]["sequence_parallel"] = false;
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.tensor_model_parallel_size", {});
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err_lines()[0] == file.string() +
                                ": training.tensor_model_parallel_size: 6 does not divide model.num_attention_heads (32)");
}

TEST_CASE("PP must divide the layers", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);  // llama3-8b: 32 layers; TP 2 x PP 3 on 6 GPUs
  doc["cluster"]["gpus_per_node"] = 6;
  doc["training"]["pipeline_model_parallel_size"] = 3;
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.pipeline_model_parallel_size", {"3 does not divide model.num_layers (32)"});
}

TEST_CASE("the global batch must divide into micro-batches x DP", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);  // DP 4, micro-batch 1
  doc["training"]["global_batch_size"] = 130;
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.global_batch_size",
                     {"130 is not divisible", "micro_batch_size (1)", "data-parallel size (4)"});
}

TEST_CASE("fp8 needs a GPU with fp8 tensor cores", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k13b);  // A100-80GB
  doc["training"]["precision"] = "fp8";
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.precision", {"fp8", "A100-80GB"});
}

TEST_CASE("a multi-node cluster needs inter_node", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k13b);  // 8 nodes
  doc["cluster"].erase("inter_node");
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "cluster.inter_node", {"missing", "8 nodes", "fabric", "link"});
}

TEST_CASE("several problems are reported together, one line each", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["cluster"]["gpu"] = "H100";
  doc["cluster"]["nodes"] = 0;
  doc["model"]["preset"] = "llama3-9b";
  const auto r = run_doc(dir, doc, file);
  check_every_line_names_file(r, file, 3);
  CHECK(contains(r.err, file.string() + ": cluster.gpu: "));
  CHECK(contains(r.err, file.string() + ": cluster.nodes: "));
  CHECK(contains(r.err, file.string() + ": model.preset: "));
}

TEST_CASE("run --set without '=' is a syntax error naming the assignment", "[cli]") {
  const auto file = scenarios_dir() / k8b;
  const auto r = run_cli({"run", file.string(), "--set", "foo"});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(file.string() + ": ", 0) == 0);
  CHECK(contains(lines[0], "--set foo"));
  CHECK(contains(lines[0], "expected path=value"));
}

TEST_CASE("run --set to an unknown key suggests the near key", "[cli]") {
  const auto file = scenarios_dir() / k8b;
  const auto r = run_cli({"run", file.string(), "--set", "training.tensor_parallel_size=4"});
  check_single_error(r, file, "training.tensor_parallel_size", {"unknown key", "did you mean \"tensor_model_parallel_size\""});
}

TEST_CASE("run --set a value of the wrong type", "[cli]") {
  const auto file = scenarios_dir() / k8b;
  const auto r = run_cli({"run", file.string(), "--set", "training.global_batch_size=lots"});
  check_single_error(r, file, "training.global_batch_size", {"expected an integer", "\"lots\"",
                                                             "(the value given by --set training.global_batch_size=lots)"});
}

TEST_CASE("run --set through a value that is not an object", "[cli]") {
  const auto file = scenarios_dir() / k8b;
  const auto r = run_cli({"run", file.string(), "--set", "cluster.gpu.hbm_gib=80"});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(file.string() + ": ", 0) == 0);
  CHECK(contains(lines[0], "cluster.gpu"));
  CHECK(contains(lines[0], "not an object"));
}

TEST_CASE("an unknown subcommand", "[cli]") {
  const auto r = run_cli({"frobnicate"});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(contains(lines[0], "unknown command 'frobnicate'"));
  CHECK(contains(lines[0], "--help"));
}

TEST_CASE("run without a scenario argument", "[cli]") {
  const auto r = run_cli({"run"});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(contains(lines[0], "missing SCENARIO.json"));
}

TEST_CASE("run with an unknown option", "[cli]") {
  const auto file = scenarios_dir() / k8b;
  const auto r = run_cli({"run", file.string(), "--frobnicate"});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("clustersim run: ", 0) == 0);
  CHECK(contains(lines[0], "--frobnicate"));
}

TEST_CASE("run with a second positional argument", "[cli]") {
  const auto file = scenarios_dir() / k8b;
  const auto r = run_cli({"run", file.string(), file.string()});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines().size() == 1);
}

TEST_CASE("an unwritable --trace path is an input error and leaves no file behind", "[cli]") {
  TempDir dir;
  const auto scenario = scenarios_dir() / k8b;
  SECTION("the folder does not exist (a regular file stands where it should be)") {
    const auto blocker = dir.write("not-a-folder", "x");
    const auto trace = blocker / "trace.json";
    const auto r = run_cli({"run", scenario.string(), "--trace", trace.string()});
    INFO(r.describe());
    CHECK(r.exit_code == 2);
    const auto lines = r.err_lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind(trace.string() + ": ", 0) == 0);
    CHECK(contains(lines[0], "cannot write"));
    CHECK(read_text(blocker) == "x");
  }
  SECTION("the target is an existing folder: the temporary file is removed") {
    const auto trace = dir / "trace.json";
    fs::create_directory(trace);
    const auto r = run_cli({"run", scenario.string(), "--trace", trace.string()});
    INFO(r.describe());
    CHECK(r.exit_code == 2);
    const auto lines = r.err_lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind(trace.string() + ": ", 0) == 0);
    CHECK(fs::is_directory(trace));
    CHECK(fs::is_empty(trace));
  }
  // Whatever happened, nothing half-written is left in the folder: only what the test put there.
  for (const auto& e : fs::directory_iterator(dir.path())) {
    INFO("left behind: " << e.path());
    const auto name = e.path().filename().string();
    CHECK((name == "not-a-folder" || name == "trace.json"));
  }
}

TEST_CASE("an unwritable --csv path is refused before the sweep runs", "[cli]") {
  TempDir dir;
  const auto blocker = dir.write("not-a-folder", "x");
  const auto csv = blocker / "points.csv";
  const auto r = run_cli({"sweep", (scenarios_dir() / k8b).string(), "--vary", "training.micro_batch_size=1,2", "--csv", csv.string()});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(csv.string() + ": ", 0) == 0);
  CHECK(contains(lines[0], "cannot write"));
  CHECK(r.out.empty());  // checked first: no table of a sweep whose CSV could not be kept
}

// Head dim, sliding window and uneven pipeline knobs (model.kv_channels, model.window_size,
// model.window_attn_skip_freq, training.account_for_*_in_pipeline_split,
// training.decoder_first/last_pipeline_num_layers): one case per bad-input path.
TEST_CASE("kv_channels must be a positive integer, and hidden / heads needs it when not whole", "[cli]") {
  TempDir dir;
  fs::path file;
  SECTION("zero") {
    json doc = scenario_json(k8b);
    doc["model"]["kv_channels"] = 0;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.kv_channels", {"out of range", ">= 1"});
  }
  SECTION("hidden not a multiple of heads without kv_channels") {
    json doc = scenario_json(k8b);
    doc["model"]["hidden_size"] = 4100;  // 32 heads: 128.125 each
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.hidden_size", {"not a multiple of model.num_attention_heads", "model.kv_channels"});
  }
  SECTION("the same with kv_channels is accepted") {
    json doc = scenario_json(k8b);
    doc["model"]["hidden_size"] = 4100;
    doc["model"]["kv_channels"] = 128;
    doc["training"]["global_batch_size"] = 4;
    doc["training"]["seq_length"] = 1024;
    const auto r = run_doc(dir, doc, file);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("window_size must be an integer or a causal pair (w, 0)", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["model"]["window_size"] = json::array({128, 16});
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "model.window_size", {"[w, 0]", "[128,16]"});
}

TEST_CASE("position_embedding_type must be one of Megatron's names", "[cli]") {
  TempDir dir;
  fs::path file;
  SECTION("a misspelt value suggests the near one") {
    json doc = scenario_json(k8b);
    doc["model"]["position_embedding_type"] = "rotary";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.position_embedding_type", {"unknown value \"rotary\"", "rope", "learned_absolute"});
  }
  SECTION("not a string") {
    json doc = scenario_json(k8b);
    doc["model"]["position_embedding_type"] = 1;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.position_embedding_type", {"string"});
  }
}

TEST_CASE("window_attn_skip_freq: its type, its list length, and that it needs a window", "[cli]") {
  TempDir dir;
  fs::path file;
  SECTION("a string") {
    json doc = scenario_json(k8b);
    doc["model"]["window_size"] = 128;
    doc["model"]["window_attn_skip_freq"] = "every other";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.window_attn_skip_freq", {"expected an integer >= 1", "list of 0/1"});
  }
  SECTION("a list of the wrong length") {
    json doc = scenario_json(k8b);  // 32 layers
    doc["model"]["window_size"] = 128;
    doc["model"]["window_attn_skip_freq"] = json::array({1, 0, 1});
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.window_attn_skip_freq", {"3 entries", "model.num_layers 32"});
  }
  SECTION("without a window") {
    json doc = scenario_json(k8b);
    doc["model"]["window_attn_skip_freq"] = 2;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.window_attn_skip_freq", {"needs model.window_size"});
  }
}

TEST_CASE("a sliding window with context parallelism is refused", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);  // TP 2 on 8 GPUs
  doc["model"]["window_size"] = 128;
  doc["training"]["context_parallel_size"] = 2;
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.context_parallel_size", {"sliding window", "not simulated"});
}

TEST_CASE("account_for_embedding/loss_in_pipeline_split: type and the split they make", "[cli]") {
  TempDir dir;
  fs::path file;
  SECTION("not a boolean") {
    json doc = scenario_json(k8b);
    doc["training"]["account_for_loss_in_pipeline_split"] = "yes";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.account_for_loss_in_pipeline_split", {"expected true or false"});
  }
  SECTION("32 layers + 2 do not split over PP 4") {
    json doc = scenario_json(k8b);  // llama3-8b, 32 layers; TP 2 x PP 4 on 8 GPUs
    doc["training"]["pipeline_model_parallel_size"] = 4;
    doc["training"]["account_for_embedding_in_pipeline_split"] = true;
    doc["training"]["account_for_loss_in_pipeline_split"] = true;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.account_for_embedding_in_pipeline_split", {"(34)", "model.num_layers 32", "pipeline 4"});
  }
  SECTION("30 + 2 split over PP 4 is accepted") {
    json doc = scenario_json(k8b);
    doc["model"]["num_layers"] = 30;
    doc["training"]["pipeline_model_parallel_size"] = 4;
    doc["training"]["account_for_embedding_in_pipeline_split"] = true;
    doc["training"]["account_for_loss_in_pipeline_split"] = true;
    doc["training"]["global_batch_size"] = 4;
    doc["training"]["seq_length"] = 1024;
    const auto r = run_doc(dir, doc, file);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("decoder_first/last_pipeline_num_layers: range, split and exclusivity", "[cli]") {
  TempDir dir;
  fs::path file;
  SECTION("negative") {
    json doc = scenario_json(k8b);
    doc["training"]["decoder_first_pipeline_num_layers"] = -1;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.decoder_first_pipeline_num_layers", {"out of range", ">= 0"});
  }
  SECTION("the rest does not split over the middle stages") {
    json doc = scenario_json(k8b);  // 32 layers, PP 4: 32 - 5 = 27 over 3 stages is 9, but - 5 - 6 = 21 over 2 is not
    doc["training"]["pipeline_model_parallel_size"] = 4;
    doc["training"]["decoder_first_pipeline_num_layers"] = 5;
    doc["training"]["decoder_last_pipeline_num_layers"] = 6;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.decoder_first_pipeline_num_layers", {"(21)", "other 2 pipeline stages"});
  }
  SECTION("only the last given") {
    json doc = scenario_json(k8b);
    doc["training"]["pipeline_model_parallel_size"] = 4;
    doc["training"]["decoder_last_pipeline_num_layers"] = 4;  // 28 over 3 stages
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.decoder_last_pipeline_num_layers", {"(28)", "other 3 pipeline stages"});
  }
  SECTION("with account_for_embedding_in_pipeline_split") {
    json doc = scenario_json(k8b);
    doc["training"]["pipeline_model_parallel_size"] = 4;
    doc["training"]["decoder_first_pipeline_num_layers"] = 5;
    doc["training"]["account_for_embedding_in_pipeline_split"] = true;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.decoder_first_pipeline_num_layers", {"cannot be combined"});
  }
}

// The attention implementation, the TP-communication overlap and a custom GPU's mma.sync share.
TEST_CASE("attention_backend must be one of Megatron's names", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["model"]["attention_backend"] = "flash2";
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "model.attention_backend", {"unknown value \"flash2\"", "flash", "fused"});
}

TEST_CASE("attention and hidden dropout are probabilities from 0 up to but not including 1", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  for (const char* key : {"attention_dropout", "hidden_dropout"}) {
    DYNAMIC_SECTION(key << " = 1") {
      doc["model"][key] = 1.0;
      check_single_error(run_doc(dir, doc, file), file, std::string("model.") + key, {"[0, 1)", "1.0"});
    }
    DYNAMIC_SECTION(key << " negative") {
      doc["model"][key] = -0.1;
      check_single_error(run_doc(dir, doc, file), file, std::string("model.") + key, {">= 0", "-0.1"});
    }
    DYNAMIC_SECTION(key << " a string") {
      doc["model"][key] = "0.1";
      check_single_error(run_doc(dir, doc, file), file, std::string("model.") + key, {"expected a number"});
    }
  }
}

TEST_CASE("unfused attention has no ring attention: context parallelism is refused by name", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["model"]["attention_backend"] = "local";  // Megatron's other name for it
  doc["training"]["context_parallel_size"] = 2;
  const auto r = run_doc(dir, doc, file);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unfused") != std::string::npos);
  CHECK(r.err.find("context_parallel_size") != std::string::npos);
}

TEST_CASE("moe_layer_freq is an integer of at least 1 or a 0/1 list with one entry per layer", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("deepseek-moe-16b-h100x32.json");
  SECTION("zero") {
    doc["model"]["moe_layer_freq"] = 0;
    check_single_error(run_doc(dir, doc, file), file, "model.moe_layer_freq", {"integer >= 1", "got 0"});
  }
  SECTION("a list of other numbers") {
    doc["model"]["moe_layer_freq"] = json::array({0, 2});
    check_single_error(run_doc(dir, doc, file), file, "model.moe_layer_freq", {"list of 0/1", "[0,2]"});
  }
  SECTION("a list of the wrong length") {
    doc["model"]["moe_layer_freq"] = json::array({0, 1, 1});
    check_single_error(run_doc(dir, doc, file), file, "model.moe_layer_freq", {"3 entries", "num_layers 28"});
  }
}

TEST_CASE("shared experts need a mixture-of-experts model", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["model"]["moe_shared_expert_intermediate_size"] = 2816;
  check_single_error(run_doc(dir, doc, file), file, "model.moe_shared_expert_intermediate_size",
                     {"mixture-of-experts", "num_moe_experts"});
}

TEST_CASE("energy knobs: PUE at least 1, host power and the price of a kWh not negative", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  SECTION("pue below 1") {
    doc["cluster"]["pue"] = 0.9;
    check_single_error(run_doc(dir, doc, file), file, "cluster.pue", {">= 1", "0.9"});
  }
  SECTION("negative host power") {
    doc["cluster"]["node_overhead_w"] = -100;
    check_single_error(run_doc(dir, doc, file), file, "cluster.node_overhead_w", {">= 0", "-100"});
  }
  SECTION("negative price of energy") {
    doc["cluster"]["usd_per_kwh"] = -0.1;
    check_single_error(run_doc(dir, doc, file), file, "cluster.usd_per_kwh", {">= 0", "-0.1"});
  }
}

TEST_CASE("memory reserve knobs: a non-negative reserve and a fragmentation below 1", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  SECTION("negative reserve") {
    doc["training"]["memory_reserve_gib"] = -1;
    check_single_error(run_doc(dir, doc, file), file, "training.memory_reserve_gib", {">= 0", "-1"});
  }
  SECTION("fragmentation of 1") {
    doc["training"]["allocator_fragmentation"] = 1.0;
    check_single_error(run_doc(dir, doc, file), file, "training.allocator_fragmentation", {"[0, 1)", "1.0"});
  }
}

TEST_CASE("expert parallel sizes must fold over the tensor x context x data-parallel ranks", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("deepseek-moe-16b-h100x32.json");  // TP 1, DP 32, EP 8
  SECTION("EP x ETP does not divide TP x CP x DP") {
    doc["training"]["expert_tensor_parallel_size"] = 3;
    check_single_error(run_doc(dir, doc, file), file, "training.expert_tensor_parallel_size", {"8 x 3", "1 x 1 x 32"});
  }
  SECTION("expert TP on a dense model") {
    json dense = scenario_json(k8b);
    dense["training"]["expert_tensor_parallel_size"] = 4;
    check_single_error(run_doc(dir, dense, file), file, "training.expert_tensor_parallel_size", {"mixture-of-experts"});
  }
  SECTION("an MoE model under TP needs sequence parallelism") {
    doc["training"]["tensor_model_parallel_size"] = 2;
    doc["training"]["sequence_parallel"] = false;
    const auto r = run_doc(dir, doc, file);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("sequence_parallel") != std::string::npos);
  }
}

TEST_CASE("tp_comm_overlap must be a boolean", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["training"]["tp_comm_overlap"] = "yes";
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.tp_comm_overlap", {"true or false", "\"yes\""});
}

TEST_CASE("a custom GPU's mma_sync_fraction is a share of the peak, above 0 and at most 1", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["cluster"]["gpu"] = {{"name", "custom"}, {"peak_tflops_bf16", 989}, {"hbm_gib", 80}, {"hbm_tbps", 3.35},
                           {"nvlink_gbps", 900}, {"mma_sync_fraction", 1.5}};
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "cluster.gpu.mma_sync_fraction", {"(0, 1]", "1.5"});
}

TEST_CASE("a custom GPU's matmul_ceiling_fraction is a share of the peak, above 0 and at most 1", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["cluster"]["gpu"] = {{"name", "custom"}, {"peak_tflops_bf16", 989}, {"hbm_gib", 80}, {"hbm_tbps", 3.35},
                           {"nvlink_gbps", 900}, {"matmul_ceiling_fraction", 1.2}};
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "cluster.gpu.matmul_ceiling_fraction", {"(0, 1]", "1.2"});
}

TEST_CASE("recompute_method and recompute_num_layers: Megatron-Core's names, a positive count, the schedules modelled", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["training"]["recompute_granularity"] = "full";
  SECTION("an unknown method suggests the near one") {
    doc["training"]["recompute_method"] = "blocks";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.recompute_method", {"\"blocks\"", "block"});
  }
  SECTION("zero layers") {
    doc["training"]["recompute_num_layers"] = 0;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.recompute_num_layers", {"out of range", ">= 1"});
  }
  SECTION("a fraction of a layer") {
    doc["training"]["recompute_num_layers"] = 1.5;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.recompute_num_layers", {"expected an integer", "1.5"});
  }
  SECTION("block under a zero-bubble schedule") {
    doc["training"]["recompute_method"] = "block";
    doc["training"]["pipeline_schedule"] = "zb-h1";
    doc["training"]["pipeline_model_parallel_size"] = 2;
    doc["training"]["tensor_model_parallel_size"] = 4;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.recompute_method", {"\"block\"", "1f1b, gpipe and interleaved", "zb-h1"});
  }
}

TEST_CASE("cuda_graph_impl: what Megatron-Core refuses of a per-layer graph", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);  // Llama 3 8B: 32 layers, PP 1
  SECTION("a name Megatron-Core does not have") {
    doc["training"]["cuda_graph_impl"] = "whole";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cuda_graph_impl", {"whole", "full_iteration"});
  }
  SECTION("local graphs with CPU offloading") {
    doc["training"]["recompute_granularity"] = "none";
    doc["training"]["cuda_graph_impl"] = "local";
    doc["training"]["cpu_offloading_num_layers"] = 4;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cuda_graph_impl", {"\"local\"", "cpu_offloading_num_layers"});
  }
  SECTION("transformer_engine graphs with full recompute") {
    doc["training"]["cuda_graph_impl"] = "transformer_engine";
    doc["training"]["recompute_granularity"] = "full";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cuda_graph_impl", {"\"transformer_engine\"", "full_iteration"});
  }
}

TEST_CASE("cpu_offloading_num_layers: what Megatron-Core's TransformerConfig refuses, and hybrid models", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);  // Llama 3 8B: 32 layers, selective recompute, PP 1
  doc["training"]["recompute_granularity"] = "none";
  SECTION("as many layers as the model has") {
    doc["training"]["cpu_offloading_num_layers"] = 32;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cpu_offloading_num_layers", {"less than model.num_layers 32", "got 32"});
  }
  SECTION("a negative count") {
    doc["training"]["cpu_offloading_num_layers"] = -1;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cpu_offloading_num_layers", {"out of range"});
  }
  SECTION("with pipeline parallelism") {
    doc["training"]["cpu_offloading_num_layers"] = 4;
    doc["training"]["pipeline_model_parallel_size"] = 2;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cpu_offloading_num_layers", {"pipeline parallelism", "got pipeline_model_parallel_size 2"});
  }
  SECTION("with selective recompute") {
    doc["training"]["cpu_offloading_num_layers"] = 4;
    doc["training"]["recompute_granularity"] = "selective";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cpu_offloading_num_layers", {"activation recomputation", "\"selective\""});
  }
  SECTION("with full recompute") {
    doc["training"]["cpu_offloading_num_layers"] = 4;
    doc["training"]["recompute_granularity"] = "full";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cpu_offloading_num_layers", {"activation recomputation", "\"full\""});
  }
  SECTION("a hybrid Mamba model") {
    doc["model"] = {{"preset", "nemotron-h-8b"}};
    doc["training"]["cpu_offloading_num_layers"] = 4;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.cpu_offloading_num_layers", {"not this simulator's hybrid Mamba models"});
  }
}

TEST_CASE("recompute_modules must be a list of the modules modelled", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["training"]["recompute_granularity"] = "selective";
  SECTION("not a list") {
    doc["training"]["recompute_modules"] = "layernorm";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.recompute_modules", {"list of module names", "\"layernorm\""});
  }
  SECTION("a Megatron-Core module not modelled yet") {
    doc["training"]["recompute_modules"] = {"core_attn", "moe"};
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.recompute_modules[1]", {"\"moe\"", "does not recompute yet"});
  }
  SECTION("an unknown name") {
    doc["training"]["recompute_modules"] = {"attention"};
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.recompute_modules[0]", {"unknown module", "core_attn"});
  }
  SECTION("MLA's up-projections on a model without MLA") {
    doc["training"]["recompute_modules"] = {"mla_up_proj"};
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.recompute_modules[0]", {"\"mla_up_proj\"", "needs model.mla"});
  }
}

TEST_CASE("validate: an SDPA backends row of the wrong type names the file and the row", "[cli]") {
  // tests/calibrate/data/attention_backends_synthetic.json (scripts/attention_backends.py's format) with
  // one time that is not a number.
  TempDir dir;
  json doc = load_json(source_dir() / "tests" / "calibrate" / "data" / "attention_backends_synthetic.json");
  doc["rows"][1]["fwd_ms"] = "fast";
  const fs::path file = dir.write_json("backends.json", doc);
  check_single_error(run_cli({"validate", file.string()}), file, "rows[1].fwd_ms",
                     {"expected a positive number", "\"fast\""});
}

// Integers past the parameter table's maximum (sim/scenario/params.cpp): read as 64-bit values and
// refused before any narrowing to int. Before the table, 4294967297 nodes ran as 1 node and TP
// 4294967298 as TP 2 (2^32 + 1 and 2^32 + 2 cut to 32 bits), 2^31 nodes died of SIGFPE and 4294967328
// layers hung.
TEST_CASE("integers past their declared maximum are refused before narrowing", "[cli]") {
  struct Case {
    const char* path;
    json value;
    const char* message;  // after "FILE: PATH: "
  };
  const std::vector<Case> cases = {
      {"cluster.nodes", 4294967297LL,
       "4294967297 is out of range (expected an integer <= 1000000: 1e6 nodes: 10x the largest clusters built; nodes x "
       "gpus_per_node stays below 2^31 GPUs)"},
      {"cluster.nodes", 2147483648LL,
       "2147483648 is out of range (expected an integer <= 1000000: 1e6 nodes: 10x the largest clusters built; nodes x "
       "gpus_per_node stays below 2^31 GPUs)"},
      {"training.tensor_model_parallel_size", 4294967298LL,
       "4294967298 is out of range (expected an integer <= 1048576: 2^20 GPUs in one parallel group: 10x the largest clusters built)"},
      {"model.num_layers", 4294967328LL,
       "4294967328 is out of range (expected an integer <= 1000000: 1e6 layers: 5000x the deepest published model; the simulation "
       "budget (simulation.max_tasks) refuses far fewer)"},
      {"training.seq_length", 1e9,
       "1000000000.0 is out of range (expected an integer <= 16777216: 2^24 tokens: 16x the longest context trained (1M))"},
      {"training.global_batch_size", 8e15,
       "8e+15 is out of range (expected an integer <= 100000000: 1e8 sequences: 1e4x Megatron's largest batches; tokens per step stay "
       "below 2^51)"},
      {"cluster.gpus_per_node", 18446744073709551615ULL,
       "18446744073709551615 is out of range (expected an integer <= 1024: 1024: 2x an NVL576 domain; nodes x gpus_per_node stays "
       "below 2^31 GPUs)"},
  };
  for (const auto& c : cases) {
    INFO(c.path << " = " << c.value.dump());
    const std::string section = std::string(c.path).substr(0, std::string(c.path).find('.'));
    const std::string key = std::string(c.path).substr(section.size() + 1);
    TempDir dir;
    fs::path file;
    SECTION(std::string("in the file: ") + c.path + " " + c.value.dump()) {
      json doc = scenario_json(k8b);
      if (section == "model") doc["model"] = {{"preset", "llama3-8b"}};
      doc[section][key] = c.value;
      const auto r = run_doc(dir, doc, file);
      check_single_error(r, file, c.path, {});
      REQUIRE(r.err_lines().size() == 1);
      CHECK(r.err_lines()[0] == file.string() + ": " + c.path + ": " + c.message);
    }
    SECTION(std::string("through --set: ") + c.path + " " + c.value.dump()) {
      const std::string set = std::string(c.path) + "=" + c.value.dump();
      file = dir.write_json("scenario.json", scenario_json(k8b));
      const auto r = run_cli({"run", file.string(), "--set", set});
      check_single_error(r, file, c.path, {});
      REQUIRE(r.err_lines().size() == 1);
      CHECK(r.err_lines()[0] == file.string() + ": " + c.path + ": " + c.message + " (the value given by --set " + set + ")");
    }
  }
}

TEST_CASE("sweep --vary past a declared maximum: the point is invalid with the range, not run narrowed", "[cli]") {
  TempDir dir;
  const auto file = dir.write_json("scenario.json", scenario_json(k8b));
  const auto r = run_cli({"sweep", file.string(), "--vary", "training.tensor_model_parallel_size=4294967298"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);  // a sweep keeps an invalid combination with the validator's message
  CHECK(contains(r.out, "invalid: training.tensor_model_parallel_size: 4294967298 is out of range (expected an integer <= 1048576"));
}

// Floats past their declared range: before the table price_per_gpu_hour 1e308 and memory_reserve_gib
// 1e300 gave a report with JSON null and exit 0; link rates of 1e300 / 1e-300, comm_compute_contention
// 1e300 and oversubscription 1e300 aborted inside the engine.
TEST_CASE("numbers past their declared range are refused", "[cli]") {
  struct Case {
    const char* path;
    json value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"cluster.price_per_gpu_hour", 1e308,
       "1e+308 is out of range (expected a number in [0, 10000]: $1e4 an hour: 1000x any rental price)"},
      {"training.memory_reserve_gib", 1e300, "1e+300 is out of range (expected a number in [0, 100000]: 1e5 GiB: beyond any GPU's memory)"},
      {"simulation.comm_compute_contention", 1e300,
       "1e+300 is out of range (expected a number in [0, 10]: 10: an 11x slowdown, 30x the measured 0.1-0.3)"},
      {"cluster.inter_node.oversubscription", 1e300, "1e+300 is out of range (expected a number in [1, 1000]: 1000:1: 100x any fabric built)"},
      {"cluster.inter_node.link.line_rate_gbps", 1e300,
       "1e+300 is out of range (expected a number in [1, 100000]: 1e5 Gb/s: 100x an XDR port)"},
      {"cluster.inter_node.link.line_rate_gbps", 1e-300, "1e-300 is out of range (expected a number >= 1)"},
  };
  for (const auto& c : cases) {
    INFO(c.path << " = " << c.value.dump());
    TempDir dir;
    fs::path file;
    json doc = scenario_json(k13b);
    std::string path = c.path;
    if (path == "cluster.inter_node.link.line_rate_gbps")
      doc["cluster"]["inter_node"]["link"] = {{"name", "custom-nic"}, {"line_rate_gbps", c.value}};
    else {
      json* node = &doc;  // cluster.inter_node.oversubscription -> doc["cluster"]["inter_node"]["oversubscription"]
      for (std::size_t start = 0, dot; (dot = path.find('.', start)) != std::string::npos; start = dot + 1)
        node = &(*node)[path.substr(start, dot - start)];
      (*node)[path.substr(path.rfind('.') + 1)] = c.value;
    }
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, c.path, {});
    REQUIRE(r.err_lines().size() == 1);
    CHECK(r.err_lines()[0] == file.string() + ": " + c.path + ": " + c.message);
  }
}

// A product of in-range factors that leaves 64 bits is an input error naming the keys.
TEST_CASE("a derived token count past 64 bits names the keys that make it", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("deepseek-moe-16b-h100x32.json");
  doc["model"]["num_moe_experts"] = 65536;
  doc["model"]["moe_router_topk"] = 65536;
  doc["training"]["micro_batch_size"] = 100000000;
  doc["training"]["global_batch_size"] = 100000000;
  doc["training"]["seq_length"] = 16777216;
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.micro_batch_size", {});
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err_lines()[0] == file.string() +
                                ": training.micro_batch_size: micro_batch_size (100000000) x seq_length (16777216) x "
                                "model.moe_router_topk (65536) x expert_model_parallel_size x expert_tensor_parallel_size overflows "
                                "the simulator's 64-bit token counts (expected a product below 2^62)");
}

// Before: a profile's sm_count of 2^32 + 1 was used as 1 SM.
TEST_CASE("a calibration profile's sm_count past its maximum is refused", "[cli]") {
  TempDir dir;
  const auto profile = dir.write("profile.json",
                                 R"({"format": "clustersim-profile", "version": 1, "gpu": "H100-SXM",
                                     "compute": {"sm_count": 4294967297, "launch_overhead_us": 8,
                                                 "gemm": [{"m": 512, "n": 512, "k": 512, "efficiency": 0.5}]}})");
  json doc = scenario_json(k8b);
  doc["calibration"] = profile.string();
  fs::path file;
  const auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "calibration", {});
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err_lines()[0] == file.string() + ": calibration: " + profile.string() +
                                ": compute.sm_count: 4294967297 is out of range (expected an integer <= 100000: 1e5 SMs: 600x a B200 (148))");
}

// Issue 32: validate and calibrate read measured numbers no instrument prints as input errors (exit 2, one
// line naming the file and the JSON path). Before: gpus_per_node 0 in a published-runs file was SIGFPE, and
// calibrate fit wrote a profile from a 5e-324 ms GEMM that run then refused.
TEST_CASE("validate: a published run with gpus_per_node 0 names the file and the entry", "[cli]") {
  TempDir dir;
  json doc = load_json(source_dir() / "calibrate" / "published" / "published-train.json");
  doc = json::array({doc[0]});
  doc[0]["cluster"]["gpus_per_node"] = 0;
  const fs::path file = dir.write_json("runs.json", doc);
  const CliResult r = run_cli({"validate", file.string()});
  check_single_error(r, file, "[0].cluster.gpus_per_node", {});
  CHECK(r.err_lines() == std::vector<std::string>{file.string() + ": [0].cluster.gpus_per_node: 0 is out of range (expected a number in "
                                                  "[1, 1024], the range of the scenario key it becomes)"});
}

TEST_CASE("calibrate fit: a 5e-324 ms GEMM names the file and the row and writes no profile", "[cli]") {
  TempDir dir;
  const fs::path file = dir.write("m.json", R"({"device": "NVIDIA H200", "gemm": [{"m": 4096, "n": 4096, "k": 4096, "ms": 5e-324}]})");
  const fs::path out = dir / "profile.json";
  const CliResult r = run_cli({"calibrate", "fit", file.string(), "-o", out.string()});
  check_single_error(r, file, "gemm[0].ms", {});
  CHECK(r.err_lines() == std::vector<std::string>{file.string() + ": gemm[0].ms: 5e-324 is out of range (expected 0.0001 to 1e+06 ms: "
                                                  "100 ns to 1000 s, what one timed kernel or collective can take)"});
  CHECK(!fs::exists(out));
}

TEST_CASE("the zero-bubble schedules name what they need", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);  // llama3-8b on 8 GPUs: TP 2 x PP 2 x DP 2
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["pipeline_schedule"] = "zbv";  // VP 1
  auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.pipeline_schedule", {"\"zbv\" needs training.virtual_pipeline_model_parallel_size 2"});
  doc["training"]["pipeline_schedule"] = "zb-h2";
  r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.pipeline_schedule", {"unknown value \"zb-h2\"", "zb-h1"});
}

TEST_CASE("training.finetune names its bad keys and values", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);
  doc["training"]["finetune"] = {{"method", "lora"}, {"target_modules", {"linear_qkv", "q_proj"}}};
  auto r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.finetune.target_modules[1]", {"unknown module \"q_proj\"", "linear_proj"});
  doc["training"]["finetune"] = {{"method", "lora"}, {"dim", 16}, {"lora_alpha", 32}};
  r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.finetune.lora_alpha", {"unknown key"});
  doc["training"]["finetune"] = {{"dim", 16}};
  r = run_doc(dir, doc, file);
  check_single_error(r, file, "training.finetune.method", {"missing"});
}

namespace {
// A small dense MLA model on the Llama-3 8B scenario's node (TP 2 with SP): valid as it is.
json mla_doc() {
  json doc = scenario_json(k8b);
  doc["model"] = {{"num_layers", 2},       {"hidden_size", 1024}, {"num_attention_heads", 16}, {"ffn_hidden_size", 2816},
                  {"vocab_size", 32000},   {"activation", "swiglu"},
                  {"mla", {{"q_lora_rank", 256}, {"kv_lora_rank", 128}, {"qk_nope_head_dim", 64}, {"qk_rope_head_dim", 32}, {"v_head_dim", 64}}}};
  return doc;
}
}  // namespace

TEST_CASE("model.mla: every bad value is one line naming its path", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = mla_doc();
  SECTION("valid as given") {
    const auto r = run_doc(dir, doc, file);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
  SECTION("not an object") {
    doc["model"]["mla"] = 512;
    check_single_error(run_doc(dir, doc, file), file, "model.mla", {"expected an object", "integer"});
  }
  SECTION("kv_lora_rank missing") {
    doc["model"]["mla"].erase("kv_lora_rank");
    check_single_error(run_doc(dir, doc, file), file, "model.mla.kv_lora_rank", {"missing", "integer >= 1"});
  }
  SECTION("a head dim of 0") {
    doc["model"]["mla"]["v_head_dim"] = 0;
    check_single_error(run_doc(dir, doc, file), file, "model.mla.v_head_dim", {"out of range", ">= 1"});
  }
  SECTION("a negative query rank") {
    doc["model"]["mla"]["q_lora_rank"] = -1;
    check_single_error(run_doc(dir, doc, file), file, "model.mla.q_lora_rank", {"out of range", ">= 0"});
  }
  SECTION("Megatron's own name for the no-RoPE head dim suggests ours") {
    doc["model"]["mla"]["qk_head_dim"] = 64;
    doc["model"]["mla"].erase("qk_nope_head_dim");
    const auto r = run_doc(dir, doc, file);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "model.mla.qk_head_dim: unknown key"));
    CHECK(contains(r.err, "model.mla.qk_nope_head_dim: missing"));
  }
  SECTION("query groups other than the heads") {
    doc["model"]["num_query_groups"] = 4;
    check_single_error(run_doc(dir, doc, file), file, "model.num_query_groups", {"model.mla", "expected num_attention_heads, 16"});
  }
  SECTION("kv_channels beside it") {
    doc["model"]["kv_channels"] = 128;
    check_single_error(run_doc(dir, doc, file), file, "model.kv_channels", {"not used with model.mla"});
  }
  SECTION("the unfused attention") {
    doc["model"]["attention_backend"] = "unfused";
    check_single_error(run_doc(dir, doc, file), file, "model.attention_backend", {"unfused", "model.mla"});
  }
  SECTION("recompute_modules mla_up_proj runs") {
    doc["training"]["recompute_granularity"] = "selective";
    doc["training"]["recompute_modules"] = {"mla_up_proj"};
    const auto r = run_doc(dir, doc, file);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
  SECTION("tensor parallelism without sequence parallelism") {
    doc["training"]["sequence_parallel"] = false;
    check_single_error(run_doc(dir, doc, file), file, "training.sequence_parallel", {"model.mla", "tensor_model_parallel_size 2"});
  }
}

TEST_CASE("training.pipeline_model_parallel_layout: Megatron-Core's layout string, its checks one line each", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json(k8b);  // Llama 3 8B: 32 layers; TP 2 on 8 GPUs, here with PP 2
  doc["training"]["pipeline_model_parallel_size"] = 2;
  SECTION("the even split written as a layout is the even split: the same report") {
    const auto plain = run_doc(dir, doc, file, {"--json"});
    doc["training"]["pipeline_model_parallel_layout"] = "Et*16|t*16L";
    const auto laid = run_doc(dir, doc, file, {"--json"});
    INFO(laid.describe());
    REQUIRE(plain.exit_code == 0);
    REQUIRE(laid.exit_code == 0);
    CHECK(json::parse(plain.out)["step_time_s"] == json::parse(laid.out)["step_time_s"]);
  }
  SECTION("an uneven layout with two chunks a stage, repeats and cosmetic commas") {
    doc["training"]["pipeline_model_parallel_layout"] = "Et*6|(t*8|)*2,t*10L";  // 6 + 8 | 8 + 10
    const auto r = run_doc(dir, doc, file, {"--json"});
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
  SECTION("an unknown character") {
    doc["training"]["pipeline_model_parallel_layout"] = "Et*16|x*16L";
    check_single_error(run_doc(dir, doc, file), file, "training.pipeline_model_parallel_layout", {"invalid layer character 'x'"});
  }
  SECTION("stages not a multiple of the pipeline size") {
    doc["training"]["pipeline_model_parallel_layout"] = "Et*10|t*10|t*12L";
    check_single_error(run_doc(dir, doc, file), file, "training.pipeline_model_parallel_layout", {"3 virtual stages", "pipeline_model_parallel_size (2)"});
  }
  SECTION("virtual stages other than the given virtual_pipeline_model_parallel_size") {
    doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
    doc["training"]["pipeline_model_parallel_layout"] = "Et*16|t*16L";
    check_single_error(run_doc(dir, doc, file), file, "training.pipeline_model_parallel_layout", {"2 virtual stages", "virtual_pipeline_model_parallel_size is 2"});
  }
  SECTION("no embedding first") {
    doc["training"]["pipeline_model_parallel_layout"] = "t*16|Et*16L";
    check_single_error(run_doc(dir, doc, file), file, "training.pipeline_model_parallel_layout", {"must start with the embedding E"});
  }
  SECTION("the loss not last") {
    doc["training"]["pipeline_model_parallel_layout"] = "Et*16L|t*16";
    check_single_error(run_doc(dir, doc, file), file, "training.pipeline_model_parallel_layout", {"must end with the loss L"});
  }
  SECTION("layers other than num_layers") {
    doc["training"]["pipeline_model_parallel_layout"] = "Et*16|t*15L";
    check_single_error(run_doc(dir, doc, file), file, "training.pipeline_model_parallel_layout", {"31 transformer layers", "model.num_layers (32)"});
  }
  SECTION("with another split knob") {
    doc["training"]["pipeline_model_parallel_layout"] = "Et*16|t*16L";
    doc["training"]["decoder_first_pipeline_num_layers"] = 16;
    check_single_error(run_doc(dir, doc, file), file, "training.pipeline_model_parallel_layout", {"cannot be combined"});
  }
}

TEST_CASE("model.mtp_num_layers: a count of modules, not negative", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = mla_doc();
  doc["model"]["mtp_num_layers"] = -1;
  check_single_error(run_doc(dir, doc, file), file, "model.mtp_num_layers", {"out of range", ">= 0"});
  doc["model"]["mtp_num_layers"] = 1;
  const auto r = run_doc(dir, doc, file);
  INFO(r.describe());
  CHECK(r.exit_code == 0);
}

TEST_CASE("dualpipev with fewer micro-batches than twice the pipeline is refused in one line", "[cli]") {
  // scenarios/deepseek-v3-h800x2048.json runs DualPipeV over PP 16; DualPipeV.step asserts num_chunks >=
  // 2 x num_ranks (deepseek-ai/DualPipe dualpipev.py @ 3da1bbe). 3,840 sequences over DP 128 at micro-batch 1
  // are 30 micro-batches, fewer than 32.
  TempDir dir;
  json doc = scenario_json("deepseek-v3-h800x2048.json");
  doc["training"]["global_batch_size"] = 3840;
  const auto file = dir.write_json("dualpipev-short.json", doc);
  check_single_error(run_cli({"run", file.string()}), file, "training.global_batch_size",
                     {"\"dualpipev\"", "at least 2 x pipeline_model_parallel_size = 32 micro-batches per step (got 30)"});
}

namespace {
// A small hybrid Mamba-Transformer model (Megatron's hybrid_override_pattern) on the 8-GPU scenario.
json hybrid_doc() {
  json doc = scenario_json(k8b);
  doc["model"] = {{"num_layers", 4},        {"hidden_size", 1024},        {"num_attention_heads", 8},
                  {"num_query_groups", 2},  {"ffn_hidden_size", 4096},    {"vocab_size", 32000},
                  {"activation", "squared_relu"}, {"hybrid_override_pattern", "M-M*"},
                  {"mamba_state_dim", 64},  {"mamba_head_dim", 64},       {"mamba_num_groups", 4}};
  return doc;
}
}  // namespace

TEST_CASE("model.hybrid_override_pattern: a bad pattern or Mamba size is one line naming its path", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = hybrid_doc();
  SECTION("valid as given") {
    const auto r = run_doc(dir, doc, file);
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
  SECTION("an unknown letter") {
    doc["model"]["hybrid_override_pattern"] = "M-X*";
    check_single_error(run_doc(dir, doc, file), file, "model.hybrid_override_pattern", {"'X' at position 2", "expected M Mamba-2"});
  }
  SECTION("a Megatron symbol not simulated") {
    doc["model"]["hybrid_override_pattern"] = "M-G*";
    check_single_error(run_doc(dir, doc, file), file, "model.hybrid_override_pattern", {"'G'", "not simulated"});
  }
  SECTION("a length other than num_layers") {
    doc["model"]["hybrid_override_pattern"] = "M-M*M-";
    check_single_error(run_doc(dir, doc, file), file, "model.hybrid_override_pattern", {"has 6 layers", "num_layers = 4"});
  }
  SECTION("MoE layers without experts") {
    doc["model"]["hybrid_override_pattern"] = "MEM*";
    check_single_error(run_doc(dir, doc, file), file, "model.hybrid_override_pattern", {"'E'", "num_moe_experts"});
  }
  SECTION("Mamba layers without their sizes") {
    doc["model"].erase("mamba_state_dim");
    check_single_error(run_doc(dir, doc, file), file, "model.mamba_state_dim", {"mamba_state_dim"});
  }
  SECTION("Mamba heads not divisible by the groups") {
    doc["model"]["mamba_num_heads"] = 30;
    check_single_error(run_doc(dir, doc, file), file, "model.mamba_num_heads", {"mamba_num_heads (30)", "mamba_num_groups"});
  }
  SECTION("Mamba sizes without a pattern") {
    doc["model"].erase("hybrid_override_pattern");
    check_single_error(run_doc(dir, doc, file), file, "model.mamba_state_dim", {"need model.hybrid_override_pattern"});
  }
  SECTION("a TP degree that does not divide the Mamba groups") {
    doc["training"]["tensor_model_parallel_size"] = 8;
    doc["training"]["sequence_parallel"] = true;
    doc["model"]["num_attention_heads"] = 16;
    doc["model"]["num_query_groups"] = 8;
    check_single_error(run_doc(dir, doc, file), file, "training.tensor_model_parallel_size", {"Mamba heads (32)", "groups (4)"});
  }
  SECTION("context parallelism") {
    doc["training"]["context_parallel_size"] = 2;
    check_single_error(run_doc(dir, doc, file), file, "training.context_parallel_size", {"hybrid model", "not simulated"});
  }
  SECTION("DualPipeV, whose backward splits as the zero-bubble schedules' does") {
    doc["training"]["pipeline_model_parallel_size"] = 2;
    doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
    doc["training"]["pipeline_schedule"] = "dualpipev";
    check_single_error(run_doc(dir, doc, file), file, "training.pipeline_schedule", {"zero-bubble schedule with a hybrid model", "not simulated"});
  }
  SECTION("full recompute of some layers only (recompute_method block)") {
    doc["training"]["recompute_granularity"] = "full";
    doc["training"]["recompute_method"] = "block";
    check_single_error(run_doc(dir, doc, file), file, "training.recompute_method", {"modelled for transformer layers", "hybrid_override_pattern"});
  }
}

TEST_CASE("moe_token_dispatcher and group-limited routing: known names, an MoE model, groups that divide the experts", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("deepseek-moe-16b-h100x32.json");  // 64 experts, top-6, EP 8
  SECTION("an unknown dispatcher suggests the near one") {
    doc["training"]["moe_token_dispatcher"] = "deep_ep";
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.moe_token_dispatcher", {"\"deep_ep\"", "deepep"});
  }
  SECTION("a flex dispatcher on a dense model") {
    json dense = scenario_json(k8b);
    dense["training"]["moe_token_dispatcher"] = "hybridep";
    const auto r = run_doc(dir, dense, file);
    check_single_error(r, file, "training.moe_token_dispatcher", {"\"hybridep\"", "num_moe_experts is 0"});
  }
  SECTION("a flex dispatcher with expert tensor parallelism") {
    doc["training"]["moe_token_dispatcher"] = "deepep";
    doc["training"]["tensor_model_parallel_size"] = 2;
    doc["training"]["sequence_parallel"] = true;
    doc["training"]["expert_tensor_parallel_size"] = 2;
    doc["training"]["expert_model_parallel_size"] = 8;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "training.moe_token_dispatcher", {"\"deepep\"", "expert_tensor_parallel_size 1"});
  }
  SECTION("groups that do not divide the experts") {
    doc["model"]["moe_router_num_groups"] = 5;
    doc["model"]["moe_router_group_topk"] = 2;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.moe_router_num_groups", {"5", "divide model.num_moe_experts (64)"});
  }
  SECTION("more groups per token than groups") {
    doc["model"]["moe_router_num_groups"] = 8;
    doc["model"]["moe_router_group_topk"] = 9;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.moe_router_group_topk", {"9", "between 1 and model.moe_router_num_groups (8)"});
  }
  SECTION("top-k beyond the experts of the groups a token may use") {
    doc["model"]["moe_router_num_groups"] = 16;  // 4 experts a group
    doc["model"]["moe_router_group_topk"] = 1;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.moe_router_topk", {"6", "(4)"});
  }
  SECTION("more groups than the routing word holds") {
    doc["model"]["num_moe_experts"] = 65536;
    doc["model"]["moe_router_topk"] = 2;
    doc["model"]["moe_router_num_groups"] = 32768;
    doc["model"]["moe_router_group_topk"] = 1;
    const auto r = run_doc(dir, doc, file);
    check_single_error(r, file, "model.moe_router_num_groups", {"32768", "at most 32767"});
  }
  SECTION("group-limited routing on a dense model") {
    json dense = scenario_json(k8b);
    dense["model"]["moe_router_num_groups"] = 8;
    dense["model"]["moe_router_group_topk"] = 4;
    const auto r = run_doc(dir, dense, file);
    check_single_error(r, file, "model.moe_router_num_groups", {"mixture-of-experts"});
  }
}

TEST_CASE("memory-saving keys: Adam's moment dtypes, where MoE probabilities apply, FP8 SwiGLU inputs need SwiGLU", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("deepseek-moe-16b-h100x32.json");
  SECTION("a moment dtype Megatron does not offer") {
    doc["training"]["exp_avg_sq_dtype"] = "fp64";
    check_single_error(run_doc(dir, doc, file), file, "training.exp_avg_sq_dtype", {"\"fp64\"", "fp32, bf16, fp16, fp8"});
  }
  SECTION("a placement of the probabilities not modelled") {
    doc["training"]["moe_apply_probs"] = "input";
    check_single_error(run_doc(dir, doc, file), file, "training.moe_apply_probs", {"\"input\"", "combine, activation"});
  }
  SECTION("the FP8 SwiGLU input store is a boolean") {
    doc["training"]["activation_func_fp8_input_store"] = "yes";
    check_single_error(run_doc(dir, doc, file), file, "training.activation_func_fp8_input_store", {"true or false", "\"yes\""});
  }
  SECTION("the FP8 SwiGLU input store on a GeLU model") {
    json gelu = scenario_json("gpt3-175b-a100x1024.json");
    gelu["training"]["activation_func_fp8_input_store"] = true;
    check_single_error(run_doc(dir, gelu, file), file, "training.activation_func_fp8_input_store", {"SwiGLU", "model.activation"});
  }
}
