//! Git merge drivers for view files, so that merges never leave text
//! conflicts in them.
//!
//! A memory file changed on both sides becomes their common ancestor: that
//! is exactly what replaying the merged logs shows for the fork, which then
//! surfaces as a conflict for a human (`memoir conflicts`). MEMORY.md's
//! generated lines merge as a set; the team's text around them merges
//! three-way.

use crate::model::memory::Memory;
use crate::render::memory_md::{END, SCOPE_HEADING, START, TYPE_HEADING};
use similar::TextMerge;
use std::collections::{BTreeMap, BTreeSet};

/// The merge of a memory file both sides changed: the common ancestor; with
/// none (both added it), the version updated first (then the smaller bytes),
/// as replay picks the first head.
pub fn memory(base: Option<&str>, ours: &str, theirs: &str) -> String {
    if ours == theirs {
        return ours.to_string();
    }
    if let Some(b) = base.filter(|b| !b.is_empty()) {
        return b.to_string();
    }
    let rank = |t: &str| {
        (
            Memory::parse(t).ok().and_then(|m| m.updated.or(m.created)),
            t.to_string(),
        )
    };
    std::cmp::min(rank(ours), rank(theirs)).1
}

/// MEMORY.md split at its markers: text before, generated lines, text after.
fn split(text: &str) -> (String, Vec<String>, String) {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let start = lines.iter().position(|l| l.trim_end() == START);
    let end = start.and_then(|s| {
        lines[s..]
            .iter()
            .position(|l| l.trim_end() == END)
            .map(|e| s + e)
    });
    match (start, end) {
        (Some(s), Some(e)) => (
            lines[..=s].concat(),
            lines[s + 1..e]
                .iter()
                .map(|l| l.trim_end_matches(['\r', '\n']).to_string())
                .collect(),
            lines[e..].concat(),
        ),
        _ => (text.to_string(), Vec::new(), String::new()),
    }
}

/// Each memory line of a generated block with the (scope, type) heading it
/// stands under.
fn entries(block: &[String]) -> BTreeMap<String, (String, String)> {
    let (mut scope, mut kind) = (String::new(), String::new());
    let mut out = BTreeMap::new();
    for l in block {
        // Headings as memoir writes them, and as versions before the
        // `Scope: `/`Type: ` labels did (a teammate's older memoir).
        if let Some(s) = l.strip_prefix("## ") {
            scope = s.strip_prefix(SCOPE_HEADING).unwrap_or(s).to_string();
        } else if let Some(t) = l.strip_prefix("### ") {
            kind = t.strip_prefix(TYPE_HEADING).unwrap_or(t).to_string();
        } else if l.starts_with("- [") {
            // The link names the scope for sure; the heading names the type.
            let from_path = l
                .split("](memory/")
                .nth(1)
                .and_then(|r| r.split('/').next())
                .map(str::to_string);
            out.insert(
                l.clone(),
                (from_path.unwrap_or_else(|| scope.clone()), kind.clone()),
            );
        }
    }
    out
}

fn type_rank(kind: &str) -> usize {
    ["user", "feedback", "project", "reference"]
        .iter()
        .position(|t| *t == kind)
        .unwrap_or(9)
}

/// The merge of MEMORY.md: the generated lines as a set (a line stays if
/// either side has it and neither side removed it), regrouped in index
/// order; the text outside the markers merged three-way. Returns the text
/// and whether a conflict remains (in the team's text only).
pub fn index(base: &str, ours: &str, theirs: &str) -> (String, bool) {
    let (bp, bb, ba) = split(base);
    let (op, ob, oa) = split(ours);
    let (tp, tb, ta) = split(theirs);
    let (eb, eo, et) = (entries(&bb), entries(&ob), entries(&tb));
    // One line per memory (by its link): three-way per memory, and where both
    // sides changed it, the ancestor's line, as the memory driver keeps the
    // ancestor's file.
    let by_path =
        |m: &BTreeMap<String, (String, String)>| -> BTreeMap<String, (String, (String, String))> {
            m.iter()
                .map(|(line, group)| {
                    (
                        line.split("](")
                            .nth(1)
                            .and_then(|r| r.split(')').next())
                            .unwrap_or(line)
                            .to_string(),
                        (line.clone(), group.clone()),
                    )
                })
                .collect()
        };
    let (pb, po, pt) = (by_path(&eb), by_path(&eo), by_path(&et));
    let paths: BTreeSet<&String> = po.keys().chain(pt.keys()).collect();
    let mut kept: BTreeMap<(String, usize, String), BTreeSet<String>> = BTreeMap::new();
    for path in paths {
        let (b, o, t) = (pb.get(path), po.get(path), pt.get(path));
        let chosen = match (o, t) {
            (Some(o), Some(t)) if o.0 == t.0 => Some(o),
            (Some(o), Some(t)) if Some(&o.0) == b.map(|b| &b.0) => Some(t),
            (Some(o), Some(t)) if Some(&t.0) == b.map(|b| &b.0) => Some(o),
            (Some(o), Some(t)) => Some(b.unwrap_or(std::cmp::min(o, t))),
            // Present on one side only: added there, or removed on the other.
            (Some(x), None) | (None, Some(x)) => {
                if b.is_some() {
                    None
                } else {
                    Some(x)
                }
            }
            (None, None) => None,
        };
        if let Some((line, (scope, kind))) = chosen {
            kept.entry((scope.clone(), type_rank(kind), kind.clone()))
                .or_default()
                .insert(line.clone());
        }
    }
    let mut block = String::new();
    let mut last_scope = String::new();
    for ((scope, _, kind), lines) in &kept {
        if *scope != last_scope {
            block.push_str(&format!("## {SCOPE_HEADING}{scope}\n"));
            last_scope = scope.clone();
        }
        block.push_str(&format!("### {TYPE_HEADING}{kind}\n"));
        for l in lines {
            block.push_str(l);
            block.push('\n');
        }
    }
    let (before, conflicted_before) = merge_text(&bp, &op, &tp);
    let (after, conflicted_after) = merge_text(&ba, &oa, &ta);
    let conflicted = conflicted_before || conflicted_after;
    if !before.contains(START) {
        // No block on any side: a plain three-way merge.
        return (before, conflicted);
    }
    (format!("{before}{block}{after}"), conflicted)
}

/// The most lines a side of the team's text may have for a line-by-line
/// three-way merge: its time grows with the square of the edits (32,000
/// lines with every other one changed hung a merge), and a merge driver
/// must answer.
const MAX_MERGE_LINES: usize = 4000;

/// A three-way merge of text (whether it conflicts): a side that did not
/// change it gives the other's at once; past [`MAX_MERGE_LINES`], ours,
/// as a conflict for a person to settle.
fn merge_text(base: &str, ours: &str, theirs: &str) -> (String, bool) {
    if ours == theirs || theirs == base {
        return (ours.to_string(), false);
    }
    if ours == base {
        return (theirs.to_string(), false);
    }
    if [base, ours, theirs]
        .iter()
        .any(|t| t.lines().count() > MAX_MERGE_LINES)
    {
        return (ours.to_string(), true);
    }
    let merged = TextMerge::from_lines(base, ours, theirs);
    (merged.to_string(), merged.is_conflicted())
}

/// A git merge in progress in the store's repository, as every command
/// that meets one advises on it (`status`, `check`, `rebuild`,
/// `consolidate`): one next step, said the same everywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeInProgress {
    /// Store files (store-relative) git's index holds unmerged: git merged
    /// them as text (a conflict memoir's drivers leave, or a clone without
    /// them), and waits for `git add`.
    pub unmerged: Vec<String>,
    /// The memory files and MEMORY.md are what the merged logs say
    /// (`memoir rebuild` would change nothing).
    pub settled: bool,
    /// Both branches changed MEMORY.md's own text, and git left conflict
    /// markers there: a person's call ([`team_text_conflicts`]).
    pub team_text: bool,
}

impl MergeInProgress {
    /// What to do next, as one sentence. `paths` is how the user names the
    /// store's `memory` folder and MEMORY.md for `git add` (`memory
    /// MEMORY.md` from the store's root).
    pub fn next_step(&self, paths: &str) -> String {
        let finish = format!("`git add -A {paths} && git commit`");
        let logs = !unmerged_logs(&self.unmerged).is_empty();
        if self.team_text {
            return format!(
                "a merge is in progress and both branches changed MEMORY.md's own text: keep what is \
                 true where `memoir check` says and remove git's markers, run `memoir rebuild`, then \
                 {finish} to finish the merge"
            );
        }
        match (self.settled, self.unmerged.is_empty()) {
            (false, _) if logs => format!(
                "a merge is in progress and both sides appended to one log (a commit amended or reset \
                 after it was pushed): run `memoir rebuild`, which keeps both sides' entries, then \
                 {finish} to finish the merge"
            ),
            (false, _) => format!(
                "a merge is in progress and git merged memory files as text (a conflict memoir's merge \
                 drivers leave, or a clone without them): \
                 run `memoir rebuild`, then {finish} to finish the merge"
            ),
            (true, false) => format!(
                "a merge is in progress and the memory files are settled: {finish} finishes the merge"
            ),
            (true, true) => {
                "a merge is in progress and memoir's files need nothing: `git commit` finishes the merge".into()
            }
        }
    }
}

/// The merge in progress in the store's repository, if any: which store
/// files git left unmerged, and whether the views already are what the
/// merged logs say. Reads only.
pub fn in_progress(
    store: &crate::store::Store,
) -> Result<Option<MergeInProgress>, crate::store::StoreError> {
    if !store.repo().merging() {
        return Ok(None);
    }
    let unmerged = crate::change::version::unmerged_store_files(store)?;
    // Not under the store lock: a dry run writes nothing, and a write
    // racing it only makes the advice one step early.
    let r = crate::change::rebuild::rebuild_locked(store, false, true)?;
    // A log git left unmerged waits for `rebuild` to join its two sides.
    let logs = unmerged_logs(&unmerged);
    let team_text = !team_text_conflicts(store).is_empty();
    let settled = r.written.is_empty()
        && r.removed.is_empty()
        && !r.index_changed
        && logs.is_empty()
        && !team_text;
    Ok(Some(MergeInProgress {
        unmerged,
        settled,
        team_text,
    }))
}

/// MEMORY.md's text `text`, after a merge git made as text, as `rebuild`
/// settles it around the generated `block`, with the lines (from 1) of
/// the conflicts it leaves in the team's own text.
pub fn settled_memory_md(text: &str, block: &str) -> (String, Vec<usize>) {
    let settled = crate::render::memory_md::expected(text, block);
    let lines = crate::render::memory_md::team_conflicts(&settled);
    (settled, lines)
}

/// The lines of MEMORY.md (from 1) where a conflict git left lies in the
/// team's own text, outside the generated block: `rebuild` regenerates
/// the block and leaves these for a person (none if it cannot be read).
pub fn team_text_conflicts(store: &crate::store::Store) -> Vec<usize> {
    store
        .read(crate::render::memory_md::MEMORY_MD, None)
        .ok()
        .flatten()
        .map(|text| crate::render::memory_md::team_conflicts(&text))
        .unwrap_or_default()
}

/// The logs among `unmerged` (store-relative paths).
fn unmerged_logs(unmerged: &[String]) -> Vec<&String> {
    crate::change::version::logs_among(unmerged)
}

/// Joins the logs git left unmerged in the merge in progress: one writer
/// appended to each on both histories (`log::joined`). Each becomes our
/// side with their entries appended; nothing is written with `dry_run`.
/// Returns the logs joined (store-relative); a log whose sides are not
/// both logs is left as git left it, for `check` to name.
pub fn join_unmerged_logs(
    store: &crate::store::Store,
    dry_run: bool,
) -> Result<Vec<String>, crate::store::StoreError> {
    let unmerged = crate::change::version::unmerged_store_files(store)?;
    let logs = unmerged_logs(&unmerged);
    if logs.is_empty() {
        return Ok(Vec::new());
    }
    // Logs are appended to under the store lock.
    let _lock = if dry_run { None } else { Some(store.lock()?) };
    let mut joined = Vec::new();
    for rel in logs {
        let path = format!("{}{rel}", store.prefix());
        let (ours, theirs) = store.repo().unmerged_sides(&path)?;
        let text = |b: Option<Vec<u8>>| b.and_then(|b| String::from_utf8(b).ok());
        let merged = match (text(ours), text(theirs)) {
            (Some(ours), Some(theirs)) => crate::log::joined::joined(&ours, &theirs),
            // A log is never deleted: the side that has it.
            (Some(one), None) | (None, Some(one)) => Some(one),
            (None, None) => None,
        };
        let Some(merged) = merged else { continue };
        if !dry_run {
            let path = store.path(rel);
            crate::fs::replace::replace(
                &path,
                merged.as_bytes(),
                crate::fs::replace::Durability::Synced,
            )
            .map_err(crate::store::StoreError::io(&path))?;
        }
        joined.push(rel.clone());
    }
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_takes_the_ancestor() {
        assert_eq!(memory(Some("base"), "ours", "theirs"), "base");
        assert_eq!(memory(Some("base"), "same", "same"), "same");
        let a = "---\nname: x\ndescription: a\ntype: user\nupdated: 2026-01-01T00:00:00Z\n---\n";
        let b = "---\nname: x\ndescription: b\ntype: user\nupdated: 2025-01-01T00:00:00Z\n---\n";
        assert_eq!(memory(None, a, b), b);
        assert_eq!(memory(Some(""), b, a), b);
    }

    #[test]
    fn index_merges_generated_lines_as_a_set() {
        let base = format!("# Team\n\n{START}\n## project\n### project\n- [a](memory/project/a.md) — a\n- [b](memory/project/b.md) — b\n{END}\n");
        let ours = base.replace(
            "- [b](memory/project/b.md) — b\n",
            "- [b](memory/project/b.md) — b2\n- [c](memory/project/c.md) — c\n",
        );
        let theirs = format!("# Team\n\n{START}\n## project\n### project\n- [b](memory/project/b.md) — b\n- [d](memory/project/d.md) — d\n## user\n### user\n- [u](memory/user/u.md) — u\n{END}\n");
        let (merged, conflicted) = index(&base, &ours, &theirs);
        assert!(!conflicted);
        assert_eq!(
            merged,
            // Sides an older memoir wrote (no heading labels) merge into
            // the labelled headings.
            format!("# Team\n\n{START}\n## Scope: project\n### Type: project\n- [b](memory/project/b.md) — b2\n- [c](memory/project/c.md) — c\n- [d](memory/project/d.md) — d\n## Scope: user\n### Type: user\n- [u](memory/user/u.md) — u\n{END}\n")
        );
    }
}
