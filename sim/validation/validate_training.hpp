#pragma once
// Validation against published training runs: calibrate/published/published-train.json (an array of
// objects with "kind": "training"; format in that folder's README) turned into scenarios, simulated, and
// compared with what their sources measured.
//
// Every published figure is converted to tokens per second per GPU with the source's own convention,
// never with clustersim's FLOP count (that would validate the simulator against itself):
//   iteration_time_s                 tokens/s/GPU = global_batch x seq / (time x GPUs)
//   tokens_per_s_per_gpu, tokens_per_s (/ GPUs), samples_per_s (x seq / GPUs): as published
//   tflops_per_gpu (Megatron SC'21, BLOOM, MT-NLG: recompute included)
//                                    F = 96 B s l h^2 (1 + s / 6h + V / 16 l h) per step
//   model TFLOP/s of Megatron-Core / NeMo (tflops_per_gpu_with_cp, OPT's figure)
//                                    Megatron's num_floating_point_operations: 12 B s l h^2 [ (1 + g/a
//                                    + s/h) q/h + (f/h) k gated + V / (2 l h) ] (q = a d with d the
//                                    kv_channels, gated = 3/2 for SwiGLU, k = experts per token, f the
//                                    expert width for MoE), which is 72 B s l h^2 (1 + s / 6h
//                                    + V / 12 l h) for GPT with a 4h MLP; sliding windows are not in it
//   mfu_pct alone                    MosaicML's convention (llm-foundry): 3 (2 N s + 4 l h s^2) per sequence
//                                    (attention not halved) of the dense peak in the run's precision; any
//                                    other source: Megatron's model FLOPs above of the dense BF16 peak
//   step time = F / (TFLOP/s x 1e12 x GPUs). The preference order is the list above: a directly timed
// quantity first, a FLOP-rate conversion only when nothing else is published.
//
// Scenario mapping: GPU names (A100-SXM4-80GB -> A100-80GB, A100-SXM4-40GB -> A100-40GB,
// H100-SXM5-80GB -> H100-SXM, B200 / GB200 / B300 / H200 / H800 / MI300X by name; one the catalog lacks is
// skipped as "GPU not in the catalog"), NVSwitch nodes of gpus_per_node GPUs (fewer when the run had fewer
// GPUs), the inter-node network the source names (Selene and Azure: 8 x HDR200; DGX-H100: 8 x NDR400;
// MosaicML: 1600 Gb/s RoCE = 8 x 200G; BLOOM: 4 x 100 Gb/s Omni-Path), the model's published dimensions
// (the MLP kind from the model family), the layout, batch and precision. What the source leaves out is
// filled with the framework's, release's or model family's default and written into the point's
// assumptions; every such default, and how the entry's free-text fields are read (precision, recompute,
// ZeRO / FSDP), is data with its source: calibrate/published/framework-defaults.json
// (framework_defaults.hpp), which matches the entry's "framework" text to a framework and release by the
// patterns it declares. Today it holds: micro-batch 1; recompute none (Megatron-Bridge's gpt-oss recipe:
// selective); sequence parallelism on with TP > 1, the distributed optimizer (ZeRO-1) and TP-communication
// overlap for Megatron-Core / NeMo / Megatron-Bridge; Megatron-LM before Megatron-Core (and its forks)
// unfused attention, dropout 0.1 and no gradient-reduce overlap; flash-attn 2 for NeMo's TE 1.x containers,
// flash-attn 1 for llm-foundry's 2023 runs; head_dim, sliding windows and vocabularies of model families.
//
// Architectures: an all-MoE model's dense FFN width taken as the expert width (unused). A layer count that
// does not split over the pipeline chunks but does with the embedding and the loss counted as layers gets
// account_for_embedding / loss_in_pipeline_split, with the framework's convention named. Each is written
// into the point's assumptions.
//
// An entry the simulator cannot express is skipped with the reason (Mamba layers, multi-head latent
// attention, an unpublished layout, or whatever the scenario validator rejects, e.g. a strategy not
// simulated yet); it is listed, never dropped. No per-point correction
// exists anywhere: a prediction is what `clustersim run` would print for that scenario.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/error_band.hpp"

namespace cs::sim {

struct TrainingPoint {
  std::string id, group, confidence, model, gpu;
  std::string framework, release;  // matched in calibrate/published/framework-defaults.json ("" if none)
  int gpus = 0;
  std::string layout;          // "TP8 PP4 DP2 VP5 mbs1 fp8 rc-none"
  std::string measured_from;   // the published field used and its convention
  double measured_tokens_per_s_per_gpu = 0;
  std::vector<std::string> assumptions;
  nlohmann::json scenario;     // the scenario document (null when skipped before building one)
  bool skipped = false;
  std::string skip_reason;
  std::string batch_note;      // what the entry's notes say of a derived batch, quoted if the layout is rejected
  // Prediction (when not skipped).
  double predicted_tokens_per_s_per_gpu = 0;
  double predicted_step_time_s = 0;
  double predicted_mfu = 0;
  double memory_gib = 0;
  bool fits_in_memory = true;
  double error = 0;            // predicted / measured - 1, on throughput
  // What the entry itself stated (a default filled the knob otherwise): only defaults may be changed to
  // make the layout fit.
  bool sequence_parallel_stated = false, recompute_stated = false;
  // A run that ran for real but is predicted not to fit even with the lightest memory saving the entry
  // leaves open: a failed point, counted in every summary.
  bool failed = false;
  // Data that disagrees with itself: another entry states the same run (conflict_key_of), or converts to
  // the same scenario, and its measured throughput differs from this one's by more than kConflictFactor. Such points keep their row and error
  // but are summarised in a "conflicting" line of their own, not in their confidence level's line.
  bool conflicting = false;
  std::string conflict;        // "same stated run as A, B: measured 5113..9058 tokens/s per GPU, 1.77x" (or
                               // "same simulated run (one converted scenario) as A: ...")
  BandFeatures features;       // of the predicted report: the row of the residual table (error_band.hpp)
};

struct ValidationSummary {
  std::string key;             // a confidence level, "conflicting" or a group
  std::size_t points = 0, compared = 0, skipped = 0, within_15pct = 0;
  std::size_t failed = 0;      // compared points predicted not to fit (their error counts too)
  // Compared points left out of this line's statistics because they are conflicting (confidence lines
  // only: they have the "conflicting" line of their own; group lines keep every point).
  std::size_t conflicting = 0;
  double mean_abs_error = 0, max_abs_error = 0, mean_error = 0;  // over the compared points, less the conflicting
  std::string worst_id;
};

// Two measured figures of the same stated run conflict when they differ by more than this factor: beyond
// it no single prediction can be within 15% of both (the band validate counts), since the prediction P
// that minimises the larger error of a < b, P = 2ab / (a + b), is off by (b - a) / (a + b) on each, which
// exceeds 0.15 exactly when b / a > 1.15 / 0.85 = 1.353.
inline constexpr double kConflictFactor = 1.15 / 0.85;
// What an entry states about its run, as one comparable text: the model, cluster, parallel and batch
// objects and the precision, null fields dropped. Metadata (id, group, source, notes, confidence), the
// framework release and the measured figures are not in it: two releases measuring the same stated run
// are what the rule compares.
std::string conflict_key_of(const nlohmann::json& entry);

struct TrainingValidation {
  std::vector<TrainingPoint> points;               // file order
  std::vector<ValidationSummary> by_confidence;    // high, medium, low, then conflicting (when any)
  std::vector<ValidationSummary> by_group;         // first appearance order
};

// True for a published-train.json document (a non-empty array of objects with "kind": "training").
bool is_published_training(const nlohmann::json& doc);

// Builds the scenario and the measured figure of every entry (no simulation). Throws InputError naming
// the file and the entry when the document is malformed.
std::vector<TrainingPoint> convert_published_training(const nlohmann::json& doc, const std::string& file);
// The same with another defaults table than the compiled-in framework-defaults.json (framework_defaults.hpp).
struct DefaultsTable;
std::vector<TrainingPoint> convert_published_training(const nlohmann::json& doc, const std::string& file, const DefaultsTable& table);

// Converts, simulates on `threads` workers (0: all cores) and compares. Deterministic in output.
TrainingValidation validate_published_training(const nlohmann::json& doc, const std::string& file, int threads = 0);

std::string to_text(const TrainingValidation& v);
// to_json carries, under "residual_table", the residual table (residual_table_of) that
// calibrate/published/residuals.json is regenerated from (scripts/regenerate_residuals.sh).
nlohmann::json to_json(const TrainingValidation& v);
// One row per compared point (skipped ones have no error), in file order.
ResidualTable residual_table_of(const TrainingValidation& v, const std::string& source);

// One group of one file, as `clustersim validate FILE... --by group` prints it: the points compared,
// their MAPE (mean |error|) and bias (mean signed error), the worst point with its signed error, and the
// skipped points counted by reason. Every compared point counts, conflicting ones included.
struct GroupFidelity {
  std::string file;            // the file's name without its folder (the baseline's key)
  std::string group;
  std::size_t points = 0, compared = 0, skipped = 0, failed = 0;
  double mape = 0, bias = 0;
  std::string worst_id;
  double worst_error = 0;
  std::vector<std::pair<std::string, std::size_t>> skip_reasons;  // reason, count; first appearance order
};
std::vector<GroupFidelity> group_fidelity(const TrainingValidation& v, const std::string& file);
std::string group_table_text(const std::vector<GroupFidelity>& rows);
// The same as a Markdown table (docs/validation.md's per-group section is this output).
std::string group_table_markdown(const std::vector<GroupFidelity>& rows);
nlohmann::json to_json(const std::vector<GroupFidelity>& rows);

// The per-group guard (calibrate/published/fidelity-baseline.json): one line per group of
// kGuardMinPoints or more points whose MAPE exceeds its baseline's by more than kGuardTolerance, that
// compares fewer points than its baseline, that is missing, or that has no baseline; empty when none.
// Files of the baseline that no row of `now` comes from are not checked (validate given one file).
// Throws InputError naming `baseline_file` and the JSON path when the baseline is malformed (every group
// needs points, mape in percent and a non-empty reason).
inline constexpr std::size_t kGuardMinPoints = 3;
inline constexpr double kGuardTolerance = 0.01;  // 1 point of MAPE
std::vector<std::string> fidelity_regressions(const nlohmann::json& baseline, const std::string& baseline_file,
                                              const std::vector<GroupFidelity>& now);

// The sources' FLOP conventions (per training step, whole job).
double sc21_flops_per_step(double batch, double seq, double layers, double hidden, double vocab);
struct MegatronFlopsInput {
  double batch = 0, seq = 0, layers = 0, hidden = 0, heads = 0, query_groups = 0, ffn_hidden = 0, vocab = 0;
  bool swiglu = false;
  double experts_per_token = 1;
  double kv_channels = 0;     // head dim when not hidden / heads (Megatron's --kv-channels); 0: hidden / heads
  double moe_ffn_hidden = 0;  // per-expert FFN width of an all-MoE model; 0: ffn_hidden
};
double megatron_model_flops_per_step(const MegatronFlopsInput& in);

}  // namespace cs::sim
