//! The command transport: a program run once per call, in the store's
//! root, with the request JSON on its stdin and the answer JSON expected on
//! its stdout (`service::command`, which the services share). Anything can
//! stand behind it: a local model in Python, or curl for an https provider
//! (`sh -c 'curl ... -d @-'`).
//!
//! The call is bounded like an HTTP one: killed at the timeout, killed
//! once it prints more than [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES).

use super::wire::{parse_answer, request};
use super::{EmbedError, Embedder, MAX_ANSWER_BYTES};
use crate::service::command::CommandCall;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Embeds by running a program per call.
pub struct CommandEmbedder {
    argv: Vec<String>,
    dir: PathBuf,
    model: String,
    /// Only to blank it out of the program's error messages.
    api_key: Option<String>,
    timeout: Duration,
    batch: usize,
    /// The most output bytes read ([`MAX_ANSWER_BYTES`]; smaller in tests).
    max_answer: usize,
}

// By hand: the API key must not reach a debug print.
impl std::fmt::Debug for CommandEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandEmbedder")
            .field("argv", &self.argv)
            .field("dir", &self.dir)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("batch", &self.batch)
            .finish()
    }
}

impl CommandEmbedder {
    /// An embedder running `argv` in `dir`, asking for `model`, each call
    /// within `timeout`, `batch` texts at most per call.
    pub fn new(
        argv: Vec<String>,
        dir: &Path,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
        batch: usize,
    ) -> CommandEmbedder {
        CommandEmbedder {
            argv,
            dir: dir.to_path_buf(),
            model: model.to_string(),
            api_key,
            timeout,
            batch: batch.max(1),
            max_answer: MAX_ANSWER_BYTES,
        }
    }
}

impl Embedder for CommandEmbedder {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let call = CommandCall {
            argv: &self.argv,
            dir: &self.dir,
            secret: self.api_key.as_deref(),
            timeout: self.timeout,
            max_answer: self.max_answer,
        };
        let output = call.run(request(&self.model, texts))?;
        parse_answer(&output, texts.len())
    }

    fn batch_size(&self) -> usize {
        self.batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn sh(script: &str, ms: u64) -> CommandEmbedder {
        let dir = std::env::temp_dir();
        CommandEmbedder::new(
            vec!["sh".into(), "-c".into(), script.into()],
            &dir,
            "m",
            Some("sk-test-123".into()),
            Duration::from_millis(ms),
            8,
        )
    }

    fn texts() -> Vec<String> {
        vec!["alpha".into(), "beta".into()]
    }

    #[test]
    fn embed_command_answers_on_stdout_after_reading_stdin() {
        // Echoes the request's model back through the answer's shape, so
        // the test sees stdin arrived whole.
        let e = sh(
            r#"req=$(cat); case "$req" in *'"input":["alpha","beta"]'*) ;; *) exit 9;; esac
               printf '{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]}'"#,
            5000,
        );
        assert_eq!(
            e.embed(&texts()).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
    }

    #[test]
    fn embed_command_runs_in_the_store_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("answer.json"),
            r#"{"data":[{"index":0,"embedding":[3]}]}"#,
        )
        .unwrap();
        let e = CommandEmbedder::new(
            vec!["cat".into(), "answer.json".into()],
            dir.path(),
            "m",
            None,
            Duration::from_secs(5),
            8,
        );
        assert_eq!(e.embed(&["x".into()]).unwrap(), vec![vec![3.0]]);
    }

    #[test]
    fn embed_command_failure_quotes_stderr_first_line_without_the_key() {
        let long = "y".repeat(300);
        let e = sh(
            &format!("cat >/dev/null; echo; echo 'error: bad key sk-test-123 {long}' >&2; echo second >&2; exit 3"),
            5000,
        )
        .embed(&texts())
        .unwrap_err();
        let EmbedError::Command(m) = &e else {
            panic!("{e:?}")
        };
        assert!(
            m.starts_with("`sh` failed (exit status: 3): error: bad key [redacted] yyy"),
            "{m}"
        );
        assert!(
            !m.contains("second") && !m.contains("sk-test") && m.chars().count() < 260,
            "{m}"
        );
        let e = sh("exit 1", 5000).embed(&texts()).unwrap_err();
        assert_eq!(
            e,
            EmbedError::Command("`sh` failed (exit status: 1)".into())
        );
        let e = CommandEmbedder::new(
            vec!["/no/such/program".into()],
            &std::env::temp_dir(),
            "m",
            None,
            Duration::from_secs(5),
            8,
        )
        .embed(&texts())
        .unwrap_err();
        assert!(
            matches!(&e, EmbedError::Command(m) if m.contains("cannot run")),
            "{e}"
        );
        let e = sh("cat >/dev/null; echo '{\"data\":[]}'", 5000)
            .embed(&texts())
            .unwrap_err();
        assert!(
            matches!(&e, EmbedError::BadResponse(m) if m.contains("0 vectors")),
            "{e}"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn embed_command_timeout_kills_the_child() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let e = CommandEmbedder::new(
            vec![
                "sh".into(),
                "-c".into(),
                "echo $$ > pid; exec sleep 30".into(),
            ],
            dir.path(),
            "m",
            None,
            Duration::from_millis(300),
            8,
        );
        let start = Instant::now();
        assert_eq!(
            e.embed(&texts()).unwrap_err(),
            EmbedError::Timeout { ms: 300 }
        );
        assert!(start.elapsed() < Duration::from_secs(3));
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        // Killed and reaped: no such process any more.
        assert!(!Path::new(&format!("/proc/{}", pid.trim())).exists());
    }

    #[test]
    fn embed_command_output_is_capped() {
        let mut e = sh("cat >/dev/null; exec yes", 10_000);
        e.max_answer = 1 << 20;
        let start = Instant::now();
        let err = e.embed(&texts()).unwrap_err();
        assert!(
            matches!(&err, EmbedError::BadResponse(m) if m.contains("more than 1 MiB")),
            "{err}"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn embed_command_fake_embedder_fixture() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_embedder.py");
        let e = CommandEmbedder::new(
            vec!["python3".into(), script.to_string_lossy().into_owned()],
            &std::env::temp_dir(),
            "fake",
            None,
            Duration::from_secs(20),
            8,
        );
        let texts: Vec<String> = [
            "The staging database URL is postgres://db.internal",
            "the database url for staging",
            "Deploys go out on Fridays after the review",
            "数据库地址在配置文件里",
            "数据库地址",
        ]
        .map(String::from)
        .to_vec();
        let v = e.embed(&texts).unwrap();
        assert!(v.iter().all(|v| v.len() == 64));
        let norm: f32 = v[0].iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-4);
        assert!(super::super::cosine(&v[0], &v[1]) > super::super::cosine(&v[0], &v[2]) + 0.2);
        assert!(super::super::cosine(&v[3], &v[4]) > 0.5);
        // Deterministic.
        assert_eq!(e.embed(&texts).unwrap(), v);
    }
}
