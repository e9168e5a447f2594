//! `memoir status`

use super::output::{columns, strings, Output};
use super::{error::CliError, App};
use memoir::change::drift::{foreign_advice, foreign_label, Foreign};
use memoir::integration::merge::MergeInProgress;
use memoir::ops::query::Status;
use memoir::store::Store;
use serde_json::{json, Value};

/// Show the store at a glance.
///
/// How many memories per scope, and what needs attention (proposals,
/// conflicts, drift, invalid files, stale and expired memories, the index
/// budget).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  memoir status")]
pub struct Args {}

/// Prints the store's counts and what needs attention.
pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    let store = app.store()?;
    let st = memoir::ops::query::status(&store, app.now()?.date())?;
    let personal = app.personal_store(&store, false)?;
    let personal_count = match &personal {
        Some(p) => memoir::ops::query::list(p, &Default::default())?
            .memories
            .len(),
        None => 0,
    };
    let merge = app.merge_in_progress(&store)?;
    let foreign = memoir::change::drift::foreign(&store);
    // A log that cannot be read is listed as invalid already.
    let rewritten: Vec<String> = memoir::ops::check::rewritten_logs(&store)
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.path)
        .collect();
    let mut j = to_json(&store, &st);
    j["foreign"] = foreign_json(&foreign);
    j["rewritten_logs"] = json!(rewritten);
    j["merge"] = json!(merge.as_ref().map(|(m, step)| json!({
        "unmerged": m.unmerged, "settled": m.settled, "next_step": step,
    })));
    j["personal_store"] = json!(personal
        .as_ref()
        .map(|p| json!({ "path": p.root, "memories": personal_count })));
    app.out.json(&j)?;
    let total: usize = st.counts.iter().map(|(_, n)| n).sum();
    let per: Vec<String> = st.counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    app.out.line(format!(
        "memoir store {} (writer {})",
        store.root.display(),
        store.writer
    ))?;
    app.out.line(format!(
        "{}: {}",
        super::output::count(total, "memory", "memories"),
        per.join(", ")
    ))?;
    let shared_user = st
        .counts
        .iter()
        .find(|(s, _)| s == "user")
        .map_or(0, |(_, n)| *n);
    if let Some(p) = &personal {
        app.out.line(format!(
            "personal store {}: {} (user/ memories are written there)",
            p.root.display(),
            super::output::count(personal_count, "memory", "memories")
        ))?;
    }
    let drivers = memoir::integration::hooks::setup(&store)
        .map(|s| s.drivers.iter().all(|(_, c)| c.is_some()))
        .unwrap_or(true);
    if !drivers {
        app.out.line("this clone has no memoir merge drivers: a memory changed on two branches will be a text conflict (`memoir hooks install`)")?;
    }
    if shared_user > 0 && store.config.user_store == memoir::model::config::UserStore::Personal {
        app.out.line(format!(
            "memory/user/ in this repository holds {}, read by everyone who clones it; new user/ memories go to your personal store",
            super::output::count(shared_user, "memory", "memories")
        ))?;
    }
    if !st.recent.is_empty() {
        app.out.line("\nRecently updated:")?;
        for l in &st.recent {
            app.out
                .line(format!("  {}", columns(&[&l.key, &l.summary.description])))?;
        }
    }
    sections(&mut app.out, &st, merge.as_ref(), &foreign, &rewritten)?;
    Ok(0)
}

/// What `memory/` holds that is not memoir's, in JSON (`status`, `init`).
pub fn foreign_json(foreign: &[Foreign]) -> Value {
    json!(foreign
        .iter()
        .map(|f| json!({"path": f.path, "files": f.files, "openclaw": f.openclaw}))
        .collect::<Vec<_>>())
}

/// The status in JSON.
fn to_json(store: &Store, st: &Status) -> Value {
    json!({
        "store": store.root, "writer": store.writer,
        "memories": st.counts.iter().map(|(s, n)| (s.clone(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "proposals": st.proposals.iter().zip(&st.proposal_keys).map(|(id, k)| json!({ "id": id, "key": k.as_ref().map(ToString::to_string) })).collect::<Vec<_>>(),
        "conflicts": strings(&st.conflicts), "drift": st.drift,
        "invalid": st.invalid.iter().map(|(p, e)| json!({"path": p, "error": e})).collect::<Vec<_>>(),
        "stale": strings(&st.stale), "expired": strings(&st.expired),
        "over_budget": st.over_budget, "index_stale": st.index_stale,
        "recent": st.recent.iter().map(|l| json!({
            "key": l.key.to_string(), "description": l.summary.description, "path": l.path,
        })).collect::<Vec<_>>(),
    })
}

/// What needs attention, a section each, or that nothing does. During a
/// merge git left unsettled, what `memoir rebuild` settles (git's
/// unmerged files, drift, an out-of-date MEMORY.md) is the merge's one
/// next step, not advice of its own.
fn sections(
    out: &mut Output,
    st: &Status,
    merge: Option<&(MergeInProgress, String)>,
    foreign: &[Foreign],
    rewritten: &[String],
) -> std::io::Result<()> {
    let unsettled = merge.filter(|(m, _)| !m.settled);
    if let Some((m, step)) = merge {
        merge_lines(out, m, step)?;
    }
    let proposals: Vec<String> = st
        .proposals
        .iter()
        .zip(&st.proposal_keys)
        .map(|(id, key)| key.as_ref().map_or(id.clone(), |k| format!("{id}  {k}")))
        .collect();
    // Rebuild settles a merge's drift, and says which hand edits it
    // leaves; `record` now would record git's text merge.
    let drift = match unsettled {
        None => st.drift.clone(),
        Some(_) => Vec::new(),
    };
    let invalid = invalid_lines(st, unsettled.map(|(m, _)| m));
    let resolve = match merge {
        Some(_) => "decide with `memoir resolve` once the merge is committed",
        None => "decide with `memoir resolve`",
    };
    let foreign_hint = foreign_advice(foreign);
    let lists = [
        (
            "Logs rewritten since HEAD (logs only grow)",
            rewritten.to_vec(),
            "`memoir check` names the first line that differs and how to restore it",
        ),
        ("Open conflicts", strings(&st.conflicts), resolve),
        ("Pending proposals", proposals, "consolidation decides them"),
        (
            "Drift",
            drift,
            "`memoir check` says which kind; `memoir record` or `memoir rebuild`",
        ),
        ("Invalid files", invalid, "fix them by hand"),
        (
            "Not memoir's, in memory/",
            foreign.iter().map(foreign_label).collect(),
            foreign_hint.as_str(),
        ),
        (
            "Past review date",
            strings(&st.stale),
            "confirm or forget them",
        ),
        (
            "Expired",
            strings(&st.expired),
            "consolidation forgets them",
        ),
    ];
    for (title, items, hint) in &lists {
        section(out, title, items, hint)?;
    }
    index_lines(out, st, unsettled.is_some())?;
    let attention = rewritten.len()
        + st.conflicts.len()
        + st.proposals.len()
        + st.drift.len()
        + st.invalid.len()
        + st.stale.len()
        + st.expired.len()
        + foreign.len();
    if attention == 0 && !st.index_stale && merge.is_none() {
        out.line("Nothing needs attention.")?;
    }
    Ok(())
}

/// The invalid files, each with why, but those git left unmerged in an
/// `unsettled` merge (its next step settles them).
fn invalid_lines(st: &Status, unsettled: Option<&MergeInProgress>) -> Vec<String> {
    let settles = |path: &str| unsettled.is_some_and(|m| m.unmerged.iter().any(|u| u == path));
    st.invalid
        .iter()
        .filter(|(p, _)| !settles(p))
        // An error may name its file already.
        .map(|(p, e)| match e.starts_with(p.as_str()) {
            true => e.clone(),
            false => format!("{p}: {e}"),
        })
        .collect()
}

/// The merge in progress: its one next step, then the files git left
/// unmerged.
fn merge_lines(out: &mut Output, m: &MergeInProgress, step: &str) -> std::io::Result<()> {
    let mut chars = step.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase());
    out.line(format!("\n{}{}", first.unwrap_or_default(), chars.as_str()))?;
    out.items("  unmerged ", &m.unmerged)
}

/// What MEMORY.md lacks: memories over its budget, and whether it is out
/// of date (not said during a merge that is not settled: `rebuild` is
/// the step then).
fn index_lines(out: &mut Output, st: &Status, unsettled: bool) -> std::io::Result<()> {
    if st.over_budget > 0 {
        out.line(format!(
            "\nMEMORY.md leaves out {} (over its line budget)",
            super::output::count(st.over_budget, "memory", "memories")
        ))?;
    }
    if st.index_stale && !unsettled {
        out.line("\nMEMORY.md is out of date: run `memoir reindex`")?;
    }
    Ok(())
}

/// A titled list with a hint of what to do, when it has items.
fn section(out: &mut Output, title: &str, items: &[String], hint: &str) -> std::io::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    out.line(format!("\n{title} ({}): {hint}", items.len()))?;
    out.items("  ", items)
}
