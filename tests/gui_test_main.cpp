// The main of test_gui: the one QApplication of the process, then Catch's session. Its own library,
// compiled like tests/test_main.cpp without the project's warning flags: Catch's session code trips GCC 12's
// -Wrestrict (a false positive inside std::string::insert), which -Werror would turn into a failed build.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <QApplication>
#include <QCoreApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QStandardPaths::setTestModeEnabled(true);  // never touch the user's recovery file
  QCoreApplication::setOrganizationName("clustersim-test");  // nor the user's recent files (QSettings)
  QCoreApplication::setApplicationName("test_gui");
  // Each process its own settings: ctest runs the test cases in parallel processes, and one that opens a
  // file would otherwise put it at the top of another's recent files between its save and its check.
  QTemporaryDir settings;
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings.path());
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings.path());
  int qt_argc = 1;
  char name[] = "test_gui";
  char* qt_argv[] = {name, nullptr};
  QApplication app(qt_argc, qt_argv);
  return Catch::Session().run(argc, argv);
}
