//! A memory's search terms as the persistent index keeps them: each word's
//! frequency weighted by the field it is in, and which fields those are.

use crate::model::memory::Memory;
use crate::model::text::words;

/// Field weights: name, description, tags, body.
pub const FIELD_WEIGHTS: [u16; 4] = [3, 2, 2, 1];

/// Terms with their weighted frequency and field mask.
pub type Terms = std::collections::HashMap<String, (u16, u8), crate::model::fingerprint::FnvBuild>;

/// A memory's terms: weighted frequency and mask of the fields each occurs
/// in (bit 0 name, 1 description, 2 tags, 3 body), and the weighted length.
pub fn term_counts(m: &Memory) -> (Terms, u32) {
    let fields = [
        words(&m.name),
        words(&m.description),
        words(&m.tags.join(" ")),
        words(&m.body),
    ];
    let mut acc: Terms = Terms::default();
    let mut len: u32 = 0;
    for (f, terms) in fields.into_iter().enumerate() {
        let w = FIELD_WEIGHTS[f];
        len = len.saturating_add(u32::from(w).saturating_mul(terms.len() as u32));
        for t in terms {
            let e = acc.entry(t).or_default();
            e.0 = e.0.saturating_add(w);
            e.1 |= 1 << f;
        }
    }
    (acc, len)
}

/// A note's terms: its text is all body (a raw observation has no name,
/// description or tags), with its length.
pub fn note_terms(text: &str) -> (Terms, u32) {
    let w = FIELD_WEIGHTS[3];
    let mut acc: Terms = Terms::default();
    let words = words(text);
    let len = u32::from(w).saturating_mul(words.len() as u32);
    for t in words {
        let e = acc.entry(t).or_default();
        e.0 = e.0.saturating_add(w);
        e.1 |= 1 << 3;
    }
    (acc, len)
}
