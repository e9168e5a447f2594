//! `memoir completions` and `memoir man`

use super::{error::CliError, App, Cli};
use clap::CommandFactory;

/// Print shell completions for memoir (generated from its own definition).
///
/// Examples:
///   memoir completions bash > ~/.local/share/bash-completion/completions/memoir
///   memoir completions zsh > ~/.zfunc/_memoir
///   memoir completions fish > ~/.config/fish/completions/memoir.fish
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

/// Print memoir's man page (roff; generated from its own definition).
///
/// Examples:
///   memoir man > ~/.local/share/man/man1/memoir.1
///   memoir man | man -l -
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct ManArgs {}

/// Writes the completion script to stdout.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "memoir", &mut out);
    app.out.show_data();
    app.out.raw(&String::from_utf8_lossy(&out))?;
    Ok(0)
}

/// Writes the man page to stdout.
pub fn run_man(_args: ManArgs, app: &mut App) -> Result<u8, CliError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    app.out.show_data();
    app.out.raw(&String::from_utf8_lossy(&out))?;
    Ok(0)
}
