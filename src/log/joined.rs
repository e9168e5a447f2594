//! One log file two histories appended to, joined.
//!
//! No two clones or branches append to one file (`format.md` section 2),
//! so git merges logs whole; but one writer can append on two histories:
//! a pushed consolidation amended or reset away, then new entries, then
//! the old commit merged back. git then leaves the file with conflict
//! markers between the two runs of entries, and every remedy at hand
//! (`git checkout` of either side) loses the other's. Joined, nothing is
//! lost, and the result is our side with entries appended, as the
//! append-only check asks.

use crate::model::event;
use std::collections::HashSet;

/// `ours`, then every entry of `theirs` that `ours` does not hold (by id;
/// an entry that does not parse, by its text), byte for byte, in
/// `theirs`' order. `None` if either side is no log (a torn or open end:
/// not a file memoir finished writing).
pub fn joined(ours: &str, theirs: &str) -> Option<String> {
    let o = event::parse_log(ours).ok()?;
    let t = event::parse_log(theirs).ok()?;
    if o.torn_tail || t.torn_tail || o.open_end || t.open_end {
        return None;
    }
    let have: HashSet<&str> = o.events.iter().map(|e| e.id.as_str()).collect();
    let mut out = ours.to_string();
    let mut add = |text: &str| {
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
        }
        out.push_str(text);
    };
    let mut spans: Vec<std::ops::Range<usize>> = t
        .events
        .iter()
        .zip(&t.spans)
        .filter(|(e, _)| !have.contains(e.id.as_str()))
        .map(|(_, span)| span.clone())
        .collect();
    spans.extend(
        t.quarantined
            .iter()
            .filter(|q| !ours.contains(&theirs[q.span.clone()]))
            .map(|q| q.span.clone()),
    );
    spans.sort_by_key(|s| s.start);
    for span in spans {
        add(&theirs[span]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::joined;
    use crate::model::event::{parse_log, Op};
    use crate::model::time::Timestamp;
    use crate::store::Ctx;

    fn note(text: &str, at: i64) -> String {
        let ctx = Ctx {
            now: Timestamp(1_764_547_200_000 + at * 1000),
            actor: "Ada <ada@example.com>".into(),
        };
        crate::change::event::event(&ctx, Op::Note, None, vec![], text.into())
            .expect("event")
            .render()
    }

    #[test]
    fn both_runs_of_entries_are_kept_ours_first() {
        let base = note("base", 0);
        let ours = format!("{base}{}", note("ours", 1));
        let theirs = format!("{base}{}{}", note("theirs", 2), note("more", 3));
        let j = joined(&ours, &theirs).expect("joined");
        assert!(j.starts_with(&ours), "our side, then appended");
        let texts: Vec<String> = parse_log(&j)
            .expect("a log")
            .events
            .into_iter()
            .map(|e| e.body)
            .collect();
        assert_eq!(texts, ["base", "ours", "theirs", "more"]);
        assert_eq!(joined(&ours, &ours).as_deref(), Some(ours.as_str()));
    }
}
