#pragma once
// training.finetune: parameter-efficient fine-tuning (models/workload/finetune.hpp has the model).
namespace cs::models {

enum class FinetuneMethod { none, lora, qlora };

// Megatron-Bridge's LoRA (megatron/bridge/peft/lora.py; docs/training/peft.md: LoRA(target_modules=
// ["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"], dim=16, alpha=32)); HF PEFT calls dim `r`.
struct FinetuneConfig {
  FinetuneMethod method = FinetuneMethod::none;
  int dim = 16;        // the adapters' rank r
  double alpha = 32;   // the adapters' scale alpha / r: no effect on time or memory
  bool qkv = true, proj = true, fc1 = true, fc2 = true;  // target_modules
  bool active() const { return method != FinetuneMethod::none; }
};

}  // namespace cs::models
