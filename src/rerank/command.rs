//! The command transport: a program run once per call, in the store's
//! root, with the rerank request JSON on its stdin and the answer JSON on
//! its stdout, by the runner the services share (`service::command`):
//! killed at the timeout or once it prints more than
//! [`MAX_ANSWER_BYTES`]. A local
//! cross-encoder in Python, or curl for an https provider, can stand
//! behind it.

use super::wire::{parse_answer, request};
use super::{RerankError, Reranker};
use crate::service::command::CommandCall;
use crate::service::MAX_ANSWER_BYTES;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Reranks by running a program per call.
pub struct CommandReranker {
    argv: Vec<String>,
    dir: PathBuf,
    model: Option<String>,
    /// Only to blank it out of the program's error messages.
    api_key: Option<String>,
    timeout: Duration,
    /// The most output bytes read ([`MAX_ANSWER_BYTES`]; smaller in tests).
    max_answer: usize,
}

// By hand: the API key must not reach a debug print.
impl std::fmt::Debug for CommandReranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandReranker")
            .field("argv", &self.argv)
            .field("dir", &self.dir)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl CommandReranker {
    /// A reranker running `argv` in `dir`, naming `model` if given, each
    /// call within `timeout`.
    pub fn new(
        argv: Vec<String>,
        dir: &Path,
        model: Option<&str>,
        api_key: Option<String>,
        timeout: Duration,
    ) -> CommandReranker {
        CommandReranker {
            argv,
            dir: dir.to_path_buf(),
            model: model.map(str::to_string),
            api_key,
            timeout,
            max_answer: MAX_ANSWER_BYTES,
        }
    }
}

impl Reranker for CommandReranker {
    fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<f64>, RerankError> {
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let call = CommandCall {
            argv: &self.argv,
            dir: &self.dir,
            secret: self.api_key.as_deref(),
            timeout: self.timeout,
            max_answer: self.max_answer,
        };
        let output = call.run(request(self.model.as_deref(), query, documents))?;
        parse_answer(&output, documents.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn script() -> String {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fake_reranker.py")
            .to_string_lossy()
            .into_owned()
    }

    fn fake(args: &[&str], ms: u64) -> CommandReranker {
        let mut argv = vec!["python3".to_string(), script()];
        argv.extend(args.iter().map(|a| a.to_string()));
        CommandReranker::new(
            argv,
            &std::env::temp_dir(),
            Some("fake"),
            Some("sk-test-123".into()),
            Duration::from_millis(ms),
        )
    }

    fn docs() -> Vec<String> {
        [
            "The staging database URL is postgres://db.internal",
            "Deploys go out on Fridays after the review",
            "the DATABASE of staging, its url",
            "数据库地址在配置文件里",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn rerank_command_scores_the_fake_reranker_predicts() {
        let q = "Where is the staging database url?";
        // Query words of 3+ characters: where, the, staging, database, url.
        let want = vec![4.0 / 5.0, 1.0 / 5.0, 4.0 / 5.0, 0.0];
        for form in ["input", "sorted", "tei"] {
            let got = fake(&["--answer", form], 20_000)
                .rerank(q, &docs())
                .unwrap();
            assert!(
                got.len() == 4 && got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-12),
                "{form}: {got:?}"
            );
        }
        // CJK words are whole runs.
        let got = fake(&[], 20_000)
            .rerank("数据库地址在配置文件里", &docs())
            .unwrap();
        assert_eq!(got[3], 1.0);
    }

    #[test]
    fn rerank_command_failures() {
        let q = "staging database";
        let e = fake(&["--fail"], 20_000).rerank(q, &docs()).unwrap_err();
        assert!(
            matches!(&e, RerankError::Command(m) if m.contains("failed (exit status: 1): fake_reranker: failing on purpose")),
            "{e}"
        );
        let start = Instant::now();
        let e = fake(&["--sleep", "30"], 500)
            .rerank(q, &docs())
            .unwrap_err();
        assert_eq!(e, RerankError::Timeout { ms: 500 });
        assert!(start.elapsed() < Duration::from_secs(5));
        for (form, says) in [
            ("bad-json", "not the expected JSON"),
            ("missing", "no score for index 3 of 4"),
            ("nan", "not the expected JSON"),
        ] {
            let e = fake(&["--answer", form], 20_000)
                .rerank(q, &docs())
                .unwrap_err();
            assert!(
                matches!(&e, RerankError::BadResponse(m) if m.contains(says)),
                "{form}: {e}"
            );
            let text = format!("{e} {e:?}");
            assert!(
                !text.contains("staging") && !text.contains("sk-test"),
                "{text}"
            );
        }
        // The env knob, for tests that cannot change the argv.
        let mut r = fake(&[], 20_000);
        r.argv = vec![
            "env".into(),
            "FAKE_RERANKER=--fail".into(),
            "python3".into(),
            script(),
        ];
        assert!(matches!(r.rerank(q, &docs()), Err(RerankError::Command(_))));
    }

    #[test]
    fn rerank_command_quotes_stderr_without_the_key() {
        let r = CommandReranker::new(
            vec![
                "sh".into(),
                "-c".into(),
                "cat >/dev/null; echo 'bad key sk-test-123' >&2; exit 3".into(),
            ],
            &std::env::temp_dir(),
            None,
            Some("sk-test-123".into()),
            Duration::from_secs(5),
        );
        let e = r.rerank("q", &["d".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the rerank service's command `sh` failed (exit status: 3): bad key [redacted]"
        );
        let mut r = CommandReranker::new(
            vec!["sh".into(), "-c".into(), "cat >/dev/null; exec yes".into()],
            &std::env::temp_dir(),
            None,
            None,
            Duration::from_secs(10),
        );
        r.max_answer = 1 << 20;
        let e = r.rerank("q", &["d".into()]).unwrap_err();
        assert!(
            matches!(&e, RerankError::BadResponse(m) if m.contains("more than 1 MiB")),
            "{e}"
        );
    }
}
