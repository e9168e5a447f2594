//! `memoir merge-driver`

use super::error::{code, CliError};
use super::App;
use std::path::PathBuf;

/// Merge a view file for git (a merge driver; git runs it, not you).
///
/// `memory`: a memory file both sides changed becomes the common ancestor,
/// which is what replaying the merged logs shows; the fork then appears in
/// `memoir conflicts`. `index`: MEMORY.md's generated lines merge as a set
/// and the text around them three-way. Configure with
/// `git config merge.memoir.driver "memoir merge-driver memory %O %A %B %P"`
/// and `git config merge.memoir-index.driver "memoir merge-driver index %O %A
/// %B %P"` (`memoir hooks install` sets both; `memoir init` writes the
/// matching .gitattributes lines). %P, the path in the work tree, names the
/// file in messages. Writes the result into %A; exit 0 when clean, 1 when
/// the team's text conflicts.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  git config merge.memoir.driver \"memoir merge-driver memory %O %A %B %P\""
)]
pub struct Args {
    /// `memory` or `index`.
    #[arg(value_parser = ["memory", "index"])]
    kind: String,
    /// %O: the common ancestor's version.
    base: PathBuf,
    /// %A: ours; the result is written here.
    ours: PathBuf,
    /// %B: theirs.
    theirs: PathBuf,
    /// %P (the file's path in the work tree, for messages) and anything
    /// else git passes.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// One side of the merge: a regular file of at most MEMORY.md's cap (git
/// passes temporary files; anything else, a FIFO or /dev/zero, would hang
/// the merge).
/// Its errors name `side` of `named`, git's %P (git's temporary file
/// names say nothing to the person whose merge stopped), else `path`.
fn read(path: &std::path::Path, side: &str, named: Option<&String>) -> Result<String, CliError> {
    let label = match named {
        Some(named) => format!("{named} ({side})"),
        None => path.display().to_string(),
    };
    let failed = |why: String| CliError::Failed(format!("{label}: {why}"));
    let bytes = memoir::fs::safe_file::read(path, memoir::store::MAX_INDEX_BYTES)
        .map_err(|e| failed(e.to_string()))?
        .ok_or_else(|| failed("no such file".into()))?;
    String::from_utf8(bytes).map_err(|_| failed("not valid UTF-8".into()))
}

/// Merges the three versions into %A.
pub fn run(args: Args, _app: &mut App) -> Result<u8, CliError> {
    let named = args.rest.first();
    let (base, ours, theirs) = (
        read(&args.base, "the common ancestor", named)?,
        read(&args.ours, "ours", named)?,
        read(&args.theirs, "theirs", named)?,
    );
    let (merged, conflicted) = match args.kind.as_str() {
        "memory" => (
            memoir::integration::merge::memory(Some(&base), &ours, &theirs),
            false,
        ),
        _ => memoir::integration::merge::index(&base, &ours, &theirs),
    };
    std::fs::write(&args.ours, merged)
        .map_err(|e| CliError::Failed(format!("{}: {e}", args.ours.display())))?;
    Ok(if conflicted { code::ERROR } else { code::OK })
}
