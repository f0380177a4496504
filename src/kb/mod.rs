//! The knowledge base: the writer's and the agents' decisions about the
//! story (`.control-room/kb/decisions.jsonl`, one JSON object a line, a
//! later line with the same category and key superseding an earlier one).
//! Below the engine and the editor features alike: agents' prompts read it,
//! "Remember this" and "Promote to card" write it. Beside it, the project's
//! mode and the gates between modes (`mode`), which prompts and the Foreman read.
//!
//! ## Parts
//!
//! the knowledge base (`.control-room/kb/decisions.jsonl`); `graph` the story's knowledge graph
//! derived from the manuscript (cards, scenes, world rules, beats, the theme and its motifs,
//! decisions; appearances, speech, point of view, place, shared scenes, outline order, a beat's
//! scenes, a decision's subjects by one automaton over every entity's names in `graph::names`)
//! on petgraph, with a weighted PageRank and the distance between characters; each scene's part
//! (`graph::facts`) is read once per version through a `SceneMemo`, shared by its owner as a
//! `GraphCache` (the editor's session, a run's prompts, a command), which also keeps the last
//! graph with the snapshot it was built from (`Workspace::is_same_state`), and saved under
//! `.control-room/graph/` (versioned; a scene's facts kept while its text hashes the same), so
//! an edit rebuilds the graph from one scene read again; `mode` the project's mode (ARCHITECT,
//! VOICE_CALIBRATION, DIRECTOR, EDITOR) in `.control-room/mode.json`, the gates between modes
//! read from the manuscript, and moves (back freely, forward through each gate or past it with
//! the writer's reason, recorded with the risk).

pub mod graph;
pub mod mode;

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::storage::Disk;

/// The knowledge base, relative to the workspace root.
pub const KB_FILE: &str = ".control-room/kb/decisions.jsonl";

/// One remembered decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub category: String,
    pub key: String,
    pub value: String,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub scene: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    #[serde(default)]
    pub promoted: bool,
}

/// Reads the knowledge base; a line that is not a decision is reported
/// (file and line) and skipped. No file means no decisions.
pub fn load_decisions(root: &Path, problems: &mut Vec<String>) -> Vec<Decision> {
    let Ok(text) = std::fs::read_to_string(root.join(KB_FILE)) else {
        return Vec::new();
    };
    let mut latest: Vec<Decision> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Decision>(line) {
            Ok(decision) => {
                let key = (decision.category.clone(), decision.key.clone());
                // Superseded entries leave; the new one counts as the most recent.
                if let Some(old) = index.remove(&key) {
                    latest.remove(old);
                    for slot in index.values_mut() {
                        if *slot > old {
                            *slot -= 1;
                        }
                    }
                }
                index.insert(key, latest.len());
                latest.push(decision);
            }
            Err(error) => problems.push(format!("{KB_FILE}:{}: {error}", number + 1)),
        }
    }
    latest
}

/// The categories a `save_decision` action may name (spec §6.2), and the
/// writer's own.
pub const CATEGORIES: &[&str] = &[
    "character",
    "world",
    "structure",
    "constraint",
    "preference",
    "correction",
    "continuity",
];

/// Appends `decisions` to the knowledge base, one line each.
pub fn append_decisions(root: &Path, disk: &Disk, decisions: &[Decision]) -> std::io::Result<()> {
    for decision in decisions {
        let mut line = serde_json::to_vec(decision).map_err(std::io::Error::other)?;
        line.push(b'\n');
        disk.append_line(&root.join(KB_FILE), &line)?;
    }
    Ok(())
}
