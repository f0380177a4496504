//! The Foreman (the agent-instruction spec's guide through the book). The
//! project's mode and its gates are kept below the engine (`kb::mode`), where
//! prompts read them too.

pub mod actions;
pub mod chief;
pub mod desk;
pub mod turn;

pub use crate::kb::mode::{self, Gate, Mode, ModeError, ModeState, Move};
