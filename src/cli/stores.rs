//! The two stores a person works with: the repository's, shared with the
//! team, and their own personal store for `user`-scope memories, shared
//! by all of their projects and never committed to any of them.
//!
//! The personal store is a memoir store in a git repository of its own at
//! `MEMOIR_USER_STORE`, else `$XDG_DATA_HOME/memoir/user`, else
//! `~/.local/share/memoir/user`, created by the first `remember user/…`.
//! A repository whose config says `user_store: shared` keeps `user/` as
//! any scope. `user/` memories already in a repository stay readable
//! there (`status` says how many).
//!
//! It holds a person's private memories, so it is made private, as ssh and
//! gpg make theirs: its folder (and each folder made above it) 0700, and
//! while a command works in a store whose folder is private, every file
//! and folder the process creates is 0600 and 0700 ([`Private`]).

use super::{error::CliError, App};
use memoir::model::config::UserStore;
use memoir::model::key::Key;
use memoir::store::Store;
use std::path::PathBuf;

pub use memoir::store::Origin;

/// Where the personal store is (or would be), from the environment:
/// `None` without HOME. A relative MEMOIR_USER_STORE (or HOME) is a usage
/// error: it would make a personal store inside each project it is used
/// in, which `consolidate` would then commit. A relative XDG_DATA_HOME is
/// ignored, as the XDG base directory specification says.
pub fn personal_path() -> Result<Option<PathBuf>, CliError> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let absolute = |name: &str, path: PathBuf| {
        if path.is_absolute() {
            Ok(path)
        } else {
            Err(CliError::Usage(format!(
                "{name} must be an absolute path, not `{}`: a relative one would put a personal store inside each project",
                path.display()
            )))
        }
    };
    if let Some(path) = var("MEMOIR_USER_STORE") {
        return absolute("MEMOIR_USER_STORE", path).map(Some);
    }
    if let Some(data) = var("XDG_DATA_HOME").filter(|d| d.is_absolute()) {
        return Ok(Some(data.join("memoir/user")));
    }
    var("HOME")
        .map(|h| absolute("HOME", h).map(|h| h.join(".local/share/memoir/user")))
        .transpose()
}

/// While held, what this process creates is its owner's alone: files
/// 0600, folders 0700 (the umask gains 077); dropped, the umask is what
/// it was. The umask is the process's, so every writer under it is
/// covered (logs, views, local state, git's objects) without a mode at
/// each of them.
pub struct Private {
    /// The umask before.
    #[cfg(unix)]
    before: rustix::fs::Mode,
}

impl Private {
    /// Makes what the process creates from now on private.
    pub fn enter() -> Private {
        #[cfg(unix)]
        {
            use rustix::fs::Mode;
            let before = rustix::process::umask(Mode::from_raw_mode(0o077));
            // A stricter umask the person set stays as strict.
            rustix::process::umask(before | Mode::from_raw_mode(0o077));
            Private { before }
        }
        #[cfg(not(unix))]
        Private {}
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        #[cfg(unix)]
        rustix::process::umask(self.before);
    }
}

/// Whether only its owner may enter `dir` (no group or other bits): a
/// store there is written private.
pub fn is_private(dir: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o077 == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        false
    }
}

impl App {
    /// The personal store beside `repo`: `None` when the repository shares
    /// `user/`, when `repo` is the personal store itself, or when it does
    /// not exist and `create` is false.
    pub fn personal_store(&self, repo: &Store, create: bool) -> Result<Option<Store>, CliError> {
        match self.personal_place(repo)? {
            Some(path) => self.personal_at(&path, create),
            None => Ok(None),
        }
    }

    /// Where the personal store beside `repo` is (whether it exists or
    /// not): `None` when `user/` stays in the repository, which shares it,
    /// is the personal store itself, or has no HOME to put one in.
    pub fn personal_place(&self, repo: &Store) -> Result<Option<PathBuf>, CliError> {
        if repo.config.user_store == UserStore::Shared {
            return Ok(None);
        }
        let Some(path) = personal_path()? else {
            return Ok(None);
        };
        let same = |a: &std::path::Path, b: &std::path::Path| {
            std::fs::canonicalize(a)
                .ok()
                .is_some_and(|a| std::fs::canonicalize(b).ok() == Some(a))
        };
        if same(&path, &repo.root) {
            return Ok(None);
        }
        Ok(Some(path))
    }

    /// The personal store alone, outside any repository's store: where a
    /// `user/…` memory goes and what a search reads (none if it does not
    /// exist and `create` is false).
    fn personal_alone(&self, create: bool) -> Result<Option<Store>, CliError> {
        match personal_path()? {
            Some(path) => self.personal_at(&path, create),
            None => Ok(None),
        }
    }

    /// The personal store at `path`, created there if asked.
    pub fn personal_at(
        &self,
        path: &std::path::Path,
        create: bool,
    ) -> Result<Option<Store>, CliError> {
        let path = path.to_path_buf();
        if !memoir::store::is_store(&path) {
            if !create {
                return Ok(None);
            }
            // Private from its first folder on, those made above it too.
            self.keep_private();
            let made = memoir::store::init_standalone(&path).and_then(|_| make_private(&path));
            made.map_err(|e| CliError::Input {
                input: path.display().to_string(),
                message: format!(
                    "cannot create the personal store for user/ memories ({}); set MEMOIR_USER_STORE to a writable folder",
                    e.to_string().rsplit(": ").next().unwrap_or_default()
                ),
            })?;
        }
        Ok(Some(self.open(&path)?))
    }

    /// The store a key belongs to: the personal store for `user/…` (created
    /// when `create`), unless the repository holds that memory already or
    /// shares `user/`.
    pub fn store_for(&self, key: &Key, create: bool) -> Result<(Store, Origin), CliError> {
        let repo = match self.store() {
            Ok(repo) => repo,
            // Outside any store, a memory about the person still has
            // the person's own.
            Err(e) if key.scope == "user" && not_found(&e) => {
                return match self.personal_alone(create)? {
                    Some(personal) => Ok((personal, Origin::Personal)),
                    None => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        if in_repo(&repo, key) {
            return Ok((repo, Origin::Repo));
        }
        match self.personal_store(&repo, create)? {
            Some(personal) => Ok((personal, Origin::Personal)),
            None => Ok((repo, Origin::Repo)),
        }
    }

    /// The stores a search reads: the repository's, then the personal one
    /// if there is one. A personal store that cannot be opened beside the
    /// repository's is a warning, not the search's failure: a prompt hook
    /// must still inject what the team knows.
    pub fn stores(&self) -> Result<Vec<(Store, Origin)>, CliError> {
        let repo = match self.store() {
            Ok(repo) => repo,
            // Outside any store: the personal one alone, if there is one.
            Err(e) if not_found(&e) => {
                return match self.personal_alone(false)? {
                    Some(personal) => Ok(vec![(personal, Origin::Personal)]),
                    None => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        let personal = match self.personal_place(&repo)? {
            Some(path) => self.personal_at(&path, false).unwrap_or_else(|e| {
                super::output::warn(
                    self.quiet(),
                    &format!(
                        "{}; {}",
                        e.message(),
                        memoir::ops::recall::stores::WITHOUT_PERSONAL
                    ),
                );
                None
            }),
            None => None,
        };
        let mut out = vec![(repo, Origin::Repo)];
        out.extend(personal.map(|p| (p, Origin::Personal)));
        Ok(out)
    }
}

/// The personal store's folder made 0700, even where it was there before
/// (an empty folder MEMOIR_USER_STORE names).
fn make_private(path: &std::path::Path) -> Result<(), memoir::store::StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(
            |source| memoir::store::StoreError::Io {
                path: path.to_path_buf(),
                source,
            },
        )?;
    }
    let _ = path;
    Ok(())
}

/// Whether the memory at `key` is the repository's whatever the personal
/// store: any scope but `user`, and a `user/` memory the repository holds
/// already (it stays where its readers find it).
pub fn in_repo(repo: &Store, key: &Key) -> bool {
    key.scope != "user" || repo.path(&key.rel_path()).exists()
}

/// No store was found from here (not some other failure to open one).
fn not_found(e: &CliError) -> bool {
    matches!(e, CliError::Store(memoir::store::StoreError::NotFound(_)))
}
