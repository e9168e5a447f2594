//! `memoir context`

use super::claude_hook::read_hook;
use super::output::warn;
use super::{error::CliError, App};
use memoir::ops::recall::DEFAULT_BUDGET;
use serde_json::json;

/// Print the memory block to inject into an agent's prompt.
///
/// With a query: a `<relevant_memories>` element holding only the relevant
/// memories, most relevant first, and nothing at all when nothing is
/// relevant. Without a query: the hot memory for a session's start (the
/// index, open conflicts, today's and yesterday's notes). Always within the
/// token budget. Each call that prints something leaves a receipt in the
/// local state (`memoir seen`).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir context \"run the tests before I push\"\n  memoir context                 # hot memory for a session's start"
)]
pub struct Args {
    /// What the agent is about to do (words are joined with spaces).
    query: Vec<String>,
    /// Token budget (estimate: 4 ASCII characters or 1 other character per token).
    #[arg(long, default_value_t = DEFAULT_BUDGET)]
    budget: usize,
    /// Read a Claude Code hook's JSON on stdin: its `prompt` is the query
    /// (UserPromptSubmit; an empty prompt injects nothing) or there is none
    /// (SessionStart: the hot memory); its `cwd` finds the store. Never
    /// fails the hook: problems are warnings and print nothing.
    #[arg(long, conflicts_with = "query")]
    from_hook: bool,
}

/// Prints the memory block for the query, or for the hook's prompt.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    // Its output is the data asked for: -q hides warnings only.
    app.out.show_data();
    if !args.from_hook {
        let query = (!args.query.is_empty()).then(|| args.query.join(" "));
        return print(app, query.as_deref(), args.budget, false);
    }
    let Some(hook) = read_hook(app.quiet(), "no memory injected") else {
        return Ok(0);
    };
    if app.global.store.is_none() {
        if let Some(cwd) = hook.cwd.clone() {
            app.cwd = Some(cwd);
        }
    }
    // A prompt with no words (an image alone) has nothing to look up; the
    // hot memory is the session start's, not every prompt's.
    if hook.is_prompt() && hook.prompt.as_deref().is_none_or(|p| p.trim().is_empty()) {
        return Ok(0);
    }
    let query = hook.prompt.filter(|p| !p.trim().is_empty());
    match print(app, query.as_deref(), args.budget, true) {
        Ok(_) => Ok(0),
        Err(e) => {
            // An agent's prompt must never fail because memory could not be read.
            warn(app.quiet(), &format!("{}; no memory injected", e.message()));
            Ok(0)
        }
    }
}

/// Prints the memory block for `query` (the hot memory without one),
/// from every store of the person's; each records what it printed.
fn print(app: &mut App, query: Option<&str>, budget: usize, hook: bool) -> Result<u8, CliError> {
    let now = app.now()?;
    let stores = app.stores()?;
    let asked = memoir::ops::recall::stores::ContextAsked {
        query,
        budget,
        hook,
        now,
    };
    let var = |name: &str| std::env::var(name).ok();
    let ctx = memoir::ops::recall::stores::context(&stores, asked, &var)?;
    for w in &ctx.warnings {
        warn(app.quiet(), w);
    }
    app.out.vetted(ctx.vouched);
    let keys = |keys: &[memoir::model::key::Key]| -> Vec<String> {
        keys.iter().map(ToString::to_string).collect()
    };
    app.out.json(&json!({
        "text": ctx.text, "tokens": ctx.tokens, "omitted": ctx.omitted,
        "memories": keys(&ctx.memories), "personal": keys(&ctx.personal),
    }))?;
    if !app.out.json {
        app.out.raw(&ctx.text)?;
    }
    Ok(0)
}
