//! `memoir status`

use super::{error::CliError, App};
use serde_json::json;

/// Show the store at a glance.
///
/// How many memories per scope, and what needs attention (proposals,
/// conflicts, drift, invalid files, stale and expired memories, the index
/// budget).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, app: &mut App) -> Result<u8, CliError> {
    let store = app.store()?;
    let ctx = app.ctx(&store)?;
    let st = memoir::ops::query::status(&store, ctx.now.date())?;
    let keys =
        |v: &[memoir::model::key::Key]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
    app.out.json(&json!({
        "store": store.root, "writer": store.writer,
        "memories": st.counts.iter().map(|(s, n)| (s.clone(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "proposals": st.proposals, "conflicts": keys(&st.conflicts), "drift": st.drift,
        "invalid": st.invalid.iter().map(|(p, e)| json!({"path": p, "error": e})).collect::<Vec<_>>(),
        "stale": keys(&st.stale), "expired": keys(&st.expired),
        "over_budget": st.over_budget, "index_stale": st.index_stale,
        "recent": st.recent.iter().map(|l| json!({
            "key": l.key.to_string(), "description": l.summary.description, "path": l.path,
        })).collect::<Vec<_>>(),
    }))?;
    let total: usize = st.counts.iter().map(|(_, n)| n).sum();
    let per: Vec<String> = st.counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    app.out.line(format!(
        "memoir store {} (writer {})",
        store.root.display(),
        store.writer
    ))?;
    app.out
        .line(format!("{total} memories: {}", per.join(", ")))?;
    if !st.recent.is_empty() {
        app.out.line("\nRecently updated:")?;
        for l in &st.recent {
            app.out
                .line(format!("  {}  {}", l.key, l.summary.description))?;
        }
    }
    let mut section = |title: &str, items: Vec<String>, hint: &str| -> std::io::Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        app.out
            .line(format!("\n{title} ({}): {hint}", items.len()))?;
        for i in items {
            app.out.line(format!("  {i}"))?;
        }
        Ok(())
    };
    section(
        "Open conflicts",
        keys(&st.conflicts),
        "decide with `memoir resolve`",
    )?;
    section(
        "Pending proposals",
        st.proposals.clone(),
        "consolidation decides them",
    )?;
    section(
        "Drift",
        st.drift.clone(),
        "`memoir check` says which kind; `memoir record` or `memoir rebuild`",
    )?;
    section(
        "Invalid files",
        st.invalid
            .iter()
            .map(|(p, e)| format!("{p}: {e}"))
            .collect(),
        "fix them by hand",
    )?;
    section(
        "Past review date",
        keys(&st.stale),
        "confirm or forget them",
    )?;
    section("Expired", keys(&st.expired), "consolidation forgets them")?;
    if st.over_budget > 0 {
        app.out.line(format!(
            "\nMEMORY.md leaves out {} memories (over its line budget)",
            st.over_budget
        ))?;
    }
    if st.index_stale {
        app.out
            .line("\nMEMORY.md is out of date: run `memoir reindex`")?;
    }
    let attention = st.conflicts.len()
        + st.proposals.len()
        + st.drift.len()
        + st.invalid.len()
        + st.stale.len()
        + st.expired.len();
    if attention == 0 && !st.index_stale {
        app.out.line("Nothing needs attention.")?;
    }
    Ok(0)
}
