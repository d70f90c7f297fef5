#pragma once
// Crash recovery, one draft per window. Each window that has unsaved edits autosaves them to its own
// draft, <dir>/draft-<id>.json ({"path": the scenario file or "", "document": the JSON}), written whole or
// not at all (sim::write_file_atomically: a temporary beside it, renamed over it), and holds the lock
// <dir>/draft-<id>.lock (QLockFile) while it lives. A draft whose lock no live process holds is an orphan:
// its window went without a clean close (a crash, a kill). A starting process claims the orphans (takes
// their locks, so two processes starting together never offer the same one) and offers each once; a
// restored draft goes to a window of its own, which keeps the draft's id, so each window recovers its
// own edits and never another's. A clean close (Save, or Discard at the prompt) removes the draft.
//
// Before drafts were per window, one file <app data>/recovery.json held the last autosave of whichever
// window wrote last; a process that finds one takes it as an orphaned draft.
#include <functional>
#include <memory>
#include <vector>

#include <QLockFile>
#include <QString>


namespace cs::gui {

class MainWindow;

// The folder of the drafts: <QStandardPaths::AppLocalDataLocation>/recovery, unless set (tests).
QString drafts_dir();
void set_drafts_dir(const QString& dir);  // empty: back to the default
QString new_draft_id();
QString draft_path(const QString& id);  // <dir>/draft-<id>.json
QString draft_id_of(const QString& path);  // the id in a draft's file name

// Takes the lock of draft `id` for this process: null when a live process (this one included) holds it.
// Qt's stale-lock age is off (setStaleLockTime(0)): only a dead holder makes a lock stale, never its age.
std::unique_ptr<QLockFile> lock_draft(const QString& id);

// An orphaned draft, claimed: its lock is held until it is restored (the window takes the lock) or dropped.
struct OrphanedDraft {
  QString path;
  QString scenario;  // the file it was edited from, or "untitled" (for the question)
  std::unique_ptr<QLockFile> lock;
};
std::vector<OrphanedDraft> claim_orphaned_drafts();  // oldest first
void drop_draft(OrphanedDraft& d);                   // "No": the draft and its lock go

// Offers each orphaned draft once through `ask` (the scenario it was edited from; true: restore it) and
// restores each accepted one into a window of its own from `window_for` (called once per restored draft);
// a declined draft is deleted. Returns the windows that restored a draft, in the drafts' order.
std::vector<MainWindow*> recover_drafts(const std::function<bool(const QString& scenario)>& ask,
                                        const std::function<MainWindow*()>& window_for);

}  // namespace cs::gui
