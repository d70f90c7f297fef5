#include "gui/views/knob_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cstdint>
#include <limits>

#include "gui/app/scenario_document.hpp"
#include "sim/base/check.hpp"

namespace cs::gui {

using nlohmann::json;

namespace {

const QString kCustomGpu = QStringLiteral("custom (from file)");
const QString kCustomModel = QStringLiteral("custom hyperparameters (from file)");

QStringList to_qt(const std::vector<std::string>& v) {
  QStringList out;
  for (const auto& s : v) out << QString::fromStdString(s);
  return out;
}

QString json_string(const QString& s) { return QString::fromStdString(json(s.toStdString()).dump()); }

}  // namespace

KnobPanel::KnobPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(4, 4, 4, 4);
  auto group = [&](const QString& title) {
    auto* box = new QGroupBox(title, this);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setVerticalSpacing(3);
    outer->addWidget(box);
    return form;
  };

  // Ranges, choices and tooltips come from the parameter table (sim/scenario/params.hpp), so the panel
  // offers exactly what the loader accepts. Here: which keys, in which group, under which label.
  enum class Kind { spin, real, combo, check, derived_dp };
  struct Knob {
    const char* group;  // a new group box when it changes
    Kind kind;
    const char* path;
    const char* label;
    double step = 0, scale = 1;  // real: the arrows' step; the knob shows value / scale
    int decimals = 0;
  };
  static const Knob knobs[] = {
      {"Cluster", Kind::combo, "cluster.gpu", "GPU"},
      {"Cluster", Kind::spin, "cluster.nodes", "Nodes"},
      {"Cluster", Kind::spin, "cluster.gpus_per_node", "GPUs / node"},
      {"Cluster", Kind::combo, "cluster.intra_node", "Intra-node"},
      {"Cluster", Kind::combo, "cluster.inter_node.fabric", "Fabric"},
      {"Cluster", Kind::combo, "cluster.inter_node.link", "Link"},
      {"Cluster", Kind::spin, "cluster.inter_node.nics_per_node", "NICs / node"},
      {"Cluster", Kind::real, "cluster.inter_node.oversubscription", "Oversubscription", 0.5, 1, 2},
      {"Cluster", Kind::real, "cluster.price_per_gpu_hour", "$ / GPU-hour", 0.1, 1, 2},
      {"Model", Kind::combo, "model.preset", "Preset"},
      {"Parallelism", Kind::spin, "training.tensor_model_parallel_size", "TP"},
      {"Parallelism", Kind::spin, "training.pipeline_model_parallel_size", "PP"},
      {"Parallelism", Kind::spin, "training.virtual_pipeline_model_parallel_size", "VP"},
      {"Parallelism", Kind::derived_dp, "derived.data_parallel_size", "DP (derived)"},
      {"Parallelism", Kind::spin, "training.context_parallel_size", "CP"},
      {"Parallelism", Kind::spin, "training.expert_model_parallel_size", "EP"},
      {"Parallelism", Kind::check, "training.sequence_parallel", "Sequence parallel"},
      {"Parallelism", Kind::combo, "training.zero_stage", "ZeRO"},
      {"Parallelism", Kind::combo, "training.recompute_granularity", "Recompute"},
      {"Parallelism", Kind::combo, "training.pipeline_schedule", "Schedule"},
      {"Parallelism", Kind::combo, "training.precision", "Precision"},
      {"Batch", Kind::spin, "training.micro_batch_size", "Micro batch"},
      {"Batch", Kind::spin, "training.global_batch_size", "Global batch"},
      {"Batch", Kind::spin, "training.seq_length", "Seq length"},
      {"Batch", Kind::real, "training.tokens_to_train", "Tokens (B)", 100, 1e9, 0},
  };
  QFormLayout* form = nullptr;
  QString current;
  for (const Knob& k : knobs) {
    if (current != k.group) current = k.group, form = group(tr(k.group));
    const QString path = QString::fromLatin1(k.path), label = tr(k.label);
    switch (k.kind) {
      case Kind::spin: add_spin(form, path, label); break;
      case Kind::real: add_double(form, path, label, k.step, k.decimals, k.scale); break;
      case Kind::combo: add_combo(form, path, label); break;
      case Kind::check: add_check(form, path, label); break;
      case Kind::derived_dp:
        dp_ = new QLineEdit(this);
        dp_->setObjectName(path);
        dp_->setReadOnly(true);
        dp_->setToolTip(tr("data-parallel size, derived: GPUs / (TP x PP x CP)"));
        form->addRow(label, dp_);
        break;
    }
  }
  outer->addStretch(1);
}

const sim::params::Param& KnobPanel::param(const QString& path) {
  const sim::params::Param* p = sim::params::find(path.toStdString());
  CS_CHECK(p != nullptr);
  return *p;
}

QString KnobPanel::tip(const sim::params::Param& p) {
  QString t = QString::fromStdString(p.path) + "\n" + QString::fromStdString(p.help);
  if (!p.unit.empty()) t += " (" + QString::fromStdString(p.unit) + ")";
  return t;
}

void KnobPanel::add_spin(QFormLayout* form, const QString& path, const QString& label) {
  const sim::params::Param& p = param(path);
  CS_CHECK(p.type == sim::params::Type::integer && p.max <= std::numeric_limits<int>::max());
  auto* w = new QSpinBox(this);
  w->setObjectName(path);
  w->setRange(static_cast<int>(p.min), static_cast<int>(p.max));
  w->setKeyboardTracking(false);
  w->setToolTip(tip(p));
  w->setAccelerated(true);
  connect(w, &QSpinBox::valueChanged, this, [this, path](int v) { emit edited(path, QString::number(v)); });
  form->addRow(label, w);
  knobs_.insert(path, w);
}

void KnobPanel::add_double(QFormLayout* form, const QString& path, const QString& label, double step, int decimals, double scale) {
  const sim::params::Param& p = param(path);
  CS_CHECK(p.type == sim::params::Type::number && !p.min_exclusive && !p.max_exclusive);
  auto* w = new QDoubleSpinBox(this);
  w->setObjectName(path);
  w->setRange(p.min / scale, p.max / scale);
  w->setSingleStep(step);
  w->setDecimals(decimals);
  w->setKeyboardTracking(false);
  w->setToolTip(tip(p));
  connect(w, &QDoubleSpinBox::valueChanged, this, [this, path, scale](double v) {
    emit edited(path, QString::fromStdString(json(v * scale).dump()));
  });
  form->addRow(label, w);
  knobs_.insert(path, w);
  scale_.insert(path, scale);
}

void KnobPanel::add_combo(QFormLayout* form, const QString& path, const QString& label) {
  const sim::params::Param& p = param(path);
  QStringList items;
  if (p.type == sim::params::Type::integer) {  // a small integer range (zero_stage 0..3) as a list
    for (auto v = static_cast<std::int64_t>(p.min); v <= static_cast<std::int64_t>(p.max); ++v) items << QString::number(v);
  } else {
    CS_CHECK(!p.choices.empty());
    items = to_qt(p.choices);
  }
  auto* w = new QComboBox(this);
  w->setObjectName(path);
  w->addItems(items);
  w->setToolTip(tip(p));
  connect(w, &QComboBox::activated, this, [this, path, w](int) { emit_combo(path, w); });
  form->addRow(label, w);
  knobs_.insert(path, w);
}

void KnobPanel::add_check(QFormLayout* form, const QString& path, const QString& label) {
  const sim::params::Param& p = param(path);
  CS_CHECK(p.type == sim::params::Type::boolean);
  auto* w = new QCheckBox(this);
  w->setObjectName(path);
  w->setToolTip(tip(p));
  connect(w, &QCheckBox::toggled, this, [this, path](bool on) { emit edited(path, on ? "true" : "false"); });
  form->addRow(label, w);
  knobs_.insert(path, w);
}

void KnobPanel::emit_combo(const QString& path, QComboBox* box) {
  const QString text = box->currentText();
  if (path == "cluster.gpu" && text == kCustomGpu) {
    if (!custom_gpu_.is_null()) emit edited(path, QString::fromStdString(custom_gpu_.dump()));
  } else if (path == "model.preset" && text == kCustomModel) {
    if (!custom_model_.is_null()) emit edited("model", QString::fromStdString(custom_model_.dump()));
  } else if (path == "model.preset") {
    emit edited("model", QString::fromStdString(json{{"preset", text.toStdString()}}.dump()));  // a preset replaces hyperparameters
  } else if (path == "training.zero_stage") {
    emit edited(path, text);
  } else {
    emit edited(path, json_string(text));
  }
}

void KnobPanel::show_document(const json& doc) {
  std::vector<std::unique_ptr<QSignalBlocker>> blockers;
  for (QWidget* w : knobs_) blockers.push_back(std::make_unique<QSignalBlocker>(w));

  auto at = [&](const QString& path) { return find_path(doc, path.toStdString()); };
  auto set_combo = [&](const QString& path, const QString& value) {
    auto* box = static_cast<QComboBox*>(knobs_.value(path));
    int i = box->findText(value);
    if (i < 0) {
      box->addItem(value);
      i = box->count() - 1;
    }
    box->setCurrentIndex(i);
  };
  auto str = [&](const QString& path, const QString& fallback) {
    const json* v = at(path);
    return v && v->is_string() ? QString::fromStdString(v->get<std::string>()) : fallback;
  };
  auto num = [&](const QString& path, double fallback) {
    const json* v = at(path);
    return v && v->is_number() ? v->get<double>() : fallback;
  };

  const json* gpu = at("cluster.gpu");
  custom_gpu_ = gpu && gpu->is_object() ? *gpu : json();
  set_combo("cluster.gpu", custom_gpu_.is_null() ? str("cluster.gpu", "H100-SXM") : kCustomGpu);
  const json* model = at("model");
  const bool preset = model && model->is_object() && model->contains("preset") && (*model)["preset"].is_string();
  custom_model_ = model && model->is_object() && !preset ? *model : json();
  set_combo("model.preset", preset ? str("model.preset", "") : kCustomModel);
  const json* intra = at("cluster.intra_node");
  set_combo("cluster.intra_node", intra && intra->is_object() ? str("cluster.intra_node.name", "nvswitch") : str("cluster.intra_node", "nvswitch"));
  set_combo("cluster.inter_node.fabric", str("cluster.inter_node.fabric", "fat-tree"));
  const json* link = at("cluster.inter_node.link");
  set_combo("cluster.inter_node.link", link && link->is_object() ? str("cluster.inter_node.link.name", "custom") : str("cluster.inter_node.link", "ib-ndr400"));
  set_combo("training.recompute_granularity", str("training.recompute_granularity", "none"));
  set_combo("training.pipeline_schedule", str("training.pipeline_schedule", "1f1b"));
  set_combo("training.precision", str("training.precision", "bf16"));
  int zero = static_cast<int>(num("training.zero_stage", 0));
  const QString fsdp = str("training.fsdp_sharding_strategy", "");
  if (fsdp == "FULL_SHARD") zero = 3;
  else if (fsdp == "SHARD_GRAD_OP") zero = 2;
  set_combo("training.zero_stage", QString::number(zero));

  const double gpn = num("cluster.gpus_per_node", 8);
  const std::pair<const char*, double> ints[] = {
      {"cluster.nodes", 1}, {"cluster.gpus_per_node", 8}, {"cluster.inter_node.nics_per_node", gpn},
      {"training.tensor_model_parallel_size", 1}, {"training.pipeline_model_parallel_size", 1},
      {"training.virtual_pipeline_model_parallel_size", 1}, {"training.context_parallel_size", 1},
      {"training.expert_model_parallel_size", 1}, {"training.micro_batch_size", 1},
      {"training.global_batch_size", 1}, {"training.seq_length", 1}};
  for (const auto& [path, fallback] : ints)
    static_cast<QSpinBox*>(knobs_.value(path))->setValue(static_cast<int>(num(path, fallback)));
  const std::pair<const char*, double> doubles[] = {
      {"cluster.inter_node.oversubscription", 1}, {"cluster.price_per_gpu_hour", 0}, {"training.tokens_to_train", 0}};
  for (const auto& [path, fallback] : doubles)
    static_cast<QDoubleSpinBox*>(knobs_.value(path))->setValue(num(path, fallback) / scale_.value(path, 1));
  const json* sp = at("training.sequence_parallel");
  static_cast<QCheckBox*>(knobs_.value("training.sequence_parallel"))->setChecked(sp && sp->is_boolean() && sp->get<bool>());
}

void KnobPanel::show_default(const QString& path, double value) {
  QWidget* w = knobs_.value(path);
  const QSignalBlocker block(w);
  if (auto* d = qobject_cast<QDoubleSpinBox*>(w)) d->setValue(value / scale_.value(path, 1));
  else if (auto* i = qobject_cast<QSpinBox*>(w)) i->setValue(static_cast<int>(value));
}

void KnobPanel::show_derived_dp(int dp) { dp_->setText(dp > 0 ? QString::number(dp) : QStringLiteral("–")); }

}  // namespace cs::gui
