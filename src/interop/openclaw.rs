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
    /// What names it (a section's heading, a directive's first words).
    pub title: String,
    /// One line.
    pub description: String,
    /// The rest.
    pub body: String,
    /// When OpenClaw observed it.
    pub observed: Option<Date>,
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

/// A daily note's text as notes: the whole file, or parts of it cut at
/// paragraphs when it is longer than one note may be; each says where it
/// came from.
pub fn daily_notes(what: &str, text: &str) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    let head = format!("imported from OpenClaw {what}:\n");
    let mut notes = Vec::new();
    let mut current = String::new();
    for paragraph in text.split("\n\n") {
        if !current.is_empty() && current.len() + paragraph.len() + 2 > NOTE_BYTES {
            notes.push(format!("{head}{}", current.trim_end()));
            current.clear();
        }
        // A paragraph longer than a note is cut at lines, then at characters.
        let mut rest = paragraph;
        while rest.len() > NOTE_BYTES {
            let mut cut = NOTE_BYTES;
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let cut = rest[..cut].rfind('\n').filter(|&i| i > 0).unwrap_or(cut);
            notes.push(format!("{head}{}", &rest[..cut]));
            rest = rest[cut..].trim_start_matches('\n');
        }
        current.push_str(rest);
        current.push_str("\n\n");
    }
    if !current.trim().is_empty() {
        notes.push(format!("{head}{}", current.trim_end()));
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
        let title: Vec<&str> = directive.split_whitespace().take(8).collect();
        out.push(Proposal {
            scope: "user",
            title: title.join(" "),
            description: directive.chars().take(300).collect(),
            body: String::new(),
            observed,
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

    /// A long daily note becomes several notes, none over the limit, nothing lost.
    #[test]
    fn long_daily_notes_are_cut_at_paragraphs() {
        let text: String = (0..3000)
            .map(|i| format!("paragraph {i} {}\n\n", "word ".repeat(10)))
            .collect();
        let notes = daily_notes("memory/2026-11-28.md", &text);
        assert!(notes.len() > 1);
        assert!(notes.iter().all(|n| n.len() <= NOTE_BYTES + 100
            && n.starts_with("imported from OpenClaw memory/2026-11-28.md:\n")));
        assert!(notes.concat().contains("paragraph 2999 "));
        assert_eq!(daily_notes("x", " \n\n "), Vec::<String>::new());
    }

    #[test]
    fn sections_and_directives() {
        let memory = "# MEMORY\n\n## Deploys\n- Deploys go out on Tuesdays\n- Never on Fridays\n\n## Empty\n\n## Stack\nPostgres 16.\n";
        let c = curated(memory);
        assert_eq!(
            c.iter().map(|p| p.title.as_str()).collect::<Vec<_>>(),
            ["Deploys", "Stack"]
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
