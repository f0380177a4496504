//! Voice calibration (§12.3 of the agent-instruction spec): the tournament
//! (contestants draft one test passage side by side, concurrently, into one
//! Markdown file), the gold standard picked from it, and the voice bundle
//! around it (the anti-pattern sheet, the phase evolution guide, the gold
//! standard's measured traits). The bundle reaches the DIRECTOR and EDITOR
//! prompts through the session state (`prompts::state`), and the
//! `voice-drift` check compares every scene with the gold standard.

pub mod bundle;
pub mod contestant;
pub mod file;
pub mod tournament;

pub use contestant::{Contestant, TestPassage};
pub use tournament::{Tournament, Voice};

/// Why a tournament, a pick or the bundle could not be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VoiceError {
    /// What was asked for does not hold together (no such scene, version…).
    #[error("{0}")]
    Invalid(String),
    /// It would undo the writer's choice (a locked voice) or lacks what it
    /// builds on (no gold standard).
    #[error("{0}")]
    Refused(String),
    #[error("the tournament's prompt: {0}")]
    Prompt(String),
    #[error("{0}")]
    Model(String),
    #[error("cancelled")]
    Cancelled,
}
