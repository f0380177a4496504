//! Voice calibration (§12.3 of the agent-instruction spec): the tournament
//! (contestants draft one test passage side by side, concurrently, into one
//! Markdown file), the gold standard picked from it, and the voice bundle
//! around it (the anti-pattern sheet, the phase evolution guide, the gold
//! standard's measured traits). The bundle reaches the DIRECTOR and EDITOR
//! prompts through the session state (`prompts::state`), and the
//! `voice-drift` check compares every scene with the gold standard.
//!
//! ## Parts
//!
//! `voice/` voice calibration: `contestant` (strategies, models, the writer's words; the test
//! passage), `tournament` (every contestant at once, held to the prose contract, at most two
//! retries; round two crosses two versions; "why does this work?"), `file` (the tournament's
//! Markdown, written and read back as the writer left it), `bundle` (the gold standard from a
//! version, the bundle around it, the lock), all as changes.

pub mod bundle;
pub mod contestant;
pub mod file;
pub mod play;
pub mod tournament;

pub use contestant::{Contestant, TestPassage};
pub use play::Voice;
pub use tournament::Tournament;

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
