#include "gui/app/main_window.hpp"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include "gui/views/breakdown_chart.hpp"
#include "gui/views/goodput_view.hpp"
#include "gui/views/format.hpp"
#include "gui/views/headline_panel.hpp"
#include "gui/views/knob_panel.hpp"
#include "gui/views/link_chart.hpp"
#include "gui/views/memory_chart.hpp"
#include "gui/views/pareto_chart.hpp"
#include "gui/views/scaling_chart.hpp"
#include "gui/app/sim_runner.hpp"
#include "gui/app/sweep_runner.hpp"
#include "gui/views/timeline_view.hpp"
#include "sim/base/input_error.hpp"
#include "sim/report/output_file.hpp"

namespace cs::gui {

using nlohmann::json;

namespace {

QString csv_field(QString s) {
  if (s.contains(',') || s.contains('"') || s.contains('\n')) s = '"' + s.replace('"', "\"\"") + '"';
  return s;
}

// The report as "path,value" rows, the same keys as `clustersim run --json`.
void flatten(const json& j, const std::string& prefix, QString& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), out);
  } else {
    out += csv_field(QString::fromStdString(prefix)) + "," +
           csv_field(QString::fromStdString(j.is_string() ? j.get<std::string>() : j.dump())) + "\n";
  }
}

QString message_lines(const std::exception& e) { return QString::fromStdString(e.what()); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  runner_ = new SimRunner(this);
  sweeper_ = new SweepRunner(this);
  validate_timer_.setSingleShot(true);
  validate_timer_.setInterval(30);  // coalesces a burst of knob edits into one simulation
  connect(&validate_timer_, &QTimer::timeout, this, &MainWindow::revalidate);
  autosave_timer_.setSingleShot(true);
  autosave_timer_.setInterval(1000);
  connect(&autosave_timer_, &QTimer::timeout, this, &MainWindow::autosave);

  build_ui();
  build_actions();

  connect(runner_, &SimRunner::finished, this, &MainWindow::show_outcome);
  connect(runner_, &SimRunner::failed, this, [this](quint64, const QString& m) { show_error(m); });
  connect(runner_, &SimRunner::started, this, &MainWindow::update_busy);
  connect(runner_, &SimRunner::idle, this, &MainWindow::update_busy);
  connect(sweeper_, &SweepRunner::progress, this, [this](quint64, int done, int total) {
    progress_->setRange(0, total);
    progress_->setValue(done);
    status_->setText(tr("sweep: %1 of %2 layouts").arg(done).arg(total));
  });
  connect(sweeper_, &SweepRunner::finished, this, [this](quint64, std::shared_ptr<const SweepResult> result) {
    show_sweep(std::move(result));
  });
  connect(sweeper_, &SweepRunner::idle, this, [this]() {
    sweep_running_ = false;
    update_busy();
  });
  load_document(ScenarioDocument());
}

MainWindow::~MainWindow() = default;

void MainWindow::build_ui() {
  auto* split = new QSplitter(Qt::Horizontal, this);

  knobs_ = new KnobPanel;
  auto* scroll = new QScrollArea;
  scroll->setWidget(knobs_);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(knobs_->sizeHint().width() + 24);
  split->addWidget(scroll);
  connect(knobs_, &KnobPanel::edited, this, &MainWindow::on_knob);

  auto* right = new QWidget;
  auto* col = new QVBoxLayout(right);
  col->setContentsMargins(4, 4, 4, 4);
  col->setSpacing(4);
  auto* top = new QHBoxLayout;
  headline_ = new HeadlinePanel;
  top->addWidget(headline_, 1);
  auto* pins = new QVBoxLayout;
  auto* pin = new QPushButton(tr("Pin baseline"));
  pin->setObjectName("pin_baseline");
  pin->setToolTip(tr("Keep the current result as the baseline: charts show it beside the next results (A/B)"));
  connect(pin, &QPushButton::clicked, this, &MainWindow::pin_baseline);
  auto* unpin = new QPushButton(tr("Clear baseline"));
  connect(unpin, &QPushButton::clicked, this, &MainWindow::clear_baseline);
  pins->addWidget(pin);
  pins->addWidget(unpin);
  top->addLayout(pins);
  col->addLayout(top);
  baseline_label_ = new QLabel;
  baseline_label_->setStyleSheet("color:#555;");
  col->addWidget(baseline_label_);
  message_ = new QLabel;
  message_->setObjectName("validation_message");
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();
  col->addWidget(message_);

  tabs_ = new QTabWidget;
  // Overview: breakdown, memory, links, and the timeline below.
  auto* overview = new QWidget;
  auto* ov = new QVBoxLayout(overview);
  ov->setContentsMargins(2, 2, 2, 2);
  auto* charts = new QSplitter(Qt::Horizontal);
  breakdown_ = new BreakdownChart;
  memory_ = new MemoryChart;
  links_ = new LinkChart;
  charts->addWidget(breakdown_);
  charts->addWidget(memory_);
  charts->addWidget(links_);
  auto* vsplit = new QSplitter(Qt::Vertical);
  vsplit->addWidget(charts);
  auto* tl_box = new QWidget;
  auto* tl_col = new QVBoxLayout(tl_box);
  tl_col->setContentsMargins(0, 0, 0, 0);
  tl_col->addWidget(TimelineView::make_legend(tl_box));
  overview_timeline_ = new TimelineView;
  tl_col->addWidget(overview_timeline_, 1);
  vsplit->addWidget(tl_box);
  vsplit->setStretchFactor(0, 3);
  vsplit->setStretchFactor(1, 2);
  ov->addWidget(vsplit);
  tabs_->addTab(overview, tr("Overview"));

  auto* tl_tab = new QWidget;
  auto* tl_tab_col = new QVBoxLayout(tl_tab);
  tl_tab_col->setContentsMargins(2, 2, 2, 2);
  tl_tab_col->addWidget(TimelineView::make_legend(tl_tab));
  timeline_ = new TimelineView;
  timeline_->setObjectName("timeline");
  tl_tab_col->addWidget(timeline_, 1);
  tabs_->addTab(tl_tab, tr("Timeline"));

  sweep_tab_ = new QWidget;
  auto* sw = new QVBoxLayout(sweep_tab_);
  sw->setContentsMargins(2, 2, 2, 2);
  auto* sweep_charts = new QSplitter(Qt::Horizontal);
  scaling_ = new ScalingChart;
  pareto_ = new ParetoChart;
  sweep_charts->addWidget(scaling_);
  sweep_charts->addWidget(pareto_);
  auto* sweep_split = new QSplitter(Qt::Vertical);
  sweep_split->addWidget(sweep_charts);
  sweep_table_ = new QTableWidget;
  sweep_table_->setColumnCount(9);
  sweep_table_->setHorizontalHeaderLabels({tr("layout"), tr("GPUs"), tr("step"), tr("tokens/s"), tr("MFU"), tr("fits"),
                                           tr("time to train"), tr("$ to train"), tr("Pareto")});
  sweep_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  sweep_table_->horizontalHeader()->setStretchLastSection(true);
  sweep_table_->verticalHeader()->setDefaultSectionSize(20);
  sweep_table_->verticalHeader()->hide();
  sweep_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  sweep_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  sweep_split->addWidget(sweep_table_);
  sweep_split->setStretchFactor(0, 3);
  sweep_split->setStretchFactor(1, 1);
  sw->addWidget(sweep_split);
  tabs_->addTab(sweep_tab_, tr("Scaling && cost sweep"));
  goodput_ = new GoodputView;
  goodput_->setObjectName("goodput-view");
  tabs_->addTab(goodput_, tr("Whole run"));
  connect(pareto_, &ParetoChart::point_clicked, this, &MainWindow::load_sweep_point);
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::maybe_run_sweep);
  col->addWidget(tabs_, 1);

  split->addWidget(right);
  split->setStretchFactor(1, 1);
  setCentralWidget(split);

  progress_ = new QProgressBar;
  progress_->setMaximumWidth(180);
  progress_->setTextVisible(false);
  progress_->hide();
  status_ = new QLabel;
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  resize(1600, 1000);
}

void MainWindow::build_actions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QToolBar* bar = addToolBar(tr("File"));
  bar->setMovable(false);
  auto add = [&](const QString& text, QKeySequence key, auto slot, bool on_bar) {
    QAction* a = file->addAction(text);
    a->setShortcut(key);
    connect(a, &QAction::triggered, this, slot);
    if (on_bar) bar->addAction(a);
    return a;
  };
  add(tr("&Open scenario…"), QKeySequence::Open, &MainWindow::open_dialog, true);
  add(tr("&Save"), QKeySequence::Save, &MainWindow::save, true);
  add(tr("Save &as…"), QKeySequence::SaveAs, &MainWindow::save_as, false);
  file->addSeparator();
  add(tr("Export view as &PNG…"), QKeySequence(tr("Ctrl+E")), &MainWindow::export_png, true);
  add(tr("Export numbers as &CSV…"), QKeySequence(tr("Ctrl+Shift+E")), &MainWindow::export_csv, true);
  file->addSeparator();
  add(tr("&Quit"), QKeySequence::Quit, &MainWindow::close, false);
}

bool MainWindow::open_file(const QString& path, QString* error) {
  try {
    load_document(ScenarioDocument::from_file(path.toStdString()));
    return true;
  } catch (const std::exception& e) {
    if (error) *error = message_lines(e);
    return false;
  }
}

void MainWindow::load_document(ScenarioDocument doc) {
  doc_ = std::move(doc);
  knobs_->show_document(doc_.content());
  sweep_stale_ = true;
  sweep_.reset();
  update_title();
  revalidate();
}

bool MainWindow::apply_overrides(const QStringList& assignments, QString* error) {
  if (assignments.isEmpty()) return true;
  try {
    for (const QString& a : assignments) doc_.set(a.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = message_lines(e);
    return false;
  }
  knobs_->show_document(doc_.content());
  update_title();
  revalidate();
  return true;
}

void MainWindow::on_knob(const QString& path, const QString& json_value) {
  try {
    doc_.set((path + "=" + json_value).toStdString());
  } catch (const std::exception& e) {
    show_error(message_lines(e));
    return;
  }
  // DP is derived in the GUI; a stale explicit value would contradict every layout change.
  doc_.erase("training.data_parallel_size");
  if (path == "training.zero_stage") doc_.erase("training.fsdp_sharding_strategy");
  if (path == "model" || path == "cluster.gpu") knobs_->show_document(doc_.content());
  update_title();
  if (!headless_) autosave_timer_.start();
  validate_timer_.start();
}

void MainWindow::revalidate() {
  validate_timer_.stop();
  try {
    sim::Scenario s = doc_.validate();
    valid_ = true;
    error_.clear();
    message_->hide();
    knobs_->show_derived_dp(s.training.dp);
    if (!find_path(doc_.content(), "cluster.price_per_gpu_hour")) knobs_->show_default("cluster.price_per_gpu_hour", s.price_per_gpu_hour_usd);
    runner_->submit(std::move(s));
    sweep_stale_ = true;
    sweeper_->cancel();
    maybe_run_sweep();
  } catch (const InputError& e) {
    valid_ = false;
    runner_->supersede();  // whatever was in flight is for an older edit
    sweeper_->cancel();
    knobs_->show_derived_dp(0);
    show_error(message_lines(e));
  }
  update_busy();
}

void MainWindow::show_error(const QString& message) {
  error_ = message;
  message_->setStyleSheet("QLabel { color:#c01c28; background:#fdecea; border:1px solid #f5c2c0; padding:4px; }");
  message_->setText(message.toHtmlEscaped().replace("\n", "<br>") +
                    (current_ ? tr("<br><i>Showing the last valid result.</i>") : QString()));
  message_->setTextFormat(Qt::RichText);
  message_->show();
  status_->setText(tr("invalid scenario"));
  emit validation_failed(message);
}

QString MainWindow::validation_message() const { return valid_ ? QString() : error_; }

void MainWindow::show_outcome(quint64 generation, std::shared_ptr<const SimOutcome> outcome) {
  current_ = std::move(outcome);
  const sim::Report& r = current_->report;
  headline_->show_report(r, baseline_ ? std::optional<sim::Report>(baseline_->report) : std::nullopt);
  if (!r.fits_in_memory && valid_) {
    message_->setStyleSheet("QLabel { color:#8a4b00; background:#fff4e0; border:1px solid #f0c36d; padding:4px; }");
    message_->setTextFormat(Qt::PlainText);
    message_->setText(tr("Does not fit in memory: %1 per GPU needed (peak stage %2), the %3 has %4. "
                         "The step is still simulated, but this layout cannot run.")
                          .arg(format_gib(r.memory.total_bytes()))
                          .arg(r.memory.stage)
                          .arg(QString::fromStdString(r.gpu), format_gib(r.memory_capacity_bytes)));
    message_->show();
  }
  refresh_charts();
  overview_timeline_->show_timeline(current_->timeline);
  timeline_->show_timeline(current_->timeline);
  last_status_ = tr("%1: %2 GPUs, %3 simulated ranks, %4 tasks, %5 events, simulated in %6 s")
                       .arg(QString::fromStdString(r.name))
                       .arg(format_count(r.num_gpus))
                       .arg(r.simulated_ranks)
                       .arg(format_count(static_cast<double>(r.tasks)))
                       .arg(format_count(static_cast<double>(r.events)))
                       .arg(current_->wall_s, 0, 'f', 2);
  status_->setText(last_status_);
  update_busy();
  emit result_shown(generation);
}

void MainWindow::refresh_charts() {
  breakdown_->show_outcomes(current_, baseline_);
  goodput_->show_run(current_ ? current_->run : std::nullopt);
  memory_->show_outcomes(current_, baseline_);
  links_->show_outcome(current_, baseline_);
}

void MainWindow::pin_baseline() {
  if (!current_) return;
  baseline_ = current_;
  const sim::Report& r = baseline_->report;
  baseline_label_->setText(tr("Baseline: %1 GPUs TP%2 PP%3 DP%4 — step %5, MFU %6")
                               .arg(r.num_gpus)
                               .arg(r.tp)
                               .arg(r.pp)
                               .arg(r.dp)
                               .arg(format_seconds(r.step_time_s), format_percent(r.mfu)));
  headline_->show_report(current_->report, baseline_->report);
  refresh_charts();
}

void MainWindow::clear_baseline() {
  baseline_.reset();
  baseline_label_->clear();
  if (current_) headline_->show_report(current_->report, std::nullopt);
  refresh_charts();
}

void MainWindow::maybe_run_sweep() {
  if (tabs_->currentWidget() != sweep_tab_ || !sweep_stale_ || !valid_) return;
  sweep_stale_ = false;
  sweep_running_ = true;
  sweeper_->run(doc_.content(), doc_.display_name());
  update_busy();
}

void MainWindow::show_sweep(std::shared_ptr<const SweepResult> result) {
  sweep_ = std::move(result);
  scaling_->show_points(sweep_);
  pareto_->show_points(sweep_);
  // The simulated points: the front first (fastest first), then the rest by time to train.
  const auto& points = sweep_->points;
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].simulated()) rows.push_back(i);
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
    const sim::SweepPoint &p = points[a], &q = points[b];
    if (sweep_->on_front(a) != sweep_->on_front(b)) return sweep_->on_front(a);
    if (p.fits() != q.fits()) return p.fits();
    return p.report.cost.days_to_train < q.report.cost.days_to_train;
  });
  sweep_table_->setSortingEnabled(false);
  sweep_table_->setRowCount(static_cast<int>(rows.size()));
  for (int row = 0; row < static_cast<int>(rows.size()); ++row) {
    const std::size_t i = rows[static_cast<std::size_t>(row)];
    const sim::SweepPoint& p = points[i];
    const sim::Report& r = p.report;
    const bool current = sweep_->is_current(i);
    const QStringList cells{QString::fromStdString(point_label(p)) + (current ? tr("  (current)") : QString()),
                            QString::number(r.num_gpus), format_seconds(r.step_time_s), format_rate(r.tokens_per_s),
                            format_percent(r.mfu), p.fits() ? tr("yes") : tr("no"), format_days(r.cost.days_to_train),
                            format_usd(r.cost.usd_to_train), sweep_->on_front(i) ? tr("★") : QString()};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (!p.fits()) item->setForeground(QColor(0x99, 0x99, 0x99));
      if (current) item->setBackground(QColor(0xfd, 0xec, 0xea));
      sweep_table_->setItem(row, c, item);
    }
  }
  if (!sweep_->error.empty())
    status_->setText(tr("sweep failed: %1").arg(QString::fromStdString(sweep_->error)));
  else
    status_->setText(tr("sweep: %1 layouts simulated, %2 on the Pareto front").arg(rows.size()).arg(sweep_->pareto.size()));
  emit sweep_shown();
}

void MainWindow::load_sweep_point(const sim::SweepPoint& p) {
  try {
    for (const auto& [path, value] : layout_of(p)) doc_.set(path + "=" + value.dump());
  } catch (const std::exception& e) {
    show_error(message_lines(e));
    return;
  }
  doc_.erase("training.data_parallel_size");
  knobs_->show_document(doc_.content());
  update_title();
  if (!headless_) autosave_timer_.start();
  revalidate();
}

void MainWindow::update_busy() {
  const bool busy = runner_->busy() || sweep_running_;
  if (runner_->busy()) {
    progress_->setRange(0, 0);  // indeterminate: the simulator has no progress to report
    status_->setText(tr("simulating…"));
  } else if (status_->text() == tr("simulating…")) {
    status_->setText(last_status_);
  }
  progress_->setVisible(busy);
}

bool MainWindow::set_view(const QString& name) {
  const QString n = name.toLower();
  if (n == "overview") tabs_->setCurrentIndex(0);
  else if (n == "timeline") tabs_->setCurrentIndex(1);
  else if (n == "sweep" || n == "scaling" || n == "cost" || n == "pareto") tabs_->setCurrentWidget(sweep_tab_);
  else if (n == "run" || n == "goodput") tabs_->setCurrentWidget(goodput_);
  else return false;
  maybe_run_sweep();
  return true;
}

bool MainWindow::wait_until_idle(int timeout_ms) {
  QElapsedTimer clock;
  clock.start();
  auto done = [&]() {
    const bool sweep_wanted = tabs_->currentWidget() == sweep_tab_ && valid_;
    return !validate_timer_.isActive() && !runner_->busy() && (!sweep_wanted || (!sweep_running_ && !sweep_stale_));
  };
  QEventLoop loop;
  QTimer poll;
  connect(&poll, &QTimer::timeout, &loop, [&]() {
    if (done() || clock.elapsed() > timeout_ms) loop.quit();
  });
  poll.start(10);
  if (!done()) loop.exec();
  QCoreApplication::processEvents();
  return done();
}

void MainWindow::update_title() {
  setWindowTitle(QStringLiteral("clustersim — %1[*]").arg(QString::fromStdString(doc_.display_name())));
  setWindowModified(doc_.dirty());
}

QString MainWindow::recovery_path() {
  return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/recovery.json";
}

void MainWindow::autosave() {
  if (headless_ || !doc_.dirty()) return;
  const json rec{{"path", doc_.path()}, {"document", doc_.content()}};
  try {
    QDir().mkpath(QFileInfo(recovery_path()).absolutePath());
    sim::write_file_atomically(recovery_path().toStdString(), rec.dump(2));
  } catch (const std::exception& e) {
    status_->setText(tr("could not write the recovery file: %1").arg(message_lines(e)));
  }
}

bool MainWindow::restore_recovery() {
  if (!QFile::exists(recovery_path())) return false;
  try {
    const json rec = sim::read_json_file(recovery_path().toStdString());
    auto doc = ScenarioDocument::from_json(rec.at("document"), rec.value("path", std::string()));
    doc.set("name=" + json(doc.content().value("name", std::string("recovered"))).dump());  // marks it dirty
    load_document(std::move(doc));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

bool MainWindow::confirm_discard() {
  if (headless_ || !doc_.dirty()) return true;
  const auto answer = QMessageBox::question(this, tr("Unsaved changes"),
                                            tr("The scenario has unsaved changes. Save them?"),
                                            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Save) return save();
  QFile::remove(recovery_path());
  return true;
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (!confirm_discard()) {
    e->ignore();
    return;
  }
  e->accept();
}

bool MainWindow::save() {
  if (doc_.path().empty()) return save_as();
  return save_to(doc_.path());
}

bool MainWindow::save_as() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), QString::fromStdString(doc_.path()),
                                                    tr("Scenario JSON (*.json)"));
  if (path.isEmpty()) return false;
  return save_to(path.toStdString());
}

bool MainWindow::save_to(const std::string& path) {
  try {
    doc_.save_as(path);
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Save failed"), message_lines(e));
    return false;
  }
  QFile::remove(recovery_path());
  update_title();
  return true;
}

void MainWindow::open_dialog() {
  if (!confirm_discard()) return;
  const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), QString(), tr("Scenario JSON (*.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!open_file(path, &error)) QMessageBox::warning(this, tr("Cannot open scenario"), error);
}

void MainWindow::export_png() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export view as PNG"), "clustersim.png", tr("PNG image (*.png)"));
  if (path.isEmpty()) return;
  QSaveFile out(path);  // written to a temporary name and renamed
  if (!out.open(QIODevice::WriteOnly) || !tabs_->currentWidget()->grab().save(&out, "PNG") || !out.commit())
    QMessageBox::warning(this, tr("Export failed"), tr("Cannot write %1").arg(path));
}

void MainWindow::export_csv() {
  if (!current_) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export numbers as CSV"), "clustersim.csv", tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QString text = "key,value\n";
  flatten(sim::to_json(current_->report), "", text);
  try {
    sim::write_file_atomically(path.toStdString(), text.toStdString());
    if (sweep_) {
      QString s = "nodes,gpus,tp,pp,dp,valid,status,fits,step_time_s,tokens_per_s,mfu,days_to_train,usd_to_train,pareto,error\n";
      for (std::size_t i = 0; i < sweep_->points.size(); ++i) {
        const sim::SweepPoint& p = sweep_->points[i];
        const sim::Report& r = p.report;
        const sim::Assignment layout = layout_of(p);  // nodes, TP, PP
        auto value = [&](std::size_t k) { return k < layout.size() ? QString::fromStdString(layout[k].second.dump()) : QString(); };
        s += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15\n")
                 .arg(value(0)).arg(p.valid ? r.num_gpus : 0).arg(value(1)).arg(value(2)).arg(p.valid ? r.dp : 0)
                 .arg(p.valid).arg(QString::fromLatin1(sim::to_string(p.status))).arg(p.fits())
                 .arg(r.step_time_s, 0, 'g', 12).arg(r.tokens_per_s, 0, 'g', 12).arg(r.mfu, 0, 'g', 6)
                 .arg(r.cost.days_to_train, 0, 'g', 8).arg(r.cost.usd_to_train, 0, 'g', 10).arg(sweep_->on_front(i))
                 .arg(csv_field(QString::fromStdString(p.error)));
      }
      QString sweep_path = path;
      sweep_path.replace(QRegularExpression("\\.csv$"), "") += "-sweep.csv";
      sim::write_file_atomically(sweep_path.toStdString(), s.toStdString());
    }
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Export failed"), message_lines(e));
  }
}

}  // namespace cs::gui
