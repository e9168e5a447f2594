//! What memoir reads and writes of git's configuration: the identity git
//! would commit as, where hooks live, and memoir's merge drivers.

use super::error::{failed, GitError};
use super::Repo;
use std::path::{Path, PathBuf};

impl Repo {
    /// The identity git would commit as (`user.name` and `user.email`, or
    /// the `GIT_AUTHOR_*` variables git honours), as `Name <email>`.
    pub fn identity(&self) -> Option<String> {
        let (name, email) = self.author()?;
        Some(format!("{name} <{email}>"))
    }

    /// The author's name and email as git has them configured; `None` if
    /// either is missing or unreadable.
    pub(super) fn author(&self) -> Option<(String, String)> {
        let sig = self.repo.author()?.ok()?;
        Some((sig.name.to_string(), sig.email.to_string()))
    }

    /// Where the repository's hooks live: `core.hooksPath` (relative to the
    /// work tree, as git resolves it), else `<common dir>/hooks`.
    pub(crate) fn hooks_dir(&self) -> PathBuf {
        let configured = self
            .repo
            .config_snapshot()
            .string("core.hooksPath")
            .map(|v| v.to_string());
        match configured {
            Some(p) if Path::new(&p).is_absolute() => PathBuf::from(p),
            Some(p) => self.workdir.join(p),
            None => self.repo.common_dir().join("hooks"),
        }
    }

    /// `core.editor`, as git would run it.
    pub fn core_editor(&self) -> Option<String> {
        self.repo
            .config_snapshot()
            .string("core.editor")
            .map(|v| v.to_string())
            .filter(|v| !v.trim().is_empty())
    }

    /// The command `merge.<driver>.driver` names, as git would run it
    /// (any level of git's configuration).
    pub fn merge_driver(&self, driver: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(format!("merge.{driver}.driver").as_str())
            .map(|v| v.to_string())
    }

    /// Sets each driver's `merge.<driver>.name` and `.driver` in the
    /// repository's own config (`.git/config`), or with `None` removes its
    /// `[merge "<driver>"]` section, keeping everything else in the file as
    /// it was: all in one write, so that a failure changes none of them.
    /// Under git's own lock on the file (`config.lock`, as `git config`
    /// takes it): read, changed and written while git cannot write it, so
    /// neither loses the other's change. A lock held for longer than
    /// [`CONFIG_LOCK_WAIT`] (a git command killed mid-write leaves one, as
    /// git says when it finds it) refuses the change.
    pub(crate) fn set_merge_drivers(
        &self,
        drivers: &[(&str, Option<(&str, &str)>)],
    ) -> Result<(), GitError> {
        use std::io::Write;
        let path = self.repo.common_dir().join("config");
        let mut lock = gix::lock::File::acquire_to_update_resource(
            &path,
            gix::lock::acquire::Fail::AfterDurationWithBackoff(CONFIG_LOCK_WAIT),
            None,
            // The umask's permissions, as git's own config writes have.
            0,
        )
        .map_err(|e| {
            let held = path.with_file_name("config.lock");
            if !held.exists() {
                // Not another's lock: the folder refused the file.
                return GitError::gix("locking the repository's config", e);
            }
            GitError::Io {
                path: held,
                source: std::io::Error::new(
                    std::io::ErrorKind::WouldBlock,
                    "git's lock on the repository's config is held (by another git command; if none runs, remove it)",
                ),
            }
        })?;
        let mut file =
            gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
                .map_err(failed("reading the repository's config"))?;
        for &(driver, name_and_command) in drivers {
            match name_and_command {
                Some((name, command)) => {
                    for (key, value) in [("name", name), ("driver", command)] {
                        file.set_raw_value_by("merge", Some(driver.into()), key, value)
                            .map_err(|e| {
                                GitError::gix(format!("setting merge.{driver}.{key}"), e)
                            })?;
                    }
                }
                None => while file.remove_section("merge", Some(driver.into())).is_some() {},
            }
        }
        let mut out = Vec::new();
        file.write_to(&mut out).map_err(GitError::io(&path))?;
        // Synced before the rename: a crash mid-write must not leave git a
        // truncated config. (Dropped unrenamed on any error: the lock goes.)
        lock.write_all(&out).map_err(GitError::io(&path))?;
        lock.with_mut(|f| f.sync_all())
            .map_err(GitError::io(&path))?;
        lock.commit().map_err(|e| GitError::io(&path)(e.error))?;
        Ok(())
    }
}

/// How long a change of the repository's config waits for git's lock on
/// it: another writer's hold is a few milliseconds (sixteen concurrent
/// `hooks install`s take turns within it).
const CONFIG_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);
