//! Consolidation: pending proposals and expired memories become one
//! reviewed, versioned change of the store, committed to git.
//!
//! The plan is deterministic: a proposal for a new key is added; one that
//! says what its memory already says (after normalization) is merged into
//! it (sources and tags joined); one that differs from its memory, nearly
//! duplicates another memory, or would change a version forgotten since it
//! was proposed, is a conflict and waits for a human; memories
//! past `expires` are forgotten; memories past `review_by` are reported.
//! Applying appends the events (with a `consolidate` event listing what it
//! consumed), writes the views and MEMORY.md, then commits the store paths.

use crate::change::version::{self, changed_store_paths};
use crate::git::{self, CommitError};
use crate::index::snapshot::Snapshot;
use crate::log::replay::Replay;
use crate::model::event::{Event, Op};
use crate::model::key::Key;
use crate::model::memory::Memory;
use crate::model::text;
use crate::model::time::Timestamp;
use crate::render::memory_md::Rank;
use crate::store::{Ctx, Failpoint, Store, StoreError};

/// What happens to one memory.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A new memory from a proposal.
    Add,
    /// A proposal saying what the memory says: sources and tags joined.
    Merge,
    /// A proposal already contained in the memory: consumed, nothing changes.
    Duplicate,
    /// Past its `expires` date: forgotten.
    Expire,
    /// Its scope is over capacity and it is among the least valuable: forgotten.
    Evict,
    /// The proposal differs from the memory, nearly duplicates another, or
    /// would change a version forgotten since:
    /// a human decides (`memoir resolve`, or remember --replace).
    Conflict {
        /// Why.
        reason: String,
    },
    /// A conflict a human decided during the consolidation.
    Decided {
        /// What was decided (`keep`, `take`, `both`).
        choice: String,
    },
}

/// One line of the plan.
#[derive(Debug, Clone)]
pub struct Step {
    /// The memory.
    pub key: Key,
    /// What happens.
    pub action: Action,
    /// The proposal it comes from, if any.
    pub proposal: Option<String>,
    /// The file as it is.
    pub before: Option<String>,
    /// The file as it will be (for a conflict: as proposed).
    pub after: Option<String>,
}

impl Step {
    /// The change as a unified diff of the memory file.
    pub fn diff(&self) -> String {
        let path = self.key.rel_path();
        text::file_diff(
            self.before.as_deref(),
            self.after.as_deref(),
            &format!("a/{path}"),
            &format!("b/{path}"),
        )
    }
}

/// A consolidation's plan and, once applied, its result.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Every step, by key.
    pub steps: Vec<Step>,
    /// Memories past `review_by` (reported, not changed).
    pub stale: Vec<Key>,
    /// The commit made, if any.
    pub commit: Option<String>,
    /// The `consolidate` event, if the plan was applied.
    pub event: Option<String>,
    /// Memories written directly (remember, forget, resolve) since the last
    /// version that its commit carries: (added, changed, forgotten).
    pub direct: (usize, usize, usize),
}

impl Plan {
    /// Steps that change nothing without a human.
    pub fn conflicts(&self) -> impl Iterator<Item = &Step> {
        self.steps
            .iter()
            .filter(|s| matches!(s.action, Action::Conflict { .. }))
    }

    /// Counts of (added, changed, forgotten, conflicts): the plan's steps
    /// and, once committed, the direct writes its commit carries.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let n = |f: fn(&Action) -> bool| self.steps.iter().filter(|s| f(&s.action)).count();
        (
            n(|a| *a == Action::Add) + self.direct.0,
            n(|a| matches!(a, Action::Merge | Action::Decided { .. })) + self.direct.1,
            n(|a| matches!(a, Action::Expire | Action::Evict)) + self.direct.2,
            n(|a| matches!(a, Action::Conflict { .. })),
        )
    }
}

/// What `consolidate` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Plan only; change nothing.
    pub dry_run: bool,
    /// The commit message's first line (default: the counts).
    pub message: Option<String>,
    /// Commit author instead of git's identity.
    pub author: Option<(String, String)>,
    /// Commit on a detached HEAD.
    pub allow_detached: bool,
    /// Candidate memories from an extractor: logged as proposals, then planned.
    pub extracted: Vec<crate::ops::write::Remember>,
    /// The notes the extractor read: the consolidation consumes them.
    pub notes: Vec<String>,
    /// Decisions a human made on the plan's conflicts, by key.
    pub decisions: std::collections::BTreeMap<Key, crate::ops::resolve::Decision>,
}

/// Why a consolidation stopped before writing anything.
#[derive(Debug, thiserror::Error)]
pub enum ConsolidateError {
    /// A git precondition failed.
    #[error(transparent)]
    Git(#[from] CommitError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

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
enum Basis<'a> {
    /// Every log replayed.
    Replay(&'a Replay),
    /// The persistent index and the log entries since it was saved.
    Index(&'a Store, &'a Snapshot),
}

/// A file the index cannot vouch for (edited by hand, or missing): plan
/// from a replay instead.
#[derive(Debug)]
struct Unsure;

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
                    .filter(|&i| view.rec(i).valid && !snap.tail.views.contains_key(view.path(i)))
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

/// Starts a change that ends in a commit: the store lock first, so that
/// a second one waits for the first (or gives up with exit 5); then,
/// unless only planning, git's preconditions and its index lock, before
/// anything is appended.
pub(crate) fn begin_version(
    store: &Store,
    dry_run: bool,
    author: Option<(String, String)>,
    allow_detached: bool,
) -> Result<
    (
        crate::local::lock::StoreLock,
        Option<(git::Session, git::Signature)>,
    ),
    ConsolidateError,
> {
    let lock = store.lock()?;
    let session = if dry_run {
        None
    } else {
        Some(git::Repo::discover(&store.root)?.begin(
            author,
            allow_detached,
            &store.state.path.join("git-index-lock-owner"),
        )?)
    };
    Ok((lock, session))
}

/// Notes no consolidation has consumed yet, oldest first: what an
/// extractor reads.
pub fn pending_notes(store: &Store) -> Result<Vec<Event>, StoreError> {
    let (replay, _) = crate::log::read::replay(store)?;
    let consumed: std::collections::HashSet<&String> = replay
        .events
        .values()
        .filter(|e| e.op == Op::Consolidate)
        .flat_map(|e| e.consumed.iter())
        .collect();
    Ok(replay
        .notes
        .iter()
        .filter(|id| !consumed.contains(id))
        .filter_map(|id| replay.events.get(id).cloned())
        .collect())
}

/// Plans the consolidation of `pending` (proposals, oldest first).
fn plan(
    store: &Store,
    basis: &Basis<'_>,
    pending: &[&Event],
    now: Timestamp,
    snap: &Snapshot,
) -> Result<Plan, Unsure> {
    let today = now.date();
    let mut planner = Planner {
        store,
        basis,
        snap,
        plan: Plan::default(),
        planned: Default::default(),
        descriptions: Default::default(),
    };
    for e in pending {
        planner.proposal(e)?;
    }
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
fn plan_events(
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
            crate::policy::memory::check_memory(store, &m, after, &rel)?;
        }
        let mut e = match &step.action {
            Action::Add | Action::Merge => crate::ops::write::event(
                ctx,
                Op::Remember,
                Some(step.key.clone()),
                heads,
                step.after.clone().unwrap_or_default(),
            )?,
            Action::Expire | Action::Evict => {
                let mut e = crate::ops::write::event(
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

/// Plans and (unless `dry_run`) applies a consolidation, then commits
/// the store. Git's preconditions are checked and its index lock taken
/// before anything is written.
pub fn consolidate(store: &Store, ctx: &Ctx, opts: &Options) -> Result<Plan, ConsolidateError> {
    // What goes into the commit passes the policy as the store does.
    if let Some(message) = &opts.message {
        crate::policy::check_secrets(message, "--message")?;
    }
    if let Some((name, email)) = &opts.author {
        crate::policy::check_secrets(&format!("{name} <{email}>"), "author")?;
    }
    let (_lock, session) = begin_version(
        store,
        opts.dry_run,
        opts.author.clone(),
        opts.allow_detached,
    )?;
    let proposals = extracted_proposals(store, ctx, opts)?;
    std::thread::scope(|scope| {
        // What differs from HEAD is found beside the planning, not after
        // the writes: under the store lock only this command writes the
        // store, so those paths and the ones it writes are every path
        // it commits.
        let changed = match &session {
            Some((session, _)) => {
                let workdir = session.workdir().to_path_buf();
                Changed::Finding(scope.spawn(move || changed_store_paths(store, &workdir)))
            }
            None => Changed::Found(Vec::new()),
        };
        consolidate_locked(store, ctx, opts, proposals, session, changed)
    })
}

/// An extractor's candidates, as proposals: each passes the write
/// policy (all of them, before anything is written).
fn extracted_proposals(store: &Store, ctx: &Ctx, opts: &Options) -> Result<Vec<Event>, StoreError> {
    let mut proposals = Vec::new();
    for c in &opts.extracted {
        let m = c.memory(ctx.now);
        let content = m.render();
        crate::policy::memory::check_memory(store, &m, &content, &c.key.rel_path())?;
        proposals.push(crate::ops::write::event(
            ctx,
            Op::Propose,
            Some(c.key.clone()),
            Vec::new(),
            content,
        )?);
    }
    Ok(proposals)
}

/// [`consolidate`] once the locks are taken: `changed` finds the
/// store paths that differ from HEAD before anything is written.
fn consolidate_locked(
    store: &Store,
    ctx: &Ctx,
    opts: &Options,
    proposals: Vec<Event>,
    session: Option<(git::Session, git::Signature)>,
    changed: Changed<'_>,
) -> Result<Plan, ConsolidateError> {
    // The index first: bringing it up to date may replay the logs, and
    // two replays must not be held at once.
    let mut snap = crate::index::snapshot::snapshot(store, crate::index::layout::Load::Plan)?;
    // Planned from the index and its tail when they can answer (a human
    // deciding conflicts now needs the versions' history: a replay).
    let fast = match snap.pending_events() {
        Some(mut pending) if opts.decisions.is_empty() => {
            pending.extend(proposals.iter().cloned());
            let pending: Vec<&Event> = pending.iter().collect();
            let basis = Basis::Index(store, &snap);
            match plan(store, &basis, &pending, ctx.now, &snap) {
                Ok(plan) if opts.dry_run => return Ok(plan),
                Ok(plan) => {
                    let mut consumed = opts.notes.clone();
                    let mut events = proposals.clone();
                    events.extend(plan_events(store, ctx, &basis, &plan, &mut consumed)?);
                    Some((plan, events, consumed))
                }
                Err(Unsure) => None,
            }
        }
        _ => None,
    };
    if let Some((plan, events, consumed)) = fast {
        let Some((session, sig)) = session else {
            return Ok(plan);
        };
        if !events.is_empty() || !consumed.is_empty() {
            return commit_consolidation(
                store, ctx, plan, events, consumed, session, sig, opts, &mut snap, changed,
            );
        }
        // With nothing to apply, an interrupted consolidation may need
        // finishing, which takes the replay below. Only if there is one:
        // its marker is in a log that differs from HEAD.
        let paths = changed.wait()?;
        if !uncommitted_marker(store, &paths)? {
            return commit_direct_writes(store, ctx, plan, session, sig, opts, &mut snap, paths);
        }
        return finish_consolidation(
            store,
            ctx,
            proposals,
            Some((session, sig)),
            opts,
            &mut snap,
            Changed::Found(paths),
        );
    }
    finish_consolidation(store, ctx, proposals, session, opts, &mut snap, changed)
}

/// Does any of the changed store `paths` (from
/// [`changed_store_paths`]) hold a `consolidate` marker that no
/// memoir version commits? `true` when a log cannot be read: the replay
/// that follows says why.
fn uncommitted_marker(store: &Store, paths: &[String]) -> Result<bool, StoreError> {
    let mut markers = Vec::new();
    for p in paths {
        let Some(rel) = p
            .rsplit_once("memory/log/")
            .map(|(_, r)| format!("memory/log/{r}"))
        else {
            continue;
        };
        let Ok(text) = crate::log::files::read_log(store, &rel) else {
            return Ok(true);
        };
        let Ok(parsed) = crate::log::files::parse_log(store, &rel, &text) else {
            return Ok(true);
        };
        markers.extend(
            parsed
                .events
                .into_iter()
                .filter(|e| e.op == Op::Consolidate)
                .map(|e| e.id),
        );
    }
    if markers.is_empty() {
        return Ok(false);
    }
    let committed = committed_markers(store)?;
    Ok(markers.iter().any(|m| !committed.contains(m)))
}

/// The ids of the `consolidate` markers that memoir versions commit.
fn committed_markers(store: &Store) -> Result<std::collections::HashSet<String>, StoreError> {
    Ok(git::Repo::discover(&store.root)?
        .versions()?
        .into_iter()
        .filter_map(|v| v.event)
        .collect())
}

/// The slow path of [`consolidate`]: planned from a replay of
/// every log, which also finishes a consolidation interrupted after its
/// log append.
fn finish_consolidation(
    store: &Store,
    ctx: &Ctx,
    proposals: Vec<Event>,
    session: Option<(git::Session, git::Signature)>,
    opts: &Options,
    snap: &mut Snapshot,
    changed: Changed<'_>,
) -> Result<Plan, ConsolidateError> {
    let (replay, _) = crate::log::read::replay_with(store, proposals.clone())?;
    let basis = Basis::Replay(&replay);
    let pending: Vec<&Event> = replay
        .pending
        .iter()
        .filter_map(|id| replay.events.get(id))
        .collect();
    // A replay has the text of every view it lists, unless the logs
    // changed between its two reads (a git command beside memoir).
    let Ok(mut plan) = plan(store, &basis, &pending, ctx.now, snap) else {
        return Err(StoreError::Busy(
            "the logs changed while consolidate read them; run it again".into(),
        )
        .into());
    };
    if opts.dry_run {
        return Ok(plan);
    }
    let Some((session, sig)) = session else {
        return Ok(plan);
    };
    let mut events = proposals;
    let mut consumed = opts.notes.clone();
    events.extend(plan_events(store, ctx, &basis, &plan, &mut consumed)?);
    events.extend(decide_conflicts(store, ctx, &replay, &mut plan, opts)?);
    if events.is_empty() && consumed.is_empty() {
        // Nothing new to apply; but a consolidation interrupted after its
        // log append (views half written, or not committed) is finished:
        // repair what it left, then commit it.
        let committed = committed_markers(store)?;
        let last = replay
            .events
            .values()
            .filter(|e| e.op == Op::Consolidate)
            .max_by(|a, b| (a.time, &a.id).cmp(&(b.time, &b.id)));
        let Some(last) = last.filter(|e| !committed.contains(&e.id)) else {
            let paths = changed.wait()?;
            return commit_direct_writes(store, ctx, plan, session, sig, opts, snap, paths);
        };
        return finish_interrupted(store, ctx, plan, last, session, sig);
    }
    drop(replay);
    commit_consolidation(
        store, ctx, plan, events, consumed, session, sig, opts, snap, changed,
    )
}

/// The events of the conflicts a human decided during this consolidation
/// (`--keep`/`--take`/…), marking their steps decided.
fn decide_conflicts(
    store: &Store,
    ctx: &Ctx,
    replay: &Replay,
    plan: &mut Plan,
    opts: &Options,
) -> Result<Vec<Event>, StoreError> {
    let mut events = Vec::new();
    let in_conflict =
        |s: &Step, key: &Key| s.key == *key && matches!(s.action, Action::Conflict { .. });
    for (key, decision) in &opts.decisions {
        if !plan.steps.iter().any(|s| in_conflict(s, key)) {
            continue;
        }
        let (resolved, _) = crate::ops::resolve::resolve_events(store, ctx, replay, key, decision)?;
        let choice = match decision {
            crate::ops::resolve::Decision::Keep => "keep",
            crate::ops::resolve::Decision::Take(_) => "take",
            crate::ops::resolve::Decision::Both => "both",
            crate::ops::resolve::Decision::Content(_) => "edit",
        };
        for s in plan.steps.iter_mut().filter(|s| in_conflict(s, key)) {
            s.action = Action::Decided {
                choice: choice.into(),
            };
        }
        events.extend(resolved);
    }
    Ok(events)
}

/// Finishes a consolidation interrupted after its log append (its
/// `consolidate` event `last` is in no commit): the views it left half
/// written are repaired, and the store is committed.
fn finish_interrupted(
    store: &Store,
    ctx: &Ctx,
    mut plan: Plan,
    last: &Event,
    session: git::Session,
    mut sig: git::Signature,
) -> Result<Plan, ConsolidateError> {
    // The repair writes the store: what differs from HEAD is found
    // again after it.
    crate::change::rebuild::rebuild_locked(store, false, false)?;
    let message =
        format!(
        "memoir: consolidate (finished after an interruption)\n\n{}\nMemoir-Consolidation: {}\n",
        last.reason.as_deref().map(|r| format!("{r}\n")).unwrap_or_default(),
        last.id
    );
    let paths = changed_store_paths(store, session.workdir())?;
    version::gate_commit(store, session.workdir(), &paths, None)?;
    sig.seconds = ctx.now.0.div_euclid(1000);
    plan.event = Some(last.id.clone());
    plan.commit = session.commit(&paths, &message, &sig)?;
    Ok(plan)
}

/// With nothing to apply: what `remember`, `forget`, `note` and
/// `resolve` wrote since the last version (`paths`, from
/// [`changed_store_paths`]) is committed as a new one, if any.
#[allow(clippy::too_many_arguments)]
fn commit_direct_writes(
    store: &Store,
    ctx: &Ctx,
    plan: Plan,
    session: git::Session,
    sig: git::Signature,
    opts: &Options,
    snap: &mut Snapshot,
    paths: Vec<String>,
) -> Result<Plan, ConsolidateError> {
    if paths.is_empty() {
        return Ok(plan);
    }
    let found = Changed::Found(paths);
    commit_consolidation(
        store,
        ctx,
        plan,
        Vec::new(),
        Vec::new(),
        session,
        sig,
        opts,
        snap,
        found,
    )
}

/// Appends the plan's events and its `consolidate` marker, writes the
/// views, and commits every changed store path: those `changed` found
/// before the writes and those written.
#[allow(clippy::too_many_arguments)]
fn commit_consolidation(
    store: &Store,
    ctx: &Ctx,
    mut plan: Plan,
    mut events: Vec<Event>,
    consumed: Vec<String>,
    mut session: git::Session,
    mut sig: git::Signature,
    opts: &Options,
    snap: &mut Snapshot,
    before: Changed<'_>,
) -> Result<Plan, ConsolidateError> {
    // Like a write, through the index in place: it is refreshed and
    // saved by the next command that reads the whole of it.
    // Waited for before writing: beside the writes, in the same folders,
    // both are slower (measured: 50 ms of writes took 120-200).
    let mut paths = before.wait()?;
    // A view a killed write left behind is brought up to the logs first:
    // committed as it is, the version would hold a log and a view that
    // disagree.
    version::repair_unfinished_writes(store, snap, session.workdir(), &mut paths)?;
    version::gate_commit(store, session.workdir(), &paths, Some(snap))?;
    let direct = direct_writes(store, session.workdir(), &paths, &plan)?;
    plan.direct = count_direct(&direct);
    let (added, changed, forgotten, conflicts) = plan.counts();
    let mut marker =
        crate::ops::write::event(ctx, Op::Consolidate, None, Vec::new(), String::new())?;
    marker.consumed = consumed;
    marker.reason = Some(format!(
        "{added} added, {changed} changed, {forgotten} forgotten, {conflicts} conflicts"
    ));
    events.push(marker.clone());
    let written = crate::ops::write::apply_to(store, snap, &events)?;
    plan.event = Some(marker.id.clone());
    // Commit every store path that differs from HEAD: the views and
    // MEMORY.md just written, and the logs (notes included).
    let mut message = opts.message.clone().unwrap_or_else(|| {
        format!("memoir: consolidate ({added} added, {changed} changed, {forgotten} forgotten)")
    });
    message.push_str("\n\n");
    for s in &plan.steps {
        let sign = match s.action {
            Action::Add => "+",
            Action::Merge | Action::Decided { .. } => "~",
            Action::Expire | Action::Evict => "-",
            _ => continue,
        };
        message.push_str(&format!("{sign} {}\n", s.key));
    }
    let prefix = store.workdir_prefix(session.workdir());
    paths.extend(written.into_iter().map(|rel| format!("{prefix}{rel}")));
    paths.sort_unstable();
    paths.dedup();
    // Memories written directly (remember, forget, resolve) since the last version.
    for (k, what) in &direct {
        let sign = match what {
            Direct::Added => "+",
            Direct::Changed => "~",
            Direct::Forgotten => "-",
        };
        message.push_str(&format!("{sign} {k} (written directly)\n"));
    }
    message.push_str(&format!(
        "\nMemoir-Consolidation: {}\nMemoir-Counts: added={added} changed={changed} forgotten={forgotten} conflicts={conflicts}\n",
        marker.id
    ));
    sig.seconds = ctx.now.0.div_euclid(1000);
    store.stop_at(Failpoint::BeforeCommit)?;
    session.stop_after_index(store.stops_at(Failpoint::AfterIndex));
    plan.commit = session.commit(&paths, &message, &sig)?;
    Ok(plan)
}

/// What a direct write did to a memory file since HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direct {
    /// The file is new.
    Added,
    /// The file changed.
    Changed,
    /// The file is gone.
    Forgotten,
}

/// The memory files among `paths` (work-tree-relative, differing from
/// HEAD) that the plan does not write: written directly since the last
/// version, each new, changed or gone against HEAD.
fn direct_writes(
    store: &Store,
    workdir: &std::path::Path,
    paths: &[String],
    plan: &Plan,
) -> Result<Vec<(Key, Direct)>, StoreError> {
    let mut keyed = Vec::new();
    for p in paths {
        let rel = p
            .rsplit_once("memory/")
            .map(|(_, r)| format!("memory/{r}"))
            .unwrap_or_default();
        // A step that writes nothing (a duplicate consumed, a conflict
        // left) does not account for the file's change: a direct write does.
        let writes = |s: &Step| !matches!(s.action, Action::Duplicate | Action::Conflict { .. });
        if let Some(k) = Key::from_rel_path(&rel)
            .filter(|k| !plan.steps.iter().any(|s| s.key == *k && writes(s)))
        {
            keyed.push((p.as_str(), k));
        }
    }
    if keyed.is_empty() {
        return Ok(Vec::new());
    }
    let wanted: Vec<&str> = keyed.iter().map(|(p, _)| *p).collect();
    let at_head = git::Repo::discover(&store.root)?.head_blobs(&wanted)?;
    Ok(keyed
        .into_iter()
        .map(|(p, k)| {
            let what = match (at_head.contains_key(p), workdir.join(p).exists()) {
                (false, _) => Direct::Added,
                (true, true) => Direct::Changed,
                (true, false) => Direct::Forgotten,
            };
            (k, what)
        })
        .collect())
}

/// (added, changed, forgotten) of direct writes.
fn count_direct(direct: &[(Key, Direct)]) -> (usize, usize, usize) {
    let n = |d: Direct| direct.iter().filter(|(_, w)| *w == d).count();
    (n(Direct::Added), n(Direct::Changed), n(Direct::Forgotten))
}

/// The store paths that differ from HEAD as a command starts writing
/// ([`changed_store_paths`]): still being found on a thread, or
/// found.
enum Changed<'scope> {
    Finding(std::thread::ScopedJoinHandle<'scope, Result<Vec<String>, StoreError>>),
    Found(Vec<String>),
}

impl Changed<'_> {
    /// The paths, once found.
    fn wait(self) -> Result<Vec<String>, StoreError> {
        match self {
            Changed::Found(paths) => Ok(paths),
            Changed::Finding(thread) => thread.join().unwrap_or_else(|_| {
                Err(StoreError::Io {
                    path: "memory".into(),
                    source: std::io::Error::other("the thread finding changed files failed"),
                })
            }),
        }
    }
}

impl From<crate::git::GitError> for ConsolidateError {
    fn from(e: crate::git::GitError) -> Self {
        ConsolidateError::Store(StoreError::Git(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempStore;

    fn options() -> Options {
        Options {
            author: Some(("Ada".into(), "ada@example.com".into())),
            ..Options::default()
        }
    }

    fn actions(plan: &Plan) -> Vec<(String, Action)> {
        plan.steps
            .iter()
            .map(|s| (s.key.to_string(), s.action.clone()))
            .collect()
    }

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

    #[test]
    fn a_proposal_for_a_new_memory_is_added_and_committed() {
        let mut t = TempStore::new();
        t.propose("project/db", "the database is postgres 16");
        assert_eq!(t.file("project/db"), None, "a proposal writes no file");
        let plan = consolidate(&t.store, &t.ctx, &options()).expect("consolidated");
        assert_eq!(actions(&plan), [("project/db".to_string(), Action::Add)]);
        assert!(plan.commit.is_some() && plan.event.is_some());
        let file = t.file("project/db").expect("written");
        assert!(file.contains("the database is postgres 16"), "{file}");
        // The proposal is consumed: nothing is left to do.
        let again = consolidate(&t.store, &t.ctx, &options()).expect("consolidated");
        assert!(again.steps.is_empty() && again.commit.is_none());
    }

    #[test]
    fn a_proposal_saying_what_the_memory_says_joins_its_source() {
        let mut t = TempStore::new();
        t.memory("project/db", "the database is postgres 16");
        let mut req = TempStore::request("project/db", "the database is postgres 16");
        req.source = "the ops runbook".into();
        req.collision = crate::ops::write::Collision::Propose;
        t.apply(&req);
        let plan = consolidate(&t.store, &t.ctx, &options()).expect("consolidated");
        assert_eq!(actions(&plan), [("project/db".to_string(), Action::Merge)]);
        let file = t.file("project/db").expect("kept");
        assert!(file.contains("a test; the ops runbook"), "{file}");
    }

    #[test]
    fn a_proposal_that_differs_waits_for_a_human_and_changes_nothing() {
        let mut t = TempStore::new();
        t.memory("project/db", "the database is postgres 16");
        let before = t.file("project/db");
        t.propose("project/db", "the database is mysql 8");
        let plan = consolidate(&t.store, &t.ctx, &options()).expect("consolidated");
        assert!(matches!(
            actions(&plan).as_slice(),
            [(k, Action::Conflict { .. })] if k == "project/db"
        ));
        assert_eq!(t.file("project/db"), before);
        // Still pending: the next consolidation sees it again.
        let again = consolidate(&t.store, &t.ctx, &options()).expect("consolidated");
        assert_eq!(again.conflicts().count(), 1);
    }

    #[test]
    fn an_expired_memory_is_forgotten_and_a_dry_run_changes_nothing() {
        let mut t = TempStore::new();
        let mut req = TempStore::request("project/freeze", "the code freeze lasts a week");
        req.expires = Some(t.ctx.now.date());
        t.apply(&req);
        t.later(3 * 86_400);
        let dry = Options {
            dry_run: true,
            ..options()
        };
        let plan = consolidate(&t.store, &t.ctx, &dry).expect("planned");
        assert_eq!(
            actions(&plan),
            [("project/freeze".to_string(), Action::Expire)]
        );
        assert!(
            t.file("project/freeze").is_some(),
            "a dry run writes nothing"
        );
        let plan = consolidate(&t.store, &t.ctx, &options()).expect("consolidated");
        assert_eq!(
            actions(&plan),
            [("project/freeze".to_string(), Action::Expire)]
        );
        assert_eq!(t.file("project/freeze"), None);
        let (replay, _) = crate::log::read::replay(&t.store).expect("replayed");
        assert_eq!(replay.view(&key("project/freeze")), None);
    }

    #[test]
    fn a_proposal_nearly_repeating_another_memory_is_a_conflict() {
        let mut t = TempStore::new();
        t.memory(
            "project/deploy",
            "deploys run from the main branch every friday",
        );
        t.propose(
            "project/deploys",
            "deploys run from the main branch every friday afternoon",
        );
        let plan = consolidate(&t.store, &t.ctx, &options()).expect("consolidated");
        let steps = actions(&plan);
        let [(k, Action::Conflict { reason })] = steps.as_slice() else {
            panic!("one conflict, not {steps:?}");
        };
        assert_eq!(k, "project/deploys");
        assert!(
            reason.contains("nearly duplicates project/deploy"),
            "{reason}"
        );
    }
}
