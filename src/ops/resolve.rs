//! The `conflicts` and `resolve` commands: what waits for a human's
//! decision, and the decision applied under the store lock. The events a
//! decision makes are `change::resolve`'s, which `consolidate` uses too.

use crate::change::resolve::{conflicts_of, resolve_events, Conflict, Decision, Resolved};
use crate::model::key::Key;
use crate::store::{Ctx, Store, StoreError};

/// Every memory waiting for a decision.
pub fn conflicts(store: &Store) -> Result<Vec<Conflict>, StoreError> {
    let (replay, _) = crate::log::read::replay(store)?;
    Ok(conflicts_of(&replay))
}

/// Appends a human's decision on a conflict and applies it.
pub fn resolve(
    store: &Store,
    ctx: &Ctx,
    key: &Key,
    decision: &Decision,
) -> Result<Resolved, StoreError> {
    let _lock = store.lock()?;
    let (replay, _) = crate::log::read::replay(store)?;
    let (events, resolved) = resolve_events(store, ctx, &replay, key, decision)?;
    let mut index = crate::index::Index::refreshed(store)?;
    crate::change::batch::apply(store, &mut index, &events)?;
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::resolve::*;
    use crate::model::event::Op;
    use crate::testing::TempStore;

    /// `project/db` forked: two versions, each naming the same head, as
    /// two clones writing it before merging would leave it.
    fn forked() -> (TempStore, Key) {
        let mut t = TempStore::new();
        t.memory("project/db", "the database is postgres 16");
        let key = Key::parse("project/db").expect("a key").0;
        let (replay, _) = crate::log::read::replay(&t.store).expect("replayed");
        let heads = replay.memories[&key].heads.clone();
        let file = t.file("project/db").expect("written");
        let mut events = Vec::new();
        for db in ["mysql 8", "sqlite 3"] {
            t.later(1);
            let body = file.replace("postgres 16", db);
            let e = crate::change::event::event(
                &t.ctx,
                Op::Remember,
                Some(key.clone()),
                heads.clone(),
                body,
            )
            .expect("an event");
            events.push(e);
        }
        crate::log::files::append(&t.store, &events).expect("appended");
        (t, key)
    }

    #[test]
    fn a_fork_is_a_conflict_with_both_versions_and_the_ancestor_shown() {
        let (t, key) = forked();
        let all = conflicts(&t.store).expect("listed");
        assert_eq!(all.len(), 1);
        let c = &all[0];
        assert_eq!(c.key, key);
        assert!(c
            .current
            .as_deref()
            .is_some_and(|s| s.contains("postgres 16")));
        let contents: Vec<&str> = c
            .candidates
            .iter()
            .filter_map(|c| c.content.as_deref())
            .collect();
        assert_eq!(contents.len(), 2);
        assert!(contents.iter().any(|s| s.contains("mysql 8")));
        assert!(contents.iter().any(|s| s.contains("sqlite 3")));
        assert!(c
            .candidates
            .iter()
            .all(|c| c.diff.contains("+description: the database is")));
    }

    #[test]
    fn taking_a_version_closes_the_conflict_with_its_content() {
        let (mut t, key) = forked();
        let c = conflicts(&t.store).expect("listed").remove(0);
        let mysql = c
            .candidates
            .iter()
            .find(|c| c.content.as_deref().is_some_and(|s| s.contains("mysql")))
            .expect("the mysql version");
        t.later(1);
        resolve(
            &t.store,
            &t.ctx,
            &key,
            &Decision::Take(mysql.id[..8].to_string()),
        )
        .expect("resolved");
        assert!(conflicts(&t.store).expect("listed").is_empty());
        assert!(t.file("project/db").is_some_and(|s| s.contains("mysql 8")));
    }

    #[test]
    fn keeping_both_sides_drops_the_ancestor() {
        let (mut t, key) = forked();
        t.later(1);
        let r = resolve(&t.store, &t.ctx, &key, &Decision::Both).expect("resolved");
        let added: Vec<String> = r.added.iter().map(ToString::to_string).collect();
        assert_eq!(added, ["project/db-2"]);
        assert!(conflicts(&t.store).expect("listed").is_empty());
        let both: String = [t.file("project/db"), t.file("project/db-2")]
            .into_iter()
            .flatten()
            .collect();
        assert!(
            both.contains("mysql 8") && both.contains("sqlite 3"),
            "{both}"
        );
        assert!(!both.contains("postgres 16"), "{both}");
    }

    #[test]
    fn keeping_both_with_the_ancestor_writes_the_sides_under_numbered_keys() {
        let (mut t, key) = forked();
        t.later(1);
        let r = resolve(&t.store, &t.ctx, &key, &Decision::BothWithAncestor).expect("resolved");
        let added: Vec<String> = r.added.iter().map(ToString::to_string).collect();
        assert_eq!(added, ["project/db-2", "project/db-3"]);
        assert!(conflicts(&t.store).expect("listed").is_empty());
        assert!(t
            .file("project/db")
            .is_some_and(|s| s.contains("postgres 16")));
        let others = [t.file("project/db-2"), t.file("project/db-3")];
        assert!(others
            .iter()
            .all(|f| f.as_deref().is_some_and(|s| s.contains("name: db-"))));
    }

    #[test]
    fn a_prefix_two_versions_share_is_refused_and_names_both() {
        let (t, key) = forked();
        let c = conflicts(&t.store).expect("listed").remove(0);
        let (a, b) = (&c.candidates[0].id, &c.candidates[1].id);
        let shared = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        assert!(
            shared >= 6,
            "ids made close together share their time: {a} {b}"
        );
        let err = resolve(
            &t.store,
            &t.ctx,
            &key,
            &Decision::Take(a[..shared].to_string()),
        )
        .expect_err("refused");
        assert!(matches!(err, StoreError::AmbiguousVersion { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(a.as_str()) && text.contains(b.as_str()),
            "{text}"
        );
        assert_eq!(
            conflicts(&t.store).expect("listed").len(),
            1,
            "nothing written"
        );
    }

    #[test]
    fn a_version_that_is_no_candidate_is_refused_and_names_the_choices() {
        let (t, key) = forked();
        let err = resolve(&t.store, &t.ctx, &key, &Decision::Take("01NOSUCH".into()))
            .expect_err("refused");
        assert!(matches!(err, StoreError::NoSuchVersion { .. }), "{err}");
        assert!(
            err.to_string().contains("is not a version of project/db"),
            "{err}"
        );
        assert_eq!(
            conflicts(&t.store).expect("listed").len(),
            1,
            "nothing written"
        );
    }
}
