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
//! The name is `.<file>.memoir-<pid>-<n>`: hidden, and what
//! `rebuild` looks for to remove the leftovers of a killed write.

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

/// The part of a temporary file's name before its pid: what a leftover's
/// name starts with (`rebuild` removes those).
pub(crate) fn temporary_prefix(file_name: &str) -> String {
    format!(".{file_name}.memoir-")
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
