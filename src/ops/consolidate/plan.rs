//! The plan of a consolidation: what each pending proposal and expired
//! memory becomes (add, merge, conflict, forget, evict), read from a replay
//! or from the persistent index and its tail, and the events that apply it.

use super::{Action, Options, Plan, Step};
use crate::index::Snapshot;
use crate::log::replay::Replay;
use crate::model::event::{Event, Op};
use crate::model::key::Key;
use crate::model::memory::Memory;
use crate::model::time::Timestamp;
use crate::render::memory_md::Rank;
use crate::store::{Ctx, Store, StoreError};

/// Memory content without what a merge may change (source, tags, times).
fn normalized(m: &Memory) -> Memory {
    Memory {
        source: None,
        tags: Vec::new(),
        created: None,
        updated: None,
        confidence: None,
        body: m.body.trim().to_string(),
        description: m.description.trim().to_string(),
        ..m.clone()
    }
}

/// What a plan reads of the store. A replay of every log is exact, and
/// costs seconds on a store of 50,000 memories and 200,000 events; the
/// persistent index and its tail answer the same questions from the index's
/// records (the files as last indexed) and read only the files a step acts
/// on, each checked against the fingerprint the logs give its memory.
pub(super) enum Basis<'a> {
    /// Every log replayed.
    Replay(&'a Replay),
    /// The persistent index and the log entries since it was saved.
    Index(&'a Store, &'a Snapshot),
}

/// A file the index cannot vouch for (edited by hand, or missing): plan
/// from a replay instead.
#[derive(Debug)]
pub(super) struct Unsure;

/// A memory as expiry and capacity weigh it.
struct Standing {
    key: Key,
    /// MEMORY.md's value rank (its key aside).
    rank: Rank<()>,
    /// `expires`, days since the epoch.
    expires: Option<i64>,
    /// `review_by`, days since the epoch.
    review_by: Option<i64>,
}

impl Standing {
    fn of(key: Key, s: &crate::model::memory::Summary) -> Standing {
        Standing {
            rank: Rank::of(&key, s).with_key(()),
            expires: s.expires,
            review_by: s.review_by,
            key,
        }
    }
}

impl Basis<'_> {
    /// The content the logs give `key`'s file now (`None`: no file).
    fn current(&self, key: &Key) -> Result<Option<String>, Unsure> {
        let (store, snap) = match self {
            Basis::Replay(replay) => return Ok(replay.view(key).map(str::to_string)),
            Basis::Index(store, snap) => (store, snap),
        };
        let rel = key.rel_path();
        if let Some(content) = snap.tail.views.get(&rel) {
            return Ok(content.clone());
        }
        let Some(state) = snap.key(key) else {
            return Ok(None);
        };
        let Some(want) = state.view_hash.filter(|_| state.view.is_some()) else {
            return Ok(None);
        };
        let content = store.read_memory_file(&rel).ok().flatten().ok_or(Unsure)?;
        if crate::model::fingerprint::fingerprint(content.as_bytes()) == want {
            Ok(Some(content))
        } else {
            Err(Unsure)
        }
    }

    /// `key`'s heads, and whether they disagree (an open conflict).
    fn state(&self, key: &Key) -> (Vec<String>, bool) {
        match self {
            Basis::Replay(replay) => replay
                .memories
                .get(key)
                .map(|v| (v.heads.clone(), v.conflict))
                .unwrap_or_default(),
            Basis::Index(_, snap) => snap
                .key(key)
                .map(|s| (s.heads, s.conflict))
                .unwrap_or_default(),
        }
    }

    /// Every memory, as expiry and capacity weigh it.
    fn standings(&self) -> Vec<Standing> {
        match self {
            Basis::Replay(replay) => replay
                .views()
                .filter_map(|(key, content)| {
                    let m = Memory::parse(content).ok()?;
                    Some(Standing::of(
                        key.clone(),
                        &crate::model::memory::Summary::of(&m),
                    ))
                })
                .collect(),
            Basis::Index(_, snap) => {
                let view = &snap.index;
                let mut out: Vec<Standing> = (0..view.len())
                    .filter(|&i| view.is_valid(i) && !snap.tail.views.contains_key(view.path(i)))
                    .filter_map(|i| {
                        let r = view.rec(i);
                        let date = |d: i64| (d != i64::MAX).then_some(d);
                        Some(Standing {
                            key: Key::from_rel_path(view.path(i))?,
                            rank: Rank {
                                kind: r.rank,
                                confidence: r.confidence,
                                updated: r.updated,
                                key: (),
                            },
                            expires: date(r.expires),
                            review_by: date(r.review_by),
                        })
                    })
                    .collect();
                for (key, summary) in snap.tail_summaries() {
                    out.push(Standing::of(key, &summary));
                }
                // In key order, as a replay gives them (paths sort otherwise).
                out.sort_unstable_by(|a, b| a.key.cmp(&b.key));
                out
            }
        }
    }
}

/// Proposals from which planning says how far it is.
const PROGRESS_PROPOSALS: usize = 500;

/// Plans the consolidation of `pending` (proposals, oldest first).
pub(super) fn plan(
    store: &Store,
    basis: &Basis<'_>,
    pending: &[&Event],
    now: Timestamp,
    snap: &Snapshot,
    opts: &Options,
) -> Result<Plan, Unsure> {
    let today = now.date();
    let mut planner = Planner {
        store,
        basis,
        snap,
        opts,
        plan: Plan::default(),
        planned: Default::default(),
        descriptions: Default::default(),
    };
    // Each proposal is weighed against the store's descriptions: a
    // thousand of them take a noticeable while on a large store.
    let large = pending.len() >= PROGRESS_PROPOSALS;
    let meter = store.meter("planning proposals", pending.len(), large);
    for (done, e) in pending.iter().enumerate() {
        meter.advance(done);
        planner.proposal(e)?;
    }
    meter.finish();
    let Planner {
        mut plan, planned, ..
    } = planner;
    let standings = basis.standings();
    for m in &standings {
        if m.expires.is_some_and(|d| d < today.0) && !planned.contains(&m.key) {
            plan.steps.push(Step {
                key: m.key.clone(),
                action: Action::Expire,
                proposal: None,
                before: Some(basis.current(&m.key)?.ok_or(Unsure)?),
                after: None,
            });
        }
        if m.review_by.is_some_and(|d| d < today.0) {
            plan.stale.push(m.key.clone());
        }
    }
    plan_capacity(store, basis, standings, &mut plan, now)?;
    Ok(plan)
}

/// A plan being made, a proposal at a time.
struct Planner<'a> {
    store: &'a Store,
    basis: &'a Basis<'a>,
    snap: &'a Snapshot,
    /// Which proposals held for review are accepted.
    opts: &'a Options,
    plan: Plan,
    /// Memories a step of this plan already changes.
    planned: std::collections::HashSet<Key>,
    /// Each scope's description terms, built on first use.
    descriptions: std::collections::HashMap<String, crate::search::nearest::Descriptions<'a>>,
}

/// What a proposal is weighed against: its memory as it is now.
struct Proposed<'e> {
    event: &'e Event,
    key: Key,
    memory: Memory,
    /// The memory's content now (`None`: no such memory).
    current: Option<String>,
}

impl Proposed<'_> {
    fn step(&self, action: Action, after: Option<String>) -> Step {
        Step {
            key: self.key.clone(),
            action,
            proposal: Some(self.event.id.clone()),
            before: self.current.clone(),
            after,
        }
    }

    /// A conflict for a human, keeping the proposal's content.
    fn conflict(&self, reason: String) -> Step {
        self.step(Action::Conflict { reason }, Some(self.event.body.clone()))
    }
}

impl<'a> Planner<'a> {
    /// Plans one proposal: a conflict when another change to its memory is
    /// pending, else as a new memory or against the current one.
    fn proposal(&mut self, e: &Event) -> Result<(), Unsure> {
        let Some(key) = e.key.clone() else {
            return Ok(());
        };
        let Ok(memory) = Memory::parse(&e.body) else {
            return Ok(());
        };
        let p = Proposed {
            event: e,
            current: self.basis.current(&key)?,
            key,
            memory,
        };
        // Imported curated text waits for a person to accept it: never
        // added by a plain consolidation. (An older memoir marked none:
        // its OpenClaw proposals are known by their source.)
        let imported = e.reason.as_deref() == Some(crate::model::remember::REVIEW)
            || p.memory
                .source
                .as_deref()
                .is_some_and(|s| s.starts_with("imported from OpenClaw "));
        if imported && !self.opts.accepts(&p.key) {
            let step = p.conflict(format!(
                "imported, for a person to review (accept: memoir consolidate --accept {})",
                p.key
            ));
            self.plan.steps.push(step);
            return Ok(());
        }
        let conflict_open = self.basis.state(&p.key).1;
        // Merges into a memory accumulate in one step (one new version).
        let merging = self.merging(&p.key);
        let blocked = self.planned.contains(&p.key)
            && merging.is_none()
            && !self
                .plan
                .steps
                .iter()
                .any(|s| s.key == p.key && s.action == Action::Duplicate);
        if blocked || conflict_open {
            let step = p.conflict("another change to this memory is pending".into());
            self.plan.steps.push(step);
            return Ok(());
        }
        // Proposed as a change to a version that has since been forgotten
        // (`forget`, or superseded by `remember --replace`): adding it would
        // bring back what someone chose to forget, so a human decides.
        let (heads, _) = self.basis.state(&p.key);
        if p.current.is_none() && !e.prev.is_empty() && !same_ids(&heads, &e.prev) {
            let step = p.conflict("its memory was forgotten after it was proposed".into());
            self.plan.steps.push(step);
            return Ok(());
        }
        match p.current.as_deref() {
            None => self.new_memory(&p),
            Some(cur) => {
                let Ok(existing) = Memory::parse(cur) else {
                    return Ok(());
                };
                self.same_key(&p, existing, merging);
            }
        }
        self.planned.insert(p.key);
        Ok(())
    }

    /// The step of this plan that merges into `key`, if any.
    fn merging(&self, key: &Key) -> Option<usize> {
        self.plan
            .steps
            .iter()
            .rposition(|s| s.key == *key && s.action == Action::Merge)
    }

    /// A new memory, unless it nearly duplicates another one.
    /// Near-duplicates come from the persistent index's posting lists,
    /// never by comparing all pairs.
    fn new_memory(&mut self, p: &Proposed<'_>) {
        let snap = self.snap;
        let near = self
            .descriptions
            .entry(p.key.scope.clone())
            .or_insert_with(|| crate::search::nearest::descriptions(snap, &p.key.scope))
            .nearest(
                |w| snap.index.lookup(w),
                Some(&p.key),
                &p.memory.description,
                self.store.config.near_duplicate,
            );
        let step = match near {
            Some((other, _)) => p.conflict(format!("nearly duplicates {other}")),
            None => p.step(Action::Add, Some(p.event.body.clone())),
        };
        self.plan.steps.push(step);
    }

    /// A proposal for an existing memory: a conflict if it says something
    /// else, else its sources and tags are joined to the memory's.
    fn same_key(&mut self, p: &Proposed<'_>, mut existing: Memory, merging: Option<usize>) {
        if let Some(i) = merging {
            // Compare with (and merge into) what this plan already merged.
            if let Some(m) = self.plan.steps[i]
                .after
                .as_deref()
                .and_then(|a| Memory::parse(a).ok())
            {
                existing = m;
            }
        }
        if normalized(&existing) != normalized(&p.memory) {
            let step = p.conflict("differs from the current version".into());
            self.plan.steps.push(step);
            return;
        }
        let merged = joined(&existing, &p.memory);
        if merged == existing {
            self.plan
                .steps
                .push(p.step(Action::Duplicate, p.current.clone()));
        } else if let Some(i) = merging {
            // Folded into the earlier merge of the same memory.
            self.plan.steps[i].after = Some(merged.render());
            self.plan
                .steps
                .push(p.step(Action::Duplicate, p.current.clone()));
        } else {
            self.plan
                .steps
                .push(p.step(Action::Merge, Some(merged.render())));
        }
    }
}

/// The same versions, in any order.
fn same_ids(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().all(|id| b.contains(id))
}

/// The same memory as `existing` with `proposed`'s sources and tags joined.
fn joined(existing: &Memory, proposed: &Memory) -> Memory {
    let mut merged = existing.clone();
    for t in &proposed.tags {
        if !merged.tags.contains(t) {
            merged.tags.push(t.clone());
        }
    }
    if let (Some(a), Some(b)) = (&existing.source, &proposed.source) {
        if !a.contains(b.as_str()) {
            merged.source = Some(format!("{a}; {b}"));
        }
    }
    merged
}

/// A memory as capacity weighs it: its value rank, and its confidence
/// times its access weight (`local::access::weight`).
struct Valued<'k> {
    rank: Rank<&'k Key>,
    value: f64,
}

impl Valued<'_> {
    /// Most valuable first: user and feedback memories, then the higher
    /// value, then the more recent change, then the key. Without access
    /// data every value is the confidence: MEMORY.md's value order.
    fn order(&self, other: &Valued<'_>) -> std::cmp::Ordering {
        self.rank
            .kind
            .cmp(&other.rank.kind)
            .then(other.value.total_cmp(&self.value))
            .then(other.rank.updated.cmp(&self.rank.updated))
            .then(self.rank.key.cmp(other.rank.key))
    }
}

/// Evicts the least valuable memories of each scope over its capacity:
/// importance (user and feedback first, then confidence), weighed by how
/// often and how lately `context` injected them in this clone (the access
/// signal, decaying with a 30-day half-life), then recency
/// (`docs/format.md`, section 9); what this plan adds is never evicted.
fn plan_capacity(
    store: &Store,
    basis: &Basis<'_>,
    standings: Vec<Standing>,
    plan: &mut Plan,
    now: Timestamp,
) -> Result<(), Unsure> {
    if store.config.capacity.is_empty() {
        return Ok(());
    }
    let access = crate::local::access::load(&store.state.access_path());
    for (scope, cap) in &store.config.capacity {
        let leaving = |k: &Key| {
            plan.steps
                .iter()
                .any(|s| s.key == *k && s.action == Action::Expire)
        };
        let adding = plan
            .steps
            .iter()
            .filter(|s| s.key.scope == *scope && s.action == Action::Add)
            .count();
        let mut kept: Vec<Valued<'_>> = standings
            .iter()
            .filter(|m| m.key.scope == *scope && !leaving(&m.key))
            .map(|m| {
                let stat = access.get(&m.key.to_string());
                let weight = crate::local::access::weight(stat, m.rank.updated, now.0);
                Valued {
                    rank: m.rank.with_key(&m.key),
                    value: m.rank.confidence * weight,
                }
            })
            .collect();
        let over = (kept.len() + adding).saturating_sub(*cap);
        if over == 0 {
            continue;
        }
        kept.sort_by(Valued::order);
        for Valued {
            rank: Rank { key, .. },
            ..
        } in kept.into_iter().rev().take(over)
        {
            plan.steps.push(Step {
                key: key.clone(),
                action: Action::Evict,
                proposal: None,
                before: Some(basis.current(key)?.ok_or(Unsure)?),
                after: None,
            });
        }
    }
    Ok(())
}

/// The events that apply a plan: a version per step that changes a
/// memory, each naming its memory's heads. Consumed proposals are
/// added to `consumed`.
pub(super) fn plan_events(
    store: &Store,
    ctx: &Ctx,
    basis: &Basis<'_>,
    plan: &Plan,
    consumed: &mut Vec<String>,
) -> Result<Vec<Event>, StoreError> {
    let mut events = Vec::new();
    for step in &plan.steps {
        let heads = basis.state(&step.key).0;
        if let (Action::Add | Action::Merge, Some(after)) = (&step.action, &step.after) {
            // A proposal that came in through a merge or a teammate's
            // tool was never policed here: it is, before it is adopted.
            let rel = step.key.rel_path();
            let m = crate::policy::memory::validate_file(after, &rel)?;
            crate::policy::memory::check_memory(&store.config, &m, after, &rel)?;
        }
        let mut e = match &step.action {
            Action::Add | Action::Merge => crate::change::event::event(
                ctx,
                Op::Remember,
                Some(step.key.clone()),
                heads,
                step.after.clone().unwrap_or_default(),
            )?,
            Action::Expire | Action::Evict => {
                let mut e = crate::change::event::event(
                    ctx,
                    Op::Forget,
                    Some(step.key.clone()),
                    heads,
                    String::new(),
                )?;
                e.reason = Some(if step.action == Action::Expire {
                    "expired".into()
                } else {
                    format!("evicted: {} is over its capacity", step.key.scope)
                });
                e
            }
            Action::Duplicate => {
                consumed.extend(step.proposal.clone());
                continue;
            }
            Action::Conflict { .. } | Action::Decided { .. } => continue,
        };
        if let Some(p) = &step.proposal {
            e.consumed = vec![p.clone()];
            consumed.push(p.clone());
        }
        events.push(e);
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::memory_md::Rank;

    fn key(text: &str) -> Key {
        Key::parse(text).expect("a key").0
    }

    #[test]
    fn without_access_capacity_orders_as_memory_md_and_with_it_by_value() {
        let keys: Vec<Key> = (0..6).map(|i| key(&format!("project/m{i}"))).collect();
        let ranks: Vec<Rank<&Key>> = [
            (0, 0.5, 3),
            (1, 0.9, 1),
            (1, 0.9, 2),
            (1, 0.4, 9),
            (0, 0.5, 3),
            (1, 0.4, 9),
        ]
        .iter()
        .zip(&keys)
        .map(|(&(kind, confidence, updated), key)| Rank {
            kind,
            confidence,
            updated,
            key,
        })
        .collect();
        let sorted = |value: &dyn Fn(&Rank<&Key>) -> f64| {
            let mut v: Vec<Valued<'_>> = ranks
                .iter()
                .map(|r| Valued {
                    rank: *r,
                    value: value(r),
                })
                .collect();
            v.sort_by(Valued::order);
            v.into_iter()
                .map(|v| v.rank.key.to_string())
                .collect::<Vec<_>>()
        };
        let mut by_rank = ranks.clone();
        by_rank.sort_by(Rank::value_order);
        let by_rank: Vec<String> = by_rank.iter().map(|r| r.key.to_string()).collect();
        let no_access =
            |r: &Rank<&Key>| r.confidence * crate::local::access::weight(None, r.updated, 0);
        assert_eq!(sorted(&no_access), by_rank);
        // m3 (0.4) injected often lately now outweighs m2 and m1 (0.9, the
        // more recent first), not m0 and m4 (feedback first).
        let used = crate::local::access::AccessStat {
            last_recalled_ms: 0,
            times_injected: 20,
        };
        let with_access = |r: &Rank<&Key>| {
            let stat = (r.key.slug == "m3").then_some(used);
            r.confidence * crate::local::access::weight(stat, r.updated, 0)
        };
        assert_eq!(
            sorted(&with_access),
            [
                "project/m0",
                "project/m4",
                "project/m3",
                "project/m2",
                "project/m1",
                "project/m5"
            ]
        );
    }
}
