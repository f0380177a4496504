//! The project's mode (ARCHITECT, VOICE_CALIBRATION, DIRECTOR, EDITOR: §5.2
//! of the agent-instruction spec) and the gates between them.
//!
//! The mode is kept in `.control-room/mode.json` (versioned, written whole
//! and atomically), with every move: from, to, when, and for a gate passed on
//! the writer's say-so, what it lacked, why the writer went on and the risk
//! the spec names. A project without the file is in ARCHITECT.
//!
//! The gates, read from the manuscript as it is now:
//! - ARCHITECT → VOICE_CALIBRATION: the four Story Bible templates complete
//!   (`status: complete` and no part missing);
//! - VOICE_CALIBRATION → DIRECTOR: the voice bundle generated (the gold
//!   standard, the anti-pattern sheet and the phase evolution guide in the
//!   voice folder) and locked (`locked: true` in the gold standard);
//! - DIRECTOR → EDITOR: every scene of the outline drafted (a file with prose);
//! - EDITOR: the writer marks the manuscript complete (`mode advance` in
//!   EDITOR is that mark; no model can make it).
//!
//! Going back to an earlier mode needs no gate.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::index::{BibleKind, Workspace};
use crate::storage::Disk;

/// Where the mode is kept, relative to the root.
pub const MODE_FILE: &str = ".control-room/mode.json";
/// The format of [`MODE_FILE`] this build writes.
pub const MODE_VERSION: u32 = 1;

pub use crate::index::voice::GOLD_STANDARD;
/// The phase evolution guide of the voice bundle, in the voice folder.
pub const PHASE_EVOLUTION: &str = "phase-evolution.md";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Architect,
    VoiceCalibration,
    Director,
    Editor,
}

impl Mode {
    pub const ALL: [Mode; 4] = [
        Mode::Architect,
        Mode::VoiceCalibration,
        Mode::Director,
        Mode::Editor,
    ];

    /// As prompts and files name it (`voice_calibration`).
    pub fn id(self) -> &'static str {
        match self {
            Mode::Architect => "architect",
            Mode::VoiceCalibration => "voice_calibration",
            Mode::Director => "director",
            Mode::Editor => "editor",
        }
    }

    /// As the session state and the editor show it (`VOICE_CALIBRATION`).
    pub fn label(self) -> &'static str {
        match self {
            Mode::Architect => "ARCHITECT",
            Mode::VoiceCalibration => "VOICE_CALIBRATION",
            Mode::Director => "DIRECTOR",
            Mode::Editor => "EDITOR",
        }
    }

    /// `architect`, `ARCHITECT`, `voice-calibration`… → the mode.
    pub fn parse(name: &str) -> Option<Mode> {
        let name = name.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        Mode::ALL.into_iter().find(|mode| mode.id() == name)
    }

    /// The mode after this one.
    pub fn next(self) -> Option<Mode> {
        let at = Mode::ALL.iter().position(|mode| *mode == self)?;
        Mode::ALL.get(at + 1).copied()
    }

    /// What leaving this mode asks, in a line.
    pub fn gate_name(self) -> &'static str {
        match self {
            Mode::Architect => "the Story Bible complete",
            Mode::VoiceCalibration => "the voice bundle generated and locked",
            Mode::Director => "every outline scene drafted",
            Mode::Editor => "the writer marks the manuscript complete",
        }
    }

    /// The risk of leaving this mode with its gate shut (§5.2: "comply but
    /// note the risk").
    pub fn risk(self) -> &'static str {
        match self {
            Mode::Architect => {
                "drafting without a complete Story Bible: the draft finds the structural gaps, and there they cost a rewrite"
            }
            Mode::VoiceCalibration => {
                "drafting without a locked voice: scenes drift from each other, and revision has to re-voice them"
            }
            Mode::Director => {
                "editing before the first draft is complete: polish spent on scenes whose place may still change"
            }
            Mode::Editor => "none: the writer decides when the manuscript is complete",
        }
    }
}

/// A move from one mode to another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    pub from: Mode,
    pub to: Mode,
    pub at: String,
    /// Whether the gate was shut and the writer went on anyway.
    #[serde(default)]
    pub skipped: bool,
    /// What the gate lacked when it was skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmet: Vec<String>,
    /// The writer's reason for skipping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    /// The risk taken, as the spec names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
}

/// The project's mode and how it got there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeState {
    pub version: u32,
    pub mode: Mode,
    #[serde(default)]
    pub history: Vec<Transition>,
    /// When the writer marked the manuscript complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
}

impl Default for ModeState {
    fn default() -> Self {
        ModeState {
            version: MODE_VERSION,
            mode: Mode::Architect,
            history: Vec::new(),
            completed_at: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ModeError {
    #[error("{MODE_FILE}: {0}")]
    Unreadable(String),
    #[error("{MODE_FILE} has version {found}; this build reads version {MODE_VERSION} and older")]
    Newer { found: u32 },
    #[error("cannot write {MODE_FILE}: {0}")]
    Write(std::io::Error),
    #[error(
        "the gate out of {} is shut ({}): {}. To go on anyway, say why (`--skip --because \"…\"`); the risk: {}",
        .from.label(), .from.gate_name(), .unmet.join("; "), .from.risk()
    )]
    GateShut { from: Mode, unmet: Vec<String> },
    #[error("EDITOR is the last mode, and the manuscript was marked complete on {when}")]
    AlreadyComplete { when: String },
}

/// Reads the project's mode; no file is ARCHITECT with no history.
pub fn load(root: &Path) -> Result<ModeState, ModeError> {
    let path = root.join(MODE_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ModeState::default());
        }
        Err(error) => return Err(ModeError::Unreadable(error.to_string())),
    };
    #[derive(Deserialize)]
    struct Version {
        #[serde(default)]
        version: Option<u32>,
    }
    let version = serde_json::from_str::<Version>(&text)
        .map_err(|error| ModeError::Unreadable(error.to_string()))?;
    if let Some(found) = version.version.filter(|found| *found > MODE_VERSION) {
        return Err(ModeError::Newer { found });
    }
    serde_json::from_str(&text).map_err(|error| ModeError::Unreadable(error.to_string()))
}

/// Writes the mode whole, atomically.
pub fn save(disk: &Disk, root: &Path, state: &ModeState) -> Result<(), ModeError> {
    let mut bytes = serde_json::to_vec_pretty(state).expect("a mode state serialises");
    bytes.push(b'\n');
    let path = root.join(MODE_FILE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(ModeError::Write)?;
    }
    disk.write_atomic(&path, &bytes).map_err(ModeError::Write)
}

/// A gate as the manuscript stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Gate {
    pub from: Mode,
    pub met: bool,
    /// What it lacks, each in a line.
    pub unmet: Vec<String>,
    /// How much of it is done, 0 to 100.
    pub percent: u8,
}

/// The gate out of `mode` in `workspace`.
pub fn gate(workspace: &Workspace, state: &ModeState, mode: Mode) -> Gate {
    let (unmet, done, of) = match mode {
        Mode::Architect => story_bible_gaps(workspace),
        Mode::VoiceCalibration => voice_gaps(workspace),
        Mode::Director => undrafted(workspace),
        Mode::Editor => match &state.completed_at {
            Some(_) => (Vec::new(), 1, 1),
            None => (
                vec!["the manuscript is not marked complete".to_owned()],
                0,
                1,
            ),
        },
    };
    Gate {
        from: mode,
        met: unmet.is_empty(),
        unmet,
        percent: (done * 100).checked_div(of).unwrap_or(100).min(100) as u8,
    }
}

/// What the Story Bible lacks, and how many of its templates are complete.
fn story_bible_gaps(workspace: &Workspace) -> (Vec<String>, usize, usize) {
    let catalog = workspace.catalog();
    let mut unmet = Vec::new();
    let mut done = 0;
    for kind in BibleKind::ALL {
        let Some(bible) = catalog.bible(kind).and_then(|file| file.bible()) else {
            unmet.push(format!(
                "no {} ({}/{})",
                kind.title(),
                workspace.config().paths.bible,
                kind.file_name()
            ));
            continue;
        };
        let gaps = bible.gaps();
        if gaps.is_empty() && bible.is_complete() {
            done += 1;
            continue;
        }
        let mut line = format!("{} is {}", kind.title(), bible.status().as_str());
        if !gaps.is_empty() {
            let parts: Vec<&str> = gaps.iter().map(|(spec, _)| spec.title).collect();
            line.push_str(&format!("; missing {}", parts.join(", ")));
        }
        unmet.push(line);
    }
    (unmet, done, BibleKind::ALL.len())
}

/// The voice folder: where the anti-pattern sheet is.
pub fn voice_folder(workspace: &Workspace) -> String {
    workspace.config().paths.voice_folder().to_owned()
}

fn in_folder(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_owned()
    } else {
        format!("{folder}/{name}")
    }
}

/// What the voice bundle lacks: its three files, and the writer's lock.
fn voice_gaps(workspace: &Workspace) -> (Vec<String>, usize, usize) {
    let folder = voice_folder(workspace);
    let mut unmet = Vec::new();
    let sheet = workspace.config().paths.anti_patterns.clone();
    let gold = in_folder(&folder, GOLD_STANDARD);
    for path in [gold.clone(), sheet, in_folder(&folder, PHASE_EVOLUTION)] {
        if workspace.file(&path).is_none() {
            unmet.push(format!("no {path}"));
        }
    }
    if workspace.file(&gold).is_some() {
        let locked = workspace
            .catalog()
            .voice_gold()
            .is_some_and(|(_, gold)| gold.locked);
        if !locked {
            unmet.push(format!(
                "the voice is not locked (`locked: true` in {gold})"
            ));
        }
    }
    let done = 4 - unmet.len().min(4);
    (unmet, done, 4)
}

/// The outline's scenes with no prose yet.
fn undrafted(workspace: &Workspace) -> (Vec<String>, usize, usize) {
    let catalog = workspace.catalog();
    let Some(outline) = catalog.outline().and_then(|file| file.outline()) else {
        return (vec!["there is no outline".to_owned()], 0, 1);
    };
    let missing: Vec<&str> = outline
        .entries
        .iter()
        .filter(|entry| {
            catalog
                .scene(&entry.scene_id)
                .and_then(|file| file.scene())
                .is_none_or(|scene| scene.word_count == 0)
        })
        .map(|entry| entry.scene_id.as_str())
        .collect();
    let of = outline.entries.len();
    let unmet = match missing.len() {
        0 => Vec::new(),
        n => {
            let shown: Vec<&str> = missing.iter().take(8).copied().collect();
            let more = if n > 8 {
                format!(" and {} more", n - 8)
            } else {
                String::new()
            };
            vec![format!(
                "{n} of {of} outline scenes not drafted: {}{more}",
                shown.join(", ")
            )]
        }
    };
    (unmet, of - missing.len(), of.max(1))
}

/// The mode, its gate and its history, as the command line's `--json`
/// and the editor's `controlRoom.mode` give them.
#[derive(Clone, Debug, Serialize)]
pub struct View {
    pub mode: Mode,
    pub label: &'static str,
    pub next: Option<Mode>,
    pub gate_name: &'static str,
    pub gate: Gate,
    pub completed_at: Option<String>,
    pub history: Vec<Transition>,
}

/// The view of `state` in `workspace`.
pub fn view(workspace: &Workspace, state: &ModeState) -> View {
    View {
        mode: state.mode,
        label: state.mode.label(),
        next: state.mode.next(),
        gate_name: state.mode.gate_name(),
        gate: gate(workspace, state, state.mode),
        completed_at: state.completed_at.clone(),
        history: state.history.clone(),
    }
}

/// How the writer asks to move.
#[derive(Clone, Debug, Default)]
pub struct Move {
    /// Go on though a gate is shut.
    pub skip: bool,
    /// Why (required to skip).
    pub because: Option<String>,
}

/// Moves the project to `to` (the next mode when `None`), through every
/// gate between, and returns the new state, not yet saved. Back is free;
/// forward, a shut gate refuses unless the writer skips it with a reason,
/// and the skip is recorded with what it lacked and the risk.
pub fn advance(
    workspace: &Workspace,
    state: &ModeState,
    to: Option<Mode>,
    asked: &Move,
    at: &str,
) -> Result<ModeState, ModeError> {
    let mut next = state.clone();
    let target = match to {
        Some(target) => target,
        None => match state.mode.next() {
            Some(target) => target,
            None => return complete(state, at),
        },
    };
    if target <= state.mode {
        if target != state.mode {
            next.history.push(Transition {
                from: state.mode,
                to: target,
                at: at.to_owned(),
                skipped: false,
                unmet: Vec::new(),
                because: None,
                risk: None,
            });
            next.mode = target;
        }
        return Ok(next);
    }
    while next.mode < target {
        let from = next.mode;
        let gate = gate(workspace, &next, from);
        let because = asked
            .because
            .as_deref()
            .map(str::trim)
            .filter(|because| !because.is_empty());
        let says_so = asked.skip && because.is_some();
        if !(gate.met || says_so) {
            return Err(ModeError::GateShut {
                from,
                unmet: gate.unmet,
            });
        }
        let to = from.next().expect("a mode before the target has a next");
        next.history.push(Transition {
            from,
            to,
            at: at.to_owned(),
            skipped: !gate.met,
            risk: (!gate.met).then(|| from.risk().to_owned()),
            because: (!gate.met).then(|| because.unwrap_or_default().to_owned()),
            unmet: if gate.met { Vec::new() } else { gate.unmet },
        });
        next.mode = to;
    }
    Ok(next)
}

/// In EDITOR, advancing is the writer marking the manuscript complete.
fn complete(state: &ModeState, at: &str) -> Result<ModeState, ModeError> {
    if let Some(when) = &state.completed_at {
        return Err(ModeError::AlreadyComplete { when: when.clone() });
    }
    let mut next = state.clone();
    next.completed_at = Some(at.to_owned());
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_any_spelling_and_follow_each_other() {
        assert_eq!(
            Mode::parse("VOICE-CALIBRATION"),
            Some(Mode::VoiceCalibration)
        );
        assert_eq!(Mode::parse("director"), Some(Mode::Director));
        assert_eq!(Mode::parse("drafting"), None);
        assert_eq!(Mode::Architect.next(), Some(Mode::VoiceCalibration));
        assert_eq!(Mode::Editor.next(), None);
    }

    #[test]
    fn a_newer_mode_file_is_refused_and_a_broken_one_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), ModeState::default());
        std::fs::create_dir_all(dir.path().join(".control-room")).unwrap();
        std::fs::write(
            dir.path().join(MODE_FILE),
            r#"{"version": 9, "mode": "editor"}"#,
        )
        .unwrap();
        let error = load(dir.path()).unwrap_err().to_string();
        assert!(error.contains("has version 9"), "{error}");
        std::fs::write(dir.path().join(MODE_FILE), "{not json").unwrap();
        let error = load(dir.path()).unwrap_err().to_string();
        assert!(error.starts_with(".control-room/mode.json: "), "{error}");
        let state = ModeState {
            mode: Mode::Director,
            ..ModeState::default()
        };
        save(&Disk::default(), dir.path(), &state).unwrap();
        assert_eq!(load(dir.path()).unwrap(), state);
    }
}
