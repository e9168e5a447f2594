//! Hangs, processes and paths (issue 26, points 12 to 14): a link planted
//! at a temporary name never gets written through.

use crate::util::Env;
use std::time::{Duration, Instant};

/// Longer than any of these commands takes when it does not hang.
const HANG: Duration = Duration::from_secs(10);

/// Runs memoir with `stdin`, killed after [`HANG`]: (exit code, stderr);
/// a kill is a test failure, not a wait for ever.
fn run_bounded(env: &Env, args: &[&str], stdin: &str) -> (i32, String) {
    let started = Instant::now();
    let out = env
        .cmd(args)
        .write_stdin(stdin)
        .timeout(HANG)
        .output()
        .expect("run memoir");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        started.elapsed() < HANG && out.status.code().is_some(),
        "memoir {args:?} hung (killed after {HANG:?}): {err}"
    );
    (out.status.code().unwrap_or(-1), err)
}

/// Links planted at the temporary names `export claude-code` used (a fixed
/// `.<file>.memoir-tmp`) and at the ones a write names by its pid (`-<pid>`
/// and `-<pid>-<n>`, for the pids the next processes are likely to get):
/// the export writes its files, and the links' target outside the folder
/// is untouched.
#[cfg(unix)]
#[test]
fn export_never_writes_through_a_link_at_a_temporary_name() {
    let env = Env::new();
    assert_eq!(
        env.remember("project/deploys", "Deploys on weekdays", &[])
            .0,
        0
    );
    let folder = env.dir.path().join("cc");
    std::fs::create_dir_all(&folder).expect("folder");
    let outside = env.dir.path().join("outside.txt");
    std::fs::write(&outside, "not memoir's").expect("outside");
    let plant = |name: String| {
        std::os::unix::fs::symlink(&outside, folder.join(name)).expect("link");
    };
    // The pid the next process gets, near enough on a quiet machine.
    let next = std::process::Command::new("true")
        .spawn()
        .map(|mut c| {
            let _ = c.wait();
            c.id()
        })
        .expect("spawn");
    for file in ["project_deploys.md", "MEMORY.md"] {
        plant(format!(".{file}.memoir-tmp"));
        for pid in next..next + 200 {
            plant(format!(".{file}.memoir-{pid}"));
            for n in 0..4 {
                plant(format!(".{file}.memoir-{pid}-{n}"));
            }
        }
    }
    let out = folder.to_str().expect("utf-8");
    let (code, err) = run_bounded(&env, &["export", "claude-code", out], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&outside).expect("outside"),
        "not memoir's"
    );
    for file in ["project_deploys.md", "MEMORY.md"] {
        let meta = std::fs::symlink_metadata(folder.join(file)).expect(file);
        assert!(meta.is_file(), "{file} is a regular file");
    }
    let index = std::fs::read_to_string(folder.join("MEMORY.md")).expect("index");
    assert!(index.contains("project_deploys.md"), "{index}");
}
