//! Search: which memories are relevant to a query, and in what order.

pub mod document;
pub mod hybrid;
pub mod inject;
pub(crate) mod nearest;
pub mod passage;
pub mod rank;
pub mod reader;
pub mod results;
pub mod semantic;
mod shortlist;
