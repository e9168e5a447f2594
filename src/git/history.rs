//! Walks of HEAD's history: memoir's versions (its consolidation commits),
//! the commit that first carried a log entry, a `git revert` of a version,
//! and the default base of `memoir diff`.

use super::error::{failed, GitError};
use super::Repo;
use crate::model::version_message::{Made, VersionMessage};
use std::collections::HashMap;

/// A commit memoir made of the store: a consolidation or a rollback.
#[derive(Debug, Clone)]
pub struct Version {
    /// The commit id.
    pub id: String,
    /// Commit time, seconds since the epoch.
    pub seconds: i64,
    /// `Name <email>` of the author.
    pub author: String,
    /// The message's first line.
    pub summary: String,
    /// The `Memoir-Consolidation` trailer: the consolidate event's id
    /// (none for a rollback).
    pub event: Option<String>,
    /// The `Memoir-Rollback` trailer: the revision rolled back to.
    pub rollback: Option<String>,
    /// The `Memoir-Counts` trailer, `name=n` pairs in their order
    /// (`added`, `changed`, `forgotten`, `conflicts`; a rollback's
    /// `restored`, `forgotten`).
    pub counts: Vec<(String, u64)>,
}

impl Repo {
    /// The commits reachable from HEAD, newest first; empty on an unborn
    /// branch.
    fn history(&self) -> Result<Vec<gix::ObjectId>, GitError> {
        let Ok(head) = self.repo.head_id() else {
            return Ok(Vec::new());
        };
        let walk = self
            .repo
            .rev_walk([head.detach()])
            .all()
            .map_err(failed("walking HEAD's history"))?;
        walk.map(|info| {
            info.map(|info| info.id)
                .map_err(failed("walking HEAD's history"))
        })
        .collect()
    }

    /// memoir's commits reachable from HEAD, newest first: those whose
    /// message carries a `Memoir-Consolidation:` or `Memoir-Rollback:` trailer.
    pub fn versions(&self) -> Result<Vec<Version>, GitError> {
        let mut out = Vec::new();
        for id in self.history()? {
            let commit = self
                .repo
                .find_commit(id)
                .map_err(failed("reading a commit"))?;
            let message = commit.message_raw_sloppy().to_string();
            let Some(parsed) = VersionMessage::parse(&message) else {
                continue;
            };
            let (event, rollback) = match parsed.made {
                Made::Consolidation { event } => (Some(event), None),
                Made::Rollback { target } => (None, Some(target)),
            };
            let author = commit
                .author()
                .map_err(failed("reading a commit's author"))?;
            out.push(Version {
                id: id.to_string(),
                seconds: commit
                    .time()
                    .map_err(failed("reading a commit's time"))?
                    .seconds,
                author: format!("{} <{}>", author.name, author.email),
                summary: parsed.summary,
                event,
                rollback,
                counts: parsed.counts,
            });
        }
        Ok(out)
    }

    /// For each needle, the oldest commit reachable from HEAD in which one
    /// of `paths` (work-tree-relative) contains it: the commit that carried
    /// it.
    pub(crate) fn first_commits(
        &self,
        paths: &[String],
        needles: &[String],
    ) -> Result<HashMap<String, String>, GitError> {
        let mut found = HashMap::new();
        for id in self.history()?.into_iter().rev() {
            if found.len() == needles.len() {
                break;
            }
            let tree = self
                .repo
                .find_commit(id)
                .map_err(failed("reading a commit"))?
                .tree()
                .map_err(failed("reading a commit's tree"))?;
            for path in paths {
                let Some(entry) = tree
                    .lookup_entry_by_path(path)
                    .map_err(failed("looking up a path in a commit"))?
                else {
                    continue;
                };
                let mut blob = self
                    .repo
                    .find_blob(entry.oid().to_owned())
                    .map_err(failed("reading a blob"))?;
                let data = blob.take_data();
                let text = String::from_utf8_lossy(&data);
                for n in needles {
                    if !found.contains_key(n) && text.contains(n.as_str()) {
                        found.insert(n.clone(), id.to_string());
                    }
                }
            }
        }
        Ok(found)
    }

    /// If HEAD is a `git revert` of a memoir consolidation or rollback
    /// commit, the reverted commit's id. (A revert deletes log entries,
    /// which are append-only: `memoir rollback` is the way back.)
    pub(crate) fn head_reverts_a_version(&self) -> Option<String> {
        let head = self.repo.head_commit().ok()?;
        let message = head.message_raw_sloppy().to_string();
        let reverted = message
            .lines()
            .find_map(|l| l.trim().strip_prefix("This reverts commit "))
            .map(|r| r.trim_end_matches('.').trim().to_string())?;
        let id = gix::ObjectId::from_hex(reverted.as_bytes()).ok()?;
        let commit = self.repo.find_commit(id).ok()?;
        let text = commit.message_raw_sloppy().to_string();
        VersionMessage::parse(&text).map(|_| reverted)
    }

    /// The merge base of two revisions (any revspec), as `git diff A...B`
    /// takes it: where B's side of history left A's; `None` when they share
    /// no history.
    pub(crate) fn merge_base_of(&self, a: &str, b: &str) -> Result<Option<String>, GitError> {
        let commit = |rev: &str| -> Result<gix::ObjectId, GitError> {
            let not_a = |expected| {
                move |e: gix::Error| GitError::Revision {
                    rev: rev.to_string(),
                    expected,
                    source: Box::new(e),
                }
            };
            Ok(self
                .repo
                .rev_parse_single(rev)
                .map_err(not_a("revision"))?
                .object()
                .map_err(failed("reading the revision's object"))?
                .peel_to_commit()
                .map_err(not_a("commit"))?
                .id)
        };
        let (x, y) = (commit(a)?, commit(b)?);
        let base = self
            .repo
            .merge_base(x, y)
            .map_err(failed("finding the merge base"))?;
        Ok(base.map(|id| id.detach().to_string()))
    }

    /// The default base of `memoir diff`: the merge base of HEAD and its
    /// upstream, else HEAD; `None` on an unborn branch.
    pub(crate) fn default_base(&self) -> Result<Option<String>, GitError> {
        let Ok(head) = self.repo.head_id() else {
            return Ok(None);
        };
        let upstream = self
            .repo
            .rev_parse_single("@{upstream}")
            .ok()
            .map(|id| id.detach());
        let base = match upstream {
            Some(up) => self
                .repo
                .merge_base(head.detach(), up)
                .map_err(failed("finding the merge base with the upstream"))?
                .map_or(head.detach(), |id| id.detach()),
            None => head.detach(),
        };
        Ok(Some(base.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use crate::git::testing::{Scratch, EMAIL, NAME, SECONDS};

    /// Commits everything, as `message`, at `seconds` (author and
    /// committer); returns the commit's id.
    fn commit_at(s: &Scratch, message: &str, seconds: i64) -> String {
        s.git(&["add", "-A"]);
        let date = format!("{seconds} +0000");
        let out = s
            .command(&["commit", "-q", "--allow-empty", "-m", message])
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        s.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    fn consolidation(summary: &str, event: &str, counts: &str) -> String {
        // A body line that looks like a trailer: the trailer is the last.
        format!(
            "{summary}\n\n+ project/a\nMemoir-Counts: a line of the body\n\n\
             Memoir-Consolidation: {event}\nMemoir-Counts: {counts}\n"
        )
    }

    #[test]
    fn versions_are_the_consolidation_commits_newest_first() {
        let s = Scratch::new();
        assert!(s.repo().versions().expect("unborn").is_empty());
        s.write("memory/a.md", "one");
        commit_at(&s, "start", SECONDS);
        s.write("memory/a.md", "two");
        let first = commit_at(
            &s,
            &consolidation("memoir: consolidate (1 added)", "ev-1", "added=1 changed=0"),
            SECONDS + 60,
        );
        s.write("other", "a hand commit");
        commit_at(
            &s,
            "hand edit\n\nMemoir-Counts: not a version\n",
            SECONDS + 120,
        );
        s.write("memory/a.md", "three");
        let second = commit_at(
            &s,
            &consolidation(
                "memoir: consolidate (1 changed)",
                "ev-2",
                "added=0 changed=1",
            ),
            SECONDS + 180,
        );
        let versions = s.repo().versions().expect("versions");
        let got: Vec<_> = versions
            .iter()
            .map(|v| {
                (
                    v.id.as_str(),
                    v.seconds,
                    v.author.as_str(),
                    v.summary.as_str(),
                    v.event.as_deref().unwrap_or(""),
                    v.counts
                        .iter()
                        .map(|(k, n)| format!("{k}={n}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                )
            })
            .collect();
        let author = format!("{NAME} <{EMAIL}>");
        assert_eq!(
            got,
            [
                (
                    second.as_str(),
                    SECONDS + 180,
                    author.as_str(),
                    "memoir: consolidate (1 changed)",
                    "ev-2",
                    "added=0 changed=1".to_string()
                ),
                (
                    first.as_str(),
                    SECONDS + 60,
                    author.as_str(),
                    "memoir: consolidate (1 added)",
                    "ev-1",
                    "added=1 changed=0".to_string()
                ),
            ]
        );
        // The times are git's own.
        let git_times = s.git(&["log", "--format=%H %ct"]);
        for v in &versions {
            assert!(
                git_times.contains(&format!("{} {}", v.id, v.seconds)),
                "{git_times}"
            );
        }
    }

    #[test]
    fn a_git_revert_of_a_version_is_found() {
        let s = Scratch::new();
        s.write("memory/log/w.md", "one\n");
        commit_at(&s, "start", SECONDS);
        s.write("memory/log/w.md", "one\ntwo\n");
        let version = commit_at(
            &s,
            &consolidation("memoir: consolidate", "ev", "added=1"),
            SECONDS,
        );
        assert_eq!(s.repo().head_reverts_a_version(), None);
        s.git(&["revert", "--no-edit", "HEAD"]);
        assert_eq!(s.repo().head_reverts_a_version(), Some(version));
        // The commit that first carried each entry, oldest first.
        let firsts = s
            .repo()
            .first_commits(&["memory/log/w.md".into()], &["one".into(), "two".into()])
            .expect("walk");
        let start = s.git(&["rev-parse", "HEAD~2"]);
        assert_eq!(firsts.get("one").map(String::as_str), Some(start.trim()));
        assert_eq!(
            firsts.get("two"),
            s.repo().head_reverts_a_version().as_ref()
        );
    }
}
