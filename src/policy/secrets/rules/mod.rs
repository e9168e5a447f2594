//! The rule table: token formats from gitleaks' rule set (MIT licensed,
//! github.com/gitleaks/gitleaks, config/gitleaks.toml), trufflehog's
//! detectors and GitHub's secret-scanning patterns, rewritten for the
//! `regex` crate in ASCII mode, then the generic rules.
//!
//! Each rule names the literals (keywords) that every match contains: a
//! rule is only run near its keyword (see `scan_direct`), which keeps a
//! 256 KiB body to a few milliseconds with 170 rules. A keyword with an
//! uppercase letter is matched exactly, any other ignoring case (a rare
//! exact `SK` instead of every `sk` in "task" and "desk"). A rule with no
//! keyword runs over the whole text, so there are few of those.
//!
//! The value a gate judges, and redaction replaces, is the group named `v`,
//! else group 1, else the whole match. Order matters: on a line with two
//! findings the earlier rule is reported, so the specific formats come
//! first and the generic rules last.
//!
//! A format's ends are `(?:\b|_)`, a word boundary or an underscore, not
//! gitleaks' `\b` alone: `_` is a word character, so `\b` let a token glued
//! into an identifier (`deploy_ghp_…`, `ghp_…_old`) pass. The underscore is
//! outside the value's group, so redaction keeps it.
//!
//! The table is in two files, in the order they are tried: `formats` (the
//! token formats, a vendor's or a key's own shape) and `generic` (the
//! rules that know a credential by what stands around it). This file
//! holds what both are written with: [`Def`], [`Gate`], the constructors
//! and the pattern pieces (`value!`, `sep!`, `named!`).

/// How a match is confirmed before it counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Gate {
    /// A vendor format: the value only needs some entropy (not `xxxx…`) and
    /// must not be a documented example key (`…EXAMPLE`).
    Token,
    /// A catch-all format: the value must look random (mixed digits and
    /// letters, or mixed case), see `gate::tokenish`.
    Tokenish,
    /// Shannon entropy of the value at least this.
    Entropy(f64),
    /// A password in a URL: anything but a placeholder, however weak.
    Url,
    /// A `user:pass` pair in base64 (`Basic …`, docker's `"auth"`).
    Basic,
    /// An opaque bearer token.
    Bearer,
    /// A named value (`password: …`): judged by the class of the name
    /// (group `n`, password if absent) and the shape of the value.
    Named,
}

/// One rule.
#[derive(Clone, Copy)]
pub(super) struct Def {
    /// The id reported, e.g. `github-pat`.
    pub id: &'static str,
    /// Lowercase literals, one of which every match contains.
    pub kw: &'static [&'static str],
    /// The pattern (compiled in ASCII mode).
    pub re: &'static str,
    /// What confirms a match.
    pub gate: Gate,
    /// Whether a match may span lines (the window is not cut at the line).
    pub multiline: bool,
    /// How far after a keyword a match may end.
    pub forward: usize,
}

/// How far after its keyword most formats end.
const FORWARD: usize = 512;

impl Def {
    /// For formats that run long (JWTs, macaroons, Facebook tokens).
    const fn long(self) -> Def {
        Def {
            forward: 8192,
            ..self
        }
    }
}

const fn d(id: &'static str, kw: &'static [&'static str], re: &'static str) -> Def {
    Def {
        id,
        kw,
        re,
        gate: Gate::Token,
        multiline: false,
        forward: FORWARD,
    }
}

const fn g(id: &'static str, kw: &'static [&'static str], re: &'static str, gate: Gate) -> Def {
    Def {
        id,
        kw,
        re,
        gate,
        multiline: false,
        forward: FORWARD,
    }
}

/// Characters of an assigned value: printable ASCII but space, quotes,
/// backtick, `,`, `;` and `&` (which end a value in prose, code and query
/// strings).
macro_rules! value {
    () => {
        r"[\x21\x23-\x25\x28-\x2b\x2d-\x3a\x3c-\x5f\x61-\x7e]"
    };
}

/// Separators between a name and its value, full-width ones included.
macro_rules! sep {
    () => {
        r#"["']?\s{0,3}(?::=|=>|\?=|={1,3}|:{1,2}|：|＝)\s{0,3}["']?"#
    };
}

/// A vendor name, then up to 30 name characters, then a separator.
macro_rules! named {
    ($vendor:literal, $value:literal) => {
        concat!(
            r"(?i)",
            $vendor,
            r"[a-z0-9_.\-]{0,30}",
            sep!(),
            "(",
            $value,
            r")(?:\b|_)"
        )
    };
}

// After the macros: a `macro_rules!` is seen only by the code below it,
// the two tables' files included.
mod formats;
mod generic;

/// Every rule, most specific first: the token formats, then the generic
/// rules.
pub(super) const RULES: &[Def] = &ALL;

/// [`RULES`], one array made of the two tables at compile time.
const ALL: [Def; formats::FORMATS.len() + generic::GENERIC.len()] =
    concat(formats::FORMATS, generic::GENERIC);

/// `a` then `b`, as one array of `N` rules (`N` must be their sum: the
/// build fails otherwise).
const fn concat<const N: usize>(a: &[Def], b: &[Def]) -> [Def; N] {
    assert!(a.len() + b.len() == N, "the rule tables' lengths");
    let mut out = [d("", &[], ""); N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}
