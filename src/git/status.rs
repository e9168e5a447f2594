//! Which store files differ from HEAD in the work tree, as `git status`
//! finds them: git's index trusted where its stat data vouches for a file,
//! the file read and hashed where it does not.

use super::error::{failed, GitError};
use super::Repo;
use gix::bstr::ByteSlice;
use gix::index::Entry;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;

/// Which file names of the store's folder are the store's.
type Keep<'a> = &'a (dyn Fn(&str) -> bool + Sync);

/// The two sides of an unmerged file, ours and theirs (see
/// [`Repo::unmerged_sides`]).
pub type Sides = (Option<Vec<u8>>, Option<Vec<u8>>);

impl Repo {
    /// Work-tree-relative paths of the store's files that differ from HEAD:
    /// `file` and the files under `dir` (ending in `/`) that are new,
    /// changed or gone, what `git add -A` would stage of them; sorted.
    /// `keep` says by file name which files are the store's (an
    /// interrupted write's temporary files are not).
    ///
    /// Like `git status`, it trusts git's index: a file whose stat data
    /// still matches its entry, which is not racily clean, has the entry's
    /// blob and is not read. Whether the entries are HEAD's blobs is one
    /// comparison: the id of the tree the index would write for `dir`
    /// against HEAD's; only if they differ (something staged) are HEAD's
    /// files listed one by one.
    pub fn changed_paths(
        &self,
        file: &str,
        dir: &str,
        keep: Keep<'_>,
    ) -> Result<Vec<String>, GitError> {
        let tree = self.head_tree()?;
        let index = self.index_or_empty()?;
        let range = index
            .prefixed_entries_range(dir.as_bytes().as_bstr())
            .unwrap_or(0..0);
        let store = StoreEntries {
            file,
            dir,
            index: &index,
            entries: &index.entries()[range],
            file_entry: index.entry_by_path(file.as_bytes().as_bstr()),
        };
        store.refuse_sparse()?;
        let Scan {
            listed,
            fresh,
            head,
        } = self.scan(tree.as_ref(), &store, keep)?;
        let compare = Compare {
            workdir: &self.workdir,
            hash: self.repo.object_hash(),
            head: &head,
        };
        let mut out = compare.folder(&store, &listed, &fresh)?;
        // What HEAD has and neither the index nor the folder has.
        for path in head.listed_paths() {
            if listed.binary_search_by(|p| p.as_str().cmp(path)).is_err()
                && index.entry_by_path(path.as_bytes().as_bstr()).is_none()
            {
                out.push(path.to_string());
            }
        }
        let fresh_file = store.file_entry.is_some_and(|e| {
            fresh_entries(&self.workdir, &index, std::slice::from_ref(e)) == [true]
        });
        if compare.differs(file, store.file_entry, fresh_file)? {
            out.push(file.to_string());
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Is a merge in progress (`MERGE_HEAD`)? A rebase, cherry-pick or
    /// revert stops for a conflict too, but only a merge is finished with
    /// `git commit`, the step memoir tells the user.
    pub fn merging(&self) -> bool {
        self.repo.git_dir().join("MERGE_HEAD").exists()
    }

    /// Work-tree-relative paths git's index holds unmerged (a conflict git
    /// left for `git add`), among `file` and the files under `dir`; sorted.
    pub fn unmerged_paths(&self, file: &str, dir: &str) -> Result<Vec<String>, GitError> {
        let index = self.index_or_empty()?;
        let mut out: Vec<String> = index
            .entries()
            .iter()
            .filter(|e| e.stage_raw() != 0)
            .map(|e| e.path(&index).to_str_lossy().into_owned())
            .filter(|p| p == file || p.starts_with(dir))
            .collect();
        out.dedup();
        Ok(out)
    }

    /// The two sides git's index holds of the unmerged `path`
    /// (work-tree-relative): ours (stage 2) and theirs (stage 3), each
    /// `None` where that side has no file (a deletion).
    pub fn unmerged_sides(&self, path: &str) -> Result<Sides, GitError> {
        let index = self.index_or_empty()?;
        let mut sides: Sides = (None, None);
        for e in index.entries() {
            let stage = e.stage_raw();
            if (stage == 2 || stage == 3) && e.path(&index) == path.as_bytes() {
                let mut blob = self
                    .repo
                    .find_blob(e.id)
                    .map_err(failed("reading a blob"))?;
                let data = Some(blob.take_data());
                match stage {
                    2 => sides.0 = data,
                    _ => sides.1 = data,
                }
            }
        }
        Ok(sides)
    }

    /// git's index; an empty one if there is none yet.
    fn index_or_empty(&self) -> Result<gix::index::File, GitError> {
        let path = self.repo.index_path();
        let hash = self.repo.object_hash();
        if path.exists() {
            gix::index::File::at(&path, hash, false, Default::default())
                .map_err(failed("reading git's index"))
        } else {
            Ok(gix::index::File::from_state(
                gix::index::State::new(hash),
                path,
            ))
        }
    }

    /// Lists the folder, checks the stat data of the index's entries and
    /// finds HEAD's blobs, at once: one lstat per entry is most of this on
    /// a large store, so it is spread over the cores, as `git status` does.
    fn scan(
        &self,
        tree: Option<&gix::Tree<'_>>,
        store: &StoreEntries<'_>,
        keep: Keep<'_>,
    ) -> Result<Scan, GitError> {
        let workdir = self.workdir.as_path();
        let entries = store.entries;
        let threads = crate::parallel::worker_threads();
        let chunk = entries.len().div_ceil(threads).max(1024);
        let (listed, fresh, head) = std::thread::scope(|scope| {
            let listing = scope.spawn(|| list_files(workdir, store.dir, keep));
            let workers: Vec<_> = entries
                .chunks(chunk)
                .map(|part| scope.spawn(|| fresh_entries(workdir, store.index, part)))
                .collect();
            let head = HeadFiles::of(self, tree, store);
            // A worker that panicked vouches for nothing: its files are read.
            let fresh: Vec<bool> = workers
                .into_iter()
                .zip(entries.chunks(chunk))
                .flat_map(|(w, part)| w.join().unwrap_or_else(|_| vec![false; part.len()]))
                .collect();
            let listed = listing.join().unwrap_or_else(|_| {
                Err(GitError::Io {
                    path: workdir.join(store.dir),
                    source: std::io::Error::other("the thread listing the folder failed"),
                })
            });
            (listed, fresh, head)
        });
        Ok(Scan {
            listed: listed?,
            fresh,
            head: head?,
        })
    }
}

/// The store's entries in git's index: its file `file` and the folder `dir`.
struct StoreEntries<'i> {
    /// The store's MEMORY.md, work-tree-relative.
    file: &'i str,
    /// The store's folder, work-tree-relative, ending in `/`.
    dir: &'i str,
    index: &'i gix::index::File,
    /// The entries under `dir`, in the index's order.
    entries: &'i [Entry],
    /// The entry of `file`.
    file_entry: Option<&'i Entry>,
}

impl StoreEntries<'_> {
    /// A sparse checkout leaves such files out of the work tree: committed
    /// from what is there, they would be deleted.
    fn refuse_sparse(&self) -> Result<(), GitError> {
        let sparse = gix::index::entry::Flags::SKIP_WORKTREE;
        match self
            .entries
            .iter()
            .chain(self.file_entry)
            .find(|e| e.flags.contains(sparse))
        {
            Some(e) => Err(GitError::Sparse {
                path: e.path(self.index).to_string(),
                dir: self.dir.to_string(),
            }),
            None => Ok(()),
        }
    }
}

/// What [`Repo::scan`] found.
struct Scan {
    /// The store's files in the folder, sorted by bytes.
    listed: Vec<String>,
    /// Whether each of the folder's index entries (in its order) is vouched
    /// for by its stat data.
    fresh: Vec<bool>,
    /// HEAD's blobs.
    head: HeadFiles,
}

/// Compares files of the work tree with HEAD's blobs.
struct Compare<'a> {
    workdir: &'a Path,
    /// The repository's object hash.
    hash: gix::hash::Kind,
    /// HEAD's blobs.
    head: &'a HeadFiles,
}

impl Compare<'_> {
    /// Is the file at `path` (its index entry, and whether the entry's stat
    /// data vouches for it) other than HEAD's blob?
    fn differs(&self, path: &str, entry: Option<&Entry>, fresh: bool) -> Result<bool, GitError> {
        use crate::fs::safe_file::{self, ReadError};
        let head_id = self.head.id(path, entry);
        if let Some(e) = entry.filter(|_| fresh) {
            return Ok(head_id != Some(e.id));
        }
        let abs = self.workdir.join(path);
        match safe_file::read(&abs, safe_file::MAX_LOG_BYTES) {
            Ok(Some(bytes)) => {
                let id = gix::objs::compute_hash(self.hash, gix::objs::Kind::Blob, &bytes)
                    .map_err(|e| GitError::gix(format!("hashing {path}"), e))?;
                Ok(head_id != Some(id))
            }
            // No file there as far as a commit goes: a link or a FIFO is
            // never read (a commit leaves it out).
            Ok(None) | Err(ReadError::Link | ReadError::NotRegular) => Ok(head_id.is_some()),
            Err(ReadError::TooLarge(size)) => Err(GitError::TooLarge {
                path: abs.display().to_string(),
                size,
            }),
            Err(ReadError::Io(source)) => Err(GitError::Io { path: abs, source }),
        }
    }

    /// The changed files of the folder: its sorted listing walked beside
    /// the index's sorted entries (`fresh` saying which of them their stat
    /// data vouches for).
    fn folder(
        &self,
        store: &StoreEntries<'_>,
        listed: &[String],
        fresh: &[bool],
    ) -> Result<Vec<String>, GitError> {
        let (entries, index) = (store.entries, store.index);
        let mut out = Vec::new();
        let (mut l, mut i) = (0, 0);
        while l < listed.len() || i < entries.len() {
            // A conflict's stages are no version of the file: as if unstaged.
            if entries.get(i).is_some_and(|e| e.stage_raw() != 0) {
                i += 1;
                continue;
            }
            let order = match (listed.get(l), entries.get(i)) {
                (Some(path), Some(e)) => path.as_bytes().cmp(e.path(index).as_bytes()),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match order {
                Ordering::Less => {
                    if self.differs(&listed[l], None, false)? {
                        out.push(listed[l].clone());
                    }
                    l += 1;
                }
                Ordering::Equal => {
                    if self.differs(&listed[l], Some(&entries[i]), fresh[i])? {
                        out.push(listed[l].clone());
                    }
                    l += 1;
                    i += 1;
                }
                Ordering::Greater => {
                    // In the index, not in the folder: gone, if HEAD has it.
                    let path = entries[i].path(index).to_str_lossy();
                    if self.head.id(&path, Some(&entries[i])).is_some() {
                        out.push(path.into_owned());
                    }
                    i += 1;
                }
            }
        }
        Ok(out)
    }
}

/// Which of the index's `entries` (in its order) git's index vouches for:
/// not racily clean, and the file's stat data as the entry has it.
// The casts are of `stat` fields, whose types differ between unix targets.
#[allow(clippy::unnecessary_cast)]
fn fresh_entries(workdir: &Path, index: &gix::index::File, entries: &[Entry]) -> Vec<bool> {
    let options = gix::index::entry::stat::Options::default();
    let racy = |e: &Entry| e.stat.is_racy(index.timestamp(), options);
    #[cfg(unix)]
    {
        use crate::fs::folder::Folder;
        // Each file by its name in its folder, opened once for the run of
        // entries in it.
        let mut folder: Option<(&[u8], Option<Folder>)> = None;
        entries
            .iter()
            .map(|e| {
                if racy(e) {
                    return false;
                }
                let path = e.path(index).as_bytes();
                let (parent, name) = match path.rfind_byte(b'/') {
                    Some(at) => (&path[..at], &path[at + 1..]),
                    None => (&path[..0], path),
                };
                if folder.as_ref().map(|(p, _)| *p) != Some(parent) {
                    let dir = workdir.join(parent.to_str_lossy().as_ref());
                    folder = Some((parent, Folder::open(&dir)));
                }
                let Some((_, Some(open))) = &folder else {
                    return false;
                };
                let Ok(st) = open.stat(name) else {
                    return false;
                };
                // As gix's `Stat::from_fs` has it (git keeps 32 bits of each).
                let time = |secs: i64, nsecs: u64| gix::index::entry::stat::Time {
                    secs: u32::try_from(secs).unwrap_or_default(),
                    nsecs: nsecs as u32,
                };
                let stat = gix::index::entry::Stat {
                    mtime: time(st.st_mtime as i64, st.st_mtime_nsec as u64),
                    ctime: time(st.st_ctime as i64, st.st_ctime_nsec as u64),
                    dev: st.st_dev as u32,
                    ino: st.st_ino as u32,
                    uid: st.st_uid,
                    gid: st.st_gid,
                    size: st.st_size as u32,
                };
                e.stat.matches(&stat, options)
            })
            .collect()
    }
    #[cfg(not(unix))]
    entries
        .iter()
        .map(|e| {
            !racy(e)
                && gix::index::fs::Metadata::from_path_no_follow(
                    &workdir.join(&*e.path(index).to_str_lossy()),
                )
                .ok()
                .and_then(|meta| gix::index::entry::Stat::from_fs(&meta).ok())
                .is_some_and(|st| e.stat.matches(&st, options))
        })
        .collect()
}

/// Work-tree-relative paths of the files under `dir` whose name `keep`
/// takes, sorted as git's index sorts them (by bytes). Symbolic links are
/// not followed, nor listed.
fn list_files(workdir: &Path, dir: &str, keep: Keep<'_>) -> Result<Vec<String>, GitError> {
    let mut files = Vec::new();
    let root = workdir.join(dir);
    for entry in walkdir::WalkDir::new(&root).follow_links(false) {
        let entry = match entry {
            Ok(entry) => entry,
            // Gone since its folder was listed (or no folder at all): what
            // is gone is found gone from the index's side.
            Err(e) if e.io_error().map(|e| e.kind()) == Some(std::io::ErrorKind::NotFound) => {
                continue
            }
            Err(e) => {
                let path = e.path().unwrap_or(&root).to_path_buf();
                let source = e
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("a symbolic link loop"));
                return Err(GitError::Io { path, source });
            }
        };
        if entry.file_type().is_file() && keep(&entry.file_name().to_string_lossy()) {
            if let Ok(rel) = entry.path().strip_prefix(workdir) {
                files.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort_unstable();
    Ok(files)
}

/// HEAD's blob ids for the store's paths: the index's own where its tree
/// for the folder (and its entry for the file) is HEAD's, else HEAD's
/// files listed one by one.
enum HeadFiles {
    /// No commit yet: HEAD has no file.
    Unborn,
    /// The index's stage-0 entries are exactly HEAD's files.
    Index,
    /// HEAD's files, where the index differs from them.
    Listed(HashMap<String, gix::ObjectId>),
}

impl HeadFiles {
    /// HEAD's blobs (HEAD's `tree`, `None` when unborn) for the store's
    /// paths, found from the index where it can be trusted to be HEAD.
    fn of(
        repo: &Repo,
        tree: Option<&gix::Tree<'_>>,
        store: &StoreEntries<'_>,
    ) -> Result<HeadFiles, GitError> {
        let Some(tree) = tree else {
            return Ok(HeadFiles::Unborn);
        };
        let head_id = |path: &str, tree_kind: bool| -> Result<Option<gix::ObjectId>, GitError> {
            Ok(tree
                .lookup_entry_by_path(path)
                .map_err(failed("looking up a path in HEAD"))?
                .filter(|e| e.mode().is_tree() == tree_kind)
                .map(|e| e.oid().to_owned()))
        };
        let entries = store.entries;
        let same_file = head_id(store.file, false)? == store.file_entry.map(|e| e.id);
        let index_dir = if entries.is_empty() {
            None
        } else {
            super::tree::index_tree_id(repo.repo.object_hash(), store.index, entries, store.dir)
        };
        let head_dir = head_id(store.dir.trim_end_matches('/'), true)?;
        if same_file && (entries.is_empty() || index_dir.is_some()) && index_dir == head_dir {
            return Ok(HeadFiles::Index);
        }
        Ok(HeadFiles::Listed(
            repo.tree_files(tree, store.file, store.dir)?,
        ))
    }

    /// HEAD's blob id at `path`, whose index entry is `entry`.
    fn id(&self, path: &str, entry: Option<&Entry>) -> Option<gix::ObjectId> {
        match self {
            HeadFiles::Unborn => None,
            HeadFiles::Index => entry.filter(|e| e.stage_raw() == 0).map(|e| e.id),
            HeadFiles::Listed(files) => files.get(path).copied(),
        }
    }

    /// The paths HEAD has, where they were listed one by one.
    fn listed_paths(&self) -> impl Iterator<Item = &str> {
        let files = match self {
            HeadFiles::Listed(files) => Some(files),
            _ => None,
        };
        files.into_iter().flat_map(|f| f.keys().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use crate::git::testing::Scratch;
    use std::collections::BTreeSet;

    /// Temporary files of an interrupted write are not the store's.
    fn keep(name: &str) -> bool {
        !name.starts_with('.') || name == ".gitkeep"
    }

    /// The store's paths `git status` lists (staged, unstaged or
    /// untracked), each of its files on its own, no rename pairs.
    fn git_status(s: &Scratch) -> BTreeSet<String> {
        let out = s.git(&[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ]);
        out.split('\0')
            .filter_map(|entry| entry.get(3..))
            .filter(|path| *path == "MEMORY.md" || path.starts_with("memory/"))
            .filter(|path| keep(path.rsplit('/').next().unwrap_or(path)))
            .map(str::to_string)
            .collect()
    }

    fn changed(s: &Scratch) -> BTreeSet<String> {
        let repo = s.repo();
        let paths = repo
            .changed_paths("MEMORY.md", "memory/", &keep)
            .expect("changed paths");
        let set: BTreeSet<String> = paths.iter().cloned().collect();
        assert_eq!(set.len(), paths.len(), "no path twice: {paths:?}");
        assert!(paths.is_sorted(), "sorted: {paths:?}");
        set
    }

    /// Sets the modification time of every file of the work tree an hour
    /// back, so that the index written after it vouches for them (not
    /// racily clean): the comparison then trusts stat data, as it does on
    /// a real store, and reads only what was touched since.
    fn age_work_tree(s: &Scratch) {
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for entry in walkdir::WalkDir::new(s.root()) {
            let entry = entry.expect("walk");
            if entry.file_type().is_file() && !entry.path().starts_with(s.root().join(".git")) {
                let file = std::fs::File::options()
                    .write(true)
                    .open(entry.path())
                    .expect("open");
                file.set_modified(past).expect("mtime");
            }
        }
    }

    #[test]
    fn changed_paths_are_what_git_status_lists() {
        let s = Scratch::new();
        for rel in [
            "MEMORY.md",
            "memory/a-b.md",
            "memory/a.md",
            "memory/a/x.md",
            "memory/a/b/c.md",
            "memory/a0.md",
            "memory/gone.md",
            "memory/log/2026-01-01/w.md",
            "other/readme",
        ] {
            s.write(rel, rel);
        }
        age_work_tree(&s);
        s.git(&["add", "-A"]);
        s.git(&["commit", "-qm", "start"]);
        assert_eq!(changed(&s), BTreeSet::new());
        assert_eq!(git_status(&s), BTreeSet::new());

        s.write("memory/a/x.md", "modified, not staged");
        s.write("memory/new/deep.md", "untracked, in a new folder");
        s.remove("memory/a0.md"); // deleted, not staged
        s.git(&["rm", "-q", "memory/gone.md"]); // deleted, staged
        s.write("memory/staged.md", "new, staged");
        s.git(&["add", "memory/staged.md"]);
        s.write("memory/a/b/c.md", "modified, staged");
        s.git(&["add", "memory/a/b/c.md"]);
        s.write("MEMORY.md", "staged");
        s.git(&["add", "MEMORY.md"]);
        s.write("MEMORY.md", "staged, then modified again");
        s.write(
            "memory/.a.md.memoir-1",
            "an interrupted write's temporary file",
        );
        s.write("other/readme", "not the store's");

        let memoir = changed(&s);
        let git = git_status(&s);
        assert_eq!(memoir, git);
        assert_eq!(
            git,
            [
                "MEMORY.md",
                "memory/a/b/c.md",
                "memory/a/x.md",
                "memory/a0.md",
                "memory/gone.md",
                "memory/new/deep.md",
                "memory/staged.md",
            ]
            .map(String::from)
            .into(),
            "the scenario covers each kind of change"
        );
        // `git status` refreshed the index's stat data: the same answer.
        assert_eq!(changed(&s), git);
    }
}
