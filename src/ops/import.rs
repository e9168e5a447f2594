//! `import`: other tools' memory into the store, every item through the
//! write policy, each at its own date, and idempotent (a second import of
//! the same files adds nothing).
//!
//! Claude Code's topic files become memories (a change to an existing one
//! a proposal, as for `remember`); each entry of OpenClaw's daily notes
//! becomes a note at its date (one refused leaves the others to import),
//! and its curated `MEMORY.md` sections and `USER.md` directives proposals
//! that consolidation holds until a person accepts them (questions and
//! to-dos are notes). Every file that cannot be read is reported; the
//! others are imported all the same.
//!
//! Each memory goes where the caller's [`Route`] says: the CLI sends the
//! person's own (`user/`) to their personal store, never to the
//! repository the team commits. The repository's items are written first,
//! then the others, so a command writes one store after the other.

use crate::interop::claude_code::{self, keep_uncarried, parse_when, topic_request};
use crate::interop::openclaw;
use crate::model::event::Event;
use crate::model::key::Key;
use crate::model::memory::{Memory, MemoryType};
use crate::model::remember::{Collision, Remember};
use crate::model::time::{Timestamp, DAY_MS};
use crate::ops::write::{self, Preview, RememberOutcome};
use crate::store::{Ctx, Store, StoreError};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The largest file an import reads (a topic file is a few lines; a daily
/// note a page or two).
const MAX_FILE: u64 = 1 << 20;

/// What became of one item.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Written (or, with `dry_run`, would be).
    Added,
    /// Already in the store as given.
    Unchanged,
    /// Kept as a proposal for a human (a change to a memory, a curated
    /// section to review); with `dry_run`, would be.
    Proposed,
    /// Refused by the write policy (the message never holds a secret).
    Refused(String),
    /// The file could not be read as the format says.
    Invalid(String),
}

/// One item of an import: a file, or a part of one.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The file, relative to the folder imported (`memory/2026-11-28.md`),
    /// and a part of it where there are several (`MEMORY.md § Deploys`).
    pub what: String,
    /// The memory it went to (none for a note, or a file not read).
    pub key: Option<Key>,
    /// What became of it.
    pub outcome: Outcome,
}

/// Where an imported memory goes, as the caller chooses: the store
/// imported into (the repository's), or one other (the CLI: the person's
/// own store, for `user/` memories, as `remember` does).
pub trait Route {
    /// A failure to find, open or make the other store.
    type Error: From<StoreError>;
    /// Whether the memory at `key` goes to the other store (nothing is
    /// opened to say so: the repository's items are written first).
    fn elsewhere(&self, key: &Key) -> bool;
    /// The other store, opened on first use, or made with `create`:
    /// `None` when it does not exist and `create` is false (a dry run).
    fn other(&mut self, create: bool) -> Result<Option<&Store>, Self::Error>;
}

/// An item with its place among all of an import's (the files' order).
type Placed = (usize, Item);

/// A memory an import read, to be written where its route says.
struct Planned {
    /// Its place among the items (they are reported in the files' order).
    at: usize,
    /// The file it came from.
    what: String,
    /// The write.
    req: Remember,
    /// Its own date.
    when: Timestamp,
    /// A proposal for a human (OpenClaw's curated entries), else a `remember`.
    propose: bool,
    /// The format cannot carry memoir's own fields (Claude Code's has no
    /// tags, confidence or dates to review by): those of the memory at the
    /// key are kept, not proposed away.
    keep_uncarried: bool,
}

/// Writes each planned memory where `route` sends it: the repository's
/// first, then the others; returns the items in the files' order.
fn write_planned<R: Route>(
    repo: &Store,
    route: &mut R,
    ctx: &Ctx,
    mut items: Vec<Placed>,
    planned: Vec<Planned>,
    dry_run: bool,
) -> Result<Vec<Item>, R::Error> {
    let (elsewhere, here): (Vec<Planned>, Vec<Planned>) = planned
        .into_iter()
        .partition(|p| route.elsewhere(&p.req.key));
    let (pending, forgotten) = what_is_known(repo)?;
    // Each write is a remember or a proposal of its own: some 100 a
    // second on a large store, so a large import says how far it is.
    let total = here.len() + elsewhere.len();
    let meter = repo.meter("importing memories", total, total >= PROGRESS_FROM);
    let mut done = 0;
    let mut advance = || {
        done += 1;
        meter.advance(done);
    };
    for p in here {
        let outcome = write_one(repo, (&pending, &forgotten), ctx, &p, dry_run)?;
        items.push((p.at, item(p, outcome)));
        advance();
    }
    if !elsewhere.is_empty() {
        let other = route.other(!dry_run)?;
        let (pending, forgotten) = match other {
            Some(store) => what_is_known(store)?,
            None => Default::default(),
        };
        for p in elsewhere {
            let outcome = match other {
                Some(store) => write_one(store, (&pending, &forgotten), ctx, &p, dry_run)?,
                // A dry run into a store not made yet: the write policy's
                // verdict, read against the repository's store, where the
                // memory is not (else it would go there).
                None => write_one(repo, (&[], &forgotten), ctx, &p, true)?,
            };
            items.push((p.at, item(p, outcome)));
            advance();
        }
    }
    meter.finish();
    items.sort_by_key(|(at, _)| *at);
    Ok(items.into_iter().map(|(_, item)| item).collect())
}

/// When each forgotten memory of a store was forgotten.
type Forgotten = std::collections::HashMap<Key, Timestamp>;

/// A store's pending proposals, and when each of its forgotten memories
/// was forgotten (its latest `forget` among the heads), from one replay.
fn what_is_known(store: &Store) -> Result<(Vec<Event>, Forgotten), StoreError> {
    let replay = crate::log::read::replay(store)?.0;
    let forgotten = replay
        .memories
        .iter()
        .filter(|(_, v)| v.view.is_none())
        .filter_map(|(key, v)| {
            let at = v
                .heads
                .iter()
                .filter_map(|id| replay.events.get(id))
                .filter(|e| e.op == crate::model::event::Op::Forget)
                .map(|e| e.time)
                .max()?;
            Some((key.clone(), at))
        })
        .collect();
    Ok((replay.pending_events(), forgotten))
}

/// An import of this many memories or more says how far it is (on a
/// terminal).
const PROGRESS_FROM: usize = 100;

/// The item a planned memory became.
fn item(p: Planned, outcome: Outcome) -> Item {
    Item {
        what: p.what,
        key: Some(p.req.key),
        outcome,
    }
}

/// One planned memory into `store` (or its preview).
fn write_one(
    store: &Store,
    (pending, forgotten): (&[Event], &Forgotten),
    ctx: &Ctx,
    p: &Planned,
    dry_run: bool,
) -> Result<Outcome, StoreError> {
    if !store.has_scope(&p.req.key.scope) {
        return Ok(Outcome::Invalid(format!(
            "scope `{}` is not configured",
            p.req.key.scope
        )));
    }
    // Forgotten in memoir, and not changed where it came from since: the
    // forget stands (the next export keeps the other tool's file, which
    // would otherwise bring the memory back on every import).
    if forgotten
        .get(&p.req.key)
        .is_some_and(|at| p.when.min(ctx.now) <= *at)
    {
        return Ok(Outcome::Unchanged);
    }
    let ctx = at(ctx, p.when);
    let mut req = p.req.clone();
    if p.keep_uncarried {
        let current = store.read_memory_file(&req.key.rel_path())?;
        if let Some(old) = current.as_deref().and_then(|c| Memory::parse(c).ok()) {
            keep_uncarried(&mut req, &old);
        }
    }
    if p.propose {
        propose(store, &ctx, &req, pending, dry_run)
    } else {
        remember(store, &ctx, &req, pending, dry_run)
    }
}

/// Imports a Claude Code memory folder into `repo` (each memory where
/// `route` says) as `ctx.actor`; `ctx.now` bounds the items' own dates (a
/// date in the future is taken as now).
pub fn claude_code<R: Route>(
    repo: &Store,
    route: &mut R,
    ctx: &Ctx,
    dir: &Path,
    dry_run: bool,
) -> Result<Vec<Item>, R::Error> {
    let mut items = Vec::new();
    let mut planned = Vec::new();
    for (at, (name, read)) in markdown_files(dir, |n| n != claude_code::INDEX)?
        .into_iter()
        .enumerate()
    {
        let invalid = |message| (at, invalid(name.clone(), message));
        let (text, mtime) = match read {
            Ok(r) => r,
            Err(message) => {
                items.push(invalid(message));
                continue;
            }
        };
        // A name that holds a secret is refused before anything is made
        // of it: its slug, key and path would carry the token too.
        if let Some(refused) = named_secret(&name, "file name") {
            items.push((at, refused));
            continue;
        }
        let topic = match claude_code::parse_topic(&name, &text) {
            Ok(t) => t,
            Err(e) => {
                let line = e.line.map(|l| format!("line {l}: ")).unwrap_or_default();
                items.push(invalid(format!("{line}{}", e.message)));
                continue;
            }
        };
        let req = match topic_request(&topic) {
            Ok(r) => r,
            Err(message) => {
                items.push(invalid(message));
                continue;
            }
        };
        let when = topic
            .modified
            .as_deref()
            .and_then(parse_when)
            .or(mtime)
            .unwrap_or(ctx.now);
        planned.push(Planned {
            at,
            what: name,
            req,
            when,
            propose: false,
            keep_uncarried: true,
        });
    }
    write_planned(repo, route, ctx, items, planned, dry_run)
}

/// Imports an OpenClaw workspace into `repo`: each daily-note entry as a
/// note at its date, `MEMORY.md` sections and active `USER.md` directives
/// as proposals held for review (each where `route` says), but sections of
/// questions or to-dos, as notes.
pub fn openclaw<R: Route>(
    repo: &Store,
    route: &mut R,
    ctx: &Ctx,
    dir: &Path,
    dry_run: bool,
) -> Result<Vec<Item>, R::Error> {
    let (replay, _) = crate::log::read::replay(repo)?;
    // Notes already in the logs, by file and text: what a second import
    // must not add again.
    let notes = replay.note_events();
    let mut known: HashSet<String> = notes
        .iter()
        .map(|e| known_note(e.reason.as_deref(), &e.body))
        .collect();
    // An older memoir made one note of a whole daily note, its file in its
    // first line: an entry it holds is imported already.
    let mut whole: HashMap<&str, Vec<&str>> = HashMap::new();
    for e in notes.iter().filter(|e| e.reason.is_none()) {
        if let Some((file, text)) = e.body.split_once(":\n") {
            whole.entry(file).or_default().push(text);
        }
    }
    let notes = openclaw_daily_notes(repo, ctx, dir, &mut known, &whole, dry_run)?;
    let (mut items, planned) = openclaw_curated(repo, ctx, dir, notes.len(), &mut known, dry_run)?;
    items.extend(notes.into_iter().enumerate());
    write_planned(repo, route, ctx, items, planned, dry_run)
}

/// `ctx` at an item's own time, never later than now.
fn at(ctx: &Ctx, when: Timestamp) -> Ctx {
    Ctx {
        now: when.min(ctx.now),
        actor: ctx.actor.clone(),
    }
}

/// The refusal of an item whose name (a file's name, a section's title)
/// holds a secret, naming neither it nor anything derived from it.
fn named_secret(name: &str, what: &str) -> Option<Item> {
    let rule = crate::policy::secrets::find_in_name(name)?.rule;
    Some(Item {
        what: format!("<a {what} holding a secret>"),
        key: None,
        outcome: Outcome::Refused(format!(
            "secret:{rule}: the {what} holds a secret (value not shown); nothing made of it is imported"
        )),
    })
}

/// An item whose file could not be read as the format says.
fn invalid(what: String, message: String) -> Item {
    Item {
        what,
        key: None,
        outcome: Outcome::Invalid(message),
    }
}

/// The daily notes of `<dir>/memory/YYYY-MM-DD*.md`, as notes of their day.
fn openclaw_daily_notes(
    store: &Store,
    ctx: &Ctx,
    dir: &Path,
    known: &mut HashSet<String>,
    whole: &HashMap<&str, Vec<&str>>,
    dry_run: bool,
) -> Result<Vec<Item>, StoreError> {
    let daily = dir.join("memory");
    if !daily.is_dir() {
        return Ok(Vec::new());
    }
    let mut items = Vec::new();
    for (name, read) in markdown_files(&daily, |_| true)? {
        let what = format!("memory/{name}");
        let Some(day) = openclaw::daily_note_date(&name) else {
            continue;
        };
        let text = match read {
            Ok((text, _)) => text,
            Err(message) => {
                items.push(invalid(what, message));
                continue;
            }
        };
        let source = format!("imported from OpenClaw {what}");
        for (i, entry) in openclaw::daily_notes(&text).into_iter().enumerate() {
            // Noon of its day, a second apart: in the order of the file.
            let when = Timestamp(day.0 * DAY_MS + DAY_MS / 2 + i as i64 * 1000);
            let ctx = at(ctx, when);
            let at_line = format!("{source}:{}", entry.line);
            let note = Note {
                file: &source,
                source: &at_line,
                text: &entry.text,
            };
            let imported_whole = whole
                .get(source.as_str())
                .is_some_and(|texts| texts.iter().any(|t| t.contains(entry.text.as_str())));
            let (outcome, line) = match imported_whole {
                true => (Outcome::Unchanged, None),
                false => add_note(store, known, &ctx, &note, dry_run)?,
            };
            // The file's line: the entry's, or the one the policy refused in it.
            let line = entry.line + line.unwrap_or(1) - 1;
            items.push(Item {
                what: format!("{what}:{line}"),
                key: None,
                outcome,
            });
        }
    }
    Ok(items)
}

/// The sections of `MEMORY.md` (curated memory) and `USER.md` (the user's
/// directives), each a proposal for a human to review (undated: now),
/// placed from `first` on, but open questions and to-dos, which are notes
/// (added here); and the entries that could not be read.
fn openclaw_curated(
    store: &Store,
    ctx: &Ctx,
    dir: &Path,
    first: usize,
    known: &mut HashSet<String>,
    dry_run: bool,
) -> Result<(Vec<Placed>, Vec<Planned>), StoreError> {
    let now = ctx.now;
    let mut items = Vec::new();
    let mut planned = Vec::new();
    let mut at = first;
    for (file, parse) in [
        (
            "MEMORY.md",
            openclaw::curated as fn(&str) -> Vec<openclaw::Proposal>,
        ),
        ("USER.md", openclaw::directives),
    ] {
        let path = dir.join(file);
        if !path.is_file() {
            continue;
        }
        let text = match read_file(&path) {
            Ok((t, _)) => t,
            Err(message) => {
                items.push((at, invalid(file.into(), message)));
                at += 1;
                continue;
            }
        };
        for p in parse(&text) {
            if let Some(refused) = named_secret(&p.title, "title") {
                items.push((
                    at,
                    Item {
                        what: format!("{file} § <{}>", "a title holding a secret"),
                        ..refused
                    },
                ));
                at += 1;
                continue;
            }
            let what = section_label(file, &p.title);
            if p.open {
                // Questions and to-dos are not facts: a note, never a memory.
                let source = format!("imported from OpenClaw {what}");
                let note = Note {
                    file: &source,
                    source: &source,
                    text: &p.body,
                };
                let (outcome, _) = add_note(store, known, ctx, &note, dry_run)?;
                let key = None;
                items.push((at, Item { what, key, outcome }));
                at += 1;
                continue;
            }
            match proposal_request(&p, &what) {
                Ok(req) => planned.push(Planned {
                    at,
                    what,
                    req,
                    when: p.observed.map_or(now, |d| Timestamp(d.0 * DAY_MS)),
                    propose: true,
                    keep_uncarried: false,
                }),
                Err(message) => items.push((at, invalid(what, message))),
            }
            at += 1;
        }
    }
    Ok((items, planned))
}

/// The confidence of an OpenClaw curated entry: text another tool curated,
/// not a fact a person stated (1.0), as an extractor's candidate (0.8).
const IMPORTED_CONFIDENCE: f64 = 0.8;

/// Where an OpenClaw section comes from, `<file> § <its title>`, said in
/// a source (`imported from OpenClaw …`) the write policy takes: a title
/// too long for it is cut at a word and marked `…`.
fn section_label(file: &str, title: &str) -> String {
    const PREFIX: &str = "imported from OpenClaw ";
    let room = crate::policy::MAX_SOURCE_CHARS
        .saturating_sub(PREFIX.chars().count() + file.chars().count() + 3)
        .max(2);
    if title.chars().count() <= room {
        return format!("{file} § {title}");
    }
    let cut: String = title.chars().take(room - 1).collect();
    let cut = match cut.rfind(char::is_whitespace) {
        Some(at) if at > 0 => &cut[..at],
        _ => cut.as_str(),
    };
    format!("{file} § {}…", cut.trim_end())
}

/// The proposal an OpenClaw entry stands for, at `<scope>/<its title as a slug>`.
fn proposal_request(p: &openclaw::Proposal, what: &str) -> Result<Remember, String> {
    let name = crate::model::key::phrase_name(&p.title);
    let (key, _) = Key::parse(&format!("{}/{name}", p.scope)).map_err(|e| e.to_string())?;
    Ok(Remember {
        name: key.slug.clone(),
        key,
        description: p.description.clone(),
        kind: if p.scope == "user" {
            MemoryType::User
        } else {
            MemoryType::Project
        },
        tags: Vec::new(),
        source: format!("imported from OpenClaw {what}"),
        confidence: IMPORTED_CONFIDENCE,
        body: p.body.clone(),
        review_by: None,
        expires: None,
        // Curated by another tool, not stated to memoir: a person accepts it.
        collision: Collision::Review,
        expect: None,
    })
}

/// A note an import makes: its text, and where it came from.
struct Note<'a> {
    /// The file (`imported from OpenClaw memory/2026-11-27.md`): a note of
    /// the same text from it is the same note, wherever in it.
    file: &'a str,
    /// Its place in it (`…:3`), kept in the event's `reason`.
    source: &'a str,
    /// What it says.
    text: &'a str,
}

/// What identifies an imported note: its file and text. The line is left
/// out (an entry above it may come or go); a note made before sources
/// were kept apart says both in its text (`imported from OpenClaw
/// <file>:` then the text).
fn known_note(source: Option<&str>, body: &str) -> String {
    let (file, text) = match source {
        Some(s) => {
            let file = match s.rsplit_once(':') {
                Some((file, line)) if line.bytes().all(|b| b.is_ascii_digit()) => file,
                _ => s,
            };
            (file, body)
        }
        None => body.split_once(":\n").unwrap_or(("", body)),
    };
    format!("{file}\n{text}")
}

/// A note, unless one of the same file and text is in the logs already; a
/// refusal with the line of the note it refused.
fn add_note(
    store: &Store,
    known: &mut HashSet<String>,
    ctx: &Ctx,
    note: &Note<'_>,
    dry_run: bool,
) -> Result<(Outcome, Option<usize>), StoreError> {
    let id = known_note(Some(note.file), note.text);
    if known.contains(&id) {
        return Ok((Outcome::Unchanged, None));
    }
    if let Err(e) = crate::policy::free_text::check_note(note.text) {
        let line = match &e {
            StoreError::Refused { line, .. } => *line,
            _ => None,
        };
        return Ok((refused(e)?, line));
    }
    if !dry_run {
        if let Err(e) = write::note_from(store, ctx, note.text, Some(note.source)) {
            return Ok((refused(e)?, None));
        }
    }
    known.insert(id);
    Ok((Outcome::Added, None))
}

/// A proposal, unless the memory or a pending proposal already says it.
fn propose(
    store: &Store,
    ctx: &Ctx,
    req: &Remember,
    pending: &[Event],
    dry_run: bool,
) -> Result<Outcome, StoreError> {
    match write::preview(store, ctx, req) {
        Ok(Preview::Unchanged) => return Ok(Outcome::Unchanged),
        Ok(_) => {}
        Err(e) => return refused(e),
    }
    if crate::model::remember::is_proposed(pending, req) {
        return Ok(Outcome::Unchanged);
    }
    if dry_run {
        return Ok(Outcome::Proposed);
    }
    match write::remember(store, ctx, req) {
        Ok(_) => Ok(Outcome::Proposed),
        Err(e) => refused(e),
    }
}

/// A memory through `remember` (or its preview).
fn remember(
    store: &Store,
    ctx: &Ctx,
    req: &Remember,
    pending: &[Event],
    dry_run: bool,
) -> Result<Outcome, StoreError> {
    // A change imported before waits for a human already.
    if crate::model::remember::is_proposed(pending, req) {
        return Ok(Outcome::Unchanged);
    }
    if dry_run {
        return match write::preview(store, ctx, req) {
            Ok(Preview::New) => Ok(Outcome::Added),
            Ok(Preview::Unchanged) => Ok(Outcome::Unchanged),
            Ok(Preview::Changed) => Ok(Outcome::Proposed),
            Err(e) => refused(e),
        };
    }
    match write::remember(store, ctx, req) {
        Ok(RememberOutcome::Written { .. }) => Ok(Outcome::Added),
        Ok(RememberOutcome::Unchanged { .. }) => Ok(Outcome::Unchanged),
        Ok(RememberOutcome::Proposed { .. } | RememberOutcome::Moved { .. }) => {
            Ok(Outcome::Proposed)
        }
        Err(e) => refused(e),
    }
}

/// A refusal or a malformed item as an outcome; any other error stops the import.
fn refused(e: StoreError) -> Result<Outcome, StoreError> {
    match e {
        // The rule and why, not the line of a file that was never written.
        StoreError::Refused { rule, message, .. } => {
            Ok(Outcome::Refused(format!("{rule}: {message}")))
        }
        e if e.is_malformed() => Ok(Outcome::Invalid(e.to_string())),
        other => Err(other),
    }
}

/// A file read: its text and modification time, or why not.
type Read = Result<(String, Option<Timestamp>), String>;

/// The folder's `*.md` regular files that `keep` lets through, sorted,
/// each read (links and other kinds are reported, not followed).
fn markdown_files(
    dir: &Path,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<(String, Read)>, StoreError> {
    let entries = std::fs::read_dir(dir).map_err(|source| StoreError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".md") || !keep(&name) {
            continue;
        }
        let read = match entry.file_type() {
            Ok(t) if t.is_file() => read_file(&entry.path()),
            Ok(t) if t.is_dir() => continue,
            _ => Err("not a regular file (links are not followed)".to_string()),
        };
        out.push((name, read));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// A file's text (at most MAX_FILE bytes, UTF-8) and modification time.
/// Opened as a store file is (`safe_file`): what was a regular file when
/// the folder was listed may be a FIFO or a link by the open.
fn read_file(path: &Path) -> Read {
    use crate::fs::safe_file::{self, ReadError};
    let refused = |e: ReadError| match e {
        ReadError::Link | ReadError::NotRegular => {
            "not a regular file (links are not followed)".to_string()
        }
        ReadError::TooLarge(_) => format!("larger than {MAX_FILE} bytes"),
        ReadError::Io(e) => e.to_string(),
    };
    let (file, meta) = safe_file::open(path)
        .map_err(refused)?
        .ok_or_else(|| "no longer there".to_string())?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| Timestamp(d.as_millis() as i64));
    let bytes = safe_file::read_capped(file, meta.len(), MAX_FILE).map_err(refused)?;
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    Ok((text, mtime))
}
