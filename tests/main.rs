//! The integration tests: one crate of modules, so the library is linked
//! once (`autotests = false` in `Cargo.toml`). The shared helpers are
//! `support` (fixtures, the LSP client, the fake and the real model
//! servers); each other module is one area of the
//! product, driven as a writer or an editor drives it (the real binary over
//! stdio and as a command, real editors, real files in temporary folders).
//!
//! Kept apart, each in a process of its own: `allocator.rs` and
//! `allocator_setting.rs` (malloc's arenas are fixed by the first threads
//! that allocate).

mod support;

mod charts;
mod cli;
mod codes;
mod compile;
mod conference;
mod continuity;
mod continuity_lsp;
mod dependencies;
mod editor_snippets;
mod edits;
mod engine;
mod fixtures;
mod foreman;
mod foreman_lsp;
mod fuzz;
mod health;
mod knowledge;
mod language;
mod llm;
mod lsp;
mod manuscript;
mod micro_steps;
mod models;
mod neovim;
mod novel;
mod package;
mod packets;
mod parity;
mod plan;
mod planted;
mod real_model;
mod review;
mod runs;
mod semantic_tokens;
mod soak;
mod stats;
mod story_bible;
mod story_clock;
mod story_graph;
mod story_health_model;
mod tidy;
mod voice;
mod warm_start;
