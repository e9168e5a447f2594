//! Reading a store file safely: only a regular file, never through a link,
//! never more than a cap.
//!
//! Anything in a work tree can be a trap: a FIFO blocks an `open` for ever
//! (a pre-commit or prompt hook must never hang), a character device reads
//! without end, a symbolic link points outside the store. Every read of a
//! store file goes through [`read`]: the file is opened without following a
//! link and without blocking, checked on the open handle (no race between a
//! check and the open), and read up to its cap. So does every file a hook
//! or an importer reads outside the store (a transcript, a tool's folder);
//! a person's own configuration, which may be a link, through
//! [`read_following`].

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;

/// The largest log file memoir reads or appends to (256 MiB): a day of one
/// writer's entries, a bulk import's included; a larger one is never read
/// into memory, and an append that would pass it is refused.
pub const MAX_LOG_BYTES: u64 = 256 << 20;
/// The largest MEMORY.md memoir reads (4 MiB).
pub const MAX_INDEX_BYTES: u64 = 4 << 20;
/// The largest `memory/config.yaml` memoir reads (64 KiB).
pub const MAX_CONFIG_BYTES: u64 = 64 << 10;

/// Why a store file could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The path is a symbolic link.
    Link,
    /// Not a regular file (a folder, a FIFO, a device, a socket).
    NotRegular,
    /// Larger than the cap: the file's size.
    TooLarge(u64),
    /// The system said no.
    Io(io::Error),
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Link => {
                f.write_str("is a symbolic link; memoir never follows links in a store")
            }
            ReadError::NotRegular => f.write_str("is not a regular file"),
            ReadError::TooLarge(n) => write!(f, "is {n} bytes, more than memoir reads"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Opens `path` for reading if it is a regular file: `None` if it does not
/// exist. On unix the open neither follows a final link (`O_NOFOLLOW`) nor
/// blocks on a FIFO (`O_NONBLOCK`, harmless for a regular file).
pub fn open(path: &Path) -> Result<Option<(File, Metadata)>, ReadError> {
    open_with(path, false)
}

/// As [`read`], but a final link is followed to a regular file: for a
/// person's own configuration outside any store, which dotfile managers
/// link (`~/.claude/settings.json`), where a FIFO or a device must still
/// never hang or flood a read.
pub fn read_following(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let Some((file, meta)) = open_with(path, true)? else {
        return Ok(None);
    };
    if meta.len() > cap {
        return Err(ReadError::TooLarge(meta.len()));
    }
    read_capped(file, meta.len(), cap).map(Some)
}

/// [`open`], following a final link when `follow`.
fn open_with(path: &Path, follow: bool) -> Result<Option<(File, Metadata)>, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = rustix::fs::OFlags::NONBLOCK;
        if !follow {
            flags |= rustix::fs::OFlags::NOFOLLOW;
        }
        options.custom_flags(flags.bits() as i32);
    }
    #[cfg(not(unix))]
    let _ = follow;
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            // ELOOP from O_NOFOLLOW, or a platform without it: say "link".
            let link = !follow && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
            return Err(if link {
                ReadError::Link
            } else {
                ReadError::Io(e)
            });
        }
    };
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    Ok(Some((file, meta)))
}

/// The bytes of the regular file at `path`, at most `cap` of them (a larger
/// file is [`ReadError::TooLarge`], also one that grows past the cap while
/// it is read); `None` if it does not exist.
pub fn read(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let Some((file, meta)) = open(path)? else {
        return Ok(None);
    };
    if meta.len() > cap {
        return Err(ReadError::TooLarge(meta.len()));
    }
    read_capped(file, meta.len(), cap).map(Some)
}

/// Reads what is left of `file` (about `expected` bytes), at most `cap`.
pub fn read_capped(file: File, expected: u64, cap: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::with_capacity(expected.min(cap) as usize);
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn refuses_links_fifos_and_devices_and_caps_size() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.md");
        std::fs::write(&file, "hello").unwrap();
        assert_eq!(read(&file, 5).unwrap().unwrap(), b"hello");
        assert!(matches!(read(&file, 4), Err(ReadError::TooLarge(5))));
        let link = dir.path().join("l.md");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(matches!(read(&link, 100), Err(ReadError::Link)));
        let fifo = dir.path().join("p.md");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        // Would block for ever without O_NONBLOCK.
        assert!(matches!(read(&fifo, 100), Err(ReadError::NotRegular)));
        assert!(matches!(
            read(Path::new("/dev/zero"), 100),
            Err(ReadError::NotRegular)
        ));
        assert!(read(&dir.path().join("none"), 100).unwrap().is_none());
        // Following a link, to a regular file only.
        assert_eq!(read_following(&link, 100).unwrap().unwrap(), b"hello");
        let to_fifo = dir.path().join("lp.md");
        std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
        assert!(matches!(
            read_following(&to_fifo, 100),
            Err(ReadError::NotRegular)
        ));
    }
}
