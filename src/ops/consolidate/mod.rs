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

use crate::change::version::{self, begin_version, changed_store_paths, VersionError};
use crate::git;
use crate::index::{Index, Snapshot};
use crate::log::replay::Replay;
use crate::model::event::{Event, Op};
use crate::model::key::Key;
use crate::model::text;
use crate::model::version_message::{Change, Made, Sign, VersionMessage};
use crate::store::{Ctx, Failpoint, Store, StoreError};

mod plan;
use plan::{plan, plan_events, Basis, Unsure};

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
    /// The store's set-up files the commit carries (store-relative:
    /// `.gitattributes`, MEMORY.md, the folders' `.gitkeep`,
    /// `memory/config.yaml`)
    /// when it is the store's first version; empty otherwise.
    pub setup: Vec<String>,
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
    pub extracted: Vec<crate::model::remember::Remember>,
    /// The notes the extractor read: the consolidation consumes them.
    pub notes: Vec<String>,
    /// Decisions a human made on the plan's conflicts, by key.
    pub decisions: std::collections::BTreeMap<Key, crate::change::resolve::Decision>,
    /// Proposals held for review (imported curated text) to plan as any
    /// other, by key (`--accept`).
    pub accept: Vec<Key>,
    /// Every proposal held for review is accepted (`--accept-all`).
    pub accept_all: bool,
}

impl Options {
    /// Whether a proposal held for review at `key` is accepted.
    pub fn accepts(&self, key: &Key) -> bool {
        self.accept_all || self.accept.contains(key)
    }
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

/// Plans and (unless `dry_run`) applies a consolidation, then commits
/// the store. Git's preconditions are checked and its index lock taken
/// before anything is written.
pub fn consolidate(store: &Store, ctx: &Ctx, opts: &Options) -> Result<Plan, VersionError> {
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
        // A dry run counts them too: what it says is what the run does.
        let changed = match (&session, opts.dry_run) {
            (Some(_), _) | (None, true) => {
                Changed::Finding(scope.spawn(move || changed_store_paths(store)))
            }
            (None, false) => Changed::Found(Vec::new()),
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
        crate::policy::memory::check_memory(&store.config, &m, &content, &c.key.rel_path())?;
        proposals.push(crate::change::event::event(
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
) -> Result<Plan, VersionError> {
    // The index first: bringing it up to date may replay the logs, and
    // two replays must not be held at once.
    let mut snap = Index::for_write(store)?;
    // Planned from the index and its tail when they can answer (a human
    // deciding conflicts now needs the versions' history: a replay).
    let fast = match snap.pending_events() {
        Some(mut pending) if opts.decisions.is_empty() => {
            pending.extend(proposals.iter().cloned());
            let pending: Vec<&Event> = pending.iter().collect();
            let basis = Basis::Index(store, &snap);
            match plan(store, &basis, &pending, ctx.now, &snap, opts) {
                Ok(plan) if opts.dry_run => return with_direct_writes(store, plan, changed),
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
            let by = Committer::new(store, ctx, session, sig, opts);
            return commit_consolidation(by, plan, events, consumed, &mut snap, changed);
        }
        // With nothing to apply, an interrupted consolidation may need
        // finishing, which takes the replay below. Only if there is one:
        // its marker is in a log that differs from HEAD.
        let paths = changed.wait()?;
        if !uncommitted_marker(store, &paths)? {
            let by = Committer::new(store, ctx, session, sig, opts);
            return commit_direct_writes(by, plan, &mut snap, paths);
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
    Ok(store
        .repo()
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
) -> Result<Plan, VersionError> {
    let (replay, _) = crate::log::read::replay_with(store, proposals.clone())?;
    let basis = Basis::Replay(&replay);
    let pending: Vec<&Event> = replay
        .pending
        .iter()
        .filter_map(|id| replay.events.get(id))
        .collect();
    // A replay has the text of every view it lists, unless the logs
    // changed between its two reads (a git command beside memoir).
    let Ok(mut plan) = plan(store, &basis, &pending, ctx.now, snap, opts) else {
        return Err(StoreError::Busy(
            "the logs changed while consolidate read them; run it again".into(),
        )
        .into());
    };
    if opts.dry_run {
        return with_direct_writes(store, plan, changed);
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
            let by = Committer::new(store, ctx, session, sig, opts);
            return commit_direct_writes(by, plan, snap, paths);
        };
        let by = Committer::new(store, ctx, session, sig, opts);
        return finish_interrupted(by, plan, last);
    }
    drop(replay);
    let by = Committer::new(store, ctx, session, sig, opts);
    commit_consolidation(by, plan, events, consumed, snap, changed)
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
        let (resolved, _) =
            crate::change::resolve::resolve_events(store, ctx, replay, key, decision)?;
        let choice = match decision {
            crate::change::resolve::Decision::Keep => "keep",
            crate::change::resolve::Decision::Take(_) => "take",
            crate::change::resolve::Decision::Both => "both",
            crate::change::resolve::Decision::BothWithAncestor => "both",
            crate::change::resolve::Decision::Content(_) => "edit",
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

/// Who commits a version, and with what: the store, the time and actor,
/// the git session and signature, the options the command was given.
struct Committer<'a> {
    store: &'a Store,
    ctx: &'a Ctx,
    session: git::Session,
    sig: git::Signature,
    opts: &'a Options,
}

impl<'a> Committer<'a> {
    fn new(
        store: &'a Store,
        ctx: &'a Ctx,
        session: git::Session,
        sig: git::Signature,
        opts: &'a Options,
    ) -> Committer<'a> {
        Committer {
            store,
            ctx,
            session,
            sig,
            opts,
        }
    }
}

/// Finishes a consolidation interrupted after its log append (its
/// `consolidate` event `last` is in no commit): the views it left half
/// written are repaired, and the store is committed.
fn finish_interrupted(
    by: Committer<'_>,
    mut plan: Plan,
    last: &Event,
) -> Result<Plan, VersionError> {
    let Committer {
        store,
        ctx,
        session,
        mut sig,
        ..
    } = by;
    // The repair writes the store: what differs from HEAD is found
    // again after it.
    crate::change::rebuild::rebuild_locked(store, false, false)?;
    let message = VersionMessage {
        summary: "memoir: consolidate (finished after an interruption)".into(),
        prose: last.reason.clone(),
        changes: Vec::new(),
        made: Made::Consolidation {
            event: last.id.clone(),
        },
        counts: Vec::new(),
    }
    .render();
    let paths = changed_store_paths(store)?;
    version::gate_commit(store, &paths, None)?;
    sig.seconds = ctx.now.0.div_euclid(1000);
    plan.event = Some(last.id.clone());
    plan.commit = version::commit(store, session, &paths, &message, &sig)?;
    Ok(plan)
}

/// A dry run's plan with the direct writes the version would commit
/// counted, as the real run's message counts them (a dry run said "0
/// added" where the run then committed what `remember` had written).
fn with_direct_writes(
    store: &Store,
    mut plan: Plan,
    changed: Changed<'_>,
) -> Result<Plan, VersionError> {
    let paths = changed.wait()?;
    let direct = direct_writes(store, store.repo().workdir(), &paths, &plan)?;
    plan.direct = count_direct(&direct);
    Ok(plan)
}

/// With nothing to apply: what `remember`, `forget`, `note` and
/// `resolve` wrote since the last version (`paths`, from
/// [`changed_store_paths`]) is committed as a new one, if any.
fn commit_direct_writes(
    by: Committer<'_>,
    plan: Plan,
    snap: &mut Snapshot,
    paths: Vec<String>,
) -> Result<Plan, VersionError> {
    if paths.is_empty() {
        return Ok(plan);
    }
    let found = Changed::Found(paths);
    commit_consolidation(by, plan, Vec::new(), Vec::new(), snap, found)
}

/// Appends the plan's events and its `consolidate` marker, writes the
/// views, and commits every changed store path: those `changed` found
/// before the writes and those written.
fn commit_consolidation(
    by: Committer<'_>,
    mut plan: Plan,
    mut events: Vec<Event>,
    consumed: Vec<String>,
    snap: &mut Snapshot,
    before: Changed<'_>,
) -> Result<Plan, VersionError> {
    let Committer {
        store,
        ctx,
        mut session,
        mut sig,
        opts,
    } = by;
    // Like a write, through the index in place: it is refreshed and
    // saved by the next command that reads the whole of it.
    // Waited for before writing: beside the writes, in the same folders,
    // both are slower (measured: 50 ms of writes took 120-200).
    let mut paths = before.wait()?;
    // A view a killed write left behind is brought up to the logs first:
    // committed as it is, the version would hold a log and a view that
    // disagree.
    version::repair_unfinished_writes(store, snap, &mut paths)?;
    version::gate_commit(store, &paths, Some(snap))?;
    let direct = direct_writes(store, session.workdir(), &paths, &plan)?;
    plan.direct = count_direct(&direct);
    let (added, changed, forgotten, conflicts) = plan.counts();
    let mut marker =
        crate::change::event::event(ctx, Op::Consolidate, None, Vec::new(), String::new())?;
    marker.consumed = consumed;
    marker.reason = Some(format!(
        "{added} added, {changed} changed, {forgotten} forgotten, {conflicts} conflicts"
    ));
    events.push(marker.clone());
    let written = crate::change::batch::apply_to(store, snap, &events)?;
    plan.event = Some(marker.id.clone());
    let prefix = store.prefix();
    paths.extend(written.into_iter().map(|rel| format!("{prefix}{rel}")));
    paths.sort_unstable();
    paths.dedup();
    // The logs' folder new to HEAD: this is the store's first version,
    // which carries what `init` made, said so rather than as "0 added".
    if paths.contains(&format!("{prefix}memory/log/.gitkeep")) {
        plan.setup = paths
            .iter()
            .filter_map(|p| p.strip_prefix(prefix))
            .filter(|r| {
                *r == ".gitattributes"
                    || *r == crate::render::memory_md::MEMORY_MD
                    || *r == crate::model::config::CONFIG_PATH
                    || r.ends_with("/.gitkeep")
            })
            .map(str::to_string)
            .collect();
    }
    // Commit every store path that differs from HEAD: the views and
    // MEMORY.md just written, and the logs (notes included).
    let message = version_message(&plan, &direct, &marker.id, opts.message.as_deref());
    sig.seconds = ctx.now.0.div_euclid(1000);
    store.stop_at(Failpoint::BeforeCommit)?;
    session.stop_after_index(store.stops_at(Failpoint::AfterIndex));
    plan.commit = version::commit(store, session, &paths, &message, &sig)?;
    Ok(plan)
}

/// The version's commit message: the summary (`-m`, else the counts), the
/// set-up a first version commits, each memory the plan or a direct
/// write changed, and the trailers.
fn version_message(
    plan: &Plan,
    direct: &[(Key, Direct)],
    event: &str,
    message: Option<&str>,
) -> String {
    let (added, changed, forgotten, conflicts) = plan.counts();
    let summary = message.map(str::to_string).unwrap_or_else(|| {
        let what = if plan.setup.is_empty() {
            "consolidate"
        } else {
            "the store's first version"
        };
        format!("memoir: {what} ({added} added, {changed} changed, {forgotten} forgotten)")
    });
    let mut changes = Vec::new();
    for s in &plan.steps {
        let sign = match s.action {
            Action::Add => Sign::Added,
            Action::Merge | Action::Decided { .. } => Sign::Changed,
            Action::Expire | Action::Evict => Sign::Forgotten,
            _ => continue,
        };
        changes.push(Change {
            sign,
            key: s.key.to_string(),
            direct: false,
        });
    }
    // Memories written directly (remember, forget, resolve) since the last version.
    for (k, what) in direct {
        let sign = match what {
            Direct::Added => Sign::Added,
            Direct::Changed => Sign::Changed,
            Direct::Forgotten => Sign::Forgotten,
        };
        changes.push(Change {
            sign,
            key: k.to_string(),
            direct: true,
        });
    }
    let counts = [
        ("added", added),
        ("changed", changed),
        ("forgotten", forgotten),
        ("conflicts", conflicts),
    ];
    VersionMessage {
        summary,
        prose: (!plan.setup.is_empty())
            .then(|| format!("The store's set-up: {}", plan.setup.join(", "))),
        changes,
        made: Made::Consolidation {
            event: event.to_string(),
        },
        counts: counts
            .iter()
            .map(|(name, n)| (name.to_string(), *n as u64))
            .collect(),
    }
    .render()
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
    let at_head = store.repo().head_blobs(&wanted)?;
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
        req.collision = crate::model::remember::Collision::Propose;
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
