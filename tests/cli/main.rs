//! End-to-end tests: the real `memoir` binary in a fresh temporary git
//! repository, with HOME, git config, author and clock pinned.

mod util;

mod broken_inputs;
mod concurrency;
mod consolidate;
mod first_use;
mod fixtures;
mod fuzz_regressions;
mod git_status;
mod hooks;
mod hostile;
mod interop;
mod json_contract;
mod lifecycle;
mod manual;
mod mcp;
mod personal;
mod recall;
mod replace;
mod rerank;
mod resolve;
mod roundtrip;
mod secrets;
mod seen;
mod semantic;
mod setup;
mod team;
mod trust_identity;
mod trust_procs;
mod watch;
mod workflow;
