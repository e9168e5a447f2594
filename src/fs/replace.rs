//! Replacing a file whole: the one way memoir rewrites a file.
//!
//! The new content is written to a temporary file in the same folder and
//! renamed over the old one, so a reader sees the old file or the new one,
//! never half of either. The temporary file is the trap: at a name anyone
//! can guess (a fixed suffix, the pid alone), a planted link would have
//! the write land on its target, outside the folder. So its name carries
//! the pid and a counter, and it is created exclusively (`O_EXCL`, and
//! `O_NOFOLLOW` on unix): whatever already sits at a name is never opened,
//! the next name is tried. It is removed if anything fails before the
//! rename.
//!
//! The name is `.<file>.memoir-<pid>-<n>`, beside the file: hidden, and
//! what [`leftovers`] recognises. A write killed before its rename
//! (`kill -9`, a crash) leaves its temporary file there, where `git add
//! -A` would pick it up in a work tree (a killed save of the persistent
//! index leaves one as big as the index). `check` reports those whose
//! writer is gone; `rebuild` (under the store lock, and so at the end of
//! every `redact`) asks this module to remove them from each folder
//! memoir replaces files in, and from the clone's local state those whose
//! writer is gone (no lock covers it).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many names are tried before giving up: each one taken means a file
/// is already there, which only a leftover or a planted trap explains.
const ATTEMPTS: u64 = 64;

/// Distinguishes this process's temporary files from each other (two
/// threads replacing the same file, or one after another).
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether a replacement must survive a crash of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// The data and the rename are synced to disk (fsync of the file, then
    /// of the folder): a file nothing else can rebuild.
    Synced,
    /// Left to the kernel: a file that is rebuilt from elsewhere (a view
    /// from the logs, a cache), where an fsync per write costs too much.
    Cached,
}

/// The part of a temporary file's name before its pid.
fn temporary_prefix(file_name: &str) -> String {
    format!(".{file_name}.memoir-")
}

/// The name of the file that the temporary file `name` was to replace,
/// if `name` is one: `.<file>.memoir-<pid>-<n>`, or `.<file>.memoir-<pid>`
/// as memoir named them before the counter.
pub(crate) fn temporary_target(name: &str) -> Option<&str> {
    let (file, tail) = name.strip_prefix('.')?.rsplit_once(".memoir-")?;
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let numbered = match tail.split_once('-') {
        Some((pid, n)) => number(pid) && number(n),
        None => number(tail),
    };
    (numbered && !file.is_empty()).then_some(file)
}

/// Whose leftovers [`remove_leftovers`] removes from a folder.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Leftovers<'a> {
    /// Those of every file in it: a folder only memoir writes in.
    All,
    /// Those of the file of this name alone: a folder shared with others
    /// (the work tree's root, where MEMORY.md is).
    Of(&'a str),
}

/// Which writers' temporary files count as leftovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writers {
    /// Every writer's: the caller holds the lock every replacement in the
    /// folder takes, so no live one owns a temporary file.
    Any,
    /// Only those of writers no longer running (the pid in the name is no
    /// process now): a folder no lock covers, where a live write may be
    /// about to rename its file. A pid reused since keeps its leftover
    /// until that process ends; where processes cannot be asked (not
    /// unix), none counts.
    Gone,
}

/// The names of the temporary files in `folder` that replacements left
/// when they were killed before their rename ([`replace`] makes them
/// beside the file it replaces, so that is where they are): regular files
/// named as [`replace`] names them, of `whose` files and `writers`;
/// nothing through a link (neither `folder` nor a file in it). A folder
/// that cannot be read has none.
pub(crate) fn leftovers(folder: &Path, whose: Leftovers<'_>, writers: Writers) -> Vec<OsString> {
    let Some(open) = crate::fs::folder::Folder::open_no_link(folder) else {
        return Vec::new();
    };
    open.names()
        .filter(|name| {
            let Some(target) = name.to_str().and_then(temporary_target) else {
                return false;
            };
            let wanted = match whose {
                Leftovers::All => true,
                Leftovers::Of(file) => target == file,
            };
            let counts = match writers {
                Writers::Any => true,
                Writers::Gone => name
                    .to_str()
                    .and_then(temporary_pid)
                    .is_some_and(writer_gone),
            };
            wanted && counts && open.is_file(name)
        })
        .collect()
}

/// Removes the [`leftovers`] of `folder`; returns how many went.
pub(crate) fn remove_leftovers(folder: &Path, whose: Leftovers<'_>, writers: Writers) -> usize {
    let Some(open) = crate::fs::folder::Folder::open_no_link(folder) else {
        return 0;
    };
    let names = leftovers(folder, whose, writers);
    names
        .iter()
        .filter(|name| open.remove_file(name).is_ok())
        .count()
}

/// The pid of the writer whose temporary file `name` is, if it is one.
fn temporary_pid(name: &str) -> Option<u32> {
    temporary_target(name)?;
    let tail = name.rsplit_once(".memoir-")?.1;
    tail.split('-').next()?.parse().ok()
}

/// Is process `pid` no longer running?
fn writer_gone(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        // EPERM: it runs, as someone else.
        rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// Replaces the file at `path` with `bytes`.
pub(crate) fn replace(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    replace_with(path, durability, |w| w.write_all(bytes))
}

/// Replaces the file at `path` with what `write` writes (buffered).
pub(crate) fn replace_with(
    path: &Path,
    durability: Durability,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let (dir, name) = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => (dir, name.to_string_lossy()),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not the path of a file",
            ))
        }
    };
    let (file, tmp) = create_temporary(dir, &name, mode_of(path))?;
    let done = (|| {
        let mut w = BufWriter::new(file);
        write(&mut w)?;
        let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        if durability == Durability::Synced {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if durability == Durability::Synced {
        // The rename itself is only durable once the folder is.
        let folder = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let _ = File::open(folder).and_then(|d| d.sync_all());
    }
    Ok(())
}

/// Creates a new temporary file beside `name` in `dir`, exclusively.
fn create_temporary(dir: &Path, name: &str, mode: Option<u32>) -> io::Result<(File, PathBuf)> {
    let prefix = temporary_prefix(name);
    let pid = std::process::id();
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!("{prefix}{pid}-{n}"));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // O_EXCL alone already refuses a final link; O_NOFOLLOW says
            // so on every system, whatever it makes of O_EXCL.
            options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
            if let Some(mode) = mode {
                options.mode(mode);
            }
        }
        #[cfg(not(unix))]
        let _ = mode;
        match options.open(&tmp) {
            Ok(file) => return Ok((file, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// The permissions of the regular file at `path`, if there is one: a
/// replacement keeps a file someone made private private (never widened:
/// the umask still applies). A link's own bits (0777) mean nothing.
fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::symlink_metadata(path).ok()?;
        meta.is_file().then(|| meta.permissions().mode() & 0o777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temporaries(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".memoir-"))
            .collect()
    }

    #[test]
    fn replaces_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.md");
        replace(&path, b"one", Durability::Cached).unwrap();
        replace(&path, b"two", Durability::Synced).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert!(temporaries(dir.path()).is_empty());
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.md");
        replace(&path, b"old", Durability::Cached).unwrap();
        let failed = replace_with(&path, Durability::Cached, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("stopped"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert!(temporaries(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn never_writes_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "untouched").unwrap();
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("f.md");
        // Every name this process would try next, and the old fixed one.
        let next = COUNTER.load(Ordering::Relaxed);
        let pid = std::process::id();
        let mut planted = vec![folder.join(".f.md.memoir-tmp")];
        planted.extend((next..next + 8).map(|n| folder.join(format!(".f.md.memoir-{pid}-{n}"))));
        for link in &planted {
            std::os::unix::fs::symlink(&outside, link).unwrap();
        }
        replace(&path, b"mine", Durability::Cached).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"mine");
        assert_eq!(std::fs::read(&outside).unwrap(), b"untouched");
        for link in &planted {
            assert!(std::fs::symlink_metadata(link).unwrap().is_symlink());
        }
    }

    #[test]
    fn a_temporary_files_name_says_which_file_it_replaces() {
        assert_eq!(temporary_target(".a.md.memoir-12-0"), Some("a.md"));
        assert_eq!(
            temporary_target(".MEMORY.md.memoir-7-31"),
            Some("MEMORY.md")
        );
        // Named before the counter, views and redact's rewrite.
        assert_eq!(temporary_target(".a.md.memoir-12"), Some("a.md"));
        assert_eq!(temporary_target(".redact.memoir-12"), Some("redact"));
        assert_eq!(
            temporary_target(".x.md.memoir-1.memoir-2-3"),
            Some("x.md.memoir-1")
        );
        for not in [
            "a.md",
            ".gitkeep",
            "a.md.memoir-12-0",
            "..memoir-12-0",
            ".a.md.memoir-",
            ".a.md.memoir-12-",
            ".a.md.memoir-x-0",
            ".a.md.memoir-12-0-1",
            ".a.md.memoir-tmp",
        ] {
            assert_eq!(temporary_target(not), None, "{not}");
        }
    }

    #[test]
    fn removes_the_leftovers_beside_the_files_it_is_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let put = |name: &str| std::fs::write(dir.path().join(name), name).unwrap();
        for name in [
            "a.md",
            ".a.md.memoir-1-0",
            ".MEMORY.md.memoir-2-1",
            ".b.md.memoir-3",
            ".team-notes",
        ] {
            put(name);
        }
        assert_eq!(
            remove_leftovers(dir.path(), Leftovers::Of("MEMORY.md"), Writers::Any),
            1
        );
        assert_eq!(temporaries(dir.path()).len(), 2);
        assert_eq!(
            remove_leftovers(dir.path(), Leftovers::All, Writers::Any),
            2
        );
        assert!(temporaries(dir.path()).is_empty());
        for kept in ["a.md", ".team-notes"] {
            assert!(dir.path().join(kept).exists(), "{kept}");
        }
        assert_eq!(
            remove_leftovers(&dir.path().join("none"), Leftovers::All, Writers::Any),
            0
        );
    }

    #[cfg(unix)]
    #[test]
    fn with_no_lock_only_the_leftovers_of_writers_gone_count() {
        let dir = tempfile::tempdir().unwrap();
        // A writer that has exited (and been waited for): its pid is no
        // process now.
        let gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        let mut gone = gone;
        gone.wait().unwrap();
        let live = format!(".index.bin.memoir-{}-0", std::process::id());
        let dead = format!(".index.bin.memoir-{gone_pid}-3");
        for name in [&live, &dead] {
            std::fs::write(dir.path().join(name), "half").unwrap();
        }
        let names = |w| {
            leftovers(dir.path(), Leftovers::All, w)
                .into_iter()
                .map(|n| n.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(Writers::Gone), vec![dead.clone()]);
        assert_eq!(names(Writers::Any).len(), 2);
        assert_eq!(
            remove_leftovers(dir.path(), Leftovers::All, Writers::Gone),
            1
        );
        assert!(dir.path().join(&live).exists());
        assert!(!dir.path().join(&dead).exists());
    }

    #[cfg(unix)]
    #[test]
    fn never_removes_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join(".a.md.memoir-1-0"), "theirs").unwrap();
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        // A linked folder, and a leftover's name on a link and a folder.
        let linked = dir.path().join("linked");
        std::os::unix::fs::symlink(&outside, &linked).unwrap();
        std::os::unix::fs::symlink(
            outside.join(".a.md.memoir-1-0"),
            folder.join(".b.md.memoir-1-0"),
        )
        .unwrap();
        std::fs::create_dir(folder.join(".c.md.memoir-1-0")).unwrap();
        assert_eq!(remove_leftovers(&linked, Leftovers::All, Writers::Any), 0);
        assert_eq!(remove_leftovers(&folder, Leftovers::All, Writers::Any), 0);
        assert!(outside.join(".a.md.memoir-1-0").exists());
        assert!(std::fs::symlink_metadata(folder.join(".b.md.memoir-1-0")).is_ok());
        assert!(folder.join(".c.md.memoir-1-0").is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn keeps_a_private_files_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.md");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        replace(&path, b"new", Durability::Cached).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
