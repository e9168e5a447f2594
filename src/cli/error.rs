//! The CLI's one error type and its documented exit codes.

use memoir::store::StoreError;

/// Exit codes (documented in docs/cli.md).
pub mod code {
    /// Success.
    pub const OK: u8 = 0;
    /// An error, malformed input, or a failed check.
    pub const ERROR: u8 = 1;
    /// Bad usage.
    pub const USAGE: u8 = 2;
    /// Refused by the write policy.
    pub const REFUSED: u8 = 3;
    /// Needs a human decision.
    pub const DECISION: u8 = 4;
    /// The store is busy: its lock was not acquired in time, or the store
    /// changed while the command read it. Nothing was written; retry.
    pub const BUSY: u8 = 5;

    /// An exit code's name in JSON errors: `error`, `usage`, `refused`,
    /// `decision`, `busy`.
    pub fn name(exit: u8) -> &'static str {
        match exit {
            OK => "ok",
            USAGE => "usage",
            REFUSED => "refused",
            DECISION => "decision",
            BUSY => "busy",
            _ => "error",
        }
    }
}

/// Anything that ends a command unsuccessfully.
#[derive(Debug)]
pub enum CliError {
    /// A core error.
    Store(StoreError),
    /// Bad usage not caught by clap.
    Usage(String),
    /// Writing output failed (a closed pipe is handled before this).
    Io(std::io::Error),
    /// Any other failure (exit 1), e.g. a git precondition.
    Failed(String),
    /// Input given to the CLI (an argument, stdin, a file it reads, an
    /// extractor's answer) broke a write-policy rule: exit 3, as the core's
    /// refusals.
    Refused {
        /// The rule, e.g. `size` or `name`.
        rule: String,
        /// The input at fault: an argument, `<stdin>`, a file.
        input: String,
        /// Why, never echoing a secret.
        message: String,
    },
    /// A write with no one to log it as: no MEMOIR_ACTOR and no git
    /// identity (exit 2, as git refuses a commit).
    NoIdentity,
    /// Input given to the CLI could not be read or is malformed (exit 1).
    Input {
        /// The input at fault.
        input: String,
        /// What is wrong.
        message: String,
    },
}

/// What a write with no identity says first.
const NO_IDENTITY: &str = "who is writing? git has no user.name and user.email, and MEMOIR_ACTOR is not set: nothing was written";

/// What git says when it does not know who commits, and memoir's own way out.
const GIT_ADVICE: &str = "
*** Please tell me who you are.

Run

  git config --global user.email \"you@example.com\"
  git config --global user.name \"Your Name\"

to set your account's default identity.
Omit --global to set the identity only in this repository.
(Or set MEMOIR_ACTOR=\"Name <email>\" for memoir alone.)";

/// A consolidation error: the store's as they are, git's as failures (exit 1).
impl From<memoir::change::version::VersionError> for CliError {
    fn from(e: memoir::change::version::VersionError) -> Self {
        match e {
            memoir::change::version::VersionError::Store(e) => CliError::Store(e),
            memoir::change::version::VersionError::Git(e) => CliError::Failed(e.to_string()),
        }
    }
}

/// A core error, its exit code chosen by [`CliError::code`].
impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        CliError::Store(e)
    }
}

/// Reading input or writing output failed (a closed pipe is not an error).
impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Io(e)
    }
}

/// What an error means to the user: its exit code and message.
impl CliError {
    /// Input given to the CLI broke the write-policy rule `rule` (exit 3).
    pub fn refused(rule: &str, input: &str, message: String) -> CliError {
        CliError::Refused {
            rule: rule.into(),
            input: input.into(),
            message,
        }
    }

    /// The exit code for this error.
    pub fn code(&self) -> u8 {
        match self {
            CliError::Store(StoreError::Refused { .. }) => code::REFUSED,
            CliError::Store(StoreError::Decision(_)) => code::DECISION,
            CliError::Store(StoreError::Lock(memoir::local::lock::LockError::Timeout {
                ..
            })) => code::BUSY,
            CliError::Store(StoreError::Busy(_)) => code::BUSY,
            CliError::Usage(_) | CliError::NoIdentity => code::USAGE,
            CliError::Refused { .. } => code::REFUSED,
            _ => code::ERROR,
        }
    }

    /// The one-line message.
    pub fn message(&self) -> String {
        match self {
            CliError::Store(e) => e.to_string(),
            CliError::Usage(m) => m.clone(),
            CliError::Io(e) => e.to_string(),
            CliError::Failed(m) => m.clone(),
            CliError::Refused {
                rule,
                input,
                message,
            } => format!("{input}: refused ({rule}): {message}"),
            CliError::Input { input, message } => format!("{input}: {message}"),
            // One line for JSON, the MCP server and warnings, advice and all.
            CliError::NoIdentity => format!(
                "{NO_IDENTITY}; run git config --global user.email \"you@example.com\" and git config --global user.name \"Your Name\", or set MEMOIR_ACTOR=\"Name <email>\""
            ),
        }
    }

    /// For an error that comes with advice in lines (a missing identity):
    /// its first line and the advice, as stderr shows them.
    pub fn advice(&self) -> Option<(&'static str, &'static str)> {
        matches!(self, CliError::NoIdentity).then_some((NO_IDENTITY, GIT_ADVICE))
    }

    /// The error as data: `{"code", "message", "exit"}`, and `rule`,
    /// `path`, `line` where the error has them.
    pub fn to_json(&self) -> serde_json::Value {
        let mut j = serde_json::json!({
            "code": code::name(self.code()), "message": self.message(), "exit": self.code(),
        });
        let (rule, path, line) = match self {
            CliError::Store(StoreError::Refused {
                rule, path, line, ..
            }) => (Some(rule.as_str()), Some(path.as_str()), *line),
            CliError::Store(e) if e.is_malformed() => match e.location() {
                Some((path, line)) => (None, Some(path), line),
                None => (None, None, None),
            },
            CliError::Refused { rule, input, .. } => {
                (Some(rule.as_str()), Some(input.as_str()), None)
            }
            CliError::Input { input, .. } => (None, Some(input.as_str()), None),
            _ => (None, None, None),
        };
        if let Some(rule) = rule {
            j["rule"] = rule.into();
        }
        if let Some(path) = path {
            j["path"] = path.into();
        }
        if let Some(line) = line {
            j["line"] = line.into();
        }
        j
    }

    /// Is this a closed pipe (`memoir list | head`), which is not an error?
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}
