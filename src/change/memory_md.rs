//! MEMORY.md on disk: the one text it is expected to hold (the team's
//! text around the generated block `render::memory_md` renders) and its
//! write. `check`, `status`, `rebuild`, `reindex` and every write ask
//! here; the block itself is the caller's, from what it has read (the
//! persistent index, a snapshot, a drift scan).

use crate::render::memory_md::{self, MEMORY_MD};
use crate::store::{Store, StoreError};

/// MEMORY.md as it is, and as it should be with this generated block:
/// its own text around it, or, when it is gone, the text it is rebuilt
/// around ([`lost`]).
pub(crate) fn expected(store: &Store, block: &str) -> Result<(Option<String>, String), StoreError> {
    let current = store.read(MEMORY_MD, None)?;
    let wanted = match &current {
        Some(text) => memory_md::expected(text, block),
        None => memory_md::expected(&lost(store), block),
    };
    Ok((current, wanted))
}

/// What a MEMORY.md that is gone is rewritten around: the one HEAD has
/// (the team's text outside the block is not derived from the memory
/// files, but it is in git), or what `init` wrote. So a view deleted by
/// hand or by a crash comes back byte for byte.
fn lost(store: &Store) -> String {
    let path = format!("{}{MEMORY_MD}", store.prefix());
    let committed = store
        .repo()
        .head_blobs(&[&path])
        .ok()
        .and_then(|mut blobs| String::from_utf8(blobs.remove(&path)?).ok());
    committed.unwrap_or_else(memory_md::initial)
}

/// Writes MEMORY.md with this generated block, through the store's one
/// view write (an atomic replacement); `true` if it changed.
pub(crate) fn write(store: &Store, block: &str) -> Result<bool, StoreError> {
    let (current, wanted) = expected(store, block)?;
    if current.as_deref() == Some(wanted.as_str()) {
        return Ok(false);
    }
    store.write_view(MEMORY_MD, &wanted)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::MEMORY_MD;
    use crate::model::text::has_conflict_markers;
    use crate::testing::TempStore;

    #[test]
    fn a_conflict_in_memory_mds_own_text_is_left_for_a_person_and_named_by_check() {
        let t = TempStore::new();
        t.remember("deploy", "Deploys run from CI.");
        // Git's text merge left conflict markers in the team's text only.
        let current = t.read(MEMORY_MD).expect("MEMORY.md");
        let merged = format!("<<<<<<< HEAD\nOurs.\n=======\nTheirs.\n>>>>>>> other\n\n{current}");
        t.write(MEMORY_MD, &merged);
        let today = t.ctx().now.date();
        // The generated block is what it should be: nothing to regenerate.
        let status = crate::ops::query::status(&t.store, today).expect("status");
        assert!(!status.index_stale, "status: up to date");
        assert!(!crate::ops::reindex::reindex(&t.store).expect("reindex"));
        // The team's text is a person's call: check names its line.
        let report = crate::ops::check::check(&t.store).expect("check");
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.path == MEMORY_MD && p.rule == "conflict" && p.line == Some(1)),
            "check names it: {:?}",
            report.problems
        );
        let after = t.read(MEMORY_MD).expect("MEMORY.md");
        assert!(has_conflict_markers(&after) && after.contains("Theirs."));
        // Settled by hand, it checks out.
        t.write(MEMORY_MD, &format!("Ours.\n\n{current}"));
        let report = crate::ops::check::check(&t.store).expect("check");
        assert!(
            !report.problems.iter().any(|p| p.path == MEMORY_MD),
            "{:?}",
            report.problems
        );
    }
}
