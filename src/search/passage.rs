//! The passage gate: how much of a query a long memory covers within one
//! passage of its body.
//!
//! A conversation-sized memory holds hundreds of everyday words, so an
//! unrelated long question ("how many weeks of parental leave did my
//! manager approve") finds a share of its words scattered over a chat about
//! something else. A question the memory answers finds them together, where
//! the answer is. So the store answers by share only when some memory also
//! reaches the threshold within [`PASSAGE_WORDS`] consecutive words of its
//! body, counting its name, description and tags as part of every passage
//! (`docs/search.md`, Relevance).

use crate::model::memory::Memory;
use crate::model::text::{is_cjk, words};
use std::collections::HashMap;

/// How many consecutive body words a passage holds (measured: 150 kept
/// every answer of the evaluation sets, 100 lost some).
pub const PASSAGE_WORDS: usize = 150;

/// What one passage of a memory holds of a query, at best.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Passage {
    /// The best share of the query's weight within one passage.
    pub share: f64,
    /// The most distinct words (`distinct` terms) within one passage.
    pub distinct: usize,
}

/// The best a memory covers of a query within one passage: each query term
/// (`terms`, with its `idf`) counts when it is in the name, description,
/// tags or the passage; the share is over `idf_total`, and `distinct` marks
/// the terms only this memory has. Body words of CJK scripts are skipped:
/// a query gated here has none. `None` when the text does not parse as a
/// memory.
pub fn best(
    text: &str,
    terms: &[String],
    idf: &[f64],
    idf_total: f64,
    distinct: &[bool],
) -> Option<Passage> {
    let m = Memory::parse(text).ok()?;
    let place: HashMap<&str, usize> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let mut in_head = vec![false; terms.len()];
    for field in [&m.name, &m.description, &m.tags.join(" ")] {
        for w in words(field) {
            if let Some(&i) = place.get(w.as_str()) {
                in_head[i] = true;
            }
        }
    }
    let head = Window {
        weight: (0..terms.len())
            .filter(|&i| in_head[i])
            .map(|i| idf[i])
            .sum(),
        distinct: (0..terms.len())
            .filter(|&i| in_head[i] && distinct[i])
            .count(),
    };
    // The body as a sequence of words: the query term each one is, if any.
    let body: Vec<Option<usize>> = words(&m.body)
        .iter()
        .filter(|w| !w.chars().any(is_cjk))
        .map(|w| place.get(w.as_str()).copied())
        .collect();
    let mut in_window = vec![0u32; terms.len()];
    let (mut now, mut best) = (head, head);
    for (at, term) in body.iter().enumerate() {
        if let Some(i) = *term {
            if in_window[i] == 0 && !in_head[i] {
                now.add(idf[i], distinct[i], 1);
            }
            in_window[i] += 1;
        }
        if at >= PASSAGE_WORDS {
            if let Some(j) = body[at - PASSAGE_WORDS] {
                in_window[j] -= 1;
                if in_window[j] == 0 && !in_head[j] {
                    now.add(-idf[j], distinct[j], -1);
                }
            }
        }
        best.weight = best.weight.max(now.weight);
        best.distinct = best.distinct.max(now.distinct);
    }
    let share = if idf_total > 0.0 {
        best.weight / idf_total
    } else {
        0.0
    };
    Some(Passage {
        share,
        distinct: best.distinct,
    })
}

/// What the current window covers.
#[derive(Clone, Copy)]
struct Window {
    weight: f64,
    distinct: usize,
}

impl Window {
    /// A term comes into the window (`step` 1) or leaves it (-1).
    fn add(&mut self, idf: f64, distinct: bool, step: isize) {
        self.weight += idf;
        if distinct {
            self.distinct = self.distinct.saturating_add_signed(step);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(description: &str, body: &str) -> String {
        format!("---\nname: chat\ndescription: {description}\ntype: user\n---\n{body}\n")
    }

    fn share(text: &str, query: &[&str]) -> f64 {
        passage(text, query).share
    }

    /// Every term of weight 1, and distinct.
    fn passage(text: &str, query: &[&str]) -> Passage {
        let terms: Vec<String> = query.iter().map(|t| t.to_string()).collect();
        let idf = vec![1.0; terms.len()];
        let distinct = vec![true; terms.len()];
        best(text, &terms, &idf, terms.len() as f64, &distinct).expect("parses")
    }

    #[test]
    fn words_far_apart_are_not_one_passage() {
        let filler = "lorem ".repeat(PASSAGE_WORDS);
        let apart = memory("a chat", &format!("parent visit {filler} leav plan"));
        assert!((share(&apart, &["parent", "leav"]) - 0.5).abs() < 1e-9);
        assert_eq!(passage(&apart, &["parent", "leav"]).distinct, 1);
        let together = memory("a chat", &format!("{filler} parental leave {filler}"));
        assert!((share(&together, &["parent", "leav"]) - 1.0).abs() < 1e-9);
        assert_eq!(passage(&together, &["parent", "leav"]).distinct, 2);
    }

    #[test]
    fn the_name_description_and_tags_belong_to_every_passage() {
        let filler = "lorem ".repeat(2 * PASSAGE_WORDS);
        let text = memory("The dog's vet visits", &format!("{filler} limping"));
        assert!((share(&text, &["vet", "limp", "dog"]) - 1.0).abs() < 1e-9);
        assert!((share(&text, &["vet", "kafka"]) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_file_that_does_not_parse_has_no_share() {
        assert_eq!(best("no frontmatter", &[], &[], 1.0, &[]), None);
    }
}
