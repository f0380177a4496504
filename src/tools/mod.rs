//! Phase A tools: deterministic functions of the workspace index and their
//! arguments. No model, no network, no writes. Each returns JSON data, a
//! human summary (what a prompt sees of a pointer slot) and the file spans it
//! read, which the runner turns into a signed receipt.
//!
//! Paths in arguments are untrusted (a recipe or an agent may have written
//! them): [`ToolArgs::path`] accepts only workspace-relative paths without
//! `..`, and a tool reads only what the index holds.

mod canon_checker;
mod consistency_checker;
mod file_locator;
mod health_reader;
mod outline_analyzer;
mod prose_analyzer;
mod reader_experience_simulator;
mod scene_draft_validator;
mod stakes_mapper;
mod timeline_validator;

mod args;
mod shared;

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

use crate::index::{SourceFile, Workspace};

pub use args::{PathError, ToolArgs, check_relative_path, indexed_file};
pub use shared::{
    CharacterMention, Finding, MAX_SUMMARY_CHARS, NotAScene, ProseFigures, SceneTarget, StoryScene,
    Summary, body_sentences, canon_for_scene, cards_in_entry, characters_mentioned, describe_kind,
    entry_sub_beats, line_number, normalised_word, one_line, outline_entry, per_thousand, push_ref,
    quote, related_refs, require_readable, round_to, scene_at_path, scene_target, story_scenes,
};

/// Every tool a recipe may name.
pub const TOOLS: &[&str] = &[
    "file_locator",
    "outline_analyzer",
    "canon_checker",
    "consistency_checker",
    "prose_analyzer",
    "scene_draft_validator",
    "timeline_validator",
    "stakes_mapper",
    "reader_experience_simulator",
    "health_reader",
];

/// What `tool` does and the arguments it takes, in a line (for prompts that
/// let an agent call tools).
pub fn describe(tool: &str) -> &'static str {
    match tool {
        "file_locator" => {
            "finds the manuscript files a question is about. Args: `search_criteria` (text), `scene_path` (optional), `scan_mode` (`FAST_SCAN` or `FULL_SCAN`, which also searches the text), `max_results` (default 12)."
        }
        "outline_analyzer" => {
            "the outline's structure, or one scene's beat. Args: `scene_id` or `scene_path` (optional), `mode` (`structure` or `beat`)."
        }
        "canon_checker" => {
            "the canon a scene draws on and where it contradicts it. Args: `scene_path` (required), `canon_paths` (optional list of card paths)."
        }
        "consistency_checker" => {
            "every continuity check on one file. Args: `scene_path` (required)."
        }
        "prose_analyzer" => {
            "the figures of a scene's prose: sentence length, dialogue, repetition, anti-patterns. Args: `scene_path` (required)."
        }
        "scene_draft_validator" => {
            "whether a scene draft is complete enough to stand. Args: `scene_path` (required)."
        }
        "timeline_validator" => {
            "the story's dates in outline order and where they run backwards. Args: `scene_path` or `scene_id` (optional)."
        }
        "stakes_mapper" => {
            "who is on stage in each scene, what is at stake, what is left hanging. Args: `scene_path` or `scene_id` (optional)."
        }
        "reader_experience_simulator" => {
            "a reader's path through the story as figures. Args: `scene_path` or `scene_id` (optional)."
        }
        "health_reader" => {
            "what a model needs to read a scene's health: its date and time, its neighbours', the protagonist's flaw, the theme, and its text. Args: `scene_path` (required)."
        }
        _ => "an unknown tool.",
    }
}

/// What a tool sees: a snapshot of the index.
pub struct ToolContext<'a> {
    pub workspace: &'a Workspace,
}

/// A tool's result.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// The payload, stored in the receipt and reachable by `$ref`.
    pub data: Value,
    /// A readable digest: what a prompt sees of the slot.
    pub summary: String,
    /// The files the tool read, with the spans it used.
    pub file_refs: Vec<FileRef>,
}

pub use crate::storage::{EXCERPT_CHARS, FileRef, excerpt, sha256_hex};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ToolError {
    #[error("unknown tool `{0}`")]
    Unknown(String),
    #[error("argument `{name}`: {message}")]
    BadArgument { name: String, message: String },
    #[error("{0}")]
    Failed(String),
}

/// Runs the tool `tool` with `args`.
pub fn run(
    tool: &str,
    context: &ToolContext,
    args: &Map<String, Value>,
) -> Result<ToolOutput, ToolError> {
    let args = ToolArgs::new(args);
    match tool {
        "file_locator" => file_locator::run(context, &args),
        "outline_analyzer" => outline_analyzer::run(context, &args),
        "canon_checker" => canon_checker::run(context, &args),
        "consistency_checker" => consistency_checker::run(context, &args),
        "prose_analyzer" => prose_analyzer::run(context, &args),
        "scene_draft_validator" => scene_draft_validator::run(context, &args),
        "timeline_validator" => timeline_validator::run(context, &args),
        "stakes_mapper" => stakes_mapper::run(context, &args),
        "reader_experience_simulator" => reader_experience_simulator::run(context, &args),
        "health_reader" => health_reader::run(context, &args),
        other => Err(ToolError::Unknown(other.to_owned())),
    }
}
