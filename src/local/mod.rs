//! Local state: what each clone keeps for itself under
//! `<git common dir>/memoir/` and never commits (clone id, store lock,
//! journal, the persistent index's file, what `context` injected).

pub mod access;
pub mod lock;
pub mod receipts;
pub(crate) mod state;
