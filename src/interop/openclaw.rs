//! An OpenClaw workspace, as OpenClaw writes it: daily notes
//! `memory/YYYY-MM-DD.md` (or `memory/YYYY-MM-DD-<slug>.md`), a curated
//! `MEMORY.md` in sections, and `USER.md` directives, each a `- ` line
//! after an `<!-- observed: YYYY-MM-DD | status: active|superseded -->`
//! comment.

use crate::model::time::Date;

/// The most text one imported note carries (a note holds at most 64 KiB).
const NOTE_BYTES: usize = 60 * 1024;

/// A curated entry to propose as a memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// `project` (MEMORY.md) or `user` (USER.md).
    pub scope: &'static str,
    /// What names it (a section's heading, a directive's first clause or
    /// words that fit a slug: [`phrase_name`](crate::model::key::phrase_name)).
    pub title: String,
    /// One line.
    pub description: String,
    /// The rest.
    pub body: String,
    /// When OpenClaw observed it.
    pub observed: Option<Date>,
    /// Open questions or to-dos (a section such as `## Open questions` or
    /// `## TODO`): not facts, so imported as a note, never a memory.
    pub open: bool,
}

/// Whether a section's heading names questions or to-dos rather than facts.
fn is_open(title: &str) -> bool {
    let t: String = title
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let words: Vec<&str> = t.split_whitespace().collect();
    matches!(
        words.as_slice(),
        ["todo" | "todos" | "questions" | "question" | "tasks" | "backlog"]
            | ["to", "do" | "dos"]
            | [
                "open" | "unanswered",
                "questions" | "question" | "items" | "issues"
            ]
            | ["next", "steps"]
    )
}

/// The date a daily note's file name gives: `2026-11-28.md`, `2026-11-28-standup.md`.
pub fn daily_note_date(name: &str) -> Option<Date> {
    let stem = name.strip_suffix(".md")?;
    let date = stem.get(..10)?;
    let rest = &stem[10..];
    if !(rest.is_empty() || rest.starts_with('-')) {
        return None;
    }
    Date::parse(date).ok()
}

/// One entry of a daily note, as a note: the line of the file it starts
/// at (1-based) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyEntry {
    /// The file's line the entry starts at.
    pub line: usize,
    /// The note's text.
    pub text: String,
}

/// Whether a line starts a top-level list item (`- `, `* `, `+ `, `1. `).
fn starts_item(line: &str) -> bool {
    if line.starts_with("- ") || line.starts_with("* ") || line.starts_with("+ ") {
        return true;
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") "))
}

/// A daily note's entries, each a note: every top-level list item (with
/// the lines under it), paragraph and heading (but a title that is only
/// the day's date) on its own, so that one entry the write policy refuses
/// leaves the others to import, and a note that grows during the day adds
/// only what is new. A fenced code block stays in the entry it is in; an
/// entry longer than one note may be is cut at lines, then at characters.
/// The text is the entry's own: where it came from is the caller's to
/// keep beside it.
pub fn daily_notes(text: &str) -> Vec<DailyEntry> {
    let mut blocks: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    let mut fence: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            if let Some((_, lines)) = current.as_mut() {
                lines.push(line);
            }
            continue;
        }
        let opens = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        let heading = line.starts_with('#') && line.trim_start_matches('#').starts_with(' ');
        let starts = trimmed.is_empty() || heading || starts_item(line);
        if starts {
            blocks.extend(current.take());
        }
        if trimmed.is_empty() {
            continue;
        }
        if heading {
            let title = line.trim_start_matches('#').trim();
            // The note's own title (`# 2026-11-28`) says nothing the date does not.
            if Date::parse(title).is_err() {
                blocks.push((i + 1, vec![line]));
            }
            continue;
        }
        fence = opens;
        current
            .get_or_insert_with(|| (i + 1, Vec::new()))
            .1
            .push(line);
    }
    blocks.extend(current);
    let mut notes = Vec::new();
    for (mut line, lines) in blocks {
        let entry = lines.join("\n");
        let mut rest = entry.trim_end();
        // An entry longer than a note is cut at lines, then at characters.
        while rest.len() > NOTE_BYTES {
            let mut cut = NOTE_BYTES;
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let cut = rest[..cut].rfind('\n').filter(|&i| i > 0).unwrap_or(cut);
            notes.push(DailyEntry {
                line,
                text: rest[..cut].to_string(),
            });
            let next = rest[cut..].trim_start_matches('\n');
            line += rest[..rest.len() - next.len()].matches('\n').count();
            rest = next;
        }
        if !rest.trim().is_empty() {
            notes.push(DailyEntry {
                line,
                text: rest.to_string(),
            });
        }
    }
    notes
}

/// MEMORY.md's sections: each heading's text (the text before the first
/// heading as `memory`), those with something in them.
pub fn curated(text: &str) -> Vec<Proposal> {
    let mut out = Vec::new();
    let mut title = String::from("memory");
    let mut lines: Vec<&str> = Vec::new();
    let mut flush = |title: &str, lines: &mut Vec<&str>| {
        let body = lines.join("\n").trim().to_string();
        lines.clear();
        if body.is_empty() {
            return;
        }
        let description = body
            .lines()
            .map(|l| l.trim().trim_start_matches(['-', '*', '+']).trim())
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .chars()
            .take(150)
            .collect();
        out.push(Proposal {
            scope: "project",
            title: title.to_string(),
            description,
            body,
            observed: None,
            open: is_open(title),
        });
    };
    for line in text.lines() {
        let heading = line.trim_start_matches('#');
        if line.starts_with('#') && heading.starts_with(' ') {
            // The document's own title (`# MEMORY`) names no section.
            if line.starts_with("##") {
                flush(&title, &mut lines);
                title = heading.trim().to_string();
            }
            continue;
        }
        lines.push(line);
    }
    flush(&title, &mut lines);
    out
}

/// USER.md's active directives, each with the date it was observed;
/// superseded ones are left out.
pub fn directives(text: &str) -> Vec<Proposal> {
    let mut out = Vec::new();
    let mut observed = None;
    let mut active = true;
    for line in text.lines() {
        let l = line.trim();
        if let Some(comment) = l.strip_prefix("<!--").and_then(|c| c.strip_suffix("-->")) {
            observed = None;
            active = true;
            for part in comment.split('|') {
                let (k, v) = part.split_once(':').unwrap_or((part, ""));
                match k.trim() {
                    "observed" => observed = Date::parse(v.trim()).ok(),
                    "status" => active = v.trim() != "superseded",
                    _ => {}
                }
            }
            continue;
        }
        let Some(directive) = l.strip_prefix("- ").map(str::trim) else {
            if l.is_empty() {
                observed = None;
                active = true;
            }
            continue;
        };
        if directive.is_empty() || !active {
            continue;
        }
        out.push(Proposal {
            scope: "user",
            // Named by its words, never cut inside a word or mid-clause
            // where a clause fits.
            title: crate::model::key::phrase_name(directive).to_string(),
            description: directive.chars().take(300).collect(),
            body: String::new(),
            observed,
            open: false,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daily_note_names() {
        assert_eq!(
            daily_note_date("2026-11-28.md"),
            Date::parse("2026-11-28").ok()
        );
        assert_eq!(
            daily_note_date("2026-11-28-standup.md"),
            Date::parse("2026-11-28").ok()
        );
        assert_eq!(daily_note_date("2026-11-28x.md"), None);
        assert_eq!(daily_note_date("notes.md"), None);
    }

    /// A daily note is its entries, each a note with the line it starts
    /// at: list items, paragraphs and headings, but the date title.
    #[test]
    fn daily_notes_are_their_entries() {
        let text = "# 2026-11-28\n\n- one\n  more of one\n- two\n\n## 14:30 deploy\nA paragraph\nof two lines.\n\n```\n- not an item\n\n```\n";
        let notes = daily_notes(text);
        let got: Vec<(usize, &str)> = notes.iter().map(|n| (n.line, n.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (3, "- one\n  more of one"),
                (5, "- two"),
                (7, "## 14:30 deploy"),
                (8, "A paragraph\nof two lines."),
                (11, "```\n- not an item\n\n```"),
            ]
        );
        assert_eq!(daily_notes(" \n\n "), Vec::new());
    }

    /// An entry longer than a note is cut at lines, none over the limit,
    /// nothing lost, each part with the line it starts at.
    #[test]
    fn a_long_entry_is_cut_at_lines() {
        let text: String = (0..3000)
            .map(|i| format!("line {i} {}\n", "word ".repeat(10)))
            .collect();
        let notes = daily_notes(&text);
        assert!(notes.len() > 1);
        assert!(notes.iter().all(|n| n.text.len() <= NOTE_BYTES));
        assert!(notes.iter().any(|n| n.text.contains("line 2999 ")));
        let second = &notes[1];
        let first_line = second.text.lines().next().unwrap_or("");
        assert_eq!(first_line, text.lines().nth(second.line - 1).unwrap_or(""));
    }

    #[test]
    fn sections_and_directives() {
        let memory = "# MEMORY\n\n## Deploys\n- Deploys go out on Tuesdays\n- Never on Fridays\n\n## Empty\n\n## Stack\nPostgres 16.\n\n## Open questions\n- Why?\n\n## TODO\n- this\n";
        let c = curated(memory);
        assert_eq!(
            c.iter()
                .map(|p| (p.title.as_str(), p.open))
                .collect::<Vec<_>>(),
            [
                ("Deploys", false),
                ("Stack", false),
                ("Open questions", true),
                ("TODO", true)
            ]
        );
        assert_eq!(c[0].description, "Deploys go out on Tuesdays");
        let user = "# USER\n\n<!-- observed: 2026-11-20 | status: active -->\n- Prefer short answers in chat\n\n<!-- observed: 2026-10-01 | status: superseded -->\n- Prefer long answers\n\n- Call me Ada\n";
        let d = directives(user);
        assert_eq!(
            d.iter().map(|p| p.description.as_str()).collect::<Vec<_>>(),
            ["Prefer short answers in chat", "Call me Ada"]
        );
        assert_eq!(d[0].observed, Date::parse("2026-11-20").ok());
        assert_eq!(d[1].observed, None);
    }
}
