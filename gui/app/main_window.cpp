#include "gui/app/main_window.hpp"

#include <algorithm>
#include <initializer_list>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QLockFile>
#include <QGraphicsOpacityEffect>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include "gui/app/cli_command.hpp"
#include "gui/app/drafts.hpp"
#include "gui/app/sim_runner.hpp"
#include "gui/app/sweep_runner.hpp"
#include "gui/views/breakdown_chart.hpp"
#include "gui/views/goodput_view.hpp"
#include "gui/views/format.hpp"
#include "gui/views/headline_panel.hpp"
#include "gui/views/knob_panel.hpp"
#include "gui/views/link_chart.hpp"
#include "gui/views/memory_chart.hpp"
#include "gui/views/pareto_chart.hpp"
#include "gui/views/scaling_chart.hpp"
#include "gui/views/timeline_view.hpp"
#include "sim/base/input_error.hpp"
#include "sim/report/output_file.hpp"
#include "sim/step/step_budget.hpp"
#include "topologies/link_catalog.hpp"

namespace cs::gui {

using nlohmann::json;

namespace {

// A tab's two floors in a vertical splitter: `charts` side by side on top (3 parts of the height), `below`
// under them (`below_share` parts).
QSplitter* charts_above(std::initializer_list<QWidget*> charts, QWidget* below, int below_share) {
  auto* row = new QSplitter(Qt::Horizontal);
  for (QWidget* c : charts) row->addWidget(c);
  auto* floors = new QSplitter(Qt::Vertical);
  floors->addWidget(row);
  floors->addWidget(below);
  floors->setStretchFactor(0, 3);
  floors->setStretchFactor(1, below_share);
  return floors;
}

constexpr int kMaxRecent = 8;

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

// The sweep table's first cell: the index of its row's point in SweepResult::points.
constexpr int kPointRole = Qt::UserRole + 1;

// A table cell that sorts by a number (the sweep table's columns show formatted text).
class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(const QString& text, double key) : QTableWidgetItem(text) { setData(Qt::UserRole, key); }
  bool operator<(const QTableWidgetItem& other) const override {
    return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
  }
};

QString error_style(bool dark) {
  return dark ? "QLabel { color:#ffb4ab; background:#5c1a14; border:1px solid #93000a; padding:4px; }"
              : "QLabel { color:#c01c28; background:#fdecea; border:1px solid #f5c2c0; padding:4px; }";
}
QString warning_style(bool dark) {
  return dark ? "QLabel { color:#ffd8a8; background:#4a3000; border:1px solid #8a5a00; padding:4px; }"
              : "QLabel { color:#8a4b00; background:#fff4e0; border:1px solid #f0c36d; padding:4px; }";
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), draft_id_(new_draft_id()) {
  runner_ = new SimRunner(this);
  sweeper_ = new SweepRunner(this);
  validate_timer_.setSingleShot(true);
  validate_timer_.setInterval(30);  // coalesces a burst of knob edits into one simulation
  connect(&validate_timer_, &QTimer::timeout, this, &MainWindow::revalidate);
  autosave_timer_.setSingleShot(true);
  autosave_timer_.setInterval(1000);
  connect(&autosave_timer_, &QTimer::timeout, this, &MainWindow::autosave);
  raw_timer_.setSingleShot(true);
  raw_timer_.setInterval(150);
  connect(&raw_timer_, &QTimer::timeout, this, &MainWindow::check_raw);
  stale_timer_.setSingleShot(true);
  stale_timer_.setInterval(250);
  connect(&stale_timer_, &QTimer::timeout, this, [this]() { show_stale_look(stale_); });

  build_ui();
  build_actions();

  connect(runner_, &SimRunner::finished, this, &MainWindow::show_outcome);
  connect(runner_, &SimRunner::failed, this, [this](quint64, const QString& m) {
    valid_ = false;
    show_error(m);
  });
  connect(runner_, &SimRunner::started, this, &MainWindow::update_busy);
  connect(runner_, &SimRunner::idle, this, &MainWindow::update_busy);
  connect(runner_, &SimRunner::cancelled, this, [this]() {
    last_status_ = tr("simulation cancelled: the results shown are for the last finished simulation");
    status_->setText(last_status_);
  });
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
  apply_theme();
  load_document(ScenarioDocument());
}

MainWindow::~MainWindow() {
  // Stop both runners before the widgets go: quitting never waits on a simulation.
  runner_->supersede();
  sweeper_->cancel();
}

void MainWindow::build_ui() {
  auto* split = new QSplitter(Qt::Horizontal, this);

  knobs_ = new KnobPanel;
  knob_scroll_ = new QScrollArea;
  knob_scroll_->setObjectName("knob_scroll");
  knob_scroll_->setWidget(knobs_);
  knob_scroll_->setWidgetResizable(true);
  knob_scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  knob_scroll_->setMinimumWidth(knobs_->sizeHint().width() + 24);
  split->addWidget(knob_scroll_);
  connect(knobs_, &KnobPanel::edited, this, &MainWindow::on_knob);
  connect(knobs_, &KnobPanel::job_selected, this, [this](int) {
    show_result();
    refresh_jobs();
  });

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
  baseline_label_->setForegroundRole(QPalette::PlaceholderText);
  col->addWidget(baseline_label_);
  message_ = new QLabel;
  message_->setObjectName("validation_message");
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();
  col->addWidget(message_);

  jobs_table_ = new QTableWidget;
  jobs_table_->setObjectName("jobs_table");
  jobs_table_->setColumnCount(8);
  jobs_table_->setHorizontalHeaderLabels({tr("job"), tr("GPUs"), tr("layout"), tr("step (shared)"), tr("step alone"),
                                          tr("slowdown"), tr("tokens/s"), tr("MFU")});
  jobs_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  jobs_table_->horizontalHeader()->setStretchLastSection(true);
  jobs_table_->verticalHeader()->hide();
  jobs_table_->verticalHeader()->setDefaultSectionSize(20);
  jobs_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  jobs_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  jobs_table_->setSelectionMode(QAbstractItemView::SingleSelection);
  jobs_table_->setToolTip(tr("Every job of the scenario: its step with the other jobs on the shared fabric, alone on the "
                             "same nodes, and the slowdown. Click a job to show and edit it."));
  jobs_table_->hide();
  connect(jobs_table_, &QTableWidget::cellClicked, this, [this](int row, int) { select_job(row); });
  col->addWidget(jobs_table_);

  tabs_ = new QTabWidget;
  // Overview: breakdown, memory, links, and the timeline below.
  auto* overview = new QWidget;
  auto* ov = new QVBoxLayout(overview);
  ov->setContentsMargins(2, 2, 2, 2);
  breakdown_ = new_breakdown_chart();
  memory_ = new_memory_chart();
  links_ = new LinkChart;
  auto* tl_box = new QWidget;
  auto* tl_col = new QVBoxLayout(tl_box);
  tl_col->setContentsMargins(0, 0, 0, 0);
  tl_col->addWidget(TimelineView::make_legend(tl_box));
  overview_timeline_ = new TimelineView;
  tl_col->addWidget(overview_timeline_, 1);
  ov->addWidget(charts_above({breakdown_, memory_, links_}, tl_box, 2));
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
  scaling_ = new ScalingChart;
  pareto_ = new ParetoChart;
  auto* table_box = new QWidget;
  auto* table_col = new QVBoxLayout(table_box);
  table_col->setContentsMargins(0, 0, 0, 0);
  table_col->setSpacing(2);
  sweep_rejected_ = new QLabel;
  sweep_rejected_->setObjectName("sweep_rejected");
  sweep_rejected_->setWordWrap(true);
  sweep_rejected_->hide();
  table_col->addWidget(sweep_rejected_);
  sweep_table_ = new QTableWidget;
  sweep_table_->setColumnCount(9);
  sweep_table_->setHorizontalHeaderLabels({tr("layout"), tr("GPUs"), tr("step"), tr("tokens/s"), tr("MFU"), tr("fits"),
                                           tr("time to train"), tr("$ to train"), tr("Pareto")});
  sweep_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  sweep_table_->horizontalHeader()->setStretchLastSection(true);
  sweep_table_->horizontalHeader()->setToolTip(tr("Click a column to sort by it"));
  sweep_table_->verticalHeader()->setDefaultSectionSize(20);
  sweep_table_->verticalHeader()->hide();
  sweep_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  sweep_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_col->addWidget(sweep_table_, 1);
  sw->addWidget(charts_above({scaling_, pareto_}, table_box, 1));
  tabs_->addTab(sweep_tab_, tr("Scaling && cost sweep"));
  goodput_ = new GoodputView;
  goodput_->setObjectName("goodput-view");
  tabs_->addTab(goodput_, tr("Whole run"));
  connect(pareto_, &ParetoChart::point_clicked, this, &MainWindow::load_sweep_point);
  // A click on a table row loads its layout, as a click on its point does (the row keeps the point's index:
  // sorting moves rows).
  connect(sweep_table_, &QTableWidget::cellClicked, this, [this](int row, int) {
    const QTableWidgetItem* first = sweep_table_->item(row, 0);
    const QVariant i = first ? first->data(kPointRole) : QVariant();
    if (sweep_ && i.isValid() && i.toULongLong() < sweep_->points.size())
      load_sweep_point(sweep_->points[static_cast<std::size_t>(i.toULongLong())]);
  });
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::maybe_run_sweep);
  col->addWidget(tabs_, 1);

  split->addWidget(right);
  split->setStretchFactor(1, 1);
  setCentralWidget(split);

  // The raw JSON of the document, for the keys the panel has no knob for; validated as you type.
  raw_dock_ = new QDockWidget(tr("Scenario JSON"), this);
  raw_dock_->setObjectName("raw_json_dock");
  auto* raw_box = new QWidget;
  auto* raw_col = new QVBoxLayout(raw_box);
  raw_col->setContentsMargins(2, 2, 2, 2);
  raw_ = new QPlainTextEdit;
  raw_->setObjectName("raw_json");
  raw_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  raw_->setLineWrapMode(QPlainTextEdit::NoWrap);
  raw_col->addWidget(raw_, 1);
  raw_status_ = new QLabel;
  raw_status_->setObjectName("raw_json_status");
  raw_status_->setWordWrap(true);
  raw_col->addWidget(raw_status_);
  raw_apply_ = new QPushButton(tr("Apply (Ctrl+Return)"));
  raw_apply_->setObjectName("raw_json_apply");
  raw_apply_->setShortcut(QKeySequence(tr("Ctrl+Return")));
  raw_col->addWidget(raw_apply_);
  raw_dock_->setWidget(raw_box);
  addDockWidget(Qt::RightDockWidgetArea, raw_dock_);
  raw_dock_->hide();
  connect(raw_, &QPlainTextEdit::textChanged, this, [this]() {
    if (raw_refreshing_) return;
    raw_user_edited_ = true;
    raw_timer_.start();
  });
  connect(raw_apply_, &QPushButton::clicked, this, [this]() {
    QString error;
    if (!apply_raw_json(raw_->toPlainText(), &error)) raw_status_->setText(error);
  });

  progress_ = new QProgressBar;
  progress_->setMaximumWidth(160);
  progress_->setTextVisible(false);
  progress_->hide();
  cancel_button_ = new QPushButton(tr("Cancel"));
  cancel_button_->setObjectName("cancel");
  cancel_button_->setToolTip(tr("Stop the running simulation and sweep (Esc)"));
  cancel_button_->hide();
  connect(cancel_button_, &QPushButton::clicked, this, &MainWindow::cancel);
  status_ = new QLabel;
  status_->setObjectName("status");
  status_->setMinimumWidth(0);
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_button_);
  resize(1600, 1000);
}

void MainWindow::build_actions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QMenu* view = menuBar()->addMenu(tr("&View"));
  QToolBar* bar = addToolBar(tr("File"));
  bar->setObjectName("toolbar");
  bar->setMovable(false);
  auto add = [&](QMenu* menu, const QString& text, QKeySequence key, auto slot, bool on_bar, const char* name) {
    QAction* a = menu->addAction(text);
    a->setObjectName(name);
    a->setShortcut(key);
    connect(a, &QAction::triggered, this, slot);
    if (on_bar) bar->addAction(a);
    return a;
  };
  add(file, tr("&Open scenario…"), QKeySequence::Open, &MainWindow::open_dialog, true, "action_open");
  recent_menu_ = file->addMenu(tr("Open &recent"));
  recent_menu_->setObjectName("recent_menu");
  rebuild_recent_menu();
  reload_ = add(file, tr("Re&load from disk"), QKeySequence(tr("Ctrl+R")), [this]() {
    if (doc_.dirty() && !headless_ &&
        QMessageBox::question(this, tr("Reload"), tr("Drop the unsaved edits and read the file again?")) != QMessageBox::Yes)
      return;
    QString error;
    if (!reload(&error) && !headless_) QMessageBox::warning(this, tr("Cannot reload"), error);
  }, false, "action_reload");
  add(file, tr("&Save"), QKeySequence::Save, &MainWindow::save, true, "action_save");
  add(file, tr("Save &as…"), QKeySequence(tr("Ctrl+Shift+S")), &MainWindow::save_as, false, "action_save_as");
  file->addSeparator();
  add(file, tr("Export view as &PNG…"), QKeySequence(tr("Ctrl+E")), &MainWindow::export_png, true, "action_export_png");
  add(file, tr("Export numbers as &CSV…"), QKeySequence(tr("Ctrl+Shift+E")), &MainWindow::export_csv, true, "action_export_csv");
  add(file, tr("Export s&weep as CSV…"), QKeySequence(), &MainWindow::export_sweep_csv, false, "action_export_sweep");
  file->addSeparator();
  add(file, tr("&Quit"), QKeySequence::Quit, &MainWindow::close, false, "action_quit");

  undo_ = add(edit, tr("&Undo"), QKeySequence::Undo, &MainWindow::undo, false, "action_undo");
  redo_ = add(edit, tr("&Redo"), QKeySequence(tr("Ctrl+Shift+Z")), &MainWindow::redo, false, "action_redo");
  edit->addSeparator();
  add(edit, tr("Copy as C&LI command"), QKeySequence(tr("Ctrl+Shift+C")), &MainWindow::copy_cli_command, false, "action_copy_cli");
  QAction* raw = raw_dock_->toggleViewAction();
  raw->setText(tr("Edit scenario &JSON"));
  raw->setShortcut(QKeySequence(tr("Ctrl+J")));
  raw->setObjectName("action_raw_json");
  edit->addAction(raw);
  connect(raw_dock_, &QDockWidget::visibilityChanged, this, [this](bool on) {
    if (on && !raw_user_edited_) refresh_raw();
  });
  QAction* cancel = add(edit, tr("&Cancel simulation"), QKeySequence(Qt::Key_Escape), &MainWindow::cancel, false, "action_cancel");
  cancel->setShortcutContext(Qt::WindowShortcut);

  add(view, tr("&Overview"), QKeySequence(tr("Ctrl+1")), [this]() { set_view("overview"); }, false, "action_view_overview");
  add(view, tr("&Timeline"), QKeySequence(tr("Ctrl+2")), [this]() { set_view("timeline"); }, false, "action_view_timeline");
  add(view, tr("&Scaling and cost sweep"), QKeySequence(tr("Ctrl+3")), [this]() { set_view("sweep"); }, false, "action_view_sweep");
  view->addSeparator();
  add(view, tr("Zoom timeline &in"), QKeySequence(QKeySequence::ZoomIn), [this]() { timeline_->zoom(1.5); overview_timeline_->zoom(1.5); }, false, "action_zoom_in");
  add(view, tr("Zoom timeline o&ut"), QKeySequence(QKeySequence::ZoomOut), [this]() { timeline_->zoom(1 / 1.5); overview_timeline_->zoom(1 / 1.5); }, false, "action_zoom_out");
  add(view, tr("&Whole step"), QKeySequence(tr("Ctrl+0")), [this]() { timeline_->reset_zoom(); overview_timeline_->reset_zoom(); }, false, "action_zoom_reset");
  view->addSeparator();
  log_axes_ = view->addAction(tr("&Log axes on the cost-vs-time plot"));
  log_axes_->setObjectName("action_log_axes");
  log_axes_->setCheckable(true);
  connect(log_axes_, &QAction::toggled, this, [this](bool on) { pareto_->set_log_axes(on); });
  QAction* ladder = view->addAction(tr("Size knobs step through &powers of two"));
  ladder->setObjectName("action_ladder");
  ladder->setCheckable(true);
  ladder->setChecked(true);
  connect(ladder, &QAction::toggled, knobs_, &KnobPanel::set_ladder);
  view->addSeparator();
  add(view, tr("&Pin baseline"), QKeySequence(tr("Ctrl+B")), &MainWindow::pin_baseline, false, "action_pin");
  add(view, tr("&Clear baseline"), QKeySequence(tr("Ctrl+Shift+B")), &MainWindow::clear_baseline, false, "action_unpin");
  update_actions();
}

bool MainWindow::open_file(const QString& path, QString* error) {
  try {
    load_document(ScenarioDocument::from_file(path.toStdString()));
  } catch (const std::exception& e) {
    if (error) *error = message_lines(e);
    return false;
  }
  add_recent(QFileInfo(path).absoluteFilePath());
  return true;
}

bool MainWindow::reload(QString* error) {
  if (doc_.path().empty()) {
    if (error) *error = tr("the scenario has not been saved to a file yet");
    return false;
  }
  return open_file(QString::fromStdString(doc_.path()), error);
}

void MainWindow::load_document(ScenarioDocument doc) {
  doc_ = std::move(doc);
  // A new document: nothing on screen is its result until it has been simulated.
  runner_->supersede();
  clear_result();
  knobs_->set_job(doc_.multi_job() ? 0 : -1);
  knobs_->show_document(doc_.content());
  sweep_stale_ = true;
  sweep_.reset();
  scaling_->show_points(nullptr);
  pareto_->show_points(nullptr);
  sweep_table_->setRowCount(0);
  sweep_rejected_->hide();
  raw_user_edited_ = false;
  refresh_raw();
  update_title();
  update_actions();
  revalidate();
}

bool MainWindow::apply_overrides(const QStringList& assignments, QString* error) {
  if (assignments.isEmpty()) return true;
  doc_.begin_edit();
  try {
    for (const QString& a : assignments) doc_.set(a.toStdString());
  } catch (const std::exception& e) {
    doc_.end_edit();
    if (error) *error = message_lines(e);
    return false;
  }
  doc_.end_edit();
  after_edit();
  return true;
}

bool MainWindow::apply_raw_json(const QString& text, QString* error) {
  json parsed;
  try {
    parsed = json::parse(text.toStdString());
  } catch (const json::parse_error& e) {
    if (error) *error = tr("not JSON: %1").arg(QString::fromStdString(e.what()));
    return false;
  }
  if (!parsed.is_object()) {
    if (error) *error = tr("not a scenario: the top level must be an object");
    return false;
  }
  doc_.begin_edit();
  doc_.replace(std::move(parsed));
  doc_.end_edit();
  raw_user_edited_ = false;
  after_edit();
  return true;
}

void MainWindow::on_knob(const QString& path, const QString& json_value) {
  doc_.begin_edit();
  const json* old_gpu = find_path(doc_.content(), "cluster.gpu");
  const json gpu_before = old_gpu ? *old_gpu : json();
  try {
    doc_.set((path + "=" + json_value).toStdString());
  } catch (const std::exception& e) {
    doc_.end_edit();
    show_error(message_lines(e));
    return;
  }
  // DP is derived in the GUI; a stale explicit value would contradict every layout change.
  const QString job_prefix = knobs_->doc_path("training.x").chopped(QStringLiteral("training.x").size());
  doc_.erase((job_prefix + "training.data_parallel_size").toStdString());
  if (path.endsWith("training.zero_stage")) doc_.erase((job_prefix + "training.fsdp_sharding_strategy").toStdString());
  QString note;
  if (path == "cluster.gpu" && find_path(doc_.content(), "cluster.price_per_gpu_hour") &&
      (!old_gpu || *find_path(doc_.content(), "cluster.gpu") != gpu_before)) {
    // The price was the old GPU's: the new one takes its catalog price (Undo brings the old price back).
    doc_.erase("cluster.price_per_gpu_hour");
    note = tr("price per GPU-hour: now the %1's catalog price (Ctrl+Z restores the previous one)").arg(json_value);
  }
  doc_.end_edit();
  after_edit();
  if (!note.isEmpty()) status_->setText(note);
}

void MainWindow::after_edit() {
  knobs_->show_document(doc_.content());
  update_title();
  update_actions();
  if (!raw_user_edited_) refresh_raw();
  if (!headless_) autosave_timer_.start();
  validate_timer_.start();
}

bool MainWindow::undo() {
  if (!doc_.undo()) return false;
  after_edit();
  return true;
}

bool MainWindow::redo() {
  if (!doc_.redo()) return false;
  after_edit();
  return true;
}

void MainWindow::revalidate() {
  validate_timer_.stop();
  try {
    sim::Scenario s = doc_.validate();
    sim::check_budget(s);  // too big to simulate: refused now, with the knob to turn, never started
    valid_ = true;
    error_.clear();
    message_->hide();
    knobs_->highlight(QString());
    knobs_->show_derived_dp(s.multi_job() ? s.job_scenario(static_cast<std::size_t>(std::max(0, knobs_->job()))).training.dp
                                          : s.training.dp);
    if (!find_path(doc_.content(), "cluster.price_per_gpu_hour")) knobs_->show_default("cluster.price_per_gpu_hour", s.price_per_gpu_hour_usd);
    show_host_defaults(s.cluster);
    wanted_ = runner_->submit(std::move(s));
    refresh_stale();  // until this edit's result arrives
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

void MainWindow::show_host_defaults(const topo::ClusterSpec& c) {
  // The PCIe host keys apply to PCIe nodes only (the loader refuses them elsewhere); the switches' in-fabric
  // reduction shows what the scenario resolves to (NVLS: on by default on NVLink 4 NVSwitch nodes).
  const bool pcie = !c.intra.switched;
  for (const char* path : {"cluster.intra_node.sockets", "cluster.intra_node.gpus_per_pcie_switch", "cluster.intra_node.inter_socket_GBps"})
    knobs_->set_knob_enabled(path, pcie || find_path(doc_.content(), path) != nullptr);
  const std::pair<const char*, double> resolved[] = {
      {"cluster.intra_node.sockets", pcie ? topo::pcie_sockets(c.intra, c.gpus_per_node) : 1},
      {"cluster.intra_node.gpus_per_pcie_switch", pcie ? topo::pcie_gpus_per_switch(c.intra, c.gpus_per_node) : c.gpus_per_node},
      {"cluster.intra_node.inter_socket_GBps", topo::pcie_inter_socket_GBps(c.intra)},
      {"cluster.intra_node.nvls", c.intra.nvls ? 1.0 : 0.0},
      {"cluster.inter_node.sharp", c.sharp ? 1.0 : 0.0}};
  for (const auto& [path, value] : resolved)
    if (!find_path(doc_.content(), path)) knobs_->show_default(path, value);
}

void MainWindow::show_error(const QString& raw_message) {
  QString message = raw_message;
  // The library names the file; when the problem is in the unsaved edits, say so.
  const QString file = QString::fromStdString(doc_.display_name());
  if (doc_.dirty() && message.startsWith(file + ":")) message.insert(file.size(), tr(" (unsaved edits)"));
  error_ = message;
  message_->setStyleSheet(error_style(is_dark(palette())));
  message_->setText(message.toHtmlEscaped().replace("\n", "<br>") +
                    (current_ ? tr("<br><i>The results below (greyed) are the last valid ones.</i>") : QString()));
  message_->setTextFormat(Qt::RichText);
  message_->show();
  knobs_->highlight(raw_message);
  refresh_stale();
  status_->setText(tr("invalid scenario"));
  emit validation_failed(message);
}

QString MainWindow::validation_message() const { return valid_ ? QString() : error_; }

bool MainWindow::simulating() const { return runner_->busy(); }

const sim::Report* MainWindow::current_report() const {
  if (!current_) return nullptr;
  return &current_->job(knobs_->job());
}

int MainWindow::selected_job() const { return knobs_->job(); }

void MainWindow::select_job(int job) {
  knobs_->set_job(job);
  show_result();
  refresh_jobs();
  if (valid_) revalidate();  // the derived DP of the job
}

std::shared_ptr<const SimOutcome> MainWindow::shown(const std::shared_ptr<const SimOutcome>& o) const {
  if (!o || !o->multi()) return o;
  auto copy = std::make_shared<SimOutcome>(*o);
  copy->report = o->job(knobs_->job());
  return copy;
}

void MainWindow::refresh_stale() {
  stale_ = current_ != nullptr && (!valid_ || shown_ != wanted_);
  // Invalid knobs grey the results at once; a simulation in flight only once it takes a moment.
  if (!stale_ || !valid_) {
    stale_timer_.stop();
    show_stale_look(stale_);
  } else if (!stale_timer_.isActive()) {
    stale_timer_.start();
  }
}

void MainWindow::show_stale_look(bool stale) {
  headline_->set_stale(stale);
  const QString tip = stale ? tr("Greyed: these results are for the last valid scenario, not the knobs as they are now")
                            : QString();
  headline_->setToolTip(tip);
  tabs_->setToolTip(tip);
  if (stale == (tabs_->graphicsEffect() != nullptr)) return;
  if (stale) {
    auto* fade = new QGraphicsOpacityEffect;
    fade->setOpacity(0.45);
    tabs_->setGraphicsEffect(fade);
  } else {
    tabs_->setGraphicsEffect(nullptr);
  }
  jobs_table_->setEnabled(!stale);
}

void MainWindow::clear_result() {
  current_.reset();
  headline_->clear();
  refresh_stale();
  refresh_charts();
  overview_timeline_->show_timeline(nullptr);
  timeline_->show_timeline(nullptr);
  refresh_jobs();
  last_status_.clear();
  status_->clear();
}

void MainWindow::show_outcome(quint64 generation, std::shared_ptr<const SimOutcome> outcome) {
  current_ = std::move(outcome);
  shown_ = generation;
  show_result();
  refresh_jobs();
  overview_timeline_->show_timeline(current_->timeline);
  timeline_->show_timeline(current_->timeline);
  const sim::Report& r = current_->report;
  const int gpus = current_->multi() ? [&] {
    int n = 0;
    for (const auto& j : current_->multi_job.jobs) n += j.num_gpus;
    return n;
  }() : r.num_gpus;
  last_status_ = tr("%1: %2 GPUs%3, %4 simulated ranks, %5 tasks, %6 events, simulated in %7")
                     .arg(QString::fromStdString(current_->multi() ? current_->multi_job.name : r.name))
                     .arg(format_count(gpus) + (r.gpu_mix.empty() || current_->multi() ? QString()
                                                                                      : QStringLiteral(" (%1)").arg(QString::fromStdString(r.gpu_mix))))
                     .arg(current_->multi() ? tr(" in %1 jobs").arg(current_->multi_job.jobs.size()) : QString())
                     .arg(r.simulated_ranks)
                     .arg(format_count(static_cast<double>(r.tasks)))
                     .arg(format_count(static_cast<double>(r.events)))
                     .arg(format_seconds(current_->wall_s));
  status_->setText(last_status_);
  update_busy();
  emit result_shown(generation);
}

void MainWindow::show_result() {
  if (!current_) return;
  const sim::Report& r = *current_report();
  const std::shared_ptr<const SimOutcome> base = shown(baseline_);
  headline_->show_report(r, base ? std::optional<sim::Report>(base->report) : std::nullopt);
  refresh_stale();
  if (!r.fits_in_memory && valid_) {
    message_->setStyleSheet(warning_style(is_dark(palette())));
    message_->setTextFormat(Qt::PlainText);
    message_->setText(tr("%5Does not fit in memory: %1 per GPU needed (peak stage %2), the %3 has %4. "
                         "The step is still simulated, but this layout cannot run.")
                          .arg(format_gib(r.memory.total_bytes()))
                          .arg(r.memory.stage)
                          .arg(QString::fromStdString(r.gpu), format_gib(r.memory_capacity_bytes),
                               r.job.empty() ? QString() : tr("Job %1: ").arg(QString::fromStdString(r.job))));
    message_->show();
  } else if (valid_) {
    message_->hide();
  }
  refresh_charts();
}

void MainWindow::refresh_jobs() {
  const bool multi = current_ && current_->multi();
  jobs_table_->setVisible(multi);
  if (!multi) {
    jobs_table_->setRowCount(0);
    return;
  }
  const auto& jobs = current_->multi_job.jobs;
  jobs_table_->setRowCount(static_cast<int>(jobs.size()));
  for (int row = 0; row < static_cast<int>(jobs.size()); ++row) {
    const sim::Report& r = jobs[static_cast<std::size_t>(row)];
    const QStringList cells{QString::fromStdString(r.job), QString::number(r.num_gpus),
                            QStringLiteral("TP%1 PP%2 DP%3").arg(r.tp).arg(r.pp).arg(r.dp), format_seconds(r.step_time_s),
                            format_seconds(r.step_time_alone_s), QStringLiteral("%1×").arg(r.slowdown, 0, 'f', 3),
                            format_rate(r.tokens_per_s), format_percent(r.mfu)};
    for (int c = 0; c < cells.size(); ++c) jobs_table_->setItem(row, c, new QTableWidgetItem(cells[c]));
  }
  const int sel = knobs_->job();
  if (sel >= 0 && sel < jobs_table_->rowCount()) jobs_table_->selectRow(sel);
  jobs_table_->setFixedHeight(jobs_table_->horizontalHeader()->height() + 20 * jobs_table_->rowCount() + 4);
}

void MainWindow::refresh_charts() {
  const auto now = shown(current_), base = shown(baseline_);
  breakdown_->show_outcomes(now, base);
  goodput_->show_run(now ? now->run : std::nullopt);
  memory_->show_outcomes(now, base);
  links_->show_outcomes(now, base);
}

void MainWindow::pin_baseline() {
  if (!current_) return;
  baseline_ = current_;
  const sim::Report& r = *current_report();
  baseline_label_->setText(tr("Baseline: %1%2 GPUs TP%3 PP%4 DP%5 — step %6, MFU %7")
                               .arg(r.job.empty() ? QString() : QString::fromStdString(r.job) + ", ")
                               .arg(r.num_gpus)
                               .arg(r.tp)
                               .arg(r.pp)
                               .arg(r.dp)
                               .arg(format_seconds(r.step_time_s), format_percent(r.mfu)));
  show_result();
}

void MainWindow::clear_baseline() {
  baseline_.reset();
  baseline_label_->clear();
  show_result();
  if (!current_) refresh_charts();
}

void MainWindow::cancel() {
  const bool any = runner_->busy() || sweep_running_;
  runner_->cancel();
  if (sweep_running_) {
    sweeper_->cancel();
    sweep_stale_ = true;  // shown again only when asked for (a new edit or the sweep tab)
  }
  if (any) {
    last_status_ = tr("cancelled: the results shown are for the last finished simulation");
    status_->setText(last_status_);
  }
  update_busy();
}

void MainWindow::maybe_run_sweep() {
  if (tabs_->currentWidget() != sweep_tab_ || !sweep_stale_ || !valid_) return;
  if (doc_.multi_job()) {  // the sweep varies one job's layout on the whole cluster
    sweep_stale_ = false;
    scaling_->show_points(nullptr);
    pareto_->show_points(nullptr);
    sweep_table_->setRowCount(0);
    sweep_rejected_->setText(tr("The layout sweep is for single-job scenarios; this scenario has %1 jobs.").arg(doc_.job_count()));
    sweep_rejected_->show();
    return;
  }
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
  QStringList rejected;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].simulated()) rows.push_back(i);
    else if (points[i].status == sim::PointStatus::invalid)
      rejected << QString::fromStdString(point_label(points[i]) + ": " + points[i].error);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
    const sim::SweepPoint &p = points[a], &q = points[b];
    if (sweep_->on_front(a) != sweep_->on_front(b)) return sweep_->on_front(a);
    if (p.fits() != q.fits()) return p.fits();
    return p.report.cost.days_to_train < q.report.cost.days_to_train;
  });
  sweep_table_->setSortingEnabled(false);
  sweep_table_->horizontalHeader()->setSortIndicatorShown(false);
  sweep_table_->setRowCount(static_cast<int>(rows.size()));
  const QColor grey = palette().color(QPalette::Disabled, QPalette::Text);
  const QColor mark = is_dark(palette()) ? QColor(0x5c, 0x1a, 0x14) : QColor(0xfd, 0xec, 0xea);
  for (int row = 0; row < static_cast<int>(rows.size()); ++row) {
    const std::size_t i = rows[static_cast<std::size_t>(row)];
    const sim::SweepPoint& p = points[i];
    const sim::Report& r = p.report;
    const bool current = sweep_->is_current(i);
    const bool front = sweep_->on_front(i);
    QTableWidgetItem* cells[] = {
        new NumberItem(QString::fromStdString(point_label(p)) + (current ? tr("  (current)") : QString()), static_cast<double>(row)),
        new NumberItem(QString::number(r.num_gpus), r.num_gpus),
        new NumberItem(format_seconds(r.step_time_s), r.step_time_s),
        new NumberItem(format_rate(r.tokens_per_s), r.tokens_per_s),
        new NumberItem(format_percent(r.mfu), r.mfu),
        new NumberItem(p.fits() ? tr("yes") : tr("no"), p.fits()),
        new NumberItem(format_days(r.cost.days_to_train), r.cost.days_to_train),
        new NumberItem(format_usd(r.cost.usd_to_train), r.cost.usd_to_train),
        new NumberItem(front ? tr("★") : QString(), front ? 0 : 1)};
    cells[0]->setData(kPointRole, static_cast<qulonglong>(i));
    for (int c = 0; c < 9; ++c) {
      if (!p.fits()) cells[c]->setForeground(grey);
      if (current) cells[c]->setBackground(mark);
      sweep_table_->setItem(row, c, cells[c]);
    }
  }
  // A click on a header sorts by that column; until then the front-first order (column 0's key is the row).
  sweep_table_->horizontalHeader()->setSortIndicator(0, Qt::AscendingOrder);
  sweep_table_->setSortingEnabled(true);
  if (!rejected.isEmpty()) {
    sweep_rejected_->setText(tr("%n layout(s) of the sweep rejected by the validator (not shown); hover for why.", nullptr,
                                static_cast<int>(rejected.size())));
    sweep_rejected_->setToolTip(rejected.mid(0, 40).join("\n") + (rejected.size() > 40 ? "\n…" : ""));
    sweep_rejected_->show();
  } else {
    sweep_rejected_->hide();
  }
  if (sweep_->error == "cancelled")
    status_->setText(tr("sweep cancelled"));
  else if (!sweep_->error.empty())
    status_->setText(tr("sweep failed: %1").arg(QString::fromStdString(sweep_->error)));
  else
    status_->setText(tr("sweep: %1 layouts simulated, %2 on the Pareto front, %3 rejected")
                         .arg(rows.size()).arg(sweep_->pareto.size()).arg(rejected.size()));
  emit sweep_shown();
}

void MainWindow::load_sweep_point(const sim::SweepPoint& p) {
  doc_.begin_edit();
  try {
    for (const auto& [path, value] : layout_of(p)) doc_.set(path + "=" + value.dump());
  } catch (const std::exception& e) {
    doc_.end_edit();
    show_error(message_lines(e));
    return;
  }
  doc_.erase("training.data_parallel_size");
  doc_.end_edit();
  after_edit();
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
  cancel_button_->setVisible(busy);
  refresh_stale();
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

void MainWindow::update_actions() {
  if (undo_) undo_->setEnabled(doc_.can_undo());
  if (redo_) redo_->setEnabled(doc_.can_redo());
  if (reload_) reload_->setEnabled(!doc_.path().empty());
}

void MainWindow::refresh_raw() {
  if (!raw_dock_ || raw_dock_->isHidden()) return;
  raw_refreshing_ = true;
  raw_->setPlainText(QString::fromStdString(doc_.text()));
  raw_refreshing_ = false;
  raw_user_edited_ = false;
  check_raw();
}

void MainWindow::check_raw() {
  // Live validation of the text as typed: JSON first (line and column), then the library's checks.
  const bool dark = is_dark(palette());
  QString message;
  bool ok = false, parses = false;
  try {
    const json parsed = json::parse(raw_->toPlainText().toStdString());
    parses = parsed.is_object();
    if (!parses) throw std::runtime_error("the top level must be an object");
    sim::Scenario s = sim::parse_scenario(parsed, doc_.display_name());
    sim::check_budget(s);
    ok = true;
    message = raw_user_edited_ ? tr("valid: Apply (Ctrl+Return) to use it") : tr("valid: this is the scenario the knobs show");
  } catch (const std::exception& e) {
    message = (parses ? QString() : tr("not JSON: ")) + message_lines(e);
  }
  raw_status_->setText(message);
  raw_status_->setStyleSheet(ok ? (dark ? "color:#8fd19e;" : "color:#2e7d32;") : (dark ? "color:#ffb4ab;" : "color:#c01c28;"));
  raw_apply_->setEnabled(parses && raw_user_edited_);
}

QString MainWindow::recovery_path() const { return draft_path(draft_id_); }

void MainWindow::discard_recovery() { QFile::remove(recovery_path()); }

void MainWindow::autosave() {
  if (headless_) return;
  if (!doc_.dirty()) return discard_recovery();  // undone back to the file: nothing to recover
  const json rec{{"path", doc_.path()}, {"document", doc_.content()}};
  try {
    if (!draft_lock_) draft_lock_ = lock_draft(draft_id_);
    if (!draft_lock_) draft_id_ = new_draft_id(), draft_lock_ = lock_draft(draft_id_);  // never another's file
    sim::write_file_atomically(recovery_path().toStdString(), rec.dump(2));
  } catch (const std::exception& e) {
    status_->setText(tr("could not write the recovery file: %1").arg(message_lines(e)));
  }
}

bool MainWindow::restore_recovery(OrphanedDraft& draft) {
  try {
    const json rec = sim::read_json_file(draft.path.toStdString());
    const std::string path = rec.value("path", std::string());
    json on_disk;  // what the file holds now, so the restored edits are unsaved against it
    if (!path.empty()) {
      try {
        on_disk = sim::read_json_file(path);
      } catch (const std::exception&) {
        on_disk = nullptr;
      }
    }
    auto doc = ScenarioDocument::from_json(rec.at("document"), path, on_disk);
    load_document(std::move(doc));
  } catch (const std::exception&) {
    return false;
  }
  discard_recovery();  // this window's own draft, if it had one, gives way to the restored one
  draft_id_ = draft_id_of(draft.path);
  draft_lock_ = std::move(draft.lock);
  status_->setText(tr("restored unsaved edits from %1").arg(draft.path));
  return true;
}

bool MainWindow::confirm_discard() {
  if (headless_ || !doc_.dirty()) return true;
  const auto answer = QMessageBox::question(this, tr("Unsaved changes"),
                                            tr("The scenario has unsaved changes. Save them?"),
                                            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Save) return save();
  discard_recovery();
  return true;
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (!confirm_discard()) {
    e->ignore();
    return;
  }
  // Whatever runs is stopped now, so the process ends when the window does.
  runner_->supersede();
  sweeper_->cancel();
  e->accept();
}

void MainWindow::changeEvent(QEvent* e) {
  QMainWindow::changeEvent(e);
  if (e->type() == QEvent::PaletteChange) apply_theme();
}

void MainWindow::apply_theme() {
  // The charts follow the palette: the system's (a dark desktop gives a dark palette) or the user's.
  const bool dark = is_dark(palette());
  for (QChartView* v : std::initializer_list<QChartView*>{breakdown_, memory_, links_, scaling_, pareto_})
    if (v) apply_chart_theme(*v, dark);
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
  discard_recovery();
  add_recent(QFileInfo(QString::fromStdString(path)).absoluteFilePath());
  update_title();
  update_actions();
  status_->setText(tr("saved %1").arg(QString::fromStdString(path)));
  return true;
}

void MainWindow::open_dialog() {
  if (!confirm_discard()) return;
  const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), QString(), tr("Scenario JSON (*.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!open_file(path, &error)) QMessageBox::warning(this, tr("Cannot open scenario"), error);
}

QStringList MainWindow::recent_files() { return QSettings().value("recent_files").toStringList(); }

void MainWindow::add_recent(const QString& path) {
  QStringList list = recent_files();
  list.removeAll(path);
  list.prepend(path);
  while (list.size() > kMaxRecent) list.removeLast();
  QSettings().setValue("recent_files", list);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  if (!recent_menu_) return;
  recent_menu_->clear();
  const QStringList list = recent_files();
  for (int i = 0; i < list.size(); ++i) {
    const QString path = list[i];
    QAction* a = recent_menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()));
    a->setToolTip(path);
    a->setData(path);
    connect(a, &QAction::triggered, this, [this, path]() {
      if (!confirm_discard()) return;
      QString error;
      if (!open_file(path, &error) && !headless_) QMessageBox::warning(this, tr("Cannot open scenario"), error);
    });
  }
  recent_menu_->setEnabled(!list.isEmpty());
}

// ---- exports ------------------------------------------------------------------------------------------

QString MainWindow::cli_command(QString* why) const {
  if (doc_.path().empty() || !doc_.on_disk().is_object()) {
    if (why) *why = doc_.path().empty() ? tr("save the scenario to a file first: the command runs a file")
                                        : tr("%1 could not be read: the command runs the file")
                                              .arg(QString::fromStdString(doc_.path()));
    return {};
  }
  return cs::gui::cli_command(doc_.path(), doc_.on_disk(), doc_.content());
}

void MainWindow::copy_cli_command() {
  QString why;
  const QString cmd = cli_command(&why);
  if (cmd.isEmpty()) return status_->setText(tr("nothing copied: %1").arg(why));
  QGuiApplication::clipboard()->setText(cmd);
  status_->setText(tr("copied: %1").arg(cmd));
}

bool MainWindow::export_csv_to(const QString& path, QString* error) {
  if (!current_ || stale_ || !valid_) {
    if (error) *error = tr("no current result to export: %1")
                            .arg(!valid_ ? tr("the scenario is invalid") : tr("the simulation has not finished"));
    return false;
  }
  // One file: what it is (scenario, file, time), the headline as shown, the knobs (the document), then
  // every number of the report under the keys of `clustersim run --json`.
  QString text = "key,value\n";
  text += "scenario.name," + csv_field(QString::fromStdString(current_->multi() ? current_->multi_job.name : current_->report.name)) + "\n";
  text += "scenario.file," + csv_field(QString::fromStdString(doc_.display_name())) + (doc_.dirty() ? " (unsaved edits)" : "") + "\n";
  if (current_->multi()) text += "scenario.job," + csv_field(QString::fromStdString(current_report()->job)) + "\n";
  for (const QString& line : headline_->lines()) {
    const int colon = line.indexOf(": ");
    text += csv_field("headline." + line.left(colon)) + "," + csv_field(line.mid(colon + 2)) + "\n";
  }
  flatten(doc_.content(), "knobs", text);
  flatten(sim::to_json(*current_report()), "report", text);
  try {
    sim::write_file_atomically(path.toStdString(), text.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = message_lines(e);
    return false;
  }
  status_->setText(tr("wrote %1 (scenario, headline, knobs and report)").arg(path));
  return true;
}

bool MainWindow::export_sweep_csv_to(const QString& path, QString* error) {
  if (!sweep_ || sweep_->points.empty()) {
    if (error) *error = tr("no sweep to export: open the Scaling & cost sweep tab first");
    return false;
  }
  QString s = "# " + csv_field(QString::fromStdString(doc_.display_name())) + "\n";
  s += "nodes,gpus,tp,pp,dp,valid,status,fits,step_time_s,tokens_per_s,mfu,days_to_train,usd_to_train,pareto,error\n";
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
  try {
    sim::write_file_atomically(path.toStdString(), s.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = message_lines(e);
    return false;
  }
  status_->setText(tr("wrote %1 (%2 sweep points)").arg(path).arg(sweep_->points.size()));
  return true;
}

bool MainWindow::export_png_to(const QString& path, QString* error) {
  // The knobs, the headline and the current view, under a caption naming the scenario.
  const QPixmap body = centralWidget()->grab();
  const int caption = fontMetrics().height() + 10;
  QPixmap out(body.width(), body.height() + caption);
  out.setDevicePixelRatio(body.devicePixelRatio());
  out.fill(palette().color(QPalette::Window));
  {
    QPainter p(&out);
    p.setPen(palette().color(QPalette::WindowText));
    const QString name = QString::fromStdString(current_ ? (current_->multi() ? current_->multi_job.name : current_->report.name)
                                                         : doc_.display_name());
    p.drawText(QRect(6, 0, body.width() / static_cast<int>(body.devicePixelRatio()) - 12, caption), Qt::AlignVCenter | Qt::AlignLeft,
               tr("clustersim — %1 — %2%3").arg(name, QString::fromStdString(doc_.display_name()),
                                                 stale_ || !valid_ ? tr(" (results not current)") : QString()));
    p.drawPixmap(0, caption, body);
  }
  QSaveFile file(path);  // written to a temporary name and renamed
  if (!file.open(QIODevice::WriteOnly) || !out.save(&file, "PNG") || !file.commit()) {
    if (error) *error = tr("cannot write %1").arg(path);
    return false;
  }
  status_->setText(tr("wrote %1").arg(path));
  return true;
}

void MainWindow::export_png() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export view as PNG"), "clustersim.png", tr("PNG image (*.png)"));
  if (path.isEmpty()) return;
  QString error;
  if (!export_png_to(path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::export_with_dialog(bool ready, const QString& title, const QString& suggested,
                                    const std::function<bool(const QString&, QString*)>& write) {
  QString error;
  if (!ready) {  // say why there is nothing, rather than asking for a file name first
    write(QString(), &error);
    QMessageBox::information(this, tr("Nothing to export"), error);
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, title, suggested, tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  if (!write(path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
}

void MainWindow::export_csv() {
  export_with_dialog(current_ && !stale_ && valid_, tr("Export numbers as CSV"), "clustersim.csv",
                     [this](const QString& p, QString* e) { return export_csv_to(p, e); });
}

void MainWindow::export_sweep_csv() {
  export_with_dialog(sweep_ && !sweep_->points.empty(), tr("Export sweep as CSV"), "clustersim-sweep.csv",
                     [this](const QString& p, QString* e) { return export_sweep_csv_to(p, e); });
}

}  // namespace cs::gui
