//! Near-duplicate descriptions: which memory of a scope a new description
//! nearly repeats, by the share of words they have in common.

use crate::index::Snapshot;
use crate::model::key::Key;
use std::collections::{BTreeSet, HashMap};

/// The description terms of one scope's memories, inverted: which memories
/// have each term. Built once from the persistent index (each memory's
/// description terms are in its posting list, field mask bit 1, as ids), it
/// answers many near-duplicate questions (a consolidation of a thousand
/// proposals) without comparing all pairs or re-reading any description.
pub(crate) struct Descriptions<'a> {
    /// Path and number of description terms, per memory.
    docs: Vec<(&'a str, usize)>,
    /// The memories (positions in `docs`) whose description has each term.
    by_term: HashMap<u32, Vec<usize>>,
    /// Ids of terms the index's dictionary does not have yet.
    extra: HashMap<String, u32>,
}

impl<'a> Descriptions<'a> {
    /// The descriptions of memories given as path, description term ids and
    /// (if not their number) how many words the description has.
    pub(crate) fn from_docs(
        docs: impl Iterator<Item = (&'a str, Vec<u32>, Option<usize>)>,
        extra: HashMap<String, u32>,
    ) -> Descriptions<'a> {
        let mut out = Descriptions {
            docs: Vec::new(),
            by_term: HashMap::new(),
            extra,
        };
        for (path, ids, words) in docs {
            let doc = out.docs.len();
            for id in &ids {
                out.by_term.entry(*id).or_default().push(doc);
            }
            out.docs.push((path, words.unwrap_or(ids.len())));
        }
        out
    }

    /// The memory (other than `except`) whose description is most like
    /// `description`, if at or above `threshold`.
    pub(crate) fn nearest(
        &self,
        lookup: impl Fn(&str) -> Option<u32>,
        except: Option<&Key>,
        description: &str,
        threshold: f64,
    ) -> Option<(Key, f64)> {
        let words: BTreeSet<String> = crate::model::text::words(description).into_iter().collect();
        let mut nearest = Nearest::new(words.len(), except, threshold)?;
        // Each word's posting list (docs in ascending order); a word no
        // memory has cannot be shared, but it still counts in the union.
        let mut postings: Vec<&[usize]> = words
            .iter()
            .map(|w| {
                lookup(w)
                    .or_else(|| self.extra.get(w).copied())
                    .and_then(|id| self.by_term.get(&id))
                    .map_or(&[][..], Vec::as_slice)
            })
            .collect();
        // Prefix filtering: a memory at or above the threshold shares at
        // least ceil(threshold x words) of the words, so it is in the
        // postings of any (words - that + 1) of them: only the docs in the
        // rarest words' postings are candidates. Shared words are counted
        // in a dense array (a hash map per proposal was most of a
        // consolidation of 1,000 proposals).
        postings.sort_by_key(|p| p.len());
        let need = ((threshold * words.len() as f64) - 1e-9).ceil().max(1.0) as usize;
        let prefix = (words.len() + 1).saturating_sub(need).min(postings.len());
        let mut common = vec![0u32; self.docs.len()];
        for &doc in postings.iter().flat_map(|p| p.iter()) {
            common[doc] += 1;
        }
        for &doc in postings[..prefix].iter().flat_map(|p| p.iter()) {
            // Zeroed once offered: each candidate is offered once.
            let c = std::mem::take(&mut common[doc]);
            if c > 0 {
                let (path, n) = self.docs[doc];
                nearest.offer(path, n, c as usize);
            }
        }
        nearest.best()
    }
}

/// The search for a near-duplicate: the memory whose description's word set
/// is most like a new description's (Jaccard similarity), at or above a
/// threshold; ties go to the smaller key.
pub(crate) struct Nearest<'a> {
    words: usize,
    except: Option<&'a Key>,
    threshold: f64,
    best: Option<(Key, f64)>,
}

impl<'a> Nearest<'a> {
    /// A search for a description of `words` distinct words (none: no search).
    pub(crate) fn new(words: usize, except: Option<&'a Key>, threshold: f64) -> Option<Self> {
        (words > 0).then_some(Nearest {
            words,
            except,
            threshold,
            best: None,
        })
    }

    /// A candidate: its path, its description's word count, and how many
    /// of those words the new description has.
    pub(crate) fn offer(&mut self, path: &str, theirs: usize, common: usize) {
        if common == 0 {
            return;
        }
        let sim = common as f64 / (self.words + theirs - common) as f64;
        if sim < self.threshold {
            return;
        }
        let Some(key) = Key::from_rel_path(path) else {
            return;
        };
        if Some(&key) != self.except
            && self
                .best
                .as_ref()
                .is_none_or(|b| sim > b.1 || (sim == b.1 && key < b.0))
        {
            self.best = Some((key, sim));
        }
    }

    /// The best candidate offered.
    pub(crate) fn best(self) -> Option<(Key, f64)> {
        self.best
    }
}

/// The memory of `scope` (other than `except`) whose description is
/// most like `description`, if at or above `threshold` (see [`Nearest`]).
pub(crate) fn near_duplicate(
    snap: &Snapshot,
    scope: &str,
    except: Option<&Key>,
    description: &str,
    threshold: f64,
) -> Option<(Key, f64)> {
    let words: BTreeSet<String> = crate::model::text::words(description).into_iter().collect();
    let mut nearest = Nearest::new(words.len(), except, threshold)?;
    // Through the postings of the new description's words (their
    // description bit): a write reads a few lists, not every description
    // of the scope (a twentieth of a remember at 60,000 memories).
    let scope_docs = snap.index.prefixed(&format!("memory/{scope}/"));
    let mut common: HashMap<u32, usize> = HashMap::new();
    for id in words.iter().filter_map(|w| snap.index.lookup(w)) {
        for (doc, _, mask) in snap.index.postings(id) {
            if mask & crate::index::DESCRIPTION != 0 && scope_docs.contains(&(doc as usize)) {
                *common.entry(doc).or_default() += 1;
            }
        }
    }
    for (doc, common) in common {
        let path = snap.index.path(doc as usize);
        if !snap.tail.views.contains_key(path) {
            nearest.offer(path, snap.index.description_len(doc as usize), common);
        }
    }
    for (key, s) in snap.tail_summaries() {
        if key.scope == scope {
            let theirs: BTreeSet<String> = crate::model::text::words(&s.description)
                .into_iter()
                .collect();
            nearest.offer(
                &key.rel_path(),
                theirs.len(),
                theirs.intersection(&words).count(),
            );
        }
    }
    nearest.best()
}

/// The descriptions of `scope`'s memories, for many near-duplicate
/// questions (see [`Descriptions`]); the tail's are tokenized now.
pub(crate) fn descriptions<'s>(snap: &'s Snapshot, scope: &str) -> Descriptions<'s> {
    let indexed = snap
        .index
        .prefixed(&format!("memory/{scope}/"))
        .map(|i| (snap.index.path(i), i))
        .filter(|(path, _)| !snap.tail.views.contains_key(*path))
        .map(|(path, i)| (path, snap.index.description_terms(i).collect(), None));
    // Words the index has not seen yet get ids past its dictionary's.
    let mut extra: std::collections::HashMap<String, u32> = Default::default();
    let mut tail = Vec::new();
    for (rel, content) in &snap.tail.views {
        let Some(m) = content
            .as_deref()
            .and_then(|c| crate::policy::memory::validate_file(c, rel).ok())
        else {
            continue;
        };
        if Key::from_rel_path(rel).is_none_or(|k| k.scope != scope) {
            continue;
        }
        let words: BTreeSet<String> = crate::model::text::words(&m.description)
            .into_iter()
            .collect();
        let ids = words
            .iter()
            .map(|w| {
                snap.index.lookup(w).unwrap_or_else(|| {
                    let next = u32::MAX - extra.len() as u32;
                    *extra.entry(w.clone()).or_insert(next)
                })
            })
            .collect();
        tail.push((rel.as_str(), ids, None));
    }
    Descriptions::from_docs(indexed.chain(tail), extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The nearest memory by comparing the description with every other.
    fn brute_force(descs: &[String], description: &str, threshold: f64) -> Option<(Key, f64)> {
        let words: BTreeSet<String> = crate::model::text::words(description).into_iter().collect();
        let mut nearest = Nearest::new(words.len(), None, threshold)?;
        for (i, d) in descs.iter().enumerate() {
            let theirs: BTreeSet<String> = crate::model::text::words(d).into_iter().collect();
            let common = theirs.intersection(&words).count();
            nearest.offer(&format!("memory/project/m{i}.md"), theirs.len(), common);
        }
        nearest.best()
    }

    proptest! {
        /// Prefix filtering finds what comparing all pairs finds.
        #[test]
        fn nearest_matches_all_pairs(
            descs in prop::collection::vec(prop::collection::vec(0u8..12, 1..7), 1..40),
            query in prop::collection::vec(0u8..14, 1..7),
            threshold in prop::sample::select(vec![0.0, 0.3, 0.5, 0.8, 1.0]),
        ) {
            let text = |ws: &[u8]| ws.iter().map(|w| format!("w{w}")).collect::<Vec<_>>().join(" ");
            let descs: Vec<String> = descs.iter().map(|d| text(d)).collect();
            let paths: Vec<String> = (0..descs.len()).map(|i| format!("memory/project/m{i}.md")).collect();
            let mut dict: HashMap<String, u32> = HashMap::new();
            let docs: Vec<(&str, Vec<u32>, Option<usize>)> = descs
                .iter()
                .zip(&paths)
                .map(|(d, p)| {
                    let words: BTreeSet<String> = crate::model::text::words(d).into_iter().collect();
                    let ids = words.iter().map(|w| {
                        let next = dict.len() as u32;
                        *dict.entry(w.clone()).or_insert(next)
                    }).collect();
                    (p.as_str(), ids, None)
                })
                .collect();
            let d = Descriptions::from_docs(docs.into_iter(), HashMap::new());
            let q = text(&query);
            let found = d.nearest(|w| dict.get(w).copied(), None, &q, threshold);
            prop_assert_eq!(found, brute_force(&descs, &q, threshold));
        }
    }
}
