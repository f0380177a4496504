//! The pipeline engine (Mode B of the execution-modes spec): recipes as data,
//! the task router, `$ref` resolution, phase A tools with signed receipts, and
//! the step runner that persists every run under `.control-room/runs/`.
//!
//! Nothing here knows LSP; the CLI and the server drive it and listen to its
//! events through [`events::RunSink`].

pub mod audit;
pub mod changes;
pub mod conference;
pub mod contract;
pub mod delivery;
pub mod drafting;
pub mod edits;
pub mod events;
pub mod findings;
pub mod foreman;
pub mod launch;
pub mod model;
pub mod plan;
pub mod prompts;
pub mod protocol;
pub mod receipts;
pub mod recipe;
pub mod refs;
pub mod report;
pub mod review;
pub mod router;
pub mod runner;
pub mod store;
pub mod story_health;
pub mod tools;
pub mod voice;
