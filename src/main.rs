//! The `memoir` binary: a thin CLI over the library core.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
