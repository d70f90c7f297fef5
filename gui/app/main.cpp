// clustersim-gui [SCENARIO.json] [--screenshot out.png] [--set path=value ...] [--view overview|timeline|sweep|run]
#include <cstdio>
#include <cstring>

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QMessageBox>
#include <QSaveFile>

#include "gui/app/main_window.hpp"

namespace {

constexpr int kExitInputError = 2;

int fail(const QString& message) {
  std::fprintf(stderr, "%s\n", qPrintable(message));
  return kExitInputError;
}

}  // namespace

int main(int argc, char** argv) {
  // A screenshot needs no display: pick Qt's offscreen platform unless the caller chose one.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--screenshot") == 0 && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
      qputenv("QT_QPA_PLATFORM", "offscreen");

  QApplication app(argc, argv);
  QApplication::setApplicationName("clustersim-gui");
  QApplication::setOrganizationName("clustersim");

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "What-if explorer for clustersim: change a knob, see step time, utilization, memory and cost move.");
  parser.addHelpOption();
  parser.addPositionalArgument("scenario", "scenario JSON file (the same files `clustersim run` reads)", "[SCENARIO.json]");
  const QCommandLineOption screenshot("screenshot", "render the window offscreen to FILE (PNG) and exit", "FILE");
  const QCommandLineOption set("set", "override a scenario value, e.g. training.tensor_model_parallel_size=4 (repeatable)", "PATH=VALUE");
  const QCommandLineOption view("view", "view to show: overview (default), timeline, sweep or run (the whole run: goodput)", "NAME", "overview");
  const QCommandLineOption size("size", "window size for --screenshot, WIDTHxHEIGHT", "WxH", "1600x1000");
  parser.addOptions({screenshot, set, view, size});
  parser.process(app);

  const QStringList args = parser.positionalArguments();
  if (args.size() > 1) return fail("clustersim-gui: expected at most one SCENARIO.json, got " + args.join(' '));
  const bool headless = parser.isSet(screenshot);

  cs::gui::MainWindow window;
  window.set_headless(headless);
  QString error;
  if (!args.isEmpty() && !window.open_file(args.front(), &error)) {
    if (headless) return fail(error);
    QMessageBox::warning(&window, "Cannot open scenario", error);
  } else if (args.isEmpty() && !headless && QFile::exists(cs::gui::MainWindow::recovery_path()) &&
             QMessageBox::question(&window, "Restore unsaved edits?",
                                   "clustersim-gui closed with unsaved edits last time. Restore them?") == QMessageBox::Yes) {
    window.restore_recovery();
  }
  if (!window.apply_overrides(parser.values(set), &error)) return fail(error);
  if (!window.set_view(parser.value(view))) return fail("clustersim-gui: --view " + parser.value(view) + ": expected overview, timeline, sweep or run");

  if (!headless) {
    window.show();
    return QApplication::exec();
  }

  const QStringList wh = parser.value(size).split('x');
  const int w = wh.size() == 2 ? wh[0].toInt() : 0, h = wh.size() == 2 ? wh[1].toInt() : 0;
  if (w < 200 || h < 200) return fail("clustersim-gui: --size " + parser.value(size) + ": expected WIDTHxHEIGHT, e.g. 1600x1000");
  window.resize(w, h);
  window.show();
  if (!window.wait_until_idle(10 * 60 * 1000)) return fail("clustersim-gui: timed out waiting for the simulation");
  if (!window.validation_message().isEmpty()) return fail(window.validation_message());
  QApplication::processEvents();
  const QString out = parser.value(screenshot);
  QSaveFile file(out);  // a temporary name, renamed on commit: never half a PNG
  if (!file.open(QIODevice::WriteOnly) || !window.grab().save(&file, "PNG") || !file.commit())
    return fail("clustersim-gui: " + out + ": cannot write the screenshot");
  std::printf("%s\n", qPrintable(out));
  return 0;
}
