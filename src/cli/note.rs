//! `memoir note`

use super::claude_hook::read_hook;
use super::output::warn;
use super::{error::CliError, read_capped, App};
use serde_json::json;

/// Append a note (a raw observation) to this writer's log for today.
///
/// Notes are never applied to memories; consolidation may turn them into
/// proposals. Reads the note from stdin when no text is given.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  memoir note \"the CI cache misses on Mondays\"\n  echo \"a longer observation\" | memoir note"
)]
pub struct Args {
    /// The note's text (words are joined with spaces; a leading `-`, a
    /// markdown bullet, is text).
    #[arg(allow_hyphen_values = true)]
    text: Vec<String>,
    /// Read a Claude Code SessionEnd hook's JSON on stdin and note what the
    /// user asked in the session (from its transcript, bounded, secrets
    /// redacted). Never fails the hook: problems are warnings.
    #[arg(long, conflicts_with = "text")]
    from_hook: bool,
}

/// Appends the note, from the arguments, stdin, or a hook's transcript.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    if args.from_hook {
        if let Err(e) = from_hook(app) {
            warn(app.quiet(), &format!("{}; no note recorded", e.message()));
        }
        return Ok(0);
    }
    let store = app.store()?;
    let text = if args.text.is_empty() {
        // One byte past the limit is enough to refuse: `< /dev/zero` must
        // not fill the memory.
        let bytes = read_capped(std::io::stdin(), memoir::policy::MAX_NOTE_BYTES)?;
        if bytes.len() > memoir::policy::MAX_NOTE_BYTES {
            // Too long: refused by size, whatever its last bytes are.
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            String::from_utf8(bytes).map_err(|_| CliError::Input {
                input: "<stdin>".into(),
                message: "the note is not valid UTF-8".into(),
            })?
        }
    } else {
        // Once the text starts, every word is text (a note may begin with
        // `- `): a flag written after it would be noted, not obeyed.
        if let Some(flag) = args.text.iter().skip(1).find(|w| is_flag(w)) {
            return Err(CliError::Usage(format!(
                "`{flag}` after the note's text: put flags before the text, e.g. `memoir {flag} note …`"
            )));
        }
        args.text.join(" ")
    };
    let ctx = app.ctx(&store)?;
    let id = memoir::ops::write::note(&store, &ctx, &text)?;
    app.out.json(&json!({ "id": id }))?;
    Ok(0)
}

/// One of the global flags, as a word on its own (`--json`, `-q`, `--store=x`).
fn is_flag(word: &str) -> bool {
    let name = word.split_once('=').map_or(word, |(n, _)| n);
    ["--json", "--quiet", "-q", "--store", "--lock-timeout"].contains(&name)
}

/// The note of the session a SessionEnd hook names, if the user asked anything.
fn from_hook(app: &mut App) -> Result<(), CliError> {
    /// A transcript is read up to this size (its first requests set the task).
    const MAX_TRANSCRIPT: usize = 64 << 20;
    let Some(hook) = read_hook(app.quiet(), "no note recorded") else {
        return Ok(());
    };
    if app.global.store.is_none() {
        app.cwd = hook.cwd.or(app.cwd.take());
    }
    let Some(path) = hook.transcript_path else {
        return Err(CliError::Usage(
            "the hook input has no transcript_path".into(),
        ));
    };
    let unreadable = |message: String| CliError::Input {
        input: path.display().to_string(),
        message,
    };
    // As a store file is opened: a FIFO (nobody writing) would block the
    // hook for ever, a device would read without end, a link is not taken.
    use memoir::fs::safe_file::{self, ReadError};
    let file = match safe_file::open(&path) {
        Ok(Some((file, _))) => file,
        Ok(None) => return Err(unreadable("no such file".into())),
        Err(ReadError::Link) => return Err(unreadable("is a symbolic link (not followed)".into())),
        Err(e) => return Err(unreadable(e.to_string())),
    };
    // Its first requests set the task: a longer one is read up to the cap.
    let bytes = read_capped(file, MAX_TRANSCRIPT).map_err(|e| unreadable(e.to_string()))?;
    let transcript = String::from_utf8_lossy(&bytes);
    let session = hook.session_id.unwrap_or_default();
    let reason = hook.reason.unwrap_or_default();
    let Some(note) = memoir::integration::claude_code::session_note(&transcript, &session, &reason)
    else {
        return Ok(());
    };
    let store = app.store()?;
    let ctx = app.ctx(&store)?;
    let id = memoir::ops::write::note_from(&store, &ctx, &note.text, Some(&note.source))?;
    app.out.json(&json!({ "id": id }))?;
    Ok(())
}
