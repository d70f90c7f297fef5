// GUI tests through real input events (QTest's mouse and key events, delivered by QApplication as a
// user's are): a click on a Pareto point or a sweep-table row loads that layout and a drag on the chart
// still zooms; two windows that go without a clean close each get their own unsaved edits back; every
// shipped scenario fits a 1366x768 screen.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSysInfo>
#include <QScatterSeries>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolTip>
#include <QValueAxis>
#include <QtTest/QTest>

#include "gui/app/cli_command.hpp"
#include "gui/app/drafts.hpp"
#include "gui/app/main_window.hpp"
#include "gui/app/scenario_document.hpp"
#include "gui/views/format.hpp"
#include "gui/views/knob_panel.hpp"
#include "gui/views/pareto_chart.hpp"
#include "sim/report/output_file.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"

using cs::gui::MainWindow;

namespace {

QString shipped(const QString& name) { return QStringLiteral(CLUSTERSIM_SOURCE_DIR "/scenarios/") + name; }

QSpinBox* knob(const MainWindow& w, const char* path) {
  auto* s = w.knobs()->findChild<QSpinBox*>(path);
  REQUIRE(s != nullptr);
  return s;
}

// Opens a scenario in a headless window, shown, its simulation done.
void open_shown(MainWindow& w, const QString& file) {
  w.set_headless(true);
  REQUIRE(w.open_file(file));
  w.show();
  REQUIRE(w.wait_until_idle(120000));
}

// The drafts of this test in a folder of their own (ctest runs test cases in parallel processes).
struct PrivateDrafts {
  QTemporaryDir dir;
  PrivateDrafts() { cs::gui::set_drafts_dir(dir.path()); }
  ~PrivateDrafts() { cs::gui::set_drafts_dir(QString()); }
  int count() const { return static_cast<int>(QDir(dir.path()).entryList({"draft-*.json"}, QDir::Files).size()); }
};

// A window on the sweep view of the 8-GPU scenario, at the size of a laptop screen, its sweep shown.
struct SweepWindow {
  MainWindow w;
  SweepWindow() {
    w.set_headless(true);
    REQUIRE(w.open_file(shipped("llama3-8b-h100x8.json")));
    REQUIRE(w.set_view("sweep"));
    w.resize(1366, 728);
    w.show();
    REQUIRE(w.wait_until_idle(300000));
    REQUIRE(w.sweep_result());
    QApplication::processEvents();  // the chart's layout: plot area and axes placed
  }
};

// The viewport position of a drawn point, as QChart maps it.
QPoint on_screen(const cs::gui::ParetoChart& view, QPointF value, QAbstractSeries* series) {
  return view.mapFromScene(view.chart()->mapToScene(view.chart()->mapToPosition(value, series)));
}

// A drawn point of another layout than the current one, far enough (in pixels) from every other drawn
// point that a click on it can mean only it; its series through `series`.
QPointF lone_point(const cs::gui::ParetoChart& view, QScatterSeries** series) {
  std::vector<std::pair<QPointF, QScatterSeries*>> all;
  for (QAbstractSeries* s : view.chart()->series())
    if (auto* sc = qobject_cast<QScatterSeries*>(s); sc && sc->name() != "current layout")
      for (const QPointF& p : sc->points()) all.push_back({p, sc});
  for (const auto& [p, s] : all) {
    bool alone = true;
    for (const auto& [q, t] : all)
      if (p != q && (on_screen(view, p, s) - on_screen(view, q, t)).manhattanLength() < 3 * cs::gui::ParetoChart::kClickRadius)
        alone = false;
    if (alone && view.rect().contains(on_screen(view, p, s))) {
      *series = s;
      return p;
    }
  }
  FAIL("no drawn point stands alone");
  return {};
}

}  // namespace

TEST_CASE("A mouse click on a Pareto point loads its layout, a drag zooms and loads nothing", "[gui]") {
  SweepWindow sw;
  MainWindow& w = sw.w;
  cs::gui::ParetoChart* chart = w.pareto();
  QScatterSeries* series = nullptr;
  const QPointF value = lone_point(*chart, &series);
  const auto& points = w.sweep_result()->points;
  const auto it = std::find_if(points.begin(), points.end(), [&](const cs::sim::SweepPoint& p) {
    return p.simulated() && p.report.cost.days_to_train == value.x();
  });
  REQUIRE(it != points.end());
  const cs::sim::SweepPoint target = *it;
  const int tp_before = w.current_report()->tp, pp_before = w.current_report()->pp;
  INFO("clicking " << cs::gui::point_label(target) << " from TP" << tp_before << " PP" << pp_before);
  REQUIRE((target.report.tp != tp_before || target.report.pp != pp_before));

  // A drag across the plot first: it zooms (the x axis narrows) and the document does not change.
  auto* x = qobject_cast<QValueAxis*>(chart->chart()->axes(Qt::Horizontal).first());
  REQUIRE(x != nullptr);
  const double span = x->max() - x->min();
  const QRectF plot = chart->chart()->plotArea();
  const QPoint from = chart->mapFromScene(chart->chart()->mapToScene(plot.topLeft() + QPointF(10, 10)));
  const QPoint to = chart->mapFromScene(chart->chart()->mapToScene(plot.center()));
  QTest::mousePress(chart->viewport(), Qt::LeftButton, {}, from);
  QTest::mouseMove(chart->viewport(), from + QPoint(20, 20));
  QTest::mouseMove(chart->viewport(), to);
  QTest::mouseRelease(chart->viewport(), Qt::LeftButton, {}, to);
  const double zoomed = x->max() - x->min();
  CHECK(zoomed < 0.8 * span);
  CHECK_FALSE(w.document().dirty());
  QTest::mouseClick(chart->viewport(), Qt::RightButton, {}, to);  // zooms out (QChart::zoomOut: twice the span)
  CHECK(x->max() - x->min() == Approx(2 * zoomed));
  chart->chart()->zoomReset();
  QApplication::processEvents();

  // A click (press and release within the drag distance) on the point loads its layout.
  const QPoint at = on_screen(*chart, value, series);
  QTest::mousePress(chart->viewport(), Qt::LeftButton, {}, at);
  QTest::mouseRelease(chart->viewport(), Qt::LeftButton, {}, at + QPoint(1, 1));
  REQUIRE(w.wait_until_idle(300000));
  CHECK(w.document().dirty());
  CHECK(w.current_report()->tp == target.report.tp);
  CHECK(w.current_report()->pp == target.report.pp);
  CHECK(w.current_report()->step_time_s == target.report.step_time_s);
  CHECK(knob(w, "training.tensor_model_parallel_size")->value() == target.report.tp);

  // A click on empty plot area loads nothing.
  REQUIRE(w.undo());
  REQUIRE(w.wait_until_idle(300000));
  CHECK_FALSE(w.document().dirty());
  QTest::mouseClick(chart->viewport(), Qt::LeftButton, {}, chart->mapFromScene(chart->chart()->mapToScene(plot.topRight() + QPointF(-3, 3))));
  CHECK_FALSE(w.document().dirty());
}

TEST_CASE("A Pareto point's tooltip stays while the mouse stays near it, and goes when it leaves", "[gui]") {
  SweepWindow sw;
  cs::gui::ParetoChart* chart = sw.w.pareto();
  QScatterSeries* series = nullptr;
  const QPoint at = on_screen(*chart, lone_point(*chart, &series), series);
  QToolTip::hideText();
  QTest::mouseMove(chart->viewport(), at);  // the cursor moves: the chart's hover shows the point's tip
  REQUIRE(QTest::qWaitFor([]() { return QToolTip::isVisible(); }, 2000));
  const QString text = QToolTip::text();
  CHECK(text.contains("step"));
  // Off the marker (10 px across) but near it: the tip stays, well past the 0.7 s it used to last.
  QTest::mouseMove(chart->viewport(), at + QPoint(cs::gui::kTipSlack / 2, 0));
  QTest::qWait(1100);  // the mouse rests: Qt's tool-tip event (after 700 ms) reaches the chart
  CHECK(QToolTip::isVisible());
  CHECK(QToolTip::text() == text);
  // Away from it: the tip goes.
  QTest::mouseMove(chart->viewport(), at + QPoint(3 * cs::gui::kTipSlack, 3 * cs::gui::kTipSlack));
  CHECK(QTest::qWaitFor([]() { return !QToolTip::isVisible(); }, 2000));
}

TEST_CASE("A mouse click on a sweep table row loads its layout, also after sorting", "[gui]") {
  SweepWindow sw;
  MainWindow& w = sw.w;
  QTableWidget* table = w.sweep_table();
  REQUIRE(table->rowCount() > 1);
  table->sortByColumn(2, Qt::DescendingOrder);  // the slowest step first: rows no longer in the points' order
  QApplication::processEvents();
  int row = -1;
  for (int r = 0; r < table->rowCount() && row < 0; ++r)
    if (!table->item(r, 0)->text().contains("(current)")) row = r;
  REQUIRE(row >= 0);
  const std::string label = table->item(row, 0)->text().toStdString();
  const auto& points = w.sweep_result()->points;
  const auto it = std::find_if(points.begin(), points.end(),
                               [&](const cs::sim::SweepPoint& p) { return p.simulated() && cs::gui::point_label(p) == label; });
  REQUIRE(it != points.end());
  const cs::sim::SweepPoint target = *it;
  INFO("row " << row << ": " << label);

  const QRect cell = table->visualItemRect(table->item(row, 2));
  REQUIRE(table->viewport()->rect().contains(cell.center()));
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
  REQUIRE(w.wait_until_idle(300000));
  CHECK(w.document().dirty());
  CHECK(w.current_report()->tp == target.report.tp);
  CHECK(w.current_report()->pp == target.report.pp);
  CHECK(w.current_report()->step_time_s == target.report.step_time_s);
  // The sweep ran again around the new layout, and marks the row clicked as the current one.
  int current_rows = 0;
  for (int r = 0; r < table->rowCount(); ++r)
    if (table->item(r, 0)->text().contains("(current)")) {
      ++current_rows;
      CHECK(table->item(r, 0)->text().toStdString() == label + "  (current)");
    }
  CHECK(current_rows == 1);
}

TEST_CASE("Ctrl+Z and Ctrl+Shift+Z with a knob focused undo and redo the document", "[gui]") {
  MainWindow w;
  open_shown(w, shipped("llama3-70b-h100x64-ndr400.json"));
  w.activateWindow();
  REQUIRE(QTest::qWaitForWindowActive(&w));
  QSpinBox* tp = knob(w, "training.tensor_model_parallel_size");
  const int before = tp->value();
  QTest::mouseClick(tp, Qt::LeftButton, {}, QPoint(tp->width() / 3, tp->height() / 2));  // into its text
  REQUIRE(tp->hasFocus());
  QTest::keyClick(tp, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(tp, "2");
  QTest::keyClick(tp, Qt::Key_Return);
  REQUIRE(w.wait_until_idle(120000));
  REQUIRE(w.current_report()->tp == 2);
  REQUIRE(tp->hasFocus());
  QTest::keyClick(tp, Qt::Key_Z, Qt::ControlModifier);  // the knob still has focus
  REQUIRE(w.wait_until_idle(120000));
  CHECK(tp->value() == before);
  CHECK(w.current_report()->tp == before);
  CHECK_FALSE(w.document().dirty());
  QTest::keyClick(tp, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
  REQUIRE(w.wait_until_idle(120000));
  CHECK(tp->value() == 2);
  CHECK(w.current_report()->tp == 2);
}

TEST_CASE("Broken 4: restored edits are marked unsaved and No removes the recovery file", "[gui]") {
  PrivateDrafts drafts;
  const QString path = shipped("llama3-70b-h100x64-ndr400.json");
  auto crash_with_tp = [&](int tp) {
    MainWindow w;  // not headless: it autosaves
    REQUIRE(w.open_file(path));
    knob(w, "training.tensor_model_parallel_size")->setValue(tp);
    w.autosave();
    REQUIRE(QFile::exists(w.recovery_path()));
    return w.recovery_path();
  };  // destroyed without a clean close: "killed", the draft stays

  crash_with_tp(2);
  QStringList asked;
  const auto none = cs::gui::recover_drafts([&](const QString& s) { return asked << s, false; },  // No
                                            []() -> MainWindow* { FAIL("No restores nothing"); return nullptr; });
  CHECK(none.empty());
  CHECK(asked == QStringList{path});
  CHECK(drafts.count() == 0);  // the draft went: the question does not return
  CHECK(cs::gui::claim_orphaned_drafts().empty());

  const QString draft = crash_with_tp(4);
  auto orphans = cs::gui::claim_orphaned_drafts();
  REQUIRE(orphans.size() == 1);
  MainWindow w;
  w.set_headless(true);
  REQUIRE(w.restore_recovery(orphans[0]));
  CHECK(w.document().dirty());
  CHECK(w.isWindowModified());
  CHECK(w.windowTitle().contains("[*]"));
  CHECK(knob(w, "training.tensor_model_parallel_size")->value() == 4);
  CHECK(w.document().path() == path.toStdString());
  CHECK(w.recovery_path() == draft);  // the window took the draft over
  w.discard_recovery();               // what Discard at the close prompt does
  CHECK_FALSE(QFile::exists(draft));
}

TEST_CASE("Two windows that crash get each its own draft back, edited through key and mouse events", "[gui]") {
  PrivateDrafts drafts;
  const QString a = shipped("llama3-70b-h100x64-ndr400.json"), b = shipped("llama3-8b-h100x8.json");
  {
    MainWindow one, two;  // not headless: they autosave, each to its own draft
    REQUIRE(one.open_file(a));
    REQUIRE(two.open_file(b));
    one.show();
    two.show();
    // Window one: TP typed into its knob. Window two: PP stepped up by a click on the knob's up arrow.
    QSpinBox* tp = knob(one, "training.tensor_model_parallel_size");
    tp->setFocus();
    QTest::keyClick(tp, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(tp, "2");
    QTest::keyClick(tp, Qt::Key_Return);
    QSpinBox* pp = knob(two, "training.pipeline_model_parallel_size");
    const int pp_before = pp->value();
    two.knob_scroll()->ensureWidgetVisible(pp);
    QApplication::processEvents();
    QTest::mouseClick(pp, Qt::LeftButton, {}, QPoint(pp->width() - 5, 4));  // the up arrow: its top right
    REQUIRE(pp->value() > pp_before);
    REQUIRE(one.document().dirty());
    REQUIRE(two.document().dirty());
    // The autosave timers (1 s after an edit) write the drafts.
    REQUIRE(QTest::qWaitFor([&]() { return QFile::exists(one.recovery_path()) && QFile::exists(two.recovery_path()); }, 5000));
    CHECK(one.recovery_path() != two.recovery_path());
    CHECK(drafts.count() == 2);
    // While the windows live, their drafts are nobody's orphans: a process starting now offers neither.
    CHECK(cs::gui::claim_orphaned_drafts().empty());
  }  // both destroyed without a clean close: the crash

  // The next start: each draft offered once, each restored to a window of its own.
  std::vector<std::unique_ptr<MainWindow>> windows;
  QStringList asked;
  const auto restored = cs::gui::recover_drafts([&](const QString& s) { return asked << s, true; }, [&]() {
    windows.push_back(std::make_unique<MainWindow>());
    return windows.back().get();
  });
  asked.sort();
  CHECK(asked == QStringList{a, b});
  REQUIRE(restored.size() == 2);
  const MainWindow* back_a = restored[0]->document().path() == a.toStdString() ? restored[0] : restored[1];
  const MainWindow* back_b = back_a == restored[0] ? restored[1] : restored[0];
  REQUIRE(back_a->document().path() == a.toStdString());
  REQUIRE(back_b->document().path() == b.toStdString());
  CHECK(back_a->document().dirty());
  CHECK(back_b->document().dirty());
  CHECK(knob(*back_a, "training.tensor_model_parallel_size")->value() == 2);
  const auto file_b = cs::sim::read_json_file(b.toStdString());
  CHECK(knob(*back_b, "training.pipeline_model_parallel_size")->value() >
        file_b["training"].value("pipeline_model_parallel_size", 1));
  CHECK(knob(*back_b, "training.tensor_model_parallel_size")->value() ==
        file_b["training"].value("tensor_model_parallel_size", 1));  // not window one's edit
  CHECK(back_a->recovery_path() != back_b->recovery_path());
  // Offered once: the restored drafts belong to live windows now.
  CHECK(cs::gui::claim_orphaned_drafts().empty());
  CHECK(drafts.count() == 2);
}

TEST_CASE("A draft whose process died is offered, with its stale lock", "[gui]") {
  PrivateDrafts drafts;
  // A process that has ended: its pid names no live process (QLockFile's stale test, qlockfile_unix.cpp).
  QProcess gone;
  gone.start("true");
  REQUIRE(gone.waitForStarted());
  const qint64 pid = gone.processId();
  REQUIRE(gone.waitForFinished());
  const QString id = cs::gui::new_draft_id();
  QDir().mkpath(drafts.dir.path());
  QFile lock(drafts.dir.path() + "/draft-" + id + ".lock");
  REQUIRE(lock.open(QIODevice::WriteOnly));
  lock.write(QByteArray::number(pid) + "\nclustersim-gui\n" + QSysInfo::machineHostName().toUtf8() + "\n");
  lock.close();
  cs::sim::write_file_atomically(cs::gui::draft_path(id).toStdString(),
                                 R"({"path": "", "document": {"name": "crashed"}})");
  auto orphans = cs::gui::claim_orphaned_drafts();
  REQUIRE(orphans.size() == 1);
  CHECK(orphans[0].path == cs::gui::draft_path(id));
  CHECK(orphans[0].scenario == "untitled.json");
  // Claimed: a second process starting now does not offer it too.
  CHECK(cs::gui::claim_orphaned_drafts().empty());
  cs::gui::drop_draft(orphans[0]);
  CHECK(drafts.count() == 0);
}

TEST_CASE("Every shipped scenario fits a 1366x768 screen less a 40 px task bar", "[gui][slow]") {
  const QStringList files = QDir(CLUSTERSIM_SOURCE_DIR "/scenarios").entryList({"*.json"}, QDir::Files, QDir::Name);
  REQUIRE(files.contains("llama3-405b-h100x16384.json"));
  for (const QString& f : files) {
    MainWindow w;
    open_shown(w, shipped(f));  // the headline's numbers are part of the width
    REQUIRE(w.current_report() != nullptr);
    const QSize min = w.minimumSizeHint();
    INFO(f.toStdString() << ": minimum " << min.width() << "x" << min.height());
    CHECK(min.width() <= 1366);
    CHECK(min.height() <= 768 - 40);
    w.resize(1366, 728);
    CHECK(w.width() == 1366);
  }
}

TEST_CASE("Copy as CLI command puts a shell command on the clipboard that runs what the GUI shows", "[gui]") {
  MainWindow w;
  const QString file = shipped("llama3-70b-h100x64-ndr400.json");
  open_shown(w, file);
  // Edits of each kind: a knob (TP), a knob that removes a key (a new GPU drops the file's price for its
  // catalog price), a string that needs quoting.
  knob(w, "training.tensor_model_parallel_size")->setValue(4);
  auto* gpu = w.knobs()->findChild<QComboBox*>("cluster.gpu");
  REQUIRE(gpu != nullptr);
  gpu->setCurrentText("H200");
  REQUIRE(gpu->currentText() == "H200");
  emit gpu->activated(gpu->currentIndex());
  REQUIRE_FALSE(cs::gui::find_path(w.document().content(), "cluster.price_per_gpu_hour"));
  REQUIRE(w.apply_overrides({"name=\"it's a \\\"what-if\\\" run\""}));
  REQUIRE(w.wait_until_idle(120000));
  REQUIRE(w.validation_message().isEmpty());
  QClipboard* clipboard = QGuiApplication::clipboard();
  clipboard->clear();
  w.findChild<QAction*>("action_copy_cli")->trigger();
  const QString cmd = clipboard->text();
  INFO(cmd.toStdString());
  REQUIRE(cmd.startsWith("clustersim run " + file + " --set "));
  CHECK(cmd.contains("--set training.tensor_model_parallel_size=4"));
  CHECK(cmd.contains("--set cluster.price_per_gpu_hour=null"));
  CHECK_FALSE(cmd.contains("--set cluster.gpu=H200"));  // a JSON string: quoted
  CHECK(cmd.contains(R"(--set 'cluster.gpu="H200"')"));
  CHECK(cmd.contains(R"(--set 'name="it'\''s a \"what-if\" run"')"));

  // The shell runs it (the binary for "clustersim"): the report is the one on screen.
  QProcess sh;
  sh.start("sh", {"-c", QStringLiteral(CLUSTERSIM_BINARY) + cmd.mid(QStringLiteral("clustersim").size()) + " --json"});
  REQUIRE(sh.waitForFinished(120000));
  INFO(sh.readAllStandardError().toStdString());
  REQUIRE(sh.exitCode() == 0);
  const auto cli = nlohmann::json::parse(sh.readAllStandardOutput().toStdString());
  const auto gui = cs::sim::to_json(*w.current_report());
  CHECK(cli.at("step_time_s") == gui.at("step_time_s"));
  CHECK(cli.at("scenario") == "it's a \"what-if\" run");
  CHECK(cli.at("cost") == gui.at("cost"));

  // Nothing to name: an untitled document copies nothing and says why.
  MainWindow untitled;
  untitled.set_headless(true);
  QString why;
  CHECK(untitled.cli_command(&why).isEmpty());
  CHECK(why == "save the scenario to a file first: the command runs a file");
}

TEST_CASE("The CLI command's words are quoted for a POSIX shell", "[gui]") {
  CHECK(cs::gui::shell_quote("training.tensor_model_parallel_size=4") == "training.tensor_model_parallel_size=4");
  CHECK(cs::gui::shell_quote("/tmp/a b.json") == "'/tmp/a b.json'");
  CHECK(cs::gui::shell_quote("name=\"it's\"") == R"('name="it'\''s"')");
  CHECK(cs::gui::shell_quote("a$(rm -rf x)`b`") == "'a$(rm -rf x)`b`'");
  const nlohmann::json was = {{"cluster", {{"nodes", 8}, {"intra_node", "nvswitch"}}}, {"jobs", {{{"tp", 1}}, {{"tp", 2}}}}};
  const nlohmann::json now = {{"cluster", {{"nodes", 4}, {"topology_file", "t.dot"}}}, {"jobs", {{{"tp", 1}}, {{"tp", 4}}}}};
  CHECK(cs::gui::overrides_between(was, now) ==
        QStringList{"cluster.topology_file=\"t.dot\"", "cluster.nodes=4", "cluster.intra_node=null", "jobs.1.tp=4"});
}
