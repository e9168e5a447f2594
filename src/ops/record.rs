//! `record`: hand edits, additions and deletions of memory files turned
//! into log events, missing fields filled in (and written back to the
//! file). All or nothing: one refused file records none.

use crate::change::drift::{
    scan_to_write, unknown_scope_message, unknown_scopes, Drift, DriftKind, Scan,
};
use crate::model::event::{Event, Op};
use crate::model::key::Key;
use crate::model::memory::{self, yaml_fields, Memory};
use crate::policy::memory::check_memory;
use crate::policy::memory::validate_file;
use crate::store::{Ctx, Store, StoreError};
use serde_yaml::Value;

/// One change `record` turned into an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The memory.
    pub key: Key,
    /// What it saw.
    pub kind: DriftKind,
    /// The event written.
    pub op: Op,
    /// Its id.
    pub id: String,
    /// Fields `record` filled in and wrote back to the file.
    pub filled: Vec<String>,
}

/// Turns hand edits, additions and deletions of memory files into log
/// events, filling in missing fields (written back to the file). All or
/// nothing: one refused file records none.
pub fn record(store: &Store, ctx: &Ctx) -> Result<Vec<Recorded>, StoreError> {
    record_paths(store, ctx, None)
}

/// [`record`] limited to the memory files at `only`
/// (store-relative paths), as the pre-commit hook records just what a
/// commit stages.
pub fn record_paths(
    store: &Store,
    ctx: &Ctx,
    only: Option<&[String]>,
) -> Result<Vec<Recorded>, StoreError> {
    let wanted = |path: &str| only.is_none_or(|o| o.iter().any(|p| p == path));
    let _lock = store.lock()?;
    refuse_unknown_scope(store, &wanted)?;
    let mut scan = scan_to_write(store)?;
    refuse_unreadable(&mut scan, &wanted)?;
    let mut events: Vec<Event> = Vec::new();
    let mut recorded = Vec::new();
    for d in scan.drifts() {
        if d.kind.is_memoirs() || !wanted(&d.path) {
            continue;
        }
        if let Some((e, r)) = event_for(store, ctx, &scan, d)? {
            events.push(e);
            recorded.push(r);
        }
    }
    if events.is_empty() {
        return Ok(recorded);
    }
    // The completed files are written back before the log append: a
    // crash after the append must leave files that are what the logs
    // say (else they look edited by hand again, rebuild refuses them
    // and the next record logs them twice); a crash before it leaves
    // hand edits that already have their fields, recorded as they are.
    for (e, r) in events.iter().zip(&recorded) {
        if !r.filled.is_empty() {
            if let Some(key) = &e.key {
                store.write_view(&key.rel_path(), &e.body)?;
            }
        }
    }
    let mut index = crate::index::Index::refreshed(store)?;
    crate::change::batch::apply(store, &mut index, &events)?;
    Ok(recorded)
}

/// Refuses a memory file that `wanted` asks for in a folder that is no
/// configured scope: written by hand where no scope is configured, it
/// cannot be adopted.
fn refuse_unknown_scope(store: &Store, wanted: &dyn Fn(&str) -> bool) -> Result<(), StoreError> {
    let Some((name, files)) = unknown_scopes(store)
        .into_iter()
        .find(|(_, f)| f.iter().any(|p| wanted(p)))
    else {
        return Ok(());
    };
    Err(StoreError::Refused {
        rule: "scope".into(),
        path: files[0].clone(),
        line: None,
        message: format!(
            "{}; move the file or add the scope to memory/config.yaml",
            unknown_scope_message(store, &name)
        ),
    })
}

/// Fails with why, for the first file `wanted` asks for that memoir
/// cannot read (a link, bad UTF-8, oversized): it cannot be recorded.
fn refuse_unreadable(scan: &mut Scan, wanted: &dyn Fn(&str) -> bool) -> Result<(), StoreError> {
    let unreadable = scan
        .files
        .iter()
        .find(|(p, c)| c.is_err() && wanted(p))
        .map(|(k, _)| k.clone());
    match unreadable.and_then(|k| scan.files.remove(&k)) {
        Some(Err(e)) => Err(e),
        _ => Ok(()),
    }
}

/// The event that records the hand change `d`, and what it records;
/// `None` for a file that is gone since the scan or in no configured
/// scope.
fn event_for(
    store: &Store,
    ctx: &Ctx,
    scan: &Scan,
    d: Drift,
) -> Result<Option<(Event, Recorded)>, StoreError> {
    let versions = scan.replay.memories.get(&d.key);
    let prev = versions.map(|v| v.heads.clone()).unwrap_or_default();
    let conflict = versions.is_some_and(|v| v.conflict);
    let (op, body, reason, filled) = match d.kind {
        DriftKind::Deleted => (
            Op::Forget,
            String::new(),
            Some(format!("deleted by hand by {}", ctx.actor)),
            Vec::new(),
        ),
        _ => {
            let Some((content, filled)) = completed(store, ctx, &d)? else {
                return Ok(None);
            };
            let op = if conflict { Op::Resolve } else { Op::Remember };
            (op, content, None, filled)
        }
    };
    let mut e = crate::change::event::event(ctx, op, Some(d.key.clone()), prev, body)?;
    e.reason = reason;
    let recorded = Recorded {
        key: d.key,
        kind: d.kind,
        op,
        id: e.id.clone(),
        filled,
    };
    Ok(Some((e, recorded)))
}

/// The hand-changed memory file of `d` with its missing fields filled
/// in (and which they are), checked as a write would be; `None` if it is
/// gone or in no configured scope.
fn completed(
    store: &Store,
    ctx: &Ctx,
    d: &Drift,
) -> Result<Option<(String, Vec<String>)>, StoreError> {
    let Some(content) = store.read_memory_file(&d.path)? else {
        return Ok(None);
    };
    if !store.has_scope(&d.key.scope) {
        return Ok(None);
    }
    let m = validate_file(&content, &d.path)?;
    let add = missing_fields(&m, ctx);
    let filled: Vec<String> = add.iter().map(|(k, _)| k.to_string()).collect();
    let content = if add.is_empty() {
        content
    } else {
        memory::append_fields(&content, &yaml_fields(&add))
            .map_err(|e| StoreError::invalid(&d.path, &e))?
    };
    let m = Memory::parse(&content).map_err(|e| StoreError::invalid(&d.path, &e))?;
    check_memory(&store.config, &m, &content, &d.path)?;
    Ok(Some((content, filled)))
}

/// The fields a hand-written memory lacks, with what `record` fills in.
fn missing_fields(m: &Memory, ctx: &Ctx) -> Vec<(&'static str, Value)> {
    let mut add = Vec::new();
    if m.source.is_none() {
        add.push((
            "source",
            Value::String(format!("hand edit by {}", ctx.actor)),
        ));
    }
    if m.confidence.is_none() {
        add.push(("confidence", Value::Number(1.0.into())));
    }
    if m.created.is_none() {
        add.push(("created", Value::String(ctx.now.seconds())));
    }
    if m.updated.is_none() {
        add.push(("updated", Value::String(ctx.now.seconds())));
    }
    add
}

#[cfg(test)]
mod tests {
    use super::record;
    use crate::change::drift::DriftKind;
    use crate::model::event::Op;
    use crate::testing::TempStore;

    #[test]
    fn a_hand_edit_is_recorded_once() {
        let t = TempStore::new();
        let key = t.remember("deploy", "Deploys run from CI.");
        let rel = key.rel_path();
        t.edit(&rel, "from CI", "by hand");
        let edited = t.read(&rel);
        let recorded = record(&t.store, &t.ctx()).expect("record");
        let seen: Vec<_> = recorded.iter().map(|r| (&r.key, r.kind, r.op)).collect();
        assert_eq!(seen, [(&key, DriftKind::Edited, Op::Remember)]);
        assert!(recorded[0].filled.is_empty(), "every field was there");
        assert_eq!(t.read(&rel), edited, "the edit is kept");
        assert_eq!(t.drifts(), []);
        assert_eq!(record(&t.store, &t.ctx()).expect("record"), []);
    }

    #[test]
    fn a_hand_deletion_is_recorded_as_a_forget() {
        let t = TempStore::new();
        let key = t.remember("deploy", "Deploys run from CI.");
        t.remove(&key.rel_path());
        let recorded = record(&t.store, &t.ctx()).expect("record");
        let seen: Vec<_> = recorded.iter().map(|r| (&r.key, r.kind, r.op)).collect();
        assert_eq!(seen, [(&key, DriftKind::Deleted, Op::Forget)]);
        assert_eq!(t.drifts(), []);
        assert_eq!(record(&t.store, &t.ctx()).expect("record"), []);
    }
}
