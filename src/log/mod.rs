//! The log: the daily files that are memoir's source of truth, and replay,
//! which turns their events into the state of every memory.

pub(crate) mod files;
pub mod joined;
pub mod read;
pub mod replay;
pub(crate) mod transition;
