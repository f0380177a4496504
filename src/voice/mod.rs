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
    #[error("`{0}` is not in the outline: a tournament's scene is one of the outline's")]
    NotInOutline(String),
    #[error("a tournament has from 1 to {max} contestants, not {given}")]
    Contestants { given: usize, max: usize },
    #[error("`{0}` is a contestant twice")]
    ContestantTwice(String),
    #[error("a test passage of {0} words: ask for 50 to 3,000")]
    PassageLength(u32),
    #[error("cross two different versions: the winner and a runner-up")]
    CrossOfOne,
    /// A version with no prose, which cannot be crossed, explained or picked.
    #[error("version {number}. {label} has no prose to {to}")]
    EmptyVersion {
        number: usize,
        label: String,
        to: &'static str,
    },
    #[error("there is no tournament file {0}")]
    NoTournamentFile(String),
    #[error("{0} is not a tournament's file")]
    NotATournament(String),
    #[error(transparent)]
    NoSuchVersion(#[from] file::NoSuchVersion),
    #[error(
        "the voice is locked ({0} says `locked: true`): unlock it to pick another (`control-room voice unlock`, or “Unlock the Voice” in the editor)"
    )]
    Locked(String),
    #[error("the voice is already locked ({0})")]
    AlreadyLocked(String),
    #[error("the voice is not locked ({0})")]
    NotLocked(String),
    /// A version too short to measure a voice by.
    #[error(
        "version {number}. {label} has {words} words; a gold standard needs at least {needed} for its sentence rhythm, dialogue and imagery to be measured (fewer make every scene seem to drift): run a tournament with more words, or cross this version with another"
    )]
    TooShort {
        number: usize,
        label: String,
        words: usize,
        needed: usize,
    },
    /// There is no gold standard (its path) to build on or to lock.
    #[error("there is no gold standard ({path}){}", if *.to_lock { " to lock" } else { ": pick a tournament's winner first" })]
    NoGoldStandard { path: String, to_lock: bool },
    #[error("the tournament's prompt: {0}")]
    Prompt(String),
    /// Every contestant failed: each one's label and why.
    #[error("no contestant wrote a usable version: {}", .0.iter().map(|(label, why)| format!("{label}: {why}")).collect::<Vec<_>>().join("; "))]
    NoVersion(Vec<(String, Unusable)>),
    /// The model gave no usable account of a version.
    #[error("{0}")]
    NoAccount(Unusable),
    #[error("cancelled")]
    Cancelled,
}

/// Why a contestant's reply is not a version.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum Unusable {
    #[error("it was cut off at the reply's length limit")]
    CutOff,
    /// It broke the prose contract (talk about the task, an echo of the
    /// prompt…).
    #[error("{}", .0.message())]
    Contract(crate::runs::contract::Violation),
    #[error("it holds {0} words, too few to hear a voice in")]
    TooFew(usize),
    #[error("the model failed: {0}")]
    Model(String),
    #[error("no usable prose in {tries} tries; the last problem: {last}")]
    Retried { tries: usize, last: Box<Unusable> },
    #[error("it did not finish")]
    Unfinished,
}
