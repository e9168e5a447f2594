//! Trees and blobs: the store's files in HEAD or in any revision, the tree
//! git's index would write for a folder, and a blob's id.

use super::error::{failed, GitError};
use super::Repo;
use std::collections::{BTreeMap, HashMap};

/// The git blob id of `bytes` (what `git hash-object` prints).
pub(crate) fn blob_id(bytes: &[u8]) -> String {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .map(|id| id.to_string())
        .unwrap_or_default()
}

impl Repo {
    /// The contents of the files a revision (any revspec: id, tag,
    /// `HEAD~2`) has at `file` and under `dir`, and the commit it names. A
    /// blob larger than `cap(path)` is an error, found from its header
    /// before it is read: a revision is anyone's input (a pull request's
    /// head).
    pub(crate) fn files_at(
        &self,
        rev: &str,
        file: &str,
        dir: &str,
        cap: &dyn Fn(&str) -> u64,
    ) -> Result<(String, BTreeMap<String, Vec<u8>>), GitError> {
        let repo = &self.repo;
        let not_a = |expected| {
            move |e: gix::Error| GitError::Revision {
                rev: rev.to_string(),
                expected,
                source: Box::new(e),
            }
        };
        let commit = repo
            .rev_parse_single(rev)
            .map_err(not_a("revision"))?
            .object()
            .map_err(failed("reading the revision's object"))?
            .peel_to_commit()
            .map_err(not_a("commit"))?;
        let tree = commit
            .tree()
            .map_err(failed("reading the revision's tree"))?;
        let mut out = BTreeMap::new();
        for (path, id) in self.tree_files(&tree, file, dir)? {
            let size = repo
                .find_header(id)
                .map_err(failed("reading a blob's header"))?
                .size();
            if size > cap(&path) {
                return Err(GitError::TooLarge {
                    path: format!("{path} at {rev}"),
                    size,
                });
            }
            let mut blob = repo.find_blob(id).map_err(failed("reading a blob"))?;
            out.insert(path, blob.take_data());
        }
        Ok((commit.id.to_string(), out))
    }

    /// The contents HEAD has at each of `paths` (work-tree-relative), for
    /// those it has as files; empty on an unborn branch.
    pub(crate) fn head_blobs(&self, paths: &[&str]) -> Result<HashMap<String, Vec<u8>>, GitError> {
        let mut out = HashMap::new();
        let Some(tree) = self.head_tree()? else {
            return Ok(out);
        };
        for path in paths {
            let entry = tree
                .lookup_entry_by_path(path)
                .map_err(failed("looking up a path in HEAD"))?;
            if let Some(e) = entry.filter(|e| e.mode().is_blob()) {
                let mut blob = self
                    .repo
                    .find_blob(e.oid())
                    .map_err(failed("reading a blob"))?;
                out.insert(path.to_string(), blob.take_data());
            }
        }
        Ok(out)
    }

    /// The id of the tree git's index would write for the folder `dir`
    /// (work-tree-relative, ending in `/`), as `git write-tree
    /// --prefix=<dir>` prints it, without writing it: what
    /// [`Repo::changed_paths`] compares with HEAD's. `None` if the index
    /// cannot make one (no entry under `dir`, a conflict's stages, a sparse
    /// folder entry).
    pub fn index_tree(&self, dir: &str) -> Result<Option<String>, GitError> {
        use gix::bstr::ByteSlice;
        let index = self
            .repo
            .open_index()
            .map_err(failed("reading git's index"))?;
        let Some(range) = index.prefixed_entries_range(dir.as_bytes().as_bstr()) else {
            return Ok(None);
        };
        let entries = &index.entries()[range];
        if entries.is_empty() {
            return Ok(None);
        }
        let id = index_tree_id(self.repo.object_hash(), &index, entries, dir);
        Ok(id.map(|id| id.to_string()))
    }

    /// Blob ids of the files `tree` has at `file` and under the folder
    /// `dir` (ending in `/`), by work-tree-relative path.
    pub(super) fn tree_files(
        &self,
        tree: &gix::Tree<'_>,
        file: &str,
        dir: &str,
    ) -> Result<HashMap<String, gix::ObjectId>, GitError> {
        let mut out = HashMap::new();
        let file_entry = tree
            .lookup_entry_by_path(file)
            .map_err(failed("looking up a path in a tree"))?;
        if let Some(e) = file_entry {
            if e.mode().is_blob() {
                out.insert(file.to_string(), e.oid().to_owned());
            }
        }
        let Some(folder) = tree
            .lookup_entry_by_path(dir.trim_end_matches('/'))
            .map_err(failed("looking up a path in a tree"))?
        else {
            return Ok(out);
        };
        let mut stack = vec![(folder.oid().to_owned(), dir.to_string())];
        while let Some((id, prefix)) = stack.pop() {
            let tree = self.repo.find_tree(id).map_err(failed("reading a tree"))?;
            for entry in tree.iter() {
                let entry = entry.map_err(failed("decoding a tree"))?;
                let path = format!("{prefix}{}", entry.filename());
                if entry.mode().is_tree() {
                    stack.push((entry.oid().to_owned(), format!("{path}/")));
                } else if entry.mode().is_blob() {
                    out.insert(path, entry.oid().to_owned());
                }
            }
        }
        Ok(out)
    }
}

/// The id of the tree git would write for the index `entries` under `dir`
/// (all of them, sorted, as the index keeps them); `None` if they cannot
/// make one (a conflict's stages, a sparse folder entry).
pub(super) fn index_tree_id(
    hash: gix::hash::Kind,
    index: &gix::index::File,
    entries: &[gix::index::Entry],
    dir: &str,
) -> Option<gix::ObjectId> {
    use gix::bstr::ByteSlice;
    // The folders open along the current path, each with its tree's bytes:
    // the index's order (by path bytes) is the order git writes a tree's
    // entries in, a folder sorting as its name with a `/`.
    let mut open: Vec<(&[u8], Vec<u8>)> = vec![(&[], Vec::new())];
    let mut mode_bytes = [0u8; 6];
    let close = |open: &mut Vec<(&[u8], Vec<u8>)>| -> Option<()> {
        let (name, bytes) = open.pop()?;
        let id = gix::objs::compute_hash(hash, gix::objs::Kind::Tree, &bytes).ok()?;
        let parent = &mut open.last_mut()?.1;
        parent.extend_from_slice(b"40000 ");
        parent.extend_from_slice(name);
        parent.push(0);
        parent.extend_from_slice(id.as_bytes());
        Some(())
    };
    for e in entries {
        let mode = e.mode.to_tree_entry_mode()?;
        if e.stage_raw() != 0 || mode.is_tree() {
            return None;
        }
        let rel = e.path(index).as_bytes().get(dir.len()..)?;
        let (folders, name) = match rel.rfind_byte(b'/') {
            Some(at) => (&rel[..at], &rel[at + 1..]),
            None => (&rel[..0], rel),
        };
        let parts: Vec<&[u8]> = if folders.is_empty() {
            Vec::new()
        } else {
            folders.split_str("/").collect()
        };
        let common = parts
            .iter()
            .zip(&open[1..])
            .take_while(|(part, (open, _))| *part == open)
            .count();
        while open.len() > common + 1 {
            close(&mut open)?;
        }
        for part in &parts[common..] {
            open.push((part, Vec::new()));
        }
        let bytes = &mut open.last_mut()?.1;
        bytes.extend_from_slice(mode.as_bytes(&mut mode_bytes));
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(e.id.as_bytes());
    }
    while open.len() > 1 {
        close(&mut open)?;
    }
    gix::objs::compute_hash(hash, gix::objs::Kind::Tree, &open.first()?.1).ok()
}

#[cfg(test)]
mod tests {
    use crate::git::testing::Scratch;

    /// A repository whose `memory/` has nested folders, names that sort
    /// differently as paths and as tree entries (`a-b.md`, `a.md`, `a/`,
    /// `a0.md`: git sorts a folder as its name with a `/`), an executable
    /// and an empty file; committed.
    fn committed() -> Scratch {
        let s = Scratch::new();
        for rel in [
            "memory/a-b.md",
            "memory/a.md",
            "memory/a/x.md",
            "memory/a/b/c.md",
            "memory/a0.md",
            "memory/log/2026-01-01/w.md",
            "MEMORY.md",
            "other/readme",
        ] {
            s.write(rel, rel);
        }
        s.write("memory/user/.gitkeep", "");
        s.write("memory/run.sh", "#!/bin/sh\n");
        s.make_executable("memory/run.sh");
        s.git(&["add", "-A"]);
        s.git(&["commit", "-qm", "start"]);
        s
    }

    /// What `git write-tree --prefix=<dir>` prints: the tree git's index
    /// makes for the folder, staged changes included.
    fn git_write_tree(s: &Scratch, dir: &str) -> String {
        s.git(&["write-tree", &format!("--prefix={dir}")])
            .trim()
            .to_string()
    }

    #[test]
    fn index_tree_is_the_tree_git_writes_from_the_index() {
        let s = committed();
        // Staged and not committed: the index's tree is no longer HEAD's,
        // so the comparison is with the index and not with HEAD.
        s.write("memory/a/b/new.md", "new");
        s.write("memory/a.md", "changed");
        s.write("memory/a/b0", "sorts after the folder a/b/");
        s.git(&["rm", "-q", "memory/a0.md"]);
        s.git(&["add", "-A"]);
        // Not staged: the work tree is not what either side reads.
        s.write("memory/a-b.md", "changed, not staged");
        let head = s.git(&["rev-parse", "HEAD:memory"]);
        let repo = s.repo();
        for dir in ["memory/", "memory/a/", "memory/a/b/"] {
            let expected = git_write_tree(&s, dir);
            assert_eq!(
                repo.index_tree(dir).expect("index").as_deref(),
                Some(expected.as_str()),
                "{dir}"
            );
        }
        assert_ne!(git_write_tree(&s, "memory/"), head.trim());
        assert_eq!(repo.index_tree("nothing/").expect("index"), None);
    }

    #[test]
    fn index_tree_of_a_conflict_is_none_as_git_writes_none() {
        let s = committed();
        s.git(&["checkout", "-qb", "theirs"]);
        s.write("memory/a.md", "theirs");
        s.git(&["commit", "-qam", "theirs"]);
        s.git(&["checkout", "-q", "main"]);
        s.write("memory/a.md", "ours");
        s.git(&["commit", "-qam", "ours"]);
        assert!(!s.git_output(&["merge", "-q", "theirs"]).status.success());
        let write_tree = s.git_output(&["write-tree", "--prefix=memory/"]);
        assert!(!write_tree.status.success(), "git writes no tree");
        assert_eq!(s.repo().index_tree("memory/").expect("index"), None);
        // Beside the conflict, a folder without one still has its tree
        // (git writes none while any path is unmerged: this one is HEAD's).
        let expected = s.git(&["rev-parse", "HEAD:memory/a"]);
        assert_eq!(
            s.repo().index_tree("memory/a/").expect("index").as_deref(),
            Some(expected.trim())
        );
    }

    #[test]
    fn blob_id_is_what_git_hash_object_prints() {
        let s = Scratch::new();
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let samples: [&[u8]; 6] = [
            b"",
            b"hello\n",
            b"no newline",
            b"a\r\nb\r\n",
            &[0, 1, 2, 0xff, 0xfe],
            &big,
        ];
        for bytes in samples {
            let expected = s.git_with_input(&["hash-object", "--stdin", "--no-filters"], bytes);
            assert_eq!(
                super::blob_id(bytes),
                expected.trim(),
                "{} bytes",
                bytes.len()
            );
        }
    }
}
