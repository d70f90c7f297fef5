// clustersim-gui [SCENARIO.json] [--screenshot out.png] [--set path=value ...] [--view overview|timeline|sweep|run]
//               [--size WxH] [--palette system|light|dark] [--raw-json]
#include <cstdio>
#include <cstring>

#include <QApplication>
#include <QPalette>
#include <QScreen>
#include <QStyle>
#include <QStyleFactory>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QSaveFile>
#include <QAction>

#include <algorithm>
#include <utility>
#include <vector>

#include "gui/app/drafts.hpp"
#include "gui/app/main_window.hpp"

namespace {

constexpr int kExitInputError = 2;

int fail(const QString& message) {
  std::fprintf(stderr, "%s\n", qPrintable(message));
  return kExitInputError;
}

// A dark palette for --palette dark (a desktop without a dark theme of its own, or a screenshot).
QPalette dark_palette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x31), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6), mid(0x6b, 0x6e, 0x74);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2c));
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(0x35, 0x37, 0x3c));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::Mid, mid);
  p.setColor(QPalette::PlaceholderText, QColor(0xa0, 0xa3, 0xa8));
  p.setColor(QPalette::Highlight, QColor(0x3b, 0x6e, 0xc4));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) p.setColor(QPalette::Disabled, role, mid);
  return p;
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
  const QCommandLineOption palette("palette", "colours: system (default: the desktop's, dark or light), light or dark", "NAME", "system");
  const QCommandLineOption raw("raw-json", "open with the scenario JSON editor shown");
  parser.addOptions({screenshot, set, view, size, palette, raw});
  parser.process(app);

  const QStringList args = parser.positionalArguments();
  if (args.size() > 1) return fail("clustersim-gui: expected at most one SCENARIO.json, got " + args.join(' '));
  const bool headless = parser.isSet(screenshot);

  const QString pal = parser.value(palette);
  if (pal == "dark") {
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setPalette(dark_palette());
  } else if (pal == "light") {
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setPalette(QApplication::style()->standardPalette());
  } else if (pal != "system") {
    return fail("clustersim-gui: --palette " + pal + ": expected system, light or dark");
  }

  cs::gui::MainWindow window;
  window.set_headless(headless);
  QString error;
  if (!args.isEmpty() && !window.open_file(args.front(), &error)) {
    if (headless) return fail(error);
    QMessageBox::warning(&window, "Cannot open scenario", error);
  }
  // Each window that closed with unsaved edits left a draft: each is offered once. Yes: the edits come back,
  // marked unsaved, in a window of their own (this one first, when it opened no file). No: the draft goes,
  // so the question does not return.
  std::vector<cs::gui::MainWindow*> windows{&window};
  if (!headless) {
    bool first_free = args.isEmpty();
    const auto restored = cs::gui::recover_drafts(
        [&](const QString& scenario) {
          return QMessageBox::question(&window, "Restore unsaved edits?",
                                       "A clustersim-gui window closed with unsaved edits to " + scenario +
                                           ". Restore them?") == QMessageBox::Yes;
        },
        [&]() {
          if (std::exchange(first_free, false)) return &window;
          auto* w = new cs::gui::MainWindow;
          w->setAttribute(Qt::WA_DeleteOnClose);  // the first window lives on main's stack
          windows.push_back(w);
          return w;
        });
    // A new window whose draft could not be read is not shown: it goes.
    std::erase_if(windows, [&](cs::gui::MainWindow* w) {
      const bool unused = w != &window && std::find(restored.begin(), restored.end(), w) == restored.end();
      if (unused) delete w;
      return unused;
    });
  }
  if (!window.apply_overrides(parser.values(set), &error)) return fail(error);
  if (!window.set_view(parser.value(view))) return fail("clustersim-gui: --view " + parser.value(view) + ": expected overview, timeline, sweep or run");

  if (parser.isSet(raw)) window.findChild<QAction*>("action_raw_json")->trigger();

  if (!headless) {
    // Open at the screen's available size (a 1366x768 laptop gets all of it, a large screen 1600x1000).
    for (cs::gui::MainWindow* w : windows) {
      if (const QScreen* screen = QApplication::primaryScreen()) {
        const QRect avail = screen->availableGeometry();
        w->resize(std::min(avail.width(), 1600), std::min(avail.height(), 1000));
        if (avail.width() <= 1600 || avail.height() <= 1000) w->setWindowState(Qt::WindowMaximized);
      }
      w->show();
    }
    const int rc = QApplication::exec();
    return rc;  // the window's destructor stops any simulation still running, so the process ends now
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
