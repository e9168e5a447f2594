//! A folder opened once whose files are stat'ed by name.
//!
//! A large store's queries and `git status`-like scans are mostly the
//! kernel's stat of every memory file. By name in an open folder, the
//! kernel resolves one component per file instead of walking the whole
//! path, and listing it makes nothing per entry but its name (std's
//! `DirEntry` also keeps a handle on the listing and builds paths).

use crate::model::stamp::Stamp;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::Path;

/// An open folder.
pub(crate) struct Folder {
    #[cfg(unix)]
    fd: rustix::fd::OwnedFd,
    #[cfg(not(unix))]
    path: std::path::PathBuf,
}

impl Folder {
    /// The folder at `path`, if it can be opened as one.
    pub(crate) fn open(path: &Path) -> Option<Folder> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let fd = rustix::fs::open(path, flags, Mode::empty()).ok()?;
            Some(Folder { fd })
        }
        #[cfg(not(unix))]
        path.is_dir().then(|| Folder {
            path: path.to_path_buf(),
        })
    }

    /// The folder at `path` if it is one itself, not a link to one: a
    /// folder files are removed from (a link would have them removed
    /// wherever it points).
    pub(crate) fn open_no_link(path: &Path) -> Option<Folder> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::open(path, flags, Mode::empty()).ok()?;
            Some(Folder { fd })
        }
        #[cfg(not(unix))]
        std::fs::symlink_metadata(path)
            .is_ok_and(|m| m.is_dir())
            .then(|| Folder {
                path: path.to_path_buf(),
            })
    }

    /// Whether the entry `name` is a regular file (a link not followed).
    pub(crate) fn is_file(&self, name: &OsStr) -> bool {
        #[cfg(unix)]
        {
            self.stat(name).is_ok_and(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
            })
        }
        #[cfg(not(unix))]
        std::fs::symlink_metadata(self.path.join(name)).is_ok_and(|m| m.is_file())
    }

    /// Removes the entry `name`, a file (never a folder), in this folder
    /// whatever its path names now.
    pub(crate) fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        #[cfg(unix)]
        {
            Ok(rustix::fs::unlinkat(
                &self.fd,
                name,
                rustix::fs::AtFlags::empty(),
            )?)
        }
        #[cfg(not(unix))]
        std::fs::remove_file(self.path.join(name))
    }

    /// The names of its entries, `.` and `..` excluded; an entry that
    /// cannot be read is left out, as `read_dir`'s users here always did.
    pub(crate) fn names(&self) -> impl Iterator<Item = OsString> + '_ {
        #[cfg(unix)]
        let names = rustix::fs::Dir::read_from(&self.fd)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| {
                use std::os::unix::ffi::OsStringExt;
                OsString::from_vec(e.file_name().to_bytes().to_vec())
            });
        #[cfg(not(unix))]
        let names = std::fs::read_dir(&self.path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name());
        names.filter(|n| n != "." && n != "..")
    }

    /// The stat data of the entry `name`, a link not followed.
    #[cfg(unix)]
    pub(crate) fn stat(&self, name: impl rustix::path::Arg) -> io::Result<rustix::fs::Stat> {
        Ok(rustix::fs::statat(
            &self.fd,
            name,
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    /// The stamp (size and modification time) of the entry `name`, a link
    /// not followed.
    pub(crate) fn stamp(&self, name: &OsStr) -> io::Result<Stamp> {
        #[cfg(unix)]
        {
            let st = self.stat(name)?;
            // The field types differ between unix targets.
            #[allow(clippy::unnecessary_cast)]
            Ok(Stamp::from_parts(
                st.st_size as u64,
                st.st_mtime as i64,
                st.st_mtime_nsec as u32,
            ))
        }
        #[cfg(not(unix))]
        Ok(Stamp::of(&std::fs::symlink_metadata(self.path.join(name))?))
    }
}
