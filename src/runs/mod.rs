//! The run machinery (Mode B of the execution-modes spec): recipes as data,
//! the task router, `$ref` resolution, the step runner that persists every
//! run under `.control-room/runs/`, prompts, contracts, review, reports, and
//! what an output does to the manuscript (drafts, edits, delivery). The
//! phase A tools it runs are `crate::tools`.
//!
//! Nothing here knows LSP; the CLI and the server drive it and listen to its
//! events through [`events::RunSink`].

pub mod audit;
pub mod changes;
pub mod contract;
pub mod delivery;
pub mod drafting;
pub mod edits;
pub mod events;
pub mod findings;
pub mod launch;
pub mod prompts;
pub mod receipts;
pub mod recipe;
pub mod refs;
pub mod report;
pub mod review;
pub mod router;
pub mod runner;
pub mod store;
pub mod story_health;
