// GUI tests (offscreen): the knobs drive the library exactly as `clustersim run --set` does, invalid
// knobs show the library's message and keep the last good result, the charts and the sweep view show
// the numbers sim/report and sim/explore computed, the UI thread keeps answering while a large scenario
// simulates (how fast it answers is a benchmark: bench/gui_bench.cpp), and --screenshot writes a real
// PNG.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <thread>

#include <QAction>
#include <QApplication>
#include <QBarCategoryAxis>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabBar>
#include <QWheelEvent>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QScatterSeries>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>

#include <nlohmann/json.hpp>

#include "gui/app/main_window.hpp"
#include "gui/app/sweep_plan.hpp"
#include "gui/views/breakdown_chart.hpp"
#include "gui/views/format.hpp"
#include "gui/views/headline_panel.hpp"
#include "gui/views/knob_panel.hpp"
#include "gui/views/link_chart.hpp"
#include "gui/views/pareto_chart.hpp"
#include "gui/views/scaling_chart.hpp"
#include "gui/views/timeline_view.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/params.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using cs::gui::MainWindow;

namespace {

QString scenario(const char* name) { return QStringLiteral(CLUSTERSIM_SOURCE_DIR "/scenarios/") + name; }

QSpinBox* spin(const MainWindow& w, const char* path) {
  auto* s = w.knobs()->findChild<QSpinBox*>(path);
  REQUIRE(s != nullptr);
  return s;
}

}  // namespace

TEST_CASE("Every knob's range and choices are the parameter table's", "[gui]") {
  namespace params = cs::sim::params;
  cs::gui::KnobPanel panel;
  int spins = 0, doubles = 0, combos = 0;
  for (auto* s : panel.findChildren<QSpinBox*>()) {
    const params::Param* p = params::find(s->objectName().toStdString());
    INFO(s->objectName().toStdString());
    REQUIRE(p != nullptr);
    CHECK(s->minimum() == p->min);
    CHECK(s->maximum() == p->max);
    ++spins;
  }
  for (auto* d : panel.findChildren<QDoubleSpinBox*>()) {
    const params::Param* p = params::find(d->objectName().toStdString());
    INFO(d->objectName().toStdString());
    REQUIRE(p != nullptr);
    const double scale = p->path == "training.tokens_to_train" ? 1e9 : 1;  // shown in billions
    CHECK(d->minimum() * scale == Approx(p->min));
    CHECK(d->maximum() * scale == Approx(p->max));
    ++doubles;
  }
  for (auto* c : panel.findChildren<QComboBox*>()) {
    const params::Param* p = params::find(c->objectName().toStdString());
    INFO(c->objectName().toStdString());
    REQUIRE(p != nullptr);
    std::vector<std::string> items, expected = p->choices;
    for (int i = 0; i < c->count(); ++i) items.push_back(c->itemText(i).toStdString());
    if (p->type == params::Type::integer)
      for (auto v = static_cast<long long>(p->min); v <= static_cast<long long>(p->max); ++v) expected.push_back(std::to_string(v));
    CHECK(items == expected);
    ++combos;
  }
  CHECK(spins == 13);
  CHECK(doubles == 4);
  CHECK(combos == 10);
}

TEST_CASE("TP knob edit shows the step time simulate gives for --set", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  const QString path = scenario("llama3-70b-h100x64-ndr400.json");
  REQUIRE(w.open_file(path));
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  REQUIRE(w.current_report() != nullptr);
  const double tp8_step = w.current_report()->step_time_s;
  QSpinBox* tp = spin(w, "training.tensor_model_parallel_size");
  REQUIRE(tp->value() == 8);

  tp->setValue(4);  // what a user's edit does: valueChanged -> override -> validate -> worker
  REQUIRE(w.wait_until_idle(120000));

  const auto expected =
      cs::sim::simulate(cs::sim::load_scenario(path.toStdString(), {"training.tensor_model_parallel_size=4"})).report;
  REQUIRE(w.current_report()->tp == 4);
  CHECK(w.current_report()->step_time_s == expected.step_time_s);
  CHECK(w.current_report()->step_time_s != tp8_step);
  CHECK(w.headline()->text("step_time") == cs::gui::HeadlinePanel::step_time_text(expected));
  CHECK(w.validation_message().isEmpty());
  CHECK(w.document().edits().back() == "training.tensor_model_parallel_size=4");

  // The CLI with the same --set prints the same number.
  QProcess cli;
  cli.start(CLUSTERSIM_BINARY, {"run", path, "--json", "--set", "training.tensor_model_parallel_size=4"});
  REQUIRE(cli.waitForFinished(120000));
  REQUIRE(cli.exitCode() == 0);
  const auto json = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
  CHECK(json.at("step_time_s").get<double>() == w.current_report()->step_time_s);
}

TEST_CASE("A GPU changed in the GUI takes its price as clustersim run --set does", "[gui]") {
  // llama3-8b-h100x8.json prices its H100 at $2.50; on a B200 the run (and so the GUI) charges the B200's
  // catalog price, not the file's number (issue 28: one front door for overrides, sim::apply_overrides).
  MainWindow w;
  w.set_headless(true);
  const QString path = scenario("llama3-8b-h100x8.json");
  REQUIRE(w.open_file(path));
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  QString error;
  REQUIRE(w.apply_overrides({"cluster.gpu=B200"}, &error));
  REQUIRE(w.wait_until_idle(120000));
  REQUIRE(w.current_report() != nullptr);
  const auto expected = cs::sim::simulate(cs::sim::load_scenario(path.toStdString(), {"cluster.gpu=B200"})).report;
  CHECK(expected.price_per_gpu_hour_usd != 2.5);
  CHECK(w.current_report()->price_per_gpu_hour_usd == expected.price_per_gpu_hour_usd);
  CHECK(w.current_report()->step_time_s == expected.step_time_s);
}

TEST_CASE("An impossible knob combination shows the library's message and keeps the last result", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  REQUIRE(w.open_file(scenario("llama3-70b-h100x64-ndr400.json")));
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  const QString before = w.headline()->text("step_time");
  const double step = w.current_report()->step_time_s;

  spin(w, "training.tensor_model_parallel_size")->setValue(16);  // Llama-3 70B has 8 query groups
  REQUIRE(w.wait_until_idle(120000));
  const QString message = w.validation_message();
  INFO(message.toStdString());
  CHECK(message.contains("training.tensor_model_parallel_size"));
  CHECK(message.contains("does not divide"));
  auto* label = w.findChild<QLabel*>("validation_message");
  REQUIRE(label != nullptr);
  CHECK(label->isVisible());
  CHECK(label->text().contains("does not divide"));
  CHECK(w.headline()->text("step_time") == before);
  CHECK(w.current_report()->step_time_s == step);

  // Back to a valid value: the message goes and a result comes.
  spin(w, "training.tensor_model_parallel_size")->setValue(8);
  REQUIRE(w.wait_until_idle(120000));
  CHECK(w.validation_message().isEmpty());
  CHECK_FALSE(label->isVisible());
  CHECK(w.current_report()->step_time_s == step);
}

TEST_CASE("The UI thread keeps answering while a large scenario simulates", "[gui][slow]") {
  // How long the event loop waits at worst is a figure of the machine's load: bench/gui_bench.cpp prints
  // it. What holds anywhere: timer events are delivered while the simulation is still in flight (the
  // simulator is off the UI thread), a second edit supersedes the first, and the timeline draws a
  // bounded number of rectangles however many tasks there are.
  MainWindow w;
  w.set_headless(true);
  w.show();
  REQUIRE(w.wait_until_idle(120000));

  int ticks_in_flight = 0;
  QTimer timer;
  QObject::connect(&timer, &QTimer::timeout, [&]() {
    const cs::sim::Report* r = w.current_report();
    if (r == nullptr || r->global_batch_size != 1024) ++ticks_in_flight;  // the edited result is not in yet
  });
  timer.start(10);
  REQUIRE(w.open_file(scenario("gpt3-175b-a100x1024.json")));
  // A second edit while the first runs: it supersedes it.
  spin(w, "training.global_batch_size")->setValue(1024);
  REQUIRE(w.wait_until_idle(300000));
  timer.stop();
  REQUIRE(w.current_report() != nullptr);
  CHECK(w.current_report()->global_batch_size == 1024);
  CHECK(w.current_report()->tasks > 100000);
  CHECK(ticks_in_flight > 0);

  w.grab();
  cs::gui::TimelineView* tl = w.timeline();
  tl->grab();
  CHECK(tl->last_paint_rects() > 0);
  CHECK(tl->last_paint_rects() < static_cast<long long>(w.current_report()->tasks) / 10);
}

TEST_CASE("The breakdown chart shows the report's exposed communication by kind", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  REQUIRE(w.open_file(scenario("llama3-70b-h100x64-ndr400.json")));
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  const cs::sim::Report* r = w.current_report();
  REQUIRE(r != nullptr);
  REQUIRE(r->breakdown.exposed_comm_s > 0);
  const auto series = w.breakdown()->chart()->series();
  REQUIRE(series.size() == 1);
  auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(series.front());
  REQUIRE(bars != nullptr);
  // One bar (no baseline): each "<kind> exposed" set holds the report's number for that kind, and a
  // kind the report has none of gets no set.
  int kinds_shown = 0;
  double shown_total = 0;
  for (int k = 0; k < cs::sim::kNumCategories; ++k) {
    const auto cat = static_cast<cs::sim::Category>(k);
    if (!cs::sim::is_comm(cat)) continue;
    const QString label = cs::gui::category_label(cat).section(' ', 0, 0) + " exposed";
    const double want = r->exposed_comm_s_by_kind[static_cast<std::size_t>(k)];
    const QBarSet* set = nullptr;
    for (QBarSet* b : bars->barSets())
      if (b->label() == label) set = b;
    INFO(label.toStdString() << ": report " << want);
    if (want <= 0) {
      CHECK(set == nullptr);
      continue;
    }
    REQUIRE(set != nullptr);
    REQUIRE(set->count() == 1);
    CHECK(set->at(0) == want);
    ++kinds_shown;
    shown_total += set->at(0);
  }
  CHECK(kinds_shown >= 1);
  CHECK(shown_total == Approx(r->breakdown.exposed_comm_s).epsilon(1e-9));
}

TEST_CASE("The sweep plan varies nodes, TP and PP around the document, layout entries first", "[gui]") {
  // Llama-3 8B on 1 node of 8 GPUs at TP2 PP1: the scaling curve is 1, 2 and 4 nodes at TP2 PP1 (1/4 and
  // 1/2 of one node do not exist); the grid is nodes {1, 2} x TP {1, 2, 4, 8} x PP {1, 2, 4, 8, 16} = 40
  // layouts, of which (4 nodes, TP2, PP1) is not one: 41 points.
  const auto doc = cs::sim::read_json_file(scenario("llama3-8b-h100x8.json").toStdString());
  const cs::gui::SweepPlan plan = cs::gui::plan_sweep(doc);
  REQUIRE(plan.assignments.size() == 41);
  CHECK_FALSE(plan.per_billion_tokens);  // the scenario sets tokens_to_train
  REQUIRE(plan.scaling.size() == 3);
  const std::vector<long long> scaling_nodes{1, 2, 4};
  for (std::size_t k = 0; k < plan.scaling.size(); ++k) {
    const auto& a = plan.assignments[plan.scaling[k]];
    CHECK(a[0] == cs::sim::Assignment::value_type{"cluster.nodes", scaling_nodes[k]});
    CHECK(a[1] == cs::sim::Assignment::value_type{"training.tensor_model_parallel_size", 2});
    CHECK(a[2] == cs::sim::Assignment::value_type{"training.pipeline_model_parallel_size", 1});
  }
  REQUIRE(plan.current);
  CHECK(*plan.current == plan.scaling[0]);
  std::set<std::string> distinct;
  for (const auto& a : plan.assignments) {
    REQUIRE(a.size() == cs::gui::kLayoutEntries + 1);
    CHECK(a[3] == cs::sim::Assignment::value_type{"training.data_parallel_size", nullptr});  // DP derived
    distinct.insert(nlohmann::json(a).dump());
  }
  CHECK(distinct.size() == plan.assignments.size());

  // Without tokens_to_train the sweep prices 1e9 tokens, and the report's days are per billion tokens:
  // days = 1e9 / tokens_per_s / 86400 (steps = 1e9 / tokens_per_step, each step_time_s long).
  auto untimed = doc;
  untimed["training"].erase("tokens_to_train");
  const cs::gui::SweepPlan per_billion = cs::gui::plan_sweep(untimed);
  REQUIRE(per_billion.per_billion_tokens);
  REQUIRE(per_billion.current);
  const auto& a = per_billion.assignments[*per_billion.current];
  REQUIRE(a.size() == cs::gui::kLayoutEntries + 2);
  CHECK(a.back() == cs::sim::Assignment::value_type{"training.tokens_to_train", 1e9});
  const cs::sim::SweepPoint p = cs::sim::evaluate_point(untimed, "llama3-8b-h100x8.json", a, false);
  REQUIRE(p.simulated());
  CHECK(p.report.cost.days_to_train == Approx(1e9 / p.report.tokens_per_s / 86400).epsilon(1e-12));
  CHECK(p.report.cost.usd_to_train ==
        Approx(1e9 / p.report.tokens_per_s / 3600 * p.report.num_gpus * p.report.price_per_gpu_hour_usd).epsilon(1e-12));
  CHECK(cs::gui::point_label(p) == "1 node (8 GPUs) TP2 PP1 DP4");
}

TEST_CASE("The sweep view shows what sim/explore computed and a clicked point loads its layout", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  const QString path = scenario("llama3-8b-h100x8.json");
  REQUIRE(w.open_file(path));
  REQUIRE(w.set_view("sweep"));
  w.show();
  REQUIRE(w.wait_until_idle(300000));
  const auto sweep = w.sweep_result();
  REQUIRE(sweep);
  INFO(sweep->error);
  REQUIRE(sweep->error.empty());
  const auto& points = sweep->points;
  REQUIRE(points.size() == sweep->plan.assignments.size());
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(points[i].assignment == sweep->plan.assignments[i]);

  // The Pareto front is sim/explore's, and it is not empty.
  CHECK(sweep->pareto == cs::sim::pareto_front(points));
  CHECK_FALSE(sweep->pareto.empty());

  // The document's own layout is the point the main view simulated, through the same front door.
  REQUIRE(sweep->plan.current);
  const cs::sim::SweepPoint& current = points[*sweep->plan.current];
  REQUIRE(current.simulated());
  CHECK(current.report.step_time_s == w.current_report()->step_time_s);
  CHECK(current.report.cost.usd_to_train == w.current_report()->cost.usd_to_train);

  // The table: one row per simulated point, the front first, each cell the report's number.
  std::size_t simulated = 0;
  for (const auto& p : points) simulated += p.simulated();
  QTableWidget* table = w.sweep_table();
  REQUIRE(table->rowCount() == static_cast<int>(simulated));
  for (int row = 0; row < table->rowCount(); ++row) {
    const bool starred = !table->item(row, 8)->text().isEmpty();
    CHECK(starred == (row < static_cast<int>(sweep->pareto.size())));
  }
  for (std::size_t k = 0; k < sweep->pareto.size(); ++k) {
    const cs::sim::Report& r = points[sweep->pareto[k]].report;
    INFO("front point " << k);
    CHECK(table->item(static_cast<int>(k), 0)->text().startsWith(QString::fromStdString(cs::gui::point_label(points[sweep->pareto[k]]))));
    CHECK(table->item(static_cast<int>(k), 6)->text() == cs::gui::format_days(r.cost.days_to_train));
    CHECK(table->item(static_cast<int>(k), 7)->text() == cs::gui::format_usd(r.cost.usd_to_train));
  }
  // The chart: as many highlighted front points as sim::pareto_front gives.
  int front_shown = -1;
  for (QAbstractSeries* s : w.pareto()->chart()->series())
    if (s->name() == "Pareto front") front_shown = static_cast<int>(qobject_cast<QScatterSeries*>(s)->count());
  CHECK(front_shown == static_cast<int>(sweep->pareto.size()));

  // This scenario's cluster has no inter-node network: the library rejects every multi-node point, and
  // the view keeps them out with its message.
  for (const auto& p : points)
    if (p.report.nodes > 1 || p.assignment[0].second != 1) {
      CHECK(p.status == cs::sim::PointStatus::invalid);
      CHECK_THAT(p.error, Catch::Contains("cluster.inter_node"));
    }
  const auto it = std::find_if(points.begin(), points.end(), [&](const auto& p) {
    return p.simulated() && &p != &current && p.report.tp != current.report.tp && p.report.pp != current.report.pp;
  });
  REQUIRE(it != points.end());
  w.load_sweep_point(*it);
  REQUIRE(w.wait_until_idle(300000));
  CHECK(w.current_report()->tp == it->report.tp);
  CHECK(w.current_report()->pp == it->report.pp);
  CHECK(w.current_report()->num_gpus == it->report.num_gpus);
  CHECK(w.current_report()->step_time_s == it->report.step_time_s);
  CHECK(spin(w, "training.tensor_model_parallel_size")->value() == it->report.tp);
  CHECK_FALSE(cs::gui::find_path(w.document().content(), "training.data_parallel_size"));  // still derived
}

TEST_CASE("The screenshot option writes a PNG with real content and bad input exits 2", "[gui]") {
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const QString out = dir.filePath("shot.png");
  QProcess gui;
  gui.start(CLUSTERSIM_GUI_BINARY, {scenario("llama3-70b-h100x64-ndr400.json"), "--screenshot", out, "--set",
                                    "training.pipeline_model_parallel_size=8"});
  REQUIRE(gui.waitForFinished(180000));
  INFO(gui.readAllStandardError().toStdString());
  REQUIRE(gui.exitCode() == 0);
  QImage img(out);
  REQUIRE(!img.isNull());
  CHECK(img.width() == 1600);
  CHECK(img.height() == 1000);
  // Real content: many pixels are neither the window background nor white.
  const QRgb bg = img.pixel(img.width() - 2, img.height() / 2);
  long long different = 0;
  for (int y = 0; y < img.height(); y += 4)
    for (int x = 0; x < img.width(); x += 4)
      if (img.pixel(x, y) != bg && img.pixel(x, y) != qRgb(255, 255, 255)) ++different;
  CHECK(different > (img.width() / 4) * (img.height() / 4) / 20);

  QProcess bad;
  bad.start(CLUSTERSIM_GUI_BINARY, {scenario("llama3-70b-h100x64-ndr400.json"), "--screenshot", dir.filePath("bad.png"),
                                    "--set", "training.tensor_model_parallel_size=16"});
  REQUIRE(bad.waitForFinished(180000));
  CHECK(bad.exitCode() == 2);
  CHECK(QString(bad.readAllStandardError()).contains("training.tensor_model_parallel_size"));
  CHECK_FALSE(QFile::exists(dir.filePath("bad.png")));
}



// ---- issue 18: the GUI at the edges, and the habits of a desktop tool ----------------------------------

namespace {

// A window on a scenario, its first result in.
struct Opened {
  MainWindow w;
  explicit Opened(const QString& path) {
    w.set_headless(true);
    REQUIRE(w.open_file(path));
    w.show();
    REQUIRE(w.wait_until_idle(120000));
  }
};

QComboBox* combo(const MainWindow& w, const char* path) {
  auto* c = w.knobs()->findChild<QComboBox*>(path);
  REQUIRE(c != nullptr);
  return c;
}

// Resident memory of this process, bytes (Linux /proc/self/statm: pages).
double rss_bytes() {
  QFile f("/proc/self/statm");
  if (!f.open(QIODevice::ReadOnly)) return 0;
  const QList<QByteArray> fields = f.readAll().split(' ');
  return fields.size() > 1 ? fields[1].toDouble() * 4096 : 0;
}

// Spins the event loop until `done` or `ms` pass.
template <class F>
bool spin_until(F done, int ms) {
  QElapsedTimer t;
  t.start();
  while (!done() && t.elapsed() < ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
  return done();
}

nlohmann::json cli_json(const QStringList& args) {
  QProcess cli;
  cli.start(CLUSTERSIM_BINARY, args);
  REQUIRE(cli.waitForFinished(120000));
  INFO(cli.readAllStandardError().toStdString());
  REQUIRE(cli.exitCode() == 0);
  return nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
}

}  // namespace

TEST_CASE("Broken 1: a multi-job scenario shows the file's knobs, every job and its slowdown", "[gui]") {
  const QString path = scenario("two-jobs-shared-spine.json");
  Opened o(path);
  MainWindow& w = o.w;
  INFO(w.validation_message().toStdString());
  REQUIRE(w.validation_message().isEmpty());
  // The knobs are job 1's values from the file, not defaults.
  CHECK(spin(w, "training.tensor_model_parallel_size")->value() == 8);
  CHECK(spin(w, "training.global_batch_size")->value() == 64);
  CHECK(spin(w, "training.seq_length")->value() == 4096);
  CHECK(combo(w, "training.zero_stage")->currentText() == "1");
  CHECK(combo(w, "training.recompute_granularity")->currentText() == "selective");
  CHECK(w.knobs()->findChild<QCheckBox*>("training.sequence_parallel")->isChecked());
  CHECK(combo(w, "model.preset")->currentText() == "llama2-13b");
  auto* jobs = w.knobs()->findChild<QTabBar*>("job");
  REQUIRE(jobs != nullptr);
  CHECK(jobs->count() == 2);
  CHECK(jobs->isVisible());

  // Every job, with the slowdown the library computed (the CLI's front door).
  const auto expected = cs::sim::simulate(cs::sim::load_scenario(path.toStdString(), {})).multi_job;
  REQUIRE(expected.jobs.size() == 2);
  QTableWidget* table = w.jobs_table();
  REQUIRE(table->isVisible());
  REQUIRE(table->rowCount() == 2);
  for (int j = 0; j < 2; ++j) {
    const auto& r = expected.jobs[static_cast<std::size_t>(j)];
    CHECK(table->item(j, 0)->text().toStdString() == r.job);
    CHECK(table->item(j, 3)->text() == cs::gui::format_seconds(r.step_time_s));
    CHECK(table->item(j, 5)->text() == QStringLiteral("%1×").arg(r.slowdown, 0, 'f', 3));
  }
  CHECK(w.current_outcome()->multi_job.jobs[1].slowdown == expected.jobs[1].slowdown);
  CHECK(w.headline()->text("slowdown") == QStringLiteral("%1×").arg(expected.jobs[0].slowdown, 0, 'f', 3));
  // The utilization chart names the job's links with its numbers, not an elided "…".
  auto* cats = qobject_cast<QBarCategoryAxis*>(w.links()->chart()->axes(Qt::Vertical).value(0));
  REQUIRE(cats != nullptr);
  int levels = 0;  // a level's busiest link is in its tooltip, not a bar of its own
  for (const auto& l : expected.jobs[0].links) levels += l.name.rfind("busiest", 0) != 0;
  CHECK(cats->count() == levels + 1);
  CHECK(w.links()->details().join("\n").contains("busiest"));
  for (const QString& c : cats->categories()) CHECK_FALSE(c.contains("…"));
}

TEST_CASE("Done 2: editing job 2's TP shows the CLI's numbers for the same change, and setting it back clears it", "[gui]") {
  const QString path = scenario("two-jobs-shared-spine.json");
  Opened o(path);
  MainWindow& w = o.w;
  const double job2_before = w.current_outcome()->multi_job.jobs[1].step_time_s;
  w.select_job(1);
  CHECK(w.selected_job() == 1);
  CHECK(combo(w, "model.preset")->currentText() == "llama2-7b");
  spin(w, "training.tensor_model_parallel_size")->setValue(4);
  REQUIRE(w.wait_until_idle(120000));
  INFO(w.validation_message().toStdString());
  REQUIRE(w.validation_message().isEmpty());
  // The edit went to the job, not to a top-level "training" the loader refuses.
  CHECK_FALSE(w.document().content().contains("training"));
  CHECK(w.document().content()["jobs"][1]["training"]["tensor_model_parallel_size"] == 4);
  CHECK(w.document().content()["jobs"][0]["training"]["tensor_model_parallel_size"] == 8);

  const auto cli = cli_json({"run", path, "--json", "--set", "jobs.1.training.tensor_model_parallel_size=4"});
  const auto& job2 = cli.at("jobs").at(1);
  const cs::sim::Report* r = w.current_report();
  REQUIRE(r != nullptr);
  CHECK(r->job == "llama2-7b");
  CHECK(r->tp == 4);
  CHECK(r->step_time_s == job2.at("step_time_s").get<double>());
  CHECK(r->slowdown == job2.at("slowdown").get<double>());
  CHECK(w.current_outcome()->multi_job.jobs[0].step_time_s == cli.at("jobs").at(0).at("step_time_s").get<double>());
  CHECK(w.jobs_table()->item(1, 2)->text().startsWith("TP4 "));

  spin(w, "training.tensor_model_parallel_size")->setValue(8);
  REQUIRE(w.wait_until_idle(120000));
  CHECK(w.validation_message().isEmpty());
  CHECK(w.current_outcome()->multi_job.jobs[1].step_time_s == job2_before);
}

TEST_CASE("Broken 2: a file that does not validate shows no result of the previous file, and exports nothing", "[gui]") {
  Opened o(scenario("llama3-8b-h100x8.json"));
  MainWindow& w = o.w;
  REQUIRE(w.current_report() != nullptr);
  QTemporaryDir dir;
  auto doc = cs::sim::read_json_file(scenario("llama3-70b-h100x64-ndr400.json").toStdString());
  doc["training"]["globl_batch_size"] = 64;  // misspelt
  const QString bad = dir.filePath("misspelt.json");
  {
    QFile f(bad);
    REQUIRE(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(doc.dump(2)));
  }
  REQUIRE(w.open_file(bad));  // it reads: the knobs show it, with its message
  REQUIRE(w.wait_until_idle(120000));
  INFO(w.validation_message().toStdString());
  CHECK(w.validation_message().contains("globl_batch_size"));
  CHECK(w.current_report() == nullptr);
  CHECK(w.headline()->text("step_time") == "–");
  CHECK(spin(w, "training.tensor_model_parallel_size")->value() == 8);
  QString error;
  CHECK_FALSE(w.export_csv_to(dir.filePath("out.csv"), &error));
  CHECK(error.contains("invalid"));
  CHECK_FALSE(QFile::exists(dir.filePath("out.csv")));
}

TEST_CASE("Broken 3: a scenario past the simulator's budget is refused before it starts, with the message on screen", "[gui]") {
  Opened o(scenario("gpt3-175b-h100x16384.json"));
  MainWindow& w = o.w;
  QElapsedTimer t;
  t.start();
  spin(w, "cluster.nodes")->setValue(1000000);
  spin(w, "training.global_batch_size")->setValue(8000000);
  REQUIRE(w.wait_until_idle(5000));
  CHECK(t.elapsed() < 3000);
  CHECK_FALSE(w.simulating());
  const QString m = w.validation_message();
  INFO(m.toStdString());
  CHECK(m.contains("too large to simulate"));
  CHECK(m.contains("cluster.nodes"));
  CHECK(w.findChild<QLabel*>("validation_message")->isVisible());
  CHECK(w.results_stale());  // the 16k result stays, greyed
  // Back to a size it can simulate: a result, current again.
  spin(w, "cluster.nodes")->setValue(2048);
  spin(w, "training.global_batch_size")->setValue(1536);
  REQUIRE(w.wait_until_idle(120000));
  CHECK(w.validation_message().isEmpty());
  CHECK_FALSE(w.results_stale());
}

TEST_CASE("Done 3: Cancel stops a running simulation at once and frees its memory", "[gui]") {
  Opened o(scenario("gpt3-175b-a100x1024.json"));
  MainWindow& w = o.w;
  const double step = w.current_report()->step_time_s;
  const double rss0 = rss_bytes();
  // 32k sequences of micro-batch 1: about 10 s and 1 GB alone on an idle core.
  spin(w, "training.global_batch_size")->setValue(32768);
  REQUIRE(spin_until([&] { return w.simulating(); }, 2000));
  spin_until([&] { return rss_bytes() > rss0 + 100e6; }, 8000);
  const double grown = rss_bytes() - rss0;
  INFO("grew " << grown / 1e6 << " MB before Cancel");
  REQUIRE(w.simulating());
  QElapsedTimer t;
  t.start();
  auto* button = w.findChild<QPushButton*>("cancel");
  REQUIRE(button != nullptr);
  CHECK(button->isVisible());
  button->click();
  REQUIRE(spin_until([&] { return !w.simulating(); }, 5000));
  const auto stopped_ms = t.elapsed();
  // The simulation alone runs ~10 s: stopping well inside that can only be the cancel. The 0.5 s target is
  // a figure, not a timed test (the house rule; a loaded CI core stretches any deadline): bench/gui_bench.cpp
  // measures it (224 ms here under load).
  INFO("stopped " << stopped_ms << " ms after Cancel");
  CHECK(stopped_ms < 3000);
  // The memory goes back to the system right after (the worker trims the heap once the UI knows).
  const double limit = std::max(64e6, grown * 0.3);
  spin_until([&] { return rss_bytes() - rss0 < limit; }, 3000);
  const double after = rss_bytes() - rss0;
  INFO("after Cancel " << after / 1e6 << " MB above the start");
  CHECK(after < limit);
  CHECK_FALSE(button->isVisible());
  CHECK(w.current_report()->step_time_s == step);  // the last finished result, greyed
  CHECK(w.results_stale());
  CHECK(w.findChild<QLabel*>("status")->text().contains("cancelled"));
}

TEST_CASE("Broken 3: closing the window while a large simulation runs ends at once", "[gui]") {
  QElapsedTimer t;
  {
    Opened o(scenario("gpt3-175b-a100x1024.json"));
    spin(o.w, "training.global_batch_size")->setValue(32768);
    REQUIRE(spin_until([&] { return o.w.simulating(); }, 2000));
    spin_until([] { return false; }, 300);
    o.w.close();
    t.start();
  }  // the window and its runners go: the destructor must not wait for the simulation (~10 s alone)
  CHECK(t.elapsed() < 3000);
}

TEST_CASE("Broken 5: the wheel over an unfocused knob scrolls the panel, not the knob", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  w.resize(1000, 420);  // the panel scrolls
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  QSpinBox* pp = spin(w, "training.pipeline_model_parallel_size");
  REQUIRE(pp->value() == 4);
  QScrollBar* bar = w.knob_scroll()->verticalScrollBar();
  REQUIRE(bar->maximum() > 0);
  bar->setValue(bar->maximum() / 2);
  const int scrolled = bar->value();
  const QPoint at = pp->rect().center();
  QWheelEvent down(at, pp->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  REQUIRE_FALSE(pp->hasFocus());
  QApplication::sendEvent(pp, &down);
  CHECK(pp->value() == 4);
  CHECK(bar->value() != scrolled);
  // Focused (a click into it), the wheel turns it: one step down the powers of two.
  QApplication::setActiveWindow(&w);
  pp->setFocus(Qt::MouseFocusReason);
  if (pp->hasFocus()) {
    QWheelEvent again(at, pp->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(pp, &again);
    CHECK(pp->value() == 2);
  } else {
    WARN("the offscreen platform gave no focus; the focused half was not checked");
  }
  CHECK(pp->toolTip().contains("wheel"));
}

TEST_CASE("Broken 6: Save As is Ctrl+Shift+S and every chart repaints whole after a new sweep", "[gui]") {
  MainWindow w;
  QAction* save_as = w.findChild<QAction*>("action_save_as");
  REQUIRE(save_as != nullptr);
  CHECK(save_as->shortcut() == QKeySequence(QStringLiteral("Ctrl+Shift+S")));
  bool in_menu = false;
  for (QAction* m : w.menuBar()->actions())
    if (m->menu() && m->menu()->actions().contains(save_as)) in_menu = true;
  CHECK(in_menu);
  // The label fragments were regions the view did not repaint when the chart was rebuilt.
  CHECK(w.scaling()->viewportUpdateMode() == QGraphicsView::FullViewportUpdate);
  CHECK(w.pareto()->viewportUpdateMode() == QGraphicsView::FullViewportUpdate);
  CHECK(w.breakdown()->viewportUpdateMode() == QGraphicsView::FullViewportUpdate);
}

TEST_CASE("Done 4: undo and redo over ten edits restore each state exactly", "[gui]") {
  Opened o(scenario("llama3-70b-h100x64-ndr400.json"));
  MainWindow& w = o.w;
  std::vector<nlohmann::json> states{w.document().content()};
  const auto edit = [&](auto&& change) {
    change();
    states.push_back(w.document().content());
    REQUIRE(states.back() != states[states.size() - 2]);
  };
  edit([&] { spin(w, "training.tensor_model_parallel_size")->setValue(4); });
  edit([&] { spin(w, "training.pipeline_model_parallel_size")->setValue(8); });
  edit([&] { spin(w, "cluster.nodes")->setValue(16); });
  edit([&] { spin(w, "training.global_batch_size")->setValue(256); });
  edit([&] { w.knobs()->findChild<QCheckBox*>("training.sequence_parallel")->setChecked(false); });
  edit([&] {
    QComboBox* z = combo(w, "training.zero_stage");
    z->setCurrentIndex(z->findText("2"));
    emit z->activated(z->currentIndex());
  });
  edit([&] {
    QComboBox* r = combo(w, "training.recompute_granularity");
    r->setCurrentIndex(r->findText("full"));
    emit r->activated(r->currentIndex());
  });
  edit([&] { w.apply_overrides({"training.overlap_grad_reduce=true"}); });  // a key the panel has no knob for
  edit([&] {
    auto* name = w.knobs()->findChild<QLineEdit*>("name");
    name->setText("ten edits");
    name->setModified(true);
    emit name->editingFinished();
  });
  edit([&] { w.findChild<QDoubleSpinBox*>("cluster.price_per_gpu_hour")->setValue(3.25); });
  REQUIRE(states.size() == 11);
  for (int k = 10; k > 0; --k) {
    REQUIRE(w.undo());
    INFO("after undo to state " << k - 1);
    CHECK(w.document().content() == states[static_cast<std::size_t>(k - 1)]);
  }
  CHECK_FALSE(w.undo());
  CHECK_FALSE(w.document().dirty());  // back to the file as it is on disk
  CHECK(spin(w, "training.tensor_model_parallel_size")->value() == 8);
  for (int k = 1; k <= 10; ++k) {
    REQUIRE(w.redo());
    INFO("after redo to state " << k);
    CHECK(w.document().content() == states[static_cast<std::size_t>(k)]);
  }
  CHECK_FALSE(w.redo());
  CHECK(w.knobs()->findChild<QLineEdit*>("name")->text() == "ten edits");
  REQUIRE(w.wait_until_idle(120000));
  INFO(w.validation_message().toStdString());
  CHECK(w.validation_message().isEmpty());
  CHECK(w.current_report()->tp == 4);
}

TEST_CASE("Stale results are greyed and the knob the message names is marked", "[gui]") {
  Opened o(scenario("llama3-70b-h100x64-ndr400.json"));
  MainWindow& w = o.w;
  CHECK_FALSE(w.results_stale());
  CHECK_FALSE(w.headline()->stale());
  spin(w, "training.tensor_model_parallel_size")->setValue(16);
  REQUIRE(w.wait_until_idle(120000));
  CHECK(w.results_stale());
  CHECK(w.headline()->stale());
  CHECK(w.knobs()->highlighted() == QStringList{"training.tensor_model_parallel_size"});
  // The message says the problem is in the unsaved edits, not in the file on disk.
  CHECK(w.validation_message().startsWith(scenario("llama3-70b-h100x64-ndr400.json") + " (unsaved edits):"));
  spin(w, "training.tensor_model_parallel_size")->setValue(8);
  REQUIRE(w.wait_until_idle(120000));
  CHECK_FALSE(w.results_stale());
  CHECK(w.knobs()->highlighted().isEmpty());
}

TEST_CASE("Size knobs step through powers of two and tooltips give valid values and units", "[gui]") {
  cs::gui::KnobPanel panel;
  QSpinBox* tp = panel.findChild<QSpinBox*>("training.tensor_model_parallel_size");
  QSpinBox* nodes = panel.findChild<QSpinBox*>("cluster.nodes");
  QSpinBox* vp = panel.findChild<QSpinBox*>("training.virtual_pipeline_model_parallel_size");
  REQUIRE(tp);
  REQUIRE(nodes);
  REQUIRE(vp);
  tp->setValue(8);
  tp->stepBy(1);
  CHECK(tp->value() == 16);
  tp->stepBy(-2);
  CHECK(tp->value() == 4);
  tp->setValue(6);  // typed: any value
  tp->stepBy(1);
  CHECK(tp->value() == 8);
  tp->setValue(6);
  tp->stepBy(-1);
  CHECK(tp->value() == 4);
  nodes->setValue(8);
  nodes->stepBy(1);  // 8 -> 16 nodes in one step, not through 9..15
  CHECK(nodes->value() == 16);
  vp->setValue(3);
  vp->stepBy(1);  // VP is any divisor of the layers per stage: by one
  CHECK(vp->value() == 4);
  panel.set_ladder(false);
  tp->setValue(8);
  tp->stepBy(1);
  CHECK(tp->value() == 9);
  CHECK(tp->toolTip().contains("Valid range: 1"));
  CHECK(tp->toolTip().contains("powers of two"));
  CHECK(panel.findChild<QComboBox*>("training.recompute_granularity")->toolTip().contains("Valid values: "));
  CHECK(panel.findChild<QDoubleSpinBox*>("cluster.price_per_gpu_hour")->toolTip().contains("Unit: "));
}

TEST_CASE("The raw JSON editor validates as you type and applies keys the panel has no knob for", "[gui]") {
  Opened o(scenario("llama3-70b-h100x64-ndr400.json"));
  MainWindow& w = o.w;
  w.findChild<QAction*>("action_raw_json")->trigger();
  QPlainTextEdit* raw = w.raw_editor();
  REQUIRE(raw->isVisible());
  auto text = nlohmann::json::parse(raw->toPlainText().toStdString());
  CHECK(text == w.document().content());
  raw->setPlainText("{ \"name\": ");
  REQUIRE(spin_until([&] { return w.raw_status()->text().startsWith("not JSON"); }, 3000));
  text["training"]["tensor_model_parallel_size"] = 3;
  raw->setPlainText(QString::fromStdString(text.dump(2)));
  REQUIRE(spin_until([&] { return w.raw_status()->text().contains("does not divide"); }, 3000));  // the library's own check
  text["training"]["tensor_model_parallel_size"] = 8;
  text["training"]["tp_comm_overlap"] = true;
  raw->setPlainText(QString::fromStdString(text.dump(2)));
  REQUIRE(spin_until([&] { return w.raw_status()->text().startsWith("valid"); }, 3000));
  auto* apply = w.findChild<QPushButton*>("raw_json_apply");
  REQUIRE(apply->isEnabled());
  apply->click();
  REQUIRE(w.wait_until_idle(120000));
  CHECK(w.document().content()["training"]["tp_comm_overlap"] == true);
  const auto expected = cs::sim::simulate(cs::sim::load_scenario(scenario("llama3-70b-h100x64-ndr400.json").toStdString(),
                                                                 {"training.tp_comm_overlap=true"})).report;
  CHECK(w.current_report()->step_time_s == expected.step_time_s);
  REQUIRE(w.undo());
  CHECK_FALSE(w.document().content()["training"].contains("tp_comm_overlap"));
}

TEST_CASE("Save keeps the file's key order, reload drops the edits, and the file is a recent file", "[gui]") {
  QTemporaryDir dir;
  const QString copy = dir.filePath("two-jobs.json");
  REQUIRE(QFile::copy(scenario("two-jobs-shared-spine.json"), copy));
  Opened o(copy);
  MainWindow& w = o.w;
  CHECK(MainWindow::recent_files().value(0) == QFileInfo(copy).absoluteFilePath());
  w.select_job(1);
  spin(w, "training.global_batch_size")->setValue(128);
  REQUIRE(w.document().dirty());
  const QString out = dir.filePath("saved.json");
  auto doc = w.document();
  doc.save_as(out.toStdString());
  QFile f(out);
  REQUIRE(f.open(QIODevice::ReadOnly));
  const auto saved = nlohmann::ordered_json::parse(f.readAll().toStdString());
  std::vector<std::string> keys, job_keys;
  for (auto it = saved.begin(); it != saved.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"name", "description", "cluster", "jobs", "simulation"});
  for (auto it = saved["jobs"][1].begin(); it != saved["jobs"][1].end(); ++it) job_keys.push_back(it.key());
  CHECK(job_keys == std::vector<std::string>{"name", "nodes", "model", "training"});
  CHECK(saved["jobs"][1]["training"]["global_batch_size"] == 128);
  CHECK(saved["jobs"][1]["training"].begin().key() == "seq_length");

  REQUIRE(w.reload());
  CHECK_FALSE(w.document().dirty());
  CHECK(w.document().content()["jobs"][1]["training"]["global_batch_size"] == 64);
}

TEST_CASE("Exports carry the scenario name, headline and knobs and write one file", "[gui]") {
  Opened o(scenario("llama3-70b-h100x64-ndr400.json"));
  MainWindow& w = o.w;
  QTemporaryDir dir;
  const QString out = dir.filePath("numbers.csv");
  QString error;
  REQUIRE(w.export_csv_to(out, &error));
  QFile f(out);
  REQUIRE(f.open(QIODevice::ReadOnly));
  const QString text = f.readAll();
  CHECK(text.contains("scenario.name,\"Llama-3 70B on 64 H100 SXM, NDR400 InfiniBand\""));
  CHECK(text.contains("headline.Step time," + w.headline()->text("step_time")));
  CHECK(text.contains("knobs.training.tensor_model_parallel_size,8"));
  CHECK(text.contains(QStringLiteral("report.step_time_s,%1").arg(QString::fromStdString(nlohmann::json(w.current_report()->step_time_s).dump()))));
  CHECK(QDir(dir.path()).entryList(QDir::Files) == QStringList{"numbers.csv"});
  CHECK(w.findChild<QLabel*>("status")->text().contains("wrote " + out));
  CHECK_FALSE(w.export_sweep_csv_to(dir.filePath("sweep.csv"), &error));  // no sweep yet: says so
  CHECK(error.contains("no sweep"));
  REQUIRE(w.export_png_to(dir.filePath("view.png"), &error));
  CHECK(!QImage(dir.filePath("view.png")).isNull());
}

TEST_CASE("Changing the GPU drops the old GPU's price for the new one's catalog price", "[gui]") {
  Opened o(scenario("llama3-70b-h100x64-ndr400.json"));
  MainWindow& w = o.w;
  REQUIRE(cs::gui::find_path(w.document().content(), "cluster.price_per_gpu_hour"));
  QComboBox* gpu = combo(w, "cluster.gpu");
  const int a100 = gpu->findText("A100-80GB");
  REQUIRE(a100 >= 0);
  gpu->setCurrentIndex(a100);
  emit gpu->activated(a100);
  REQUIRE(w.wait_until_idle(120000));
  CHECK_FALSE(cs::gui::find_path(w.document().content(), "cluster.price_per_gpu_hour"));
  const auto expected = cs::sim::load_scenario(scenario("llama3-70b-h100x64-ndr400.json").toStdString(), {"cluster.gpu=A100-80GB"});
  INFO(w.validation_message().toStdString());
  REQUIRE(w.current_report() != nullptr);
  CHECK(w.current_report()->price_per_gpu_hour_usd != 2.5);
  REQUIRE(w.undo());
  CHECK(w.document().content()["cluster"]["price_per_gpu_hour"] == 2.5);
  (void)expected;
}

TEST_CASE("The timeline zooms and pans with the keyboard and fits 5-digit GPU ids", "[gui]") {
  cs::gui::TimelineView view;
  view.resize(900, 300);
  auto data = std::make_shared<cs::gui::TimelineData>();
  data->makespan = 1000000000;  // 1 ms
  data->names = {"fwd"};
  cs::gui::TimelineRow row;
  row.label = "rank 15 (GPU 16383) compute";
  row.bars.push_back({0, 500000000, 0, cs::sim::Category::compute, 0});
  data->rows.push_back(row);
  view.show_timeline(data);
  CHECK(view.label_width() >= view.fontMetrics().horizontalAdvance(QString::fromStdString(row.label)));
  const double whole = view.window_end() - view.window_start();
  QKeyEvent plus(QEvent::KeyPress, Qt::Key_Plus, Qt::NoModifier, "+");
  QApplication::sendEvent(&view, &plus);
  CHECK(view.window_end() - view.window_start() == Approx(whole / 1.5));
  const double t0 = view.window_start();
  QKeyEvent right(QEvent::KeyPress, Qt::Key_Right, Qt::NoModifier);
  QApplication::sendEvent(&view, &right);
  CHECK(view.window_start() > t0);
  QKeyEvent home(QEvent::KeyPress, Qt::Key_Home, Qt::NoModifier);
  QApplication::sendEvent(&view, &home);
  CHECK(view.window_start() == 0);
  CHECK(view.window_end() - view.window_start() == Approx(whole));
}

TEST_CASE("The sweep table sorts by a column, rejected layouts are counted, and the Pareto axes go log", "[gui]") {
  Opened o(scenario("llama3-8b-h100x8.json"));
  MainWindow& w = o.w;
  REQUIRE(w.set_view("sweep"));
  REQUIRE(w.wait_until_idle(300000));
  QTableWidget* table = w.sweep_table();
  REQUIRE(table->rowCount() > 3);
  CHECK(table->isSortingEnabled());
  table->sortByColumn(2, Qt::AscendingOrder);
  for (int row = 1; row < table->rowCount(); ++row)
    CHECK(table->item(row - 1, 2)->data(Qt::UserRole).toDouble() <= table->item(row, 2)->data(Qt::UserRole).toDouble());
  // This one-node cluster has no inter-node network: the multi-node layouts are rejected, and said so.
  auto* rejected = w.findChild<QLabel*>("sweep_rejected");
  REQUIRE(rejected != nullptr);
  CHECK(rejected->isVisible());
  CHECK(rejected->toolTip().contains("cluster.inter_node"));
  w.findChild<QAction*>("action_log_axes")->setChecked(true);
  CHECK(w.pareto()->log_axes());
  bool log_axis = false;
  for (QAbstractAxis* a : w.pareto()->chart()->axes())
    if (a->type() == QAbstractAxis::AxisTypeLogValue) log_axis = true;
  CHECK(log_axis);
}

TEST_CASE("The window fits a 1366x768 screen, single-job and multi-job", "[gui]") {
  for (const char* file : {"llama3-70b-h100x64-ndr400.json", "two-jobs-shared-spine.json"}) {
    Opened o(scenario(file));
    INFO(file << ": minimum " << o.w.minimumSizeHint().width() << "x" << o.w.minimumSizeHint().height());
    CHECK(o.w.minimumSizeHint().width() <= 1366);
    CHECK(o.w.minimumSizeHint().height() <= 768 - 40);  // a panel or task bar
    o.w.resize(1366, 728);
    CHECK(o.w.width() == 1366);
  }
}

TEST_CASE("The cancel token of the front door: set stops the simulation, clear changes nothing", "[gui]") {
  // sim/engine/cancel.hpp, used by the GUI's runner: a flag already set stops at the first poll; a flag
  // never set gives the very report simulate(scenario) gives; a flag set from another thread mid-run
  // ends the call with Cancelled.
  const auto s = cs::sim::load_scenario(scenario("llama3-70b-h100x64-ndr400.json").toStdString(), {});
  std::atomic<bool> set{true}, clear{false};
  CHECK_THROWS_AS(cs::sim::simulate(s, &set), cs::sim::Cancelled);
  CHECK(cs::sim::to_json(cs::sim::simulate(s, &clear).report) == cs::sim::to_json(cs::sim::simulate(s).report));
  std::atomic<bool> later{false};
  bool cancelled = false;
  QElapsedTimer t;
  std::thread worker([&] {
    try {
      (void)cs::sim::simulate(cs::sim::load_scenario(scenario("gpt3-175b-a100x1024.json").toStdString(),
                                                     {"training.global_batch_size=32768"}), &later);
    } catch (const cs::sim::Cancelled&) {
      cancelled = true;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  t.start();
  later = true;
  worker.join();
  CHECK(cancelled);
  INFO("stopped " << t.elapsed() << " ms after the flag");
  CHECK(t.elapsed() < 2000);
  // No scope is left behind on this thread: a simulation without a flag runs to the end.
  CHECK_NOTHROW(cs::sim::simulate(s));
}

TEST_CASE("The headline shows the report's error band and flags a scenario outside the validated runs", "[gui]") {
  Opened o(scenario("llama3-8b-h100x8.json"));
  MainWindow& w = o.w;
  const auto band_of = [&]() {
    for (QLabel* l : w.headline()->findChildren<QLabel*>())
      if (l->text().contains("band ")) return l->text();
    return QString();
  };
  const cs::sim::ErrorBand& band = w.current_report()->step_time_band;
  if (band.available) {
    CHECK(band_of().contains(cs::gui::format_seconds(band.step_time_low_s)));
    CHECK(band_of().contains(cs::gui::format_seconds(band.step_time_high_s)));
  }
  REQUIRE(w.apply_overrides({"cluster.gpu=B200"}));
  REQUIRE(w.wait_until_idle(120000));
  const cs::sim::ErrorBand& b200 = w.current_report()->step_time_band;
  REQUIRE(b200.out_of_domain);  // B200 was never compared with a published run (docs/error-band.md)
  CHECK(band_of().contains("not validated"));
  CHECK(w.headline()->findChild<QLabel*>("headline.step_time")->toolTip().contains("B200"));
}


TEST_CASE("The framework knob applies its rules: Megatron-Core refuses ZeRO-2 with PP and names the rule", "[gui]") {
  MainWindow w;
  w.set_headless(true);
  REQUIRE(w.open_file(scenario("llama3-70b-h100x64-ndr400.json")));  // TP8 PP4 ZeRO-1
  w.show();
  REQUIRE(w.wait_until_idle(120000));
  QComboBox* framework = combo(w, "training.framework");
  CHECK(framework->currentText() == "generic");  // the file names none
  QComboBox* zero = combo(w, "training.zero_stage");
  zero->setCurrentText("2");
  emit zero->activated(zero->currentIndex());
  REQUIRE(w.wait_until_idle(120000));
  CHECK(w.validation_message().isEmpty());  // generic runs anything the memory allows

  framework->setCurrentText("megatron-core");
  emit framework->activated(framework->currentIndex());
  REQUIRE(w.wait_until_idle(120000));
  const QString message = w.validation_message();
  INFO(message.toStdString());
  CHECK(message.contains("megatron-core"));
  CHECK(message.contains("rule fsdp-without-pp"));

  zero->setCurrentText("1");  // the distributed optimizer is what Megatron-Core combines with PP
  emit zero->activated(zero->currentIndex());
  REQUIRE(w.wait_until_idle(120000));
  CHECK(w.validation_message().isEmpty());
  CHECK(w.document().edits().back() == "training.zero_stage=1");
}

TEST_CASE("The host and switch knobs show the resolved defaults and drive the PCIe host keys as --set does", "[gui]") {
  const QString path = scenario("llama3-8b-h100x8.json");  // one NVSwitch node of 8 H100 SXM
  Opened o(path);
  MainWindow& w = o.w;
  auto* sockets = spin(w, "cluster.intra_node.sockets");
  auto* nvls = w.knobs()->findChild<QCheckBox*>("cluster.intra_node.nvls");
  auto* sharp = w.knobs()->findChild<QCheckBox*>("cluster.inter_node.sharp");
  REQUIRE(nvls != nullptr);
  REQUIRE(sharp != nullptr);
  CHECK_FALSE(sockets->isEnabled());  // NVSwitch: GPU traffic never reaches the sockets
  CHECK(nvls->isChecked());           // NVLink 4 NVSwitch: NVLS on by default
  CHECK_FALSE(sharp->isChecked());

  QComboBox* intra = combo(w, "cluster.intra_node");
  intra->setCurrentText("pcie");
  emit intra->activated(intra->currentIndex());
  REQUIRE(w.wait_until_idle(120000));
  REQUIRE(w.validation_message().isEmpty());
  // 8 GPUs split evenly over two sockets (topologies/link_catalog.hpp pcie_sockets), one switch of 4 each,
  // joined by NCCL's 22 GB/s SRP_QPI_BW.
  CHECK(sockets->isEnabled());
  CHECK(sockets->value() == 2);
  CHECK(spin(w, "cluster.intra_node.gpus_per_pcie_switch")->value() == 4);
  auto* upi = w.knobs()->findChild<QDoubleSpinBox*>("cluster.intra_node.inter_socket_GBps");
  REQUIRE(upi != nullptr);
  CHECK(upi->value() == Approx(22));
  CHECK_FALSE(nvls->isChecked());  // no NVSwitch, no NVLS

  sockets->setValue(1);  // the "intra_node": "pcie" name becomes {"name": "pcie", "sockets": 1}
  REQUIRE(w.wait_until_idle(120000));
  REQUIRE(w.current_report() != nullptr);
  CHECK(w.document().edits().back() == "cluster.intra_node.sockets=1");
  CHECK(w.document().content()["cluster"]["intra_node"] == nlohmann::json({{"name", "pcie"}, {"sockets", 1}}));
  const auto expected = cs::sim::simulate(cs::sim::load_scenario(
      path.toStdString(), {"cluster.intra_node=pcie", "cluster.intra_node.sockets=1"})).report;
  CHECK(w.current_report()->step_time_s == expected.step_time_s);
}
