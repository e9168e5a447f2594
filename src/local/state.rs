//! Local, never-committed state: `<git common dir>/memoir/`.
//!
//! Per clone: `clone-id` (random, makes writer ids). Per store (keyed by the
//! store's absolute path, so worktrees and several stores in one repository
//! stay apart): `stores/<hash>/lock`, `journal` (what memoir last wrote to
//! each view file) and `index.bin` (the persistent index, laid out in [`crate::index::layout`]: file stamps and
//! summaries, and each memory's heads as of the log stamps recorded with
//! them). The index is a cache: when it is missing or unreadable it is
//! rebuilt silently; every entry is checked against the file system before
//! use.

use crate::model::memory::Summary;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits: a stable content fingerprint (not a security measure).
pub fn fingerprint(bytes: &[u8]) -> u64 {
    fingerprint_extend(0xcbf2_9ce4_8422_2325, bytes)
}

/// A fingerprint `h` continued over more bytes (one over several parts).
pub fn fingerprint_extend(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Size and modification time: enough to tell that a file has not changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Length in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime: i128,
}

impl Stamp {
    /// The stamp of a file's metadata.
    pub fn of(meta: &fs::Metadata) -> Stamp {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        Stamp {
            size: meta.len(),
            mtime,
        }
    }

    /// The stamp of a size and a modification time in seconds and
    /// nanoseconds since the epoch; as [`Stamp::of`], a time before the
    /// epoch counts as the epoch.
    pub fn from_parts(size: u64, secs: i64, nanos: u32) -> Stamp {
        let mtime = if secs < 0 {
            0
        } else {
            i128::from(secs) * 1_000_000_000 + i128::from(nanos)
        };
        Stamp { size, mtime }
    }
}

/// A memory's replayed state, as recorded in the persistent index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyState {
    /// The heads of its version DAG.
    pub heads: Vec<String>,
    /// The version the view shows (none: no file).
    pub view: Option<String>,
    /// Fingerprint of the view's content.
    pub view_hash: Option<u64>,
    /// The heads differ.
    pub conflict: bool,
}

impl KeyState {
    /// The state after version event `e`, which names every head as `prev`.
    pub fn after(e: &crate::model::event::Event) -> KeyState {
        let content = crate::log::replay::version_content(e);
        KeyState {
            heads: vec![e.id.clone()],
            view: content.map(|_| e.id.clone()),
            view_hash: content.map(|c| fingerprint(c.as_bytes())),
            conflict: false,
        }
    }
}

/// One memory file as last seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The file's stamp when it was read.
    pub stamp: Stamp,
    /// Fingerprint of its content.
    pub hash: u64,
    /// What it says, if it parsed.
    pub summary: Option<Summary>,
    /// Why it did not parse.
    pub error: Option<String>,
    /// Search terms, sorted by id: (id in [`Cache::dict`], weighted term
    /// frequency, mask of the fields it occurs in).
    pub terms: TermList,
    /// Weighted length in terms, for BM25's length normalization.
    pub len: u32,
}

/// A memory's search terms, (term id, weighted frequency, field mask) in
/// ascending id order, packed: each id as its distance from the one before
/// and the frequency as LEB128 varints, then the mask byte. A cold index of
/// 50,000 memories with long bodies holds some 13 million of them: about 4
/// bytes each instead of 8 (a `Vec<(u32, u16, u8)>`), 50 MB of its peak.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermList {
    bytes: Vec<u8>,
    len: u32,
    last: u32,
}

impl TermList {
    /// Appends a term; ids come in ascending order (any order still reads
    /// back as written: distances wrap).
    pub fn push(&mut self, id: u32, tf: u16, mask: u8) {
        put_varint(&mut self.bytes, id.wrapping_sub(self.last));
        put_varint(&mut self.bytes, u32::from(tf));
        self.bytes.push(mask);
        self.last = id;
        self.len += 1;
    }

    /// An empty list with room for about `terms` terms.
    pub fn with_capacity(terms: usize) -> TermList {
        TermList {
            bytes: Vec::with_capacity(terms * 4),
            ..TermList::default()
        }
    }

    /// Gives back the room it does not use.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }

    /// The list of these terms, sorted by id here.
    pub fn of(mut terms: Vec<(u32, u16, u8)>) -> TermList {
        terms.sort_unstable_by_key(|t| t.0);
        let mut list = TermList::default();
        for (id, tf, mask) in terms {
            list.push(id, tf, mask);
        }
        list.bytes.shrink_to_fit();
        list
    }

    /// How many terms.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// No terms.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The terms, in the order pushed.
    pub fn iter(&self) -> TermIter<'_> {
        TermIter {
            list: self,
            at: TermCursor::default(),
        }
    }
}

/// Where a reading of a [`TermList`] stands: resumable, so that a pass over
/// a range of term ids can continue where the last pass stopped.
#[derive(Debug, Clone, Copy, Default)]
pub struct TermCursor {
    pos: usize,
    last: u32,
}

impl TermCursor {
    /// The term at this cursor in `list` and the cursor after it.
    pub fn next(self, list: &TermList) -> Option<((u32, u16, u8), TermCursor)> {
        let bytes = &list.bytes;
        let (delta, pos) = get_varint(bytes, self.pos)?;
        let (tf, pos) = get_varint(bytes, pos)?;
        let mask = *bytes.get(pos)?;
        let id = self.last.wrapping_add(delta);
        let tf = u16::try_from(tf).unwrap_or(u16::MAX);
        Some((
            (id, tf, mask),
            TermCursor {
                pos: pos + 1,
                last: id,
            },
        ))
    }
}

/// The terms of a [`TermList`].
pub struct TermIter<'a> {
    list: &'a TermList,
    at: TermCursor,
}

impl Iterator for TermIter<'_> {
    type Item = (u32, u16, u8);
    fn next(&mut self) -> Option<(u32, u16, u8)> {
        let (term, at) = self.at.next(self.list)?;
        self.at = at;
        Some(term)
    }
}

/// Appends `v` as LEB128 (seven bits a byte, low first).
fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The LEB128 value at `pos` and the position after it.
fn get_varint(bytes: &[u8], mut pos: usize) -> Option<(u32, usize)> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(pos)?;
        pos += 1;
        v |= u32::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
        if b & 0x80 == 0 {
            return Some((v, pos));
        }
    }
    None
}

/// FNV-1a as a hasher: terms are short and trusted (they come from the
/// store), and interning hashes millions of them on a cold index, where
/// SipHash's DoS resistance costs more than it is worth.
#[derive(Debug, Clone, Default)]
pub struct FnvBuild;

/// The FNV-1a hasher state.
#[derive(Debug, Clone)]
pub struct Fnv(u64);

impl std::hash::BuildHasher for FnvBuild {
    type Hasher = Fnv;
    fn build_hasher(&self) -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Interned search terms: each term's id is its position.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Dict {
    /// Terms by id.
    pub terms: Vec<String>,
    /// Term to id, built on first use (not stored).
    #[serde(skip)]
    index: HashMap<String, u32, FnvBuild>,
}

impl Dict {
    /// A dictionary of these terms (ids are positions).
    pub fn from_terms(terms: Vec<String>) -> Dict {
        Dict {
            terms,
            index: HashMap::default(),
        }
    }

    /// The id of `term`, adding it if new.
    pub fn intern(&mut self, term: &str) -> u32 {
        if self.index.len() != self.terms.len() {
            self.index = self
                .terms
                .iter()
                .enumerate()
                .map(|(i, t)| (t.clone(), i as u32))
                .collect();
        }
        if let Some(&id) = self.index.get(term) {
            return id;
        }
        let id = self.terms.len() as u32;
        self.terms.push(term.to_string());
        self.index.insert(term.to_string(), id);
        id
    }

    /// The id of `term`, if any memory ever had it.
    pub fn get(&self, term: &str) -> Option<u32> {
        if self.index.len() == self.terms.len() && !self.index.is_empty() {
            return self.index.get(term).copied();
        }
        self.terms.iter().position(|t| t == term).map(|i| i as u32)
    }
}

/// The persistent index, decoded (its file layout is in [`crate::index::layout`]).
#[derive(Debug, Clone, Default)]
pub struct Cache {
    /// Stamps of the log files the `keys` were replayed from.
    pub logs: BTreeMap<String, Stamp>,
    /// Replayed state of each memory, by key (`scope/slug`).
    pub keys: BTreeMap<String, KeyState>,
    /// Pending proposals, oldest first.
    pub pending: Vec<crate::model::event::Event>,
    /// Memory files by store-relative path.
    pub files: BTreeMap<String, FileEntry>,
    /// The search terms the files' entries refer to.
    pub dict: Dict,
    /// Modification time of the index file when loaded (not stored).
    pub loaded_mtime: i128,
    /// A refresh changed something since the index was loaded (not stored).
    pub dirty: bool,
}

/// Bumped whenever the index's layout or the search tokenizer changes, so
/// that an index built by another version is rebuilt rather than misread.
pub const CACHE_VERSION: u32 = 6 * 1000 + crate::model::text::TOKENIZER_VERSION;

/// The per-store state directory.
#[derive(Debug, Clone)]
pub struct StateDir {
    /// `<git common dir>/memoir/stores/<hash>`.
    pub path: PathBuf,
}

impl StateDir {
    /// Opens (creating) the state directory of the store at `store_root`.
    pub fn open(common_dir: &Path, store_root: &Path) -> io::Result<StateDir> {
        let key = fingerprint(store_root.to_string_lossy().as_bytes());
        let path = common_dir
            .join("memoir")
            .join("stores")
            .join(format!("{key:016x}"));
        fs::create_dir_all(&path)?;
        Ok(StateDir { path })
    }

    /// The store lock's file.
    pub fn lock_path(&self) -> PathBuf {
        self.path.join("lock")
    }

    fn journal_path(&self) -> PathBuf {
        self.path.join("journal")
    }

    fn cache_path(&self) -> PathBuf {
        self.path.join("index.bin")
    }

    /// The stamp each log had when memoir last appended to it (so ending
    /// in a complete entry of its own): a log still at that stamp needs no
    /// reading before the next append.
    pub fn appended_logs(&self) -> HashMap<String, Stamp> {
        let text = fs::read_to_string(self.path.join("appended")).unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let mut parts = l.splitn(4, ' ');
                let size = parts.next()?.parse().ok()?;
                let secs = parts.next()?.parse().ok()?;
                let nanos = parts.next()?.parse().ok()?;
                let rel = parts.next()?;
                Some((rel.to_string(), Stamp::from_parts(size, secs, nanos)))
            })
            .collect()
    }

    /// Records the stamps of the logs just appended to (see
    /// [`StateDir::appended_logs`]); losing them only costs a read.
    pub fn set_appended_logs(&self, logs: &[(String, Stamp)]) -> io::Result<()> {
        let text: String = logs
            .iter()
            .map(|(rel, s)| {
                let (secs, nanos) = (
                    s.mtime.div_euclid(1_000_000_000),
                    s.mtime.rem_euclid(1_000_000_000),
                );
                format!("{} {secs} {nanos} {rel}\n", s.size)
            })
            .collect();
        write_replace(&self.path.join("appended"), text.as_bytes())
    }

    /// Records that memoir wrote `hash` to each path (`None`: removed it).
    pub fn journal_append(&self, entries: &[(String, Option<u64>)]) -> io::Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        for (path, hash) in entries {
            match hash {
                Some(h) => text.push_str(&format!("{h:016x} {path}\n")),
                None => text.push_str(&format!("- {path}\n")),
            }
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.journal_path())?;
        f.write_all(text.as_bytes())
    }

    /// What memoir last wrote to each path. A damaged journal reads as what
    /// it can: a lost line only makes `check` call a stale view a hand edit.
    pub fn journal(&self) -> HashMap<String, Option<u64>> {
        let text = fs::read_to_string(self.journal_path()).unwrap_or_default();
        let mut map = HashMap::new();
        for line in text.lines() {
            let Some((hash, path)) = line.split_once(' ') else {
                continue;
            };
            let hash = if hash == "-" {
                None
            } else {
                match u64::from_str_radix(hash, 16) {
                    Ok(h) => Some(h),
                    Err(_) => continue,
                }
            };
            map.insert(path.to_string(), hash);
        }
        map
    }

    /// Rewrites the journal with one line per path.
    pub fn journal_compact(
        &self,
        views: impl IntoIterator<Item = (String, u64)>,
    ) -> io::Result<()> {
        let mut text = String::new();
        for (path, h) in views {
            text.push_str(&format!("{h:016x} {path}\n"));
        }
        write_replace(&self.journal_path(), text.as_bytes())
    }

    /// Opens the persistent index for reading in place, with its file's
    /// modification time; `None` if it is missing, damaged or another version's.
    pub fn load_view(
        &self,
        load: crate::index::layout::Load,
    ) -> Option<(crate::index::layout::View, i128)> {
        let path = self.cache_path();
        let mtime = Stamp::of(&fs::metadata(&path).ok()?).mtime;
        Some((
            crate::index::layout::View::open(&path, CACHE_VERSION, load)?,
            mtime,
        ))
    }

    /// Loads the persistent index; a missing or unreadable one is empty.
    pub fn load_cache(&self) -> Cache {
        let path = self.cache_path();
        let load = || {
            let mtime = Stamp::of(&fs::metadata(&path).ok()?).mtime;
            let view = crate::index::layout::View::open(
                &path,
                CACHE_VERSION,
                crate::index::layout::Load::Decode,
            )?;
            view.into_cache(mtime)
        };
        load().unwrap_or_default()
    }

    /// Removes the persistent index: the next reader builds it again.
    pub fn remove_cache(&self) -> io::Result<()> {
        match fs::remove_file(self.cache_path()) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Saves the persistent index (atomically; a failure only costs speed).
    pub fn save_cache(&self, cache: &Cache) -> io::Result<()> {
        let path = self.cache_path();
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        let mut w = io::BufWriter::new(fs::File::create(&tmp)?);
        crate::index::layout::write(&mut w, cache, CACHE_VERSION)?;
        w.into_inner().map_err(io::IntoInnerError::into_error)?;
        fs::rename(&tmp, path)
    }
}

fn write_replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path)
}

/// The clone's random id, created on first use, and bound to the git
/// directory it lives in: a work tree copied with its `.git` (`cp -a`, a
/// restored backup) would otherwise share the id, and both copies would
/// append to the same log files, which git then merges with conflict
/// markers inside an append-only log. A copy gets a fresh id (a new writer).
pub fn clone_id(common_dir: &Path) -> io::Result<String> {
    let dir = common_dir.join("memoir");
    let path = dir.join("clone-id");
    let here = dir_identity(common_dir);
    if let Some((id, bound)) = read_clone_id(&path) {
        if here.is_none() || bound == here {
            return Ok(id);
        }
    }
    fs::create_dir_all(&dir)?;
    // Under a lock: two first uses at once must agree on one id.
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("clone-id.lock"))?;
    fs2::FileExt::lock_exclusive(&lock)?;
    let id = match read_clone_id(&path) {
        // Bound since, by another process; or an id from before binding,
        // kept (its clone cannot be told from a copy), now bound.
        Some((id, bound)) if bound == here || bound.is_none() => id,
        _ => {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes).map_err(io::Error::other)?;
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        }
    };
    let binding = here.map(|h| format!("git-dir {h}\n")).unwrap_or_default();
    write_replace(&path, format!("{id}\n{binding}").as_bytes())?;
    Ok(id)
}

/// The id in a clone-id file and the git directory it is bound to.
fn read_clone_id(path: &Path) -> Option<(String, Option<String>)> {
    let text = fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let id = lines.next()?.trim();
    if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bound = lines.find_map(|l| l.strip_prefix("git-dir ").map(str::to_string));
    Some((id.to_string(), bound))
}

/// What tells this git directory from a copy of it: its device and inode
/// (a copy is a new folder; a rename keeps both). `None` where the
/// platform cannot say.
fn dir_identity(dir: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(dir).ok()?;
        Some(format!("{} {}", m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// A writer id: a readable prefix from the branch, and 8 hex digits of a
/// fingerprint of the clone id and the branch. One clone's branch is one
/// writer, so no two ever append to the same log file.
pub fn writer_id(clone_id: &str, branch: Option<&str>, worktree: Option<&str>) -> String {
    // A branch is checked out in one worktree at most, but any number of
    // worktrees can have a detached HEAD: those are told apart by name.
    let detached = match worktree {
        Some(name) if branch.is_none() => format!("(detached)\0{name}"),
        _ => "(detached)".to_string(),
    };
    let hashed = branch.unwrap_or(&detached);
    let branch = branch.unwrap_or("(detached)");
    let mut prefix: String = branch
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    prefix = prefix
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    prefix.truncate(24);
    let prefix = prefix.trim_end_matches('-');
    let prefix = if prefix.is_empty() { "writer" } else { prefix };
    let h = fingerprint(format!("{clone_id}\0{hashed}").as_bytes());
    format!("{prefix}-{:08x}", h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_list_reads_back_what_was_pushed_at_any_size() {
        let terms = vec![
            (0, 1, 8),
            (127, 2, 1),
            (128, u16::MAX, 15),
            (16_383, 300, 2),
            (16_384, 0, 0),
            (u32::MAX - 1, 7, 4),
            (u32::MAX, 1, 8),
        ];
        let mut shuffled = terms.clone();
        shuffled.reverse();
        let list = TermList::of(shuffled);
        assert_eq!(list.len(), terms.len());
        assert_eq!(list.iter().collect::<Vec<_>>(), terms);
        // A cursor resumes where it stopped.
        let (first, at) = TermCursor::default().next(&list).expect("first");
        assert_eq!(first, terms[0]);
        let rest: Vec<_> = std::iter::successors(at.next(&list), |(_, at)| at.next(&list))
            .map(|(t, _)| t)
            .collect();
        assert_eq!(rest, terms[1..]);
        // Out of order, a list still reads back as pushed.
        let mut raw = TermList::default();
        raw.push(9, 1, 1);
        raw.push(3, 2, 2);
        assert_eq!(raw.iter().collect::<Vec<_>>(), [(9, 1, 1), (3, 2, 2)]);
        assert!(TermList::default().iter().next().is_none());
    }
}
