//! The Foreman (the agent-instruction spec's guide through the book). The
//! project's mode and its gates are kept below the engine (`kb::mode`), where
//! prompts read them too.
//!
//! ## Parts
//!
//! `foreman/` the Foreman: `state` what it sees of the gate out of the mode (what it still
//! needs, the tournaments, the drafted scenes and their health); `contract` what its reply may be (a message and actions, no
//! prose for a file, no move it did not make); `desk` the conversation file (`Notes/foreman.md`) read into turns
//! and history; `turn` one turn (the prompt framed by the project's mode with its history and
//! allowed actions, the reply, each action validated and carried out with a signed receipt,
//! refusals and answers quoted back at most twice; changes returned, and `apply_on_disk` for
//! the command line); `actions/` the twelve actions (schemas and modes in
//! `prompts/schemas/actions.json`, parameters read into the schema's shape, executors that
//! return changes, never write the manuscript; `template` the Story Bible part by part,
//! `scaffold` a scene's scaffold); `chief` a request no recipe takes split into a session plan
//! (every task must route) or one question with choices, held to `schemas/decompose.json`,
//! problems quoted back at most twice.

pub mod actions;
pub mod chief;
pub mod contract;
pub mod desk;
pub mod state;
pub mod turn;

pub use crate::kb::mode::{self, Gate, Mode, ModeError, ModeState, Move};
