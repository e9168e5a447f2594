//! `memoir note`

use super::{error::CliError, read_capped, App};
use serde_json::json;

/// Append a note (a raw observation) to this writer's log for today.
///
/// Notes are never applied to memories; consolidation may turn them into
/// proposals. Reads the note from stdin when no text is given.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The note's text (words are joined with spaces).
    text: Vec<String>,
}

/// Appends the note, from the arguments or stdin.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
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
        args.text.join(" ")
    };
    let ctx = app.ctx(&store)?;
    let id = memoir::ops::write::note(&store, &ctx, &text)?;
    app.out.json(&json!({ "id": id }))?;
    Ok(0)
}
