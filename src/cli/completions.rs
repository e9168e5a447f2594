//! `memoir completions` and `memoir man`

use super::{error::CliError, App, Cli};
use clap::CommandFactory;
use clap_mangen::roff::{bold, roman, Roff};

/// Print shell completions for memoir (generated from its own definition).
///
/// bash, zsh and fish also complete memory keys after show, forget,
/// history and resolve, by running `memoir list --keys` in the store the
/// command line names (--store, else MEMOIR_STORE, else the current
/// directory's).
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
/// One page with every command, its options and examples, the exit
/// codes and the environment.
///
/// Examples:
///   memoir man > ~/.local/share/man/man1/memoir.1
///   memoir man | man -l -
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct ManArgs {}

/// The commands whose argument is an existing memory's key.
const KEYED: [&str; 4] = ["show", "forget", "history", "resolve"];

/// Writes the completion script to stdout.
pub fn run(args: Args, app: &mut App) -> Result<u8, CliError> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "memoir", &mut out);
    let script = String::from_utf8_lossy(&out).into_owned();
    let script = match args.shell {
        clap_complete::Shell::Bash => bash_keys(&script, &cmd),
        clap_complete::Shell::Zsh => zsh_keys(&script),
        clap_complete::Shell::Fish => fish_keys(script),
        _ => script,
    };
    app.out.show_data();
    app.out.raw(&script)?;
    Ok(0)
}

/// The options of the keyed commands (and the global ones) that take a
/// value: the word after one is its value, never a key.
fn value_options(cmd: &clap::Command) -> Vec<String> {
    let mut names = Vec::new();
    let keyed = cmd
        .get_subcommands()
        .filter(|s| KEYED.contains(&s.get_name()));
    for c in std::iter::once(cmd).chain(keyed) {
        for a in c.get_arguments().filter(|a| a.get_action().takes_values()) {
            names.extend(a.get_long().map(|l| format!("--{l}")));
            names.extend(a.get_short().map(|s| format!("-{s}")));
        }
    }
    names.sort();
    names.dedup();
    names
}

/// bash: clap's script, with a function in front of it that offers the
/// store's keys for a keyed command's key and hands every other word to
/// clap's completion.
fn bash_keys(script: &str, cmd: &clap::Command) -> String {
    let wrapper = r#"
# memoir: memory keys (`memoir list --keys`) for the key of show, forget,
# history and resolve, in the store a --store on the line names; every
# other word is clap's completion above.
_memoir_keys() {
    local i word sub="" positional=0 store=()
    local takes_value=" VALUE_OPTIONS "
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            --store=*) store=(--store "${word#--store=}") ;;
            --store) store=(--store "${COMP_WORDS[i+1]}"); ((i++)) ;;
            -*=*) ;;
            -*) [[ $takes_value == *" $word "* ]] && ((i++)) ;;
            *) if [[ -z $sub ]]; then sub=$word; else ((positional++)); fi ;;
        esac
    done
    case $sub in
        KEYED)
            if [[ $cur != -* && $positional -eq 0 && $takes_value != *" $prev "* ]]; then
                COMPREPLY=( $(compgen -W "$(memoir "${store[@]}" list --keys 2>/dev/null)" -- "$cur") )
                return 0
            fi
            ;;
    esac
    _memoir "$@"
}
"#
    .replace("VALUE_OPTIONS", &value_options(cmd).join(" "))
    .replace("KEYED", &KEYED.join("|"));
    // The wrapper is what completes `memoir`: clap's `_memoir` behind it.
    let script = script.replace("complete -F _memoir ", "complete -F _memoir_keys ");
    format!("{wrapper}\n{script}")
}

/// zsh: the keyed commands' key argument completed by `_memoir_keys`
/// rather than clap's `_default` (file names).
fn zsh_keys(script: &str) -> String {
    let function = r#"
# memoir: memory keys (`memoir list --keys`), in the store a --store on
# the line names.
_memoir_keys() {
    local -a keys store
    local i
    for ((i = 2; i < CURRENT; i++)); do
        case ${words[i]} in
            --store=*) store=(--store "${words[i]#--store=}") ;;
            --store) store=(--store "${words[i+1]}") ;;
        esac
    done
    keys=(${(f)"$(memoir "${store[@]}" list --keys 2>/dev/null)"})
    compadd -a keys
}
"#;
    let mut out = String::new();
    let mut command = "";
    for line in script.lines() {
        // Each command's block opens with `(name)`.
        if let Some(name) = line.strip_prefix('(').and_then(|l| l.strip_suffix(')')) {
            command = name;
        }
        let keyed = KEYED.contains(&command) && line.starts_with("':key -- ");
        match line.strip_suffix(":_default' \\") {
            Some(head) if keyed => out.push_str(&format!("{head}:_memoir_keys' \\")),
            _ => out.push_str(line),
        }
        out.push('\n');
        if line == "autoload -U is-at-least" {
            out.push_str(function);
        }
    }
    out
}

/// fish: the store's keys offered after a keyed command.
fn fish_keys(script: String) -> String {
    let keys = r#"
# memoir: memory keys (`memoir list --keys`) after show, forget, history
# and resolve, in the store a --store on the line names.
function __memoir_keys
    set -l words (commandline -opc)
    set -l store
    for i in (seq (count $words))
        switch $words[$i]
            case '--store=*'
                set store --store (string replace -- '--store=' '' $words[$i])
            case --store
                if test $i -lt (count $words)
                    set store --store $words[(math $i + 1)]
                end
        end
    end
    memoir $store list --keys 2>/dev/null
end
complete -c memoir -n "__fish_seen_subcommand_from KEYED" -f -a "(__memoir_keys)"
"#
    .replace("KEYED", &KEYED.join(" "));
    script + &keys
}

/// Writes the man page to stdout: one complete page (no `memoir-init(1)`
/// pages to install beside it).
pub fn run_man(_args: ManArgs, app: &mut App) -> Result<u8, CliError> {
    let mut cmd = Cli::command();
    // Subcommands get their full names (`memoir hooks install`) and the
    // global options.
    cmd.build();
    let top = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    top.render_title(&mut out)?;
    top.render_name_section(&mut out)?;
    top.render_synopsis_section(&mut out)?;
    top.render_description_section(&mut out)?;
    top.render_options_section(&mut out)?;
    out.extend_from_slice(b".SH COMMANDS\n");
    for sub in cmd.get_subcommands() {
        commands(sub, &mut out)?;
    }
    out.extend_from_slice(closing().as_bytes());
    top.render_version_section(&mut out)?;
    app.out.show_data();
    app.out.raw(&ascii(&String::from_utf8_lossy(&out)))?;
    Ok(0)
}

/// Roff with every character past ASCII as its `\[uXXXX]` escape: a
/// help text's `…` or `—` reaches troff without `preconv` (groff, mandoc
/// and `man -l` all read the escape).
fn ascii(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    for c in roff.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

/// A command's part of the page: a subsection with its synopsis,
/// description, own options and examples; then its subcommands'.
fn commands(cmd: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    if cmd.is_hide_set() || cmd.get_name() == "help" {
        return Ok(());
    }
    let name = cmd.get_bin_name().unwrap_or(cmd.get_name()).to_string();
    let mut roff = Roff::default();
    roff.control("SS", [name.as_str()]);
    roff.to_writer(out)?;
    let man = clap_mangen::Man::new(cmd.clone());
    let mut part = Vec::new();
    man.render_synopsis_section(&mut part)?;
    man.render_description_section(&mut part)?;
    if cmd
        .get_arguments()
        .any(|a| !a.is_global_set() && !a.is_hide_set())
    {
        man.render_options_section(&mut part)?;
    }
    if cmd.get_after_help().is_some() || cmd.get_after_long_help().is_some() {
        man.render_extra_section(&mut part)?;
    }
    out.extend_from_slice(demoted(&String::from_utf8_lossy(&part)).as_bytes());
    for sub in cmd.get_subcommands() {
        commands(sub, out)?;
    }
    Ok(())
}

/// A command's sections as part of its subsection: each `.SH` heading a
/// paragraph (a bold `Options:` for the options), the global options
/// (given once, at the top) left out.
fn demoted(roff: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in roff.lines() {
        if let Some(heading) = line.strip_prefix(".SH ") {
            let heading = heading.trim_matches('"');
            skipping = heading.eq_ignore_ascii_case("global options");
            // A paragraph break (`.PP` also resets the indent the
            // options' `.TP` items use); the examples say "Examples:".
            let shown = match heading {
                "SYNOPSIS" => None,
                "DESCRIPTION" | "EXTRA" => Some(".PP\n".to_string()),
                h => Some(format!(
                    ".PP\n\\fB{}{}:\\fR\n",
                    &h[..1],
                    h[1..].to_lowercase()
                )),
            };
            if let (Some(shown), false) = (shown, skipping) {
                out.push_str(&shown);
            }
            continue;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A tagged paragraph per item: its name in bold, then what it means.
fn tagged(roff: &mut Roff, items: &[(&str, &str)]) {
    for (name, meaning) in items {
        roff.control("TP", []);
        roff.text([bold(*name)]);
        roff.text([roman(*meaning)]);
    }
}

/// EXIT STATUS, ENVIRONMENT and SEE ALSO, as docs/cli.md says them.
fn closing() -> String {
    let mut roff = Roff::default();
    roff.control("SH", ["EXIT STATUS"]);
    let codes = [
        ("0", "Success."),
        ("1", "An error: malformed input (the file and line are named), a missing memory, a failed check, a rebuild that left hand edits alone."),
        ("2", "Usage: an unknown command or flag, a bad value, a bad MEMOIR_NOW, a write with no identity (no git user.name and user.email, no MEMOIR_ACTOR)."),
        ("3", "Refused by the write policy: a secret, an oversized or empty content, a missing source, a confidence below the minimum, an unknown scope or type, an unsafe name, a control character. Nothing is written."),
        ("4", "Needs a human decision: a change kept as a proposal, an open conflict, a lost compare-and-swap (--expect), unrecorded hand edits in the way."),
        ("5", "The store is busy and nothing was written; try again: its lock was not acquired in time, or the logs changed while consolidate read them."),
    ];
    tagged(&mut roff, &codes);
    roff.control("SH", ["ENVIRONMENT"]);
    let vars = [
        ("MEMOIR_STORE", "The store's directory, as --store."),
        ("MEMOIR_ACTOR", "Who is writing, Name <email>, as every log entry names it; default: git's author identity (user.name, user.email, GIT_AUTHOR_*)."),
        ("MEMOIR_AUTHOR", "Author and committer of consolidation and rollback commits (default: git's identity)."),
        ("MEMOIR_USER_STORE", "The personal store's directory, an absolute path (default: $XDG_DATA_HOME/memoir/user, else ~/.local/share/memoir/user)."),
        ("MEMOIR_NOW", "Pins the clock (YYYY-MM-DDTHH:MM:SSZ), for tests and reproducible demos."),
        ("NO_COLOR", "No colour, even on a terminal."),
        ("GIT_DIR, GIT_WORK_TREE", "As for git: the repository and the top of its work tree."),
        ("MEMOIR_DEBUG_STATS", "Print how many memory files a command read, on stderr at exit."),
    ];
    tagged(&mut roff, &vars);
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(
        "git(1). The command reference (docs/cli.md) and the file format (docs/format.md) in memoir's source.",
    )]);
    roff.to_roff()
}
