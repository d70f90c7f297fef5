#include "gui/views/knob_panel.hpp"

#include <QAbstractScrollArea>
#include <QCheckBox>
#include <QCoreApplication>
#include <QScrollBar>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QKeyEvent>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QTabBar>
#include <QVBoxLayout>

#include <cmath>
#include <cstdint>
#include <limits>

#include "gui/app/scenario_document.hpp"
#include "sim/base/check.hpp"

namespace cs::gui {

using nlohmann::json;

namespace {

const QString kCustomGpu = QStringLiteral("custom (from file)");
const QString kCustomModel = QStringLiteral("custom hyperparameters (from file)");
const char* const kBadKnobStyle = "border: 2px solid #c01c28; border-radius: 3px;";

QStringList to_qt(const std::vector<std::string>& v) {
  QStringList out;
  for (const auto& s : v) out << QString::fromStdString(s);
  return out;
}

QString json_string(const QString& s) { return QString::fromStdString(json(s.toStdString()).dump()); }

bool per_job(const QString& path) { return path.startsWith("training.") || path == "model" || path.startsWith("model."); }

QString number_text(double v) {
  if (std::abs(v) >= 1e6 && v == std::floor(v)) return QString::number(v, 'g', 3);
  return QString::number(v, 'g', 10);
}

}  // namespace

void LadderSpinBox::stepBy(int steps) {
  if (!ladder_) return QSpinBox::stepBy(steps);
  // The next power of two above (below) the value, `steps` times; a value between two powers goes to
  // the nearer one in the direction of the step first.
  long long v = value();
  for (int k = 0; k < std::abs(steps); ++k) {
    long long p = 1;
    if (steps > 0) {
      while (p <= v) p *= 2;
      v = p;
    } else {
      while (p * 2 < v) p *= 2;
      v = p < v ? p : v;
    }
  }
  setValue(static_cast<int>(std::clamp<long long>(v, minimum(), maximum())));
}

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
  enum class Kind { spin, ladder, real, combo, check, text, derived_dp, job };
  struct Knob {
    const char* group;  // a new group box when it changes
    Kind kind;
    const char* path;
    const char* label;
  };
  // How a real knob shows its value: value / scale with `decimals`, the arrows stepping by `step`.
  struct RealFormat {
    double step, scale;
    int decimals;
  };
  static const Knob knobs[] = {
      {"Scenario", Kind::text, "name", "Name"},
      {"Scenario", Kind::text, "description", "Description"},
      {"Cluster", Kind::combo, "cluster.gpu", "GPU"},
      {"Cluster", Kind::ladder, "cluster.nodes", "Nodes"},
      {"Cluster", Kind::ladder, "cluster.gpus_per_node", "GPUs / node"},
      {"Cluster", Kind::combo, "cluster.intra_node", "Intra-node"},
      {"Cluster", Kind::combo, "cluster.inter_node.fabric", "Fabric"},
      {"Cluster", Kind::combo, "cluster.inter_node.link", "Link"},
      {"Cluster", Kind::ladder, "cluster.inter_node.nics_per_node", "NICs / node"},
      {"Cluster", Kind::real, "cluster.inter_node.oversubscription", "Oversubscription"},
      {"Cluster", Kind::real, "cluster.price_per_gpu_hour", "$ / GPU-hour"},
      // The host side of PCIe nodes and the switches that reduce in the fabric (docs/network-model.md).
      {"Host and switches", Kind::spin, "cluster.intra_node.sockets", "CPU sockets"},
      {"Host and switches", Kind::spin, "cluster.intra_node.gpus_per_pcie_switch", "GPUs / PCIe switch"},
      {"Host and switches", Kind::real, "cluster.intra_node.inter_socket_GBps", "Inter-socket GB/s"},
      {"Host and switches", Kind::check, "cluster.intra_node.nvls", "NVLink SHARP (NVLS)"},
      {"Host and switches", Kind::check, "cluster.inter_node.sharp", "InfiniBand SHARP"},
      {"Model", Kind::job, "job", "Job"},
      {"Model", Kind::combo, "model.preset", "Preset"},
      {"Parallelism", Kind::ladder, "training.tensor_model_parallel_size", "TP"},
      {"Parallelism", Kind::ladder, "training.pipeline_model_parallel_size", "PP"},
      {"Parallelism", Kind::spin, "training.virtual_pipeline_model_parallel_size", "VP"},
      {"Parallelism", Kind::derived_dp, "derived.data_parallel_size", "DP (derived)"},
      {"Parallelism", Kind::ladder, "training.context_parallel_size", "CP"},
      {"Parallelism", Kind::ladder, "training.expert_model_parallel_size", "EP"},
      {"Parallelism", Kind::check, "training.sequence_parallel", "Sequence parallel"},
      {"Parallelism", Kind::combo, "training.zero_stage", "ZeRO"},
      {"Parallelism", Kind::combo, "training.recompute_granularity", "Recompute"},
      {"Parallelism", Kind::combo, "training.pipeline_schedule", "Schedule"},
      {"Parallelism", Kind::combo, "training.precision", "Precision"},
      {"Parallelism", Kind::combo, "training.framework", "Framework"},
      {"Batch", Kind::ladder, "training.micro_batch_size", "Micro batch"},
      {"Batch", Kind::ladder, "training.global_batch_size", "Global batch"},
      {"Batch", Kind::ladder, "training.seq_length", "Seq length"},
      {"Batch", Kind::real, "training.tokens_to_train", "Tokens (B)"},
  };
  static const std::pair<const char*, RealFormat> real_formats[] = {
      {"cluster.inter_node.oversubscription", {0.5, 1, 2}},
      {"cluster.price_per_gpu_hour", {0.1, 1, 2}},
      {"cluster.intra_node.inter_socket_GBps", {1, 1, 1}},
      {"training.tokens_to_train", {100, 1e9, 0}},  // in billions
  };
  auto real_format = [](const QString& path) {
    for (const auto& [p, f] : real_formats)
      if (path == QLatin1String(p)) return f;
    CS_CHECK(false);  // every Kind::real knob has a format above
    return RealFormat{};
  };
  QFormLayout* form = nullptr;
  QString current;
  for (const Knob& k : knobs) {
    if (current != k.group) current = k.group, form = group(tr(k.group));
    const QString path = QString::fromLatin1(k.path), label = tr(k.label);
    switch (k.kind) {
      case Kind::spin: add_spin(form, path, label, false); break;
      case Kind::ladder: add_spin(form, path, label, true); break;
      case Kind::real: {
        const RealFormat f = real_format(path);
        add_double(form, path, label, f.step, f.decimals, f.scale);
        break;
      }
      case Kind::combo: add_combo(form, path, label); break;
      case Kind::check: add_check(form, path, label); break;
      case Kind::text: add_text(form, path, label); break;
      case Kind::derived_dp:
        dp_ = new QLineEdit(this);
        dp_->setObjectName(path);
        dp_->setReadOnly(true);
        dp_->setToolTip(tr("data-parallel size, derived: GPUs / (TP x PP x CP)"));
        form->addRow(label, dp_);
        break;
      case Kind::job:
        jobs_ = new QTabBar(this);
        jobs_->setObjectName("job");
        jobs_->setExpanding(false);
        jobs_->setUsesScrollButtons(true);
        jobs_->setElideMode(Qt::ElideRight);
        jobs_->setToolTip(tr("The job the model, parallelism and batch knobs show and edit (jobs[i] in the file); "
                             "the cluster knobs are shared by all jobs"));
        guard(jobs_);
        connect(jobs_, &QTabBar::currentChanged, this, [this](int i) {
          if (i < 0 || i == job_) return;
          set_job(i);
          emit job_selected(i);
        });
        form->addRow(label, jobs_);
        jobs_label_ = form->labelForField(jobs_);
        break;
    }
  }
  outer->addStretch(1);
  set_job(-1);
}

const sim::params::Param& KnobPanel::param(const QString& path) {
  const sim::params::Param* p = sim::params::find(path.toStdString());
  CS_CHECK(p != nullptr);
  return *p;
}

QString KnobPanel::tip(const sim::params::Param& p, bool ladder) {
  QString t = QStringLiteral("<b>%1</b><br>%2").arg(QString::fromStdString(p.path), QString::fromStdString(p.help).toHtmlEscaped());
  if (!p.choices.empty()) {
    t += "<br>" + tr("Valid values: %1").arg(to_qt(p.choices).join(", ").toHtmlEscaped());
  } else if (p.has_range()) {
    t += "<br>" + tr("Valid range: %1%2 … %3%4")
                      .arg(number_text(p.min), p.min_exclusive ? tr(" (exclusive)") : QString(), number_text(p.max),
                           p.max_exclusive ? tr(" (exclusive)") : QString());
  }
  if (!p.unit.empty()) t += "<br>" + tr("Unit: %1").arg(QString::fromStdString(p.unit).toHtmlEscaped());
  if (!p.default_text.empty()) t += "<br>" + tr("Default: %1").arg(QString::fromStdString(p.default_text).toHtmlEscaped());
  if (ladder) t += "<br><i>" + tr("The arrows step through powers of two; type any other value.") + "</i>";
  t += "<br><i>" + tr("The mouse wheel changes the value only after a click into the knob.") + "</i>";
  return t;
}

void KnobPanel::guard(QWidget* w) {
  w->setFocusPolicy(Qt::StrongFocus);  // the wheel alone never gives a knob focus
  w->installEventFilter(this);
}

bool KnobPanel::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo)) {
      // A spin box's text would take Ctrl+Z for its own undo (QLineEdit accepts the override), so the window's
      // Undo never ran while a knob had focus. Left unaccepted, the shortcut reaches Edit → Undo / Redo: a
      // knob's edit is already the document's, and the panel then shows the document as undone.
      event->ignore();
      return true;
    }
  }
  if (event->type() == QEvent::Wheel) {
    auto* w = qobject_cast<QWidget*>(watched);
    if (w != nullptr && !w->hasFocus()) {
      // Not this knob's: the panel's scroll bar gets it, so the panel scrolls under the pointer.
      for (QWidget* p = w->parentWidget(); p != nullptr; p = p->parentWidget())
        if (auto* area = qobject_cast<QAbstractScrollArea*>(p)) {
          QCoreApplication::sendEvent(area->verticalScrollBar(), event);
          return true;
        }
      event->ignore();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

QString KnobPanel::doc_path(const QString& knob_path) const {
  if (job_ < 0 || !per_job(knob_path)) return knob_path;
  return QStringLiteral("jobs.%1.").arg(job_) + knob_path;
}

void KnobPanel::emit_edit(const QString& knob_path, const QString& json_value) { emit edited(doc_path(knob_path), json_value); }

void KnobPanel::add_spin(QFormLayout* form, const QString& path, const QString& label, bool ladder) {
  const sim::params::Param& p = param(path);
  CS_CHECK(p.type == sim::params::Type::integer && p.max <= std::numeric_limits<int>::max());
  auto* w = new LadderSpinBox(this);
  w->setObjectName(path);
  w->setRange(static_cast<int>(p.min), static_cast<int>(p.max));
  w->setKeyboardTracking(false);
  w->set_ladder(ladder);
  w->setProperty("ladder_knob", ladder);
  w->setToolTip(tip(p, ladder));
  w->setAccelerated(!ladder);
  guard(w);
  connect(w, &QSpinBox::valueChanged, this, [this, path](int v) { emit_edit(path, QString::number(v)); });
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
  w->setToolTip(tip(p, false) + (scale != 1 ? "<br>" + tr("Shown in units of %1.").arg(number_text(scale)) : QString()));
  guard(w);
  connect(w, &QDoubleSpinBox::valueChanged, this, [this, path, scale](double v) {
    emit_edit(path, QString::fromStdString(json(v * scale).dump()));
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
  QString t = tip(p, false);
  if (p.type == sim::params::Type::integer) t += "<br>" + tr("Valid values: %1").arg(items.join(", "));
  w->setToolTip(t);
  guard(w);
  connect(w, &QComboBox::activated, this, [this, path, w](int) { emit_combo(path, w); });
  form->addRow(label, w);
  knobs_.insert(path, w);
}

void KnobPanel::add_check(QFormLayout* form, const QString& path, const QString& label) {
  const sim::params::Param& p = param(path);
  CS_CHECK(p.type == sim::params::Type::boolean);
  auto* w = new QCheckBox(this);
  w->setObjectName(path);
  w->setToolTip(tip(p, false));
  connect(w, &QCheckBox::toggled, this, [this, path](bool on) { emit_edit(path, on ? "true" : "false"); });
  form->addRow(label, w);
  knobs_.insert(path, w);
}

void KnobPanel::add_text(QFormLayout* form, const QString& path, const QString& label) {
  const sim::params::Param& p = param(path);
  auto* w = new QLineEdit(this);
  w->setObjectName(path);
  w->setToolTip(tip(p, false));
  w->setClearButtonEnabled(false);
  connect(w, &QLineEdit::editingFinished, this, [this, path, w]() {
    if (!w->isModified()) return;
    w->setModified(false);
    emit_edit(path, json_string(w->text()));
  });
  form->addRow(label, w);
  knobs_.insert(path, w);
}

void KnobPanel::emit_combo(const QString& path, QComboBox* box) {
  const QString text = box->currentText();
  if (path == "cluster.gpu" && text == kCustomGpu) {
    if (!custom_gpu_.is_null()) emit_edit(path, QString::fromStdString(custom_gpu_.dump()));
  } else if (path == "model.preset" && text == kCustomModel) {
    if (!custom_model_.is_null()) emit_edit("model", QString::fromStdString(custom_model_.dump()));
  } else if (path == "model.preset") {
    emit_edit("model", QString::fromStdString(json{{"preset", text.toStdString()}}.dump()));  // a preset replaces hyperparameters
  } else if (path == "training.zero_stage") {
    emit_edit(path, text);
  } else {
    emit_edit(path, json_string(text));
  }
}

void KnobPanel::set_job(int job) {
  const int jobs = doc_.is_object() && doc_.contains("jobs") && doc_["jobs"].is_array() ? static_cast<int>(doc_["jobs"].size()) : 0;
  job_ = jobs > 0 ? std::clamp(job, 0, jobs - 1) : -1;
  jobs_->setVisible(jobs > 0);
  if (jobs_label_) jobs_label_->setVisible(jobs > 0);
  {
    const QSignalBlocker block(jobs_);
    QStringList names;
    for (int j = 0; j < jobs; ++j) {
      const json& entry = doc_["jobs"][static_cast<std::size_t>(j)];
      const QString name = entry.is_object() && entry.contains("name") && entry["name"].is_string()
                               ? QString::fromStdString(entry["name"].get<std::string>())
                               : QStringLiteral("job%1").arg(j);
      names << QStringLiteral("%1: %2").arg(j + 1).arg(name);
    }
    QStringList shown;
    for (int j = 0; j < jobs_->count(); ++j) shown << jobs_->tabText(j);
    if (shown != names) {
      while (jobs_->count() > 0) jobs_->removeTab(jobs_->count() - 1);
      for (const QString& n : names) jobs_->addTab(n);
    }
    if (job_ >= 0) jobs_->setCurrentIndex(job_);
  }
  if (doc_.is_object()) show_document(doc_);
}

void KnobPanel::show_document(const json& doc) {
  doc_ = doc;
  const int jobs = doc.is_object() && doc.contains("jobs") && doc["jobs"].is_array() ? static_cast<int>(doc["jobs"].size()) : 0;
  if ((jobs > 0) != (job_ >= 0) || job_ >= jobs || jobs_->count() != jobs) {
    set_job(jobs > 0 ? std::max(0, job_) : -1);  // shows the document again for the new job selection
    return;
  }
  std::vector<std::unique_ptr<QSignalBlocker>> blockers;
  for (QWidget* w : knobs_) blockers.push_back(std::make_unique<QSignalBlocker>(w));

  auto at = [&](const QString& path) { return find_path(doc, doc_path(path).toStdString()); };
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

  for (const char* key : {"name", "description"}) {
    auto* line = static_cast<QLineEdit*>(knobs_.value(key));
    line->setText(str(key, ""));
    line->setCursorPosition(0);
    line->setModified(false);
  }
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
  set_combo("training.framework", str("training.framework", "generic"));
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
      {"training.global_batch_size", 1}, {"training.seq_length", 1},
      // the defaults these three resolve to are shown by show_default() once the scenario validates
      {"cluster.intra_node.sockets", 1}, {"cluster.intra_node.gpus_per_pcie_switch", 1}};
  for (const auto& [path, fallback] : ints)
    static_cast<QSpinBox*>(knobs_.value(path))->setValue(static_cast<int>(num(path, fallback)));
  const std::pair<const char*, double> doubles[] = {
      {"cluster.inter_node.oversubscription", 1}, {"cluster.price_per_gpu_hour", 0}, {"training.tokens_to_train", 0},
      {"cluster.intra_node.inter_socket_GBps", 22}};
  for (const auto& [path, fallback] : doubles)
    static_cast<QDoubleSpinBox*>(knobs_.value(path))->setValue(num(path, fallback) / scale_.value(path, 1));
  for (const char* path : {"training.sequence_parallel", "cluster.intra_node.nvls", "cluster.inter_node.sharp"}) {
    const json* on = at(path);
    static_cast<QCheckBox*>(knobs_.value(path))->setChecked(on && on->is_boolean() && on->get<bool>());
  }
}

void KnobPanel::show_default(const QString& path, double value) {
  QWidget* w = knobs_.value(path);
  const QSignalBlocker block(w);
  if (auto* d = qobject_cast<QDoubleSpinBox*>(w)) d->setValue(value / scale_.value(path, 1));
  else if (auto* i = qobject_cast<QSpinBox*>(w)) i->setValue(static_cast<int>(value));
  else if (auto* c = qobject_cast<QCheckBox*>(w)) c->setChecked(value != 0);
}

void KnobPanel::set_knob_enabled(const QString& path, bool enabled) {
  QWidget* w = knobs_.value(path);
  CS_CHECK(w != nullptr);
  w->setEnabled(enabled);
}

void KnobPanel::show_derived_dp(int dp) { dp_->setText(dp > 0 ? QString::number(dp) : QStringLiteral("–")); }

void KnobPanel::highlight(const QString& message) {
  for (auto it = knobs_.begin(); it != knobs_.end(); ++it) {
    const QString path = doc_path(it.key());
    // The library names a job's key "jobs[1].training.x"; an override "jobs.1.training.x".
    QString bracketed = path;
    bracketed.replace(QRegularExpression("^jobs\\.(\\d+)\\."), "jobs[\\1].");
    const bool bad = !message.isEmpty() && (message.contains(path) || message.contains(bracketed));
    it.value()->setProperty("bad_knob", bad);
    it.value()->setStyleSheet(bad ? kBadKnobStyle : QString());
  }
}

QStringList KnobPanel::highlighted() const {
  QStringList out;
  for (auto it = knobs_.begin(); it != knobs_.end(); ++it)
    if (it.value()->property("bad_knob").toBool()) out << it.key();
  out.sort();
  return out;
}

void KnobPanel::set_ladder(bool on) {
  for (QWidget* w : knobs_)
    if (auto* s = qobject_cast<LadderSpinBox*>(w); s && s->property("ladder_knob").toBool()) s->set_ladder(on);
}

}  // namespace cs::gui
