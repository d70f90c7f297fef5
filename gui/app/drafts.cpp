#include "gui/app/drafts.hpp"

#include <algorithm>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QStandardPaths>
#include <QUuid>

#include "gui/app/main_window.hpp"
#include "sim/report/output_file.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::gui {

namespace {

QString& dir_override() {
  static QString dir;
  return dir;
}

QString app_data() { return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation); }

QString lock_path(const QString& id) { return drafts_dir() + "/draft-" + id + ".lock"; }

// The one recovery file of the versions before per-window drafts becomes an orphaned draft (renamed: a
// draft of its own id, with no lock).
void adopt_legacy_recovery() {
  if (!dir_override().isEmpty()) return;  // a private folder (tests) has no legacy file
  const QString legacy = app_data() + "/recovery.json";
  if (QFile::exists(legacy)) QFile::rename(legacy, draft_path(new_draft_id()));
}

QString scenario_of(const QString& draft) {
  try {
    const std::string path = sim::read_json_file(draft.toStdString()).value("path", std::string());
    return path.empty() ? QStringLiteral("untitled.json") : QString::fromStdString(path);
  } catch (const std::exception&) {
    return QFileInfo(draft).fileName();
  }
}

}  // namespace

QString drafts_dir() { return dir_override().isEmpty() ? app_data() + "/recovery" : dir_override(); }
void set_drafts_dir(const QString& dir) { dir_override() = dir; }
QString new_draft_id() { return QUuid::createUuid().toString(QUuid::WithoutBraces); }
QString draft_path(const QString& id) { return drafts_dir() + "/draft-" + id + ".json"; }

QString draft_id_of(const QString& path) {
  const QString name = QFileInfo(path).completeBaseName();
  return name.startsWith("draft-") ? name.mid(6) : name;
}

std::unique_ptr<QLockFile> lock_draft(const QString& id) {
  QDir().mkpath(drafts_dir());
  auto lock = std::make_unique<QLockFile>(lock_path(id));
  lock->setStaleLockTime(0);
  if (!lock->tryLock(0)) return nullptr;
  return lock;
}

std::vector<OrphanedDraft> claim_orphaned_drafts() {
  QDir().mkpath(drafts_dir());
  adopt_legacy_recovery();
  const QFileInfoList files = QDir(drafts_dir()).entryInfoList({"draft-*.json"}, QDir::Files, QDir::Time | QDir::Reversed);
  std::vector<OrphanedDraft> out;
  for (const QFileInfo& f : files) {
    auto lock = lock_draft(draft_id_of(f.filePath()));
    if (!lock) continue;  // its window is alive, in this process or another
    if (!f.exists()) continue;  // its window saved or discarded it meanwhile
    out.push_back({f.filePath(), scenario_of(f.filePath()), std::move(lock)});
  }
  return out;
}

void drop_draft(OrphanedDraft& d) {
  QFile::remove(d.path);
  d.lock.reset();  // unlocks: the lock file goes too
}

std::vector<MainWindow*> recover_drafts(const std::function<bool(const QString&)>& ask,
                                        const std::function<MainWindow*()>& window_for) {
  std::vector<MainWindow*> restored;
  for (OrphanedDraft& d : claim_orphaned_drafts()) {
    if (!ask(d.scenario)) {
      drop_draft(d);
      continue;
    }
    MainWindow* w = window_for();
    if (w->restore_recovery(d)) restored.push_back(w);
  }
  return restored;
}

}  // namespace cs::gui
