//! Git hooks and merge drivers, installed per clone.
//!
//! Each hook is a one-line shim between marker lines, put right after the
//! hook's shebang so it runs first and leaves the rest of an existing hook
//! (and its exit status) alone; uninstalling removes exactly those lines.
//! The shim's stdin is /dev/null, so a chained hook still reads what git
//! gives it (post-rewrite's list of rewritten commits).

use crate::git::GitError;
use std::path::{Path, PathBuf};

/// The hooks memoir installs.
pub const HOOKS: [&str; 3] = ["pre-commit", "post-merge", "post-rewrite"];
const START: &str =
    "# memoir:start (installed by `memoir hooks install`; `memoir hooks uninstall` removes it)";
const END: &str = "# memoir:end";

/// The merge drivers memoir configures: (driver, description, command).
pub const DRIVERS: [(&str, &str, &str); 2] = [
    (
        "memoir",
        "memoir memory files",
        "memoir merge-driver memory %O %A %B %P",
    ),
    (
        "memoir-index",
        "memoir MEMORY.md",
        "memoir merge-driver index %O %A %B %P",
    ),
];

/// Why hooks could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum HooksError {
    /// git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A hook file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The hook file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// A hook file's text (`None`: there is none). Only a regular file is read
/// (a FIFO would hang the install) and written through: a link may point
/// at a script shared with other repositories, which memoir must not edit.
fn read_hook(path: &Path) -> Result<Option<String>, HooksError> {
    let refuse = |why: &str| HooksError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(format!(
            "{why}; memoir will not edit it: add `memoir hook <name> \"$@\"` to it by hand"
        )),
    };
    match crate::fs::safe_file::read(path, 1 << 20) {
        // A compiled hook, or a script in another encoding: memoir's lines
        // in front of it would break it, and a lossy read would not give
        // it back on uninstall.
        Ok(Some(bytes)) if bytes.contains(&0) => Err(refuse("is not a text script")),
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| refuse("is not a text script (not UTF-8)")),
        Ok(None) => Ok(None),
        Err(crate::fs::safe_file::ReadError::Link) => Err(refuse("is a symbolic link")),
        Err(crate::fs::safe_file::ReadError::NotRegular) => Err(refuse("is not a regular file")),
        Err(crate::fs::safe_file::ReadError::TooLarge(_)) => Err(refuse("is over 1 MiB")),
        Err(crate::fs::safe_file::ReadError::Io(e)) => Err(io(path)(e)),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> HooksError + '_ {
    move |source| HooksError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn shim(hook: &str) -> String {
    // Without memoir on PATH (a GUI client's environment, say) the hook is
    // skipped with a word, rather than blocking every commit.
    format!(
        "{START}\nif command -v memoir >/dev/null 2>&1; then memoir hook {hook} \"$@\" </dev/null || exit $?; \
         else echo \"memoir: not on PATH; its {hook} hook is skipped\" >&2; fi\n{END}\n"
    )
}

/// Removes memoir's block from a hook's text.
fn without_block(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end();
        if l == START {
            inside = true;
        } else if inside && l == END {
            inside = false;
        } else if !inside {
            out.push_str(line);
        }
    }
    out
}

/// One thing `install` or `uninstall` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// A hook file's path, or a merge driver's name.
    pub target: String,
    /// What happened to it.
    pub action: Action,
}

/// What happened to a hook or a merge driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A new hook file holding the shim.
    Installed,
    /// The hook held the shim already.
    AlreadyInstalled,
    /// The shim put before an existing hook's own lines.
    Chained,
    /// A hook file that held only the shim, deleted.
    Removed,
    /// The shim taken out of a hook with lines of its own.
    Trimmed,
    /// `merge.<driver>.driver` set to this command.
    Configured(String),
    /// The `merge.<driver>` section removed.
    Unconfigured,
}

impl Action {
    /// Its name in JSON.
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::Installed => "installed",
            Action::AlreadyInstalled => "already-installed",
            Action::Chained => "chained",
            Action::Removed => "removed",
            Action::Trimmed => "trimmed",
            Action::Configured(_) => "configured",
            Action::Unconfigured => "unconfigured",
        }
    }
}

/// The line `memoir hooks` prints for it.
impl std::fmt::Display for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = &self.target;
        match &self.action {
            Action::Installed => write!(f, "{t}: installed"),
            Action::AlreadyInstalled => write!(f, "{t}: already installed"),
            Action::Chained => write!(f, "{t}: chained before the existing hook"),
            Action::Removed => write!(f, "{t}: removed"),
            Action::Trimmed => write!(f, "{t}: memoir's lines removed, the rest kept"),
            Action::Configured(command) => write!(f, "git config merge.{t}.driver \"{command}\""),
            Action::Unconfigured => write!(f, "git config --remove-section merge.{t}"),
        }
    }
}

/// What a clone has of memoir's set-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// Each hook and whether its file holds memoir's shim.
    pub hooks: Vec<(&'static str, bool)>,
    /// Each merge driver and the command git has for it, if any.
    pub drivers: Vec<(&'static str, Option<String>)>,
}

impl Setup {
    /// Every hook installed and every driver configured as memoir would.
    pub fn complete(&self) -> bool {
        self.hooks.iter().all(|(_, ok)| *ok)
            && self
                .drivers
                .iter()
                .zip(DRIVERS)
                .all(|((_, have), (_, _, want))| have.as_deref() == Some(want))
    }
}

/// Which hooks and merge drivers the store's clone has.
pub fn setup(store: &crate::store::Store) -> Result<Setup, HooksError> {
    let repo = store.repo();
    let hooks_dir = repo.hooks_dir();
    let mut hooks = Vec::new();
    for hook in HOOKS {
        let text = read_hook(&hooks_dir.join(hook)).unwrap_or(None);
        hooks.push((
            hook,
            text.is_some_and(|t| t.lines().any(|l| l.trim_end() == START)),
        ));
    }
    let drivers = DRIVERS
        .iter()
        .map(|(d, _, _)| (*d, repo.merge_driver(d)))
        .collect();
    Ok(Setup { hooks, drivers })
}

/// Installs the hooks and merge drivers; returns what was done.
pub fn install(store: &crate::store::Store) -> Result<Vec<Done>, HooksError> {
    let repo = store.repo();
    // The config first, in one write: git's lock on it is what another
    // command may hold, and then nothing is installed at all; a hook is
    // never installed without its merge drivers (a merge of memory files
    // would be a text merge).
    let drivers: Vec<_> = DRIVERS
        .iter()
        .map(|&(driver, name, command)| (driver, Some((name, command))))
        .collect();
    repo.set_merge_drivers(&drivers)?;
    let configured = DRIVERS.iter().map(|(driver, _, command)| Done {
        target: driver.to_string(),
        action: Action::Configured(command.to_string()),
    });
    let hooks = repo.hooks_dir();
    std::fs::create_dir_all(&hooks).map_err(io(&hooks))?;
    let mut done = Vec::new();
    for hook in HOOKS {
        let path = hooks.join(hook);
        let existing = read_hook(&path)?;
        let base = existing.as_deref().map(without_block).unwrap_or_default();
        let text = if base.trim().is_empty() {
            format!("#!/bin/sh\n{}", shim(hook))
        } else if base.starts_with("#!") {
            let (first, rest) = base.split_once('\n').unwrap_or((&base, ""));
            format!("{first}\n{}{rest}", shim(hook))
        } else {
            format!("{}{base}", shim(hook))
        };
        if existing.as_deref() == Some(text.as_str()) {
            done.push(Done {
                target: path.display().to_string(),
                action: Action::AlreadyInstalled,
            });
            continue;
        }
        // Replaced whole, never through a link, never cut short by a
        // crash (a chained hook is the team's own script).
        crate::fs::replace::replace(
            &path,
            text.as_bytes(),
            crate::fs::replace::Durability::Synced,
        )
        .map_err(io(&path))?;
        make_executable(&path)?;
        let action = match existing {
            Some(e) if !without_block(&e).trim().is_empty() => Action::Chained,
            _ => Action::Installed,
        };
        done.push(Done {
            target: path.display().to_string(),
            action,
        });
    }
    // Listed after the hooks, in the order `hooks install` prints.
    done.extend(configured);
    Ok(done)
}

/// Removes memoir's hook blocks (and hooks that held nothing else) and its
/// merge driver configuration.
pub fn uninstall(store: &crate::store::Store) -> Result<Vec<Done>, HooksError> {
    let repo = store.repo();
    // The hooks first, then the config in one write: whatever fails
    // leaves merge drivers without hooks (harmless), never a hook without
    // its drivers, as `install` never does either.
    let hooks = repo.hooks_dir();
    let mut done = Vec::new();
    for hook in HOOKS {
        let path = hooks.join(hook);
        let Some(existing) = read_hook(&path)? else {
            continue;
        };
        if !existing.lines().any(|l| l.trim_end() == START) {
            continue;
        }
        let rest = without_block(&existing);
        let only_shebang = rest
            .lines()
            .all(|l| l.trim().is_empty() || l.starts_with("#!"));
        if only_shebang {
            std::fs::remove_file(&path).map_err(io(&path))?;
            done.push(Done {
                target: path.display().to_string(),
                action: Action::Removed,
            });
        } else {
            crate::fs::replace::replace(
                &path,
                rest.as_bytes(),
                crate::fs::replace::Durability::Synced,
            )
            .map_err(io(&path))?;
            done.push(Done {
                target: path.display().to_string(),
                action: Action::Trimmed,
            });
        }
    }
    let drivers: Vec<_> = DRIVERS
        .iter()
        .map(|&(driver, _, _)| (driver, None))
        .collect();
    repo.set_merge_drivers(&drivers)?;
    done.extend(DRIVERS.iter().map(|(driver, _, _)| Done {
        target: driver.to_string(),
        action: Action::Unconfigured,
    }));
    Ok(done)
}

/// Store paths (store-relative) that the index at `index_path` stages
/// differently from HEAD: what a commit would change of the store.
pub fn staged(store: &crate::store::Store, index_path: &Path) -> Result<Vec<String>, GitError> {
    let repo = store.repo();
    let prefix = store.prefix();
    let staged = repo.staged_paths(
        index_path,
        &format!("{prefix}{}", crate::render::memory_md::MEMORY_MD),
        &format!("{prefix}memory/"),
    )?;
    Ok(staged
        .into_iter()
        .filter_map(|p| p.strip_prefix(prefix).map(str::to_string))
        .collect())
}

/// Of these store paths, those staged differently from the work tree.
pub fn partly_staged(
    store: &crate::store::Store,
    index_path: &Path,
    paths: &[String],
) -> Result<Vec<String>, GitError> {
    let repo = store.repo();
    let prefix = store.prefix();
    let full: Vec<String> = paths.iter().map(|p| format!("{prefix}{p}")).collect();
    Ok(repo
        .partly_staged(index_path, &full)?
        .into_iter()
        .filter_map(|p| p.strip_prefix(prefix).map(str::to_string))
        .collect())
}

/// Stages these store paths, as they are in the work tree, into the index
/// at `index_path`.
pub fn stage(
    store: &crate::store::Store,
    index_path: &Path,
    paths: &[String],
) -> Result<(), GitError> {
    let repo = store.repo();
    let prefix = store.prefix();
    let full: Vec<String> = paths.iter().map(|p| format!("{prefix}{p}")).collect();
    repo.stage(index_path, &full)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), HooksError> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path).map_err(io(path))?.permissions();
    perms.set_mode(perms.mode() | 0o755);
    std::fs::set_permissions(path, perms).map_err(io(path))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), HooksError> {
    Ok(())
}
