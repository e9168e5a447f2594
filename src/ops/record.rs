//! `record`: hand edits, additions and deletions of memory files turned
//! into log events, missing fields filled in (and written back to the
//! file). All or nothing: one refused file records none.

use crate::log::replay::Keep;
use crate::model::event::{Event, Op};
use crate::model::key::Key;
use crate::model::memory::{self, yaml_fields, Memory};
use crate::ops::drift::*;
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
    // A memory written by hand where no scope is configured cannot be adopted.
    if let Some((name, files)) = unknown_scopes(store)
        .into_iter()
        .find(|(_, f)| f.iter().any(|p| wanted(p)))
    {
        return Err(StoreError::Refused {
            rule: "scope".into(),
            path: files[0].clone(),
            line: None,
            message: format!(
                "unknown scope `{name}` (configured: {}); move the file or add the scope to memory/config.yaml",
                store.config.scopes.join(", ")
            ),
        });
    }
    let mut scan = scan(store, false, Keep::Prints)?;
    crate::log::files::all_logs_read(&scan.issues)?;
    // A file memoir cannot read (a link, bad UTF-8, oversized) cannot be recorded.
    let unreadable = scan
        .files
        .iter()
        .find(|(p, c)| c.is_err() && wanted(p))
        .map(|(k, _)| k.clone());
    if let Some(Err(e)) = unreadable.and_then(|k| scan.files.remove(&k)) {
        return Err(e);
    }
    let mut events: Vec<Event> = Vec::new();
    let mut recorded = Vec::new();
    for d in scan.drifts() {
        if d.kind.is_memoirs() || !wanted(&d.path) {
            continue;
        }
        let versions = scan.replay.memories.get(&d.key);
        let prev = versions.map(|v| v.heads.clone()).unwrap_or_default();
        let conflict = versions.is_some_and(|v| v.conflict);
        let mut filled = Vec::new();
        let (op, body, reason) = match d.kind {
            DriftKind::Deleted => (
                Op::Forget,
                String::new(),
                Some(format!("deleted by hand by {}", ctx.actor)),
            ),
            _ => {
                let content = match store.read_memory_file(&d.path)? {
                    Some(c) => c,
                    None => continue,
                };
                if !store.has_scope(&d.key.scope) {
                    continue;
                }
                let m = validate_file(&content, &d.path)?;
                let mut add: Vec<(&str, Value)> = Vec::new();
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
                let content = if add.is_empty() {
                    content
                } else {
                    filled = add.iter().map(|(k, _)| k.to_string()).collect();
                    memory::append_fields(&content, &yaml_fields(&add))
                        .map_err(|e| StoreError::invalid(&d.path, &e))?
                };
                let m = Memory::parse(&content).map_err(|e| StoreError::invalid(&d.path, &e))?;
                check_memory(store, &m, &content, &d.path)?;
                (
                    if conflict { Op::Resolve } else { Op::Remember },
                    content,
                    None,
                )
            }
        };
        let mut e = crate::ops::write::event(ctx, op, Some(d.key.clone()), prev, body)?;
        e.reason = reason;
        recorded.push(Recorded {
            key: d.key.clone(),
            kind: d.kind,
            op,
            id: e.id.clone(),
            filled,
        });
        events.push(e);
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
    let mut cache = crate::index::refresh::refreshed_cache(store)?;
    crate::ops::write::apply(store, &mut cache, &events)?;
    Ok(recorded)
}
