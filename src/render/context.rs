//! The block `context` injects into a prompt (format in `docs/search.md`):
//! the relevant memories and notes for a query, or the hot memory for a
//! session's start, within a token budget.
//!
//! Pure: it takes what the search found and what the files say now, and
//! returns the text and what went into it. The reading is the caller's:
//! the relevant memories come as a lazy iterator, so that the files past
//! the budget are never read.

use crate::model::key::Key;
use crate::model::memory::{Memory, Summary};
use crate::model::text::{estimate_tokens, printable};
use crate::model::time::Timestamp;
use crate::render::memory_md;
use std::borrow::Cow;

/// A rendered block and what went into it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block {
    /// The block; empty when there is nothing to say.
    pub text: String,
    /// Its estimated size in tokens.
    pub tokens: usize,
    /// The memories it includes, in the order it shows them.
    pub memories: Vec<Key>,
    /// The ids of the notes it includes (and `MEMORY.md:<line>` for the
    /// pieces of the team's own text).
    pub notes: Vec<String>,
    /// Memories that were relevant (or indexed) but did not fit.
    pub omitted: usize,
    /// Everything shown was vouched for by its source (each memory and
    /// note [`Found`] says `clean`); never for the hot memory.
    pub vouched: bool,
}

/// Neutralizes anything in memory text that could open or close one of the
/// context's own elements (`<relevant_memories>`, `<memory …>`, …), so a
/// memory cannot forge or end the block it sits in.
pub fn neutralize(text: &str) -> String {
    // A control character (an ESC sequence, a NUL in a hand-edited file)
    // reaches the agent's prompt escaped, as on a terminal: the hooks
    // print into a pipe.
    let text = if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    };
    let text = printable(&text, true);
    let text = text.as_ref();
    // "memory" also covers memory_index; each is matched as a prefix. A
    // test holds this list to every element this file and the recall
    // module write.
    const TAGS: [&str; 8] = [
        "relevant_memories",
        "memory",
        "note",
        "open_conflicts",
        "recent_notes",
        "hot_memory",
        "personal_",
        "team_text",
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let name = after.strip_prefix('/').unwrap_or(after);
        let forged = TAGS.iter().any(|t| {
            name.len() >= t.len()
                && name.is_char_boundary(t.len())
                && name[..t.len()].eq_ignore_ascii_case(t)
        });
        out.push_str(if forged { "&lt;" } else { "<" });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// An attribute value: it can neither end its quotes nor open a tag, and
/// stays on its line.
fn attr(value: &str) -> String {
    printable(&value.replace(['\r', '\n'], " "), false)
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('\n', " ")
}

/// What a line costs in a block: its tokens and its newline.
pub fn line_cost(line: &str) -> usize {
    estimate_tokens(line) + 1
}

/// Lines added to a block while they fit a token budget.
struct Budget {
    lines: Vec<String>,
    used: usize,
    limit: usize,
}

impl Budget {
    fn new(limit: usize) -> Budget {
        Budget {
            lines: Vec::new(),
            used: 0,
            limit,
        }
    }

    fn cost(line: &str) -> usize {
        line_cost(line)
    }

    /// Adds the line if it fits with `reserve` tokens left over.
    fn push(&mut self, line: String, reserve: usize) -> bool {
        let c = Budget::cost(&line);
        if self.used + c + reserve > self.limit {
            return false;
        }
        self.used += c;
        self.lines.push(line);
        true
    }

    /// Ends the block with its closing tag (reserved for all along) and
    /// puts the text into `out`.
    fn close(mut self, tag: &str, mut out: Block) -> Block {
        self.push(tag.into(), 0);
        out.text = self.lines.join("\n");
        out.text.push('\n');
        out.tokens = self.used;
        out
    }
}

/// The block of a person's own store, told apart from the repository's
/// beside it: its outer element becomes `<personal_memories>` (for a
/// query) or `<personal_hot_memory>` (without one). Takes the block's
/// text and tokens, returns them renamed.
pub fn as_personal(text: String, tokens: usize) -> (String, usize) {
    for (open, close, new_open, new_close) in [
        (
            RELEVANT_OPEN,
            RELEVANT_CLOSE,
            "<personal_memories>",
            "</personal_memories>",
        ),
        (
            HOT_OPEN,
            HOT_CLOSE,
            "<personal_hot_memory>",
            "</personal_hot_memory>",
        ),
    ] {
        let body = text
            .strip_prefix(open)
            .and_then(|t| t.trim_end_matches('\n').strip_suffix(close));
        if let Some(body) = body {
            let tokens = tokens + Budget::cost(new_open) + Budget::cost(new_close)
                - Budget::cost(open)
                - Budget::cost(close);
            return (format!("{new_open}{body}{new_close}\n"), tokens);
        }
    }
    (text, tokens)
}

const RELEVANT_OPEN: &str = "<relevant_memories>";
const RELEVANT_CLOSE: &str = "</relevant_memories>";
const MEMORY_CLOSE: &str = "</memory>";

/// One thing a search found, as `context <query>` shows it.
#[derive(Debug, Clone)]
pub enum Found<'a> {
    /// A memory: what the search said of it, and its file as it is now.
    Memory(FoundMemory<'a>),
    /// A note, or a piece of MEMORY.md's own text.
    Note(FoundNote<'a>),
}

/// A relevant memory: what the search said of it (its key, its summary's
/// date, source and confidence, its flags) and what its file says now.
#[derive(Debug, Clone)]
pub struct FoundMemory<'a> {
    /// Its key.
    pub key: &'a Key,
    /// What the search read in its frontmatter.
    pub summary: &'a Summary,
    /// Its versions disagree.
    pub conflict: bool,
    /// Past its `review_by` date.
    pub stale: bool,
    /// Its file as it is now: description and body.
    pub memory: Memory,
    /// Its source vouches for this content (no secret found in it).
    pub clean: bool,
}

/// A relevant note or piece of MEMORY.md's own text.
#[derive(Debug, Clone)]
pub struct FoundNote<'a> {
    /// Its event id, or `MEMORY.md:<line>`.
    pub id: &'a str,
    /// Where it comes from.
    pub from: NoteFrom<'a>,
    /// What it says.
    pub text: &'a str,
    /// Its source vouches for its text (no secret found in it).
    pub clean: bool,
}

/// Where a found note comes from.
#[derive(Debug, Clone, Copy)]
pub enum NoteFrom<'a> {
    /// A log: an unconfirmed observation, by its writer (`Name <email>`).
    Log {
        /// When it was written.
        time: Timestamp,
        /// Who wrote it.
        actor: &'a str,
    },
    /// The team's text in MEMORY.md, from this line.
    TeamText {
        /// Where it starts, from 1.
        line: u32,
    },
}

/// `context <query>`: of the `total` things found, in rank order, each
/// memory whole or cut in its body and each note whole, while the budget
/// lasts. `found` yields each in turn, or none for one that could not be
/// read (skipped); it is not asked past the budget.
pub fn relevant<'a>(
    found: impl IntoIterator<Item = Option<Found<'a>>>,
    total: usize,
    budget: usize,
) -> Block {
    if total == 0 {
        return Block {
            vouched: true,
            ..Block::default()
        };
    }
    // Relevant, but not one fits the budget: nothing is printed, and what
    // was left out is counted (a budget too small is not "nothing relevant").
    let none_fits = Block {
        omitted: total,
        vouched: true,
        ..Block::default()
    };
    let mut b = Budget::new(budget);
    if !b.push(RELEVANT_OPEN.into(), Budget::cost(RELEVANT_CLOSE)) {
        return none_fits;
    }
    let mut out = Block {
        vouched: true,
        ..Block::default()
    };
    for (i, item) in found.into_iter().enumerate() {
        let Some(item) = item else { continue };
        let shown = match item {
            Found::Memory(m) => {
                let shown = push_memory(&mut b, &m);
                if !matches!(shown, Shown::Not) {
                    out.memories.push(m.key.clone());
                    out.vouched &= m.clean;
                }
                shown
            }
            Found::Note(note) => {
                let shown = push_found_note(&mut b, &note);
                if !matches!(shown, Shown::Not) {
                    out.notes.push(note.id.to_string());
                    out.vouched &= note.clean;
                }
                shown
            }
        };
        match shown {
            Shown::Whole => {}
            Shown::Cut => {
                out.omitted = total - i - 1;
                break;
            }
            Shown::Not => {
                out.omitted = total - i;
                break;
            }
        }
    }
    if out.memories.is_empty() && out.notes.is_empty() {
        return none_fits;
    }
    b.close(RELEVANT_CLOSE, out)
}

/// Adds a relevant note (or piece of MEMORY.md's own text) whole, or
/// nothing: an observation cut short could say the opposite of what it
/// said.
fn push_found_note(b: &mut Budget, note: &FoundNote) -> Shown {
    let (head, close) = match note.from {
        NoteFrom::Log { time, actor } => {
            let actor = actor.split(" <").next().unwrap_or(actor);
            let head = format!(
                "<note time=\"{}\" writer=\"{}\" status=\"unconfirmed\">",
                time.seconds(),
                attr(actor)
            );
            (head, "</note>")
        }
        NoteFrom::TeamText { line } => (
            format!(
                "<team_text file=\"{}\" line=\"{line}\">",
                memory_md::MEMORY_MD
            ),
            "</team_text>",
        ),
    };
    let text = neutralize(note.text.trim_matches('\n'));
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let cost = Budget::cost(&head)
        + lines.iter().map(|l| Budget::cost(l)).sum::<usize>()
        + Budget::cost(close);
    let reserve = Budget::cost(RELEVANT_CLOSE);
    if b.used + cost + reserve > b.limit {
        return Shown::Not;
    }
    b.push(head, reserve);
    for l in lines {
        b.push(l.to_string(), reserve);
    }
    b.push(close.into(), reserve);
    Shown::Whole
}

/// How much of a memory went into a block.
enum Shown {
    /// All of it.
    Whole,
    /// Its heading and description, and its body only in part.
    Cut,
    /// Nothing: not even its heading and description fit.
    Not,
}

/// Adds a memory to a block: its heading and description, or nothing if
/// they do not fit; then its body while it fits.
fn push_memory(b: &mut Budget, found: &FoundMemory) -> Shown {
    let head = memory_head(found);
    let reserve = Budget::cost(MEMORY_CLOSE) + Budget::cost(RELEVANT_CLOSE);
    let m = &found.memory;
    let description = neutralize(&m.description);
    // A memory needs at least its heading and description to be useful.
    if Budget::cost(&head) + Budget::cost(&description) + reserve + b.used > b.limit {
        return Shown::Not;
    }
    b.push(head, reserve);
    b.push(description, reserve);
    let body = neutralize(m.body.trim_matches('\n'));
    let whole = body
        .lines()
        .all(|line| b.push(line.trim_end_matches('\r').to_string(), reserve));
    b.push(MEMORY_CLOSE.into(), Budget::cost(RELEVANT_CLOSE));
    if whole {
        Shown::Whole
    } else {
        Shown::Cut
    }
}

/// A memory's opening tag: key, date, source and confidence, and the
/// flags that apply.
fn memory_head(found: &FoundMemory) -> String {
    let s = found.summary;
    let mut head = format!(
        "<memory key=\"{}\" updated=\"{}\" source=\"{}\" confidence=\"{}\"",
        found.key,
        if s.updated > 0 {
            Timestamp(s.updated).date().to_string()
        } else {
            String::new()
        },
        attr(s.source.as_deref().unwrap_or("")),
        s.confidence
    );
    if found.conflict {
        head.push_str(" conflict=\"open\"");
    }
    if found.stale {
        head.push_str(" review=\"overdue\"");
    }
    head.push('>');
    head
}

const HOT_OPEN: &str = "<hot_memory>";
const HOT_CLOSE: &str = "</hot_memory>";
const INDEX_OPEN: &str = "<memory_index>";
const INDEX_CLOSE: &str = "</memory_index>";

/// What the hot memory is made of, but for the recent notes.
#[derive(Debug, Clone)]
pub struct Hot<'a> {
    /// The memories the index lists, as MEMORY.md does
    /// ([`memory_md::Summaries::render`]).
    pub index: &'a memory_md::Summaries<'a>,
    /// MEMORY.md's line budget (`index_budget`).
    pub index_lines: usize,
    /// The keys of the open conflicts, in order.
    pub conflicts: Vec<&'a str>,
}

/// A note from a log, for the hot memory's recent notes.
#[derive(Debug, Clone)]
pub struct Note {
    /// Its event id.
    pub id: String,
    /// When it was written.
    pub time: Timestamp,
    /// Its writer, `Name <email>`.
    pub actor: String,
    /// What it says.
    pub text: String,
}

/// `context` without a query: the index, the open conflicts and the recent
/// notes (newest first, asked for only once the block has begun), in that
/// order while the budget lasts.
pub fn hot(hot: &Hot, recent_notes: impl FnOnce() -> Vec<Note>, budget: usize) -> Block {
    let mut out = Block::default();
    let mut b = Budget::new(budget);
    if !b.push(HOT_OPEN.into(), Budget::cost(HOT_CLOSE)) {
        return out;
    }
    push_index(&mut b, hot, &mut out);
    push_conflicts(&mut b, &hot.conflicts);
    push_notes(&mut b, &recent_notes(), &mut out);
    // Nothing but the opening tag: nothing to say.
    if b.lines.len() == 1 {
        return Block::default();
    }
    b.close(HOT_CLOSE, out)
}

/// The index: MEMORY.md's generated block for the memory files; past the
/// token budget, the block for fewer lines, which keeps the most valuable
/// memories and says how many more there are. Left out if even the
/// smallest does not fit.
fn push_index(b: &mut Budget, hot: &Hot, out: &mut Block) {
    let room = Budget::cost(INDEX_OPEN) + Budget::cost(INDEX_CLOSE) + Budget::cost(HOT_CLOSE);
    let available = b.limit.saturating_sub(b.used + room);
    let block = index_block(hot.index, hot.index_lines, available);
    if hot.index.total() == 0 || block_cost(&block) > available || !b.push(INDEX_OPEN.into(), 0) {
        return;
    }
    for line in block.text.lines() {
        b.push(neutralize(line), 0);
        out.memories.extend(listed_key(line));
    }
    b.push(INDEX_CLOSE.into(), 0);
    out.omitted = block.omitted;
}

/// MEMORY.md's block for `lines` lines, or for the largest line budget
/// whose block costs at most `available` tokens.
fn index_block(all: &memory_md::Summaries, lines: usize, available: usize) -> memory_md::Block {
    let block = all.render(lines);
    if block_cost(&block) <= available {
        return block;
    }
    // The largest line budget whose block fits: binary search.
    let (mut lo, mut hi) = (0, lines);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if block_cost(&all.render(mid)) <= available {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    all.render(lo)
}

/// What an index block costs as the context prints it (neutralized).
fn block_cost(block: &memory_md::Block) -> usize {
    block
        .text
        .lines()
        .map(|l| Budget::cost(&neutralize(l)))
        .sum()
}

/// The memory an index line lists (`- [name](memory/scope/slug.md) — …`).
fn listed_key(line: &str) -> Option<Key> {
    line.strip_prefix("- [")
        .and_then(|l| l.split("](").nth(1))
        .and_then(|r| r.split(')').next())
        .and_then(Key::from_rel_path)
}

/// Adds a section of the hot memory: its opening tag, only if some ten
/// tokens of what it holds fit after it too (a section that shows nothing
/// would only cost tokens); then what `fill` adds, given the room to keep
/// for the closing tags; then its closing tag, reserved for all along.
fn push_section(b: &mut Budget, name: &str, fill: impl FnOnce(&mut Budget, usize)) {
    let close = format!("</{name}>");
    let reserve = Budget::cost(&close) + Budget::cost(HOT_CLOSE);
    if b.push(format!("<{name}>"), reserve + 10) {
        fill(b, reserve);
        b.push(close, Budget::cost(HOT_CLOSE));
    }
}

/// The open conflicts, each with how to resolve it, while they fit.
fn push_conflicts(b: &mut Budget, conflicts: &[&str]) {
    if conflicts.is_empty() {
        return;
    }
    push_section(b, "open_conflicts", |b, reserve| {
        for k in conflicts {
            let line = format!("- {k}: versions disagree; the file shows what they agreed on (`memoir resolve {k}`)");
            if !b.push(line, reserve) {
                break;
            }
        }
    });
}

/// The recent notes, newest first, while they fit: the first that does not
/// fit whole ends the section.
fn push_notes(b: &mut Budget, notes: &[Note], out: &mut Block) {
    if notes.is_empty() {
        return;
    }
    push_section(b, "recent_notes", |b, reserve| {
        for note in notes {
            if !push_note(b, note, reserve) {
                break;
            }
            // What the section printed is what the receipt says was injected.
            out.notes.push(note.id.clone());
        }
    });
}

/// Adds a note: its first line after its time and writer's name, the
/// others indented; false if it did not fit whole.
fn push_note(b: &mut Budget, note: &Note, reserve: usize) -> bool {
    // The name without the email address.
    let actor = note.actor.split(" <").next().unwrap_or(&note.actor);
    let text = neutralize(note.text.trim_matches('\n'));
    let mut lines = text.lines();
    let first = format!(
        "- {} {}: {}",
        note.time.seconds(),
        actor,
        lines.next().unwrap_or("")
    );
    b.push(first, reserve)
        && lines.all(|l| b.push(format!("  {}", l.trim_end_matches('\r')), reserve))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens_of(text: &str) -> usize {
        text.lines().map(line_cost).sum()
    }

    #[test]
    fn neutralize_escapes_only_the_contexts_own_tags() {
        let text = "a <b> <memory key=\"x\"> </Relevant_Memories> <memory_index> \
                    </hot_memory> <open_conflicts><recent_notes> <memo <é <测 <";
        assert_eq!(
            neutralize(text),
            "a <b> &lt;memory key=\"x\"> &lt;/Relevant_Memories> &lt;memory_index> \
             &lt;/hot_memory> &lt;open_conflicts>&lt;recent_notes> <memo <é <测 <"
        );
        assert_eq!(neutralize("no tags"), "no tags");
    }

    #[test]
    fn attribute_values_cannot_end_the_attribute_or_open_a_tag() {
        assert_eq!(attr("a & \"b\" <c>\nd"), "a &amp; &quot;b&quot; &lt;c> d");
    }

    #[test]
    fn what_lies_past_the_budget_is_never_asked_for() {
        let keys: Vec<Key> = (0..5)
            .map(|i| Key::parse(&format!("project/m{i}")).expect("a key").0)
            .collect();
        let text = |i: usize| {
            format!("---\nname: m{i}\ndescription: memory {i}\ntype: project\n---\nbody {i}\n")
        };
        let memories: Vec<Memory> = (0..5)
            .map(|i| Memory::parse(&text(i)).expect("a memory"))
            .collect();
        let summaries: Vec<Summary> = memories.iter().map(Summary::of).collect();
        let asked = std::cell::Cell::new(0);
        let found = (0..5).map(|i| {
            asked.set(asked.get() + 1);
            // The second could not be read: skipped, still counted.
            (i != 1).then(|| {
                Found::Memory(FoundMemory {
                    key: &keys[i],
                    summary: &summaries[i],
                    conflict: false,
                    stale: false,
                    memory: memories[i].clone(),
                    clean: true,
                })
            })
        });
        let block = relevant(found, 5, 60);
        assert_eq!(block.memories, keys[..1], "{}", block.text);
        assert_eq!(
            block.omitted, 3,
            "the third did not fit: it and the two after"
        );
        assert_eq!(asked.get(), 3, "the fourth and fifth were never read");
        assert_eq!(block.tokens, tokens_of(&block.text));
        assert!(block.vouched);
    }

    /// Every element the block is made of, as the sources write them
    /// (`"<name` and `"</name`), is one a memory's text cannot open.
    #[test]
    fn no_element_of_the_block_can_be_forged_from_memory_text() {
        let sources = [
            include_str!("context.rs"),
            include_str!("../ops/recall/mod.rs"),
        ];
        let mut names = Vec::new();
        for source in sources {
            // The code, not its tests.
            let source = source.split("#[cfg(test)]").next().unwrap_or(source);
            for (i, _) in source.match_indices("\"<") {
                let name: String = source[i + 2..]
                    .trim_start_matches('/')
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if name.len() > 1 && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        assert!(names.contains(&"team_text".to_string()), "{names:?}");
        for name in names {
            for tag in [format!("<{name}>"), format!("</{name}>")] {
                assert!(
                    neutralize(&tag).starts_with("&lt;"),
                    "{tag} passes through memory text"
                );
            }
        }
    }

    #[test]
    fn a_budget_keeps_room_for_what_is_reserved() {
        // "<x>" costs 2 (1 for its three characters, 1 for the newline).
        let mut b = Budget::new(6);
        assert!(b.push("<x>".into(), 2));
        assert!(!b.push("aaaaaaaa".into(), 2), "3 + 2 more would pass 6");
        assert!(b.push("aaaa".into(), 2));
        assert_eq!(b.used, 4);
        let block = b.close("</x>", Block::default());
        assert_eq!(block.text, "<x>\naaaa\n</x>\n");
        assert_eq!(block.tokens, 6);
        assert_eq!(tokens_of(&block.text), 6);
    }
}
