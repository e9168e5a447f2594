//! Local state: what each clone keeps for itself under
//! `<git common dir>/memoir/` and never commits (clone id, store lock,
//! journal, the persistent index's file).

pub mod lock;
pub(crate) mod state;
