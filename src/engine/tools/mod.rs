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
mod outline_analyzer;
mod prose_analyzer;
mod reader_experience_simulator;
mod scene_draft_validator;
mod stakes_mapper;
mod timeline_validator;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::checks::Diagnostic;
use crate::index::{CardKind, FileContent, FilePath, OutlineEntry, SourceFile, Workspace};
use crate::prose::{Prose, Sentence};
use crate::text::TextRange;

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

/// A span of a file a tool read, as receipts record it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRef {
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// sha256 of the whole file's text, lowercase hex.
    pub sha256: String,
    /// The span's text, at most [`EXCERPT_CHARS`] characters: a strict prefix,
    /// never with an ellipsis added, so a quote of it can be found again.
    pub excerpt: String,
}

/// The longest excerpt a file reference keeps.
pub const EXCERPT_CHARS: usize = 200;

impl FileRef {
    /// The whole file.
    pub fn whole(file: &SourceFile) -> FileRef {
        FileRef::span(file, TextRange::new(0, file.text.len()))
    }

    /// The lines `range` covers.
    pub fn span(file: &SourceFile, range: TextRange) -> FileRef {
        let text = &*file.text;
        let start_line = file.line_index.line_of(range.start) + 1;
        let end_line = file
            .line_index
            .line_of(range.end.saturating_sub(1).max(range.start))
            + 1;
        FileRef {
            path: file.path.to_string(),
            start_line,
            end_line,
            sha256: sha256_hex(text.as_bytes()),
            excerpt: excerpt(&text[range.start..range.end]),
        }
    }
}

/// At most [`EXCERPT_CHARS`] characters of `text`, cut at a character boundary.
pub fn excerpt(text: &str) -> String {
    text.chars().take(EXCERPT_CHARS).collect()
}

/// Lowercase hex sha256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    super::receipts::hex(&Sha256::digest(bytes))
}

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
    let args = ToolArgs { args };
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
        other => Err(ToolError::Unknown(other.to_owned())),
    }
}

/// A tool's arguments, with typed accessors whose errors name the argument.
pub struct ToolArgs<'a> {
    args: &'a Map<String, Value>,
}

impl<'a> ToolArgs<'a> {
    pub fn new(args: &'a Map<String, Value>) -> Self {
        ToolArgs { args }
    }

    fn bad(name: &str, message: impl Into<String>) -> ToolError {
        ToolError::BadArgument {
            name: name.to_owned(),
            message: message.into(),
        }
    }

    /// An optional string (null counts as absent).
    pub fn string(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(Self::bad(name, format!("expected text, got {other}"))),
        }
    }

    pub fn required_string(&self, name: &str) -> Result<&'a str, ToolError> {
        self.string(name)?
            .ok_or_else(|| Self::bad(name, "is required"))
    }

    /// An optional non-negative integer.
    pub fn usize(&self, name: &str) -> Result<Option<usize>, ToolError> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => number
                .as_u64()
                .map(|n| Some(n as usize))
                .ok_or_else(|| Self::bad(name, format!("expected a whole number, got {number}"))),
            Some(other) => Err(Self::bad(name, format!("expected a number, got {other}"))),
        }
    }

    /// An optional list of strings; a single string counts as a list of one.
    pub fn strings(&self, name: &str) -> Result<Vec<&'a str>, ToolError> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(text)) => Ok(vec![text.as_str()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .ok_or_else(|| Self::bad(name, format!("expected text items, got {item}")))
                })
                .collect(),
            Some(other) => Err(Self::bad(name, format!("expected a list, got {other}"))),
        }
    }

    /// A workspace-relative path argument, checked: no absolute paths, no `..`,
    /// no backslashes. Whether the file exists is the tool's business.
    pub fn path(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        let Some(path) = self.string(name)? else {
            return Ok(None);
        };
        check_relative_path(path).map_err(|message| Self::bad(name, message))?;
        Ok(Some(path))
    }

    /// Like [`ToolArgs::path`], for each item of a list.
    pub fn paths(&self, name: &str) -> Result<Vec<&'a str>, ToolError> {
        let paths = self.strings(name)?;
        for path in &paths {
            check_relative_path(path).map_err(|message| Self::bad(name, message))?;
        }
        Ok(paths)
    }
}

/// Accepts a workspace-relative path with forward slashes that stays inside
/// the workspace.
pub fn check_relative_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("is empty".to_owned());
    }
    if path.starts_with('/') || path.contains('\\') || path.contains(':') {
        return Err(format!(
            "`{path}` must be a path relative to the workspace, with `/`"
        ));
    }
    if path.split('/').any(|part| part == ".." || part.is_empty()) {
        return Err(format!("`{path}` leaves the workspace or is malformed"));
    }
    Ok(())
}

/// The indexed file at `path`, or an error naming the argument.
pub fn indexed_file<'w>(
    context: &ToolContext<'w>,
    name: &str,
    path: &str,
) -> Result<&'w std::sync::Arc<SourceFile>, ToolError> {
    context.workspace.file(path).ok_or_else(|| {
        ToolArgs::bad(
            name,
            format!("`{path}` is not a manuscript file of this workspace"),
        )
    })
}

/// The canon cards a scene involves: its `pov`, `characters` and `location`
/// resolved to cards, else (a scene without a file, or without those keys)
/// the cards its outline entry mentions. In path order, without repeats.
pub fn canon_for_scene(workspace: &Workspace, scene_id: &str) -> Vec<String> {
    use crate::index::CardKind;
    let catalog = workspace.catalog();
    let mut paths: Vec<String> = Vec::new();
    if let Some(scene) = catalog.scene(scene_id).and_then(|file| file.scene()) {
        let people = scene.pov.iter().chain(&scene.characters);
        for reference in people {
            if let Some(card) = catalog.resolve_card(&reference.text, &[CardKind::Character]) {
                paths.push(card.path.to_string());
            }
        }
        if let Some(location) = &scene.location
            && let Some(card) = catalog.resolve_card(&location.text, &[CardKind::Location])
        {
            paths.push(card.path.to_string());
        }
    }
    if paths.is_empty()
        && let Some(outline_file) = catalog.outline()
        && let Some(outline) = outline_file.outline()
        && let Some(entry) = outline.entries.iter().find(|e| e.scene_id == scene_id)
    {
        for mention in workspace.mentions(&outline_file.path) {
            if entry.range.contains_range(mention.range) {
                paths.push(mention.card.to_string());
            }
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

// Shared by the tools below: scenes named by arguments, story order,
// diagnostics as findings, prose figures and summaries.

/// The longest summary a tool returns, in characters: a prompt sees it whole.
pub const MAX_SUMMARY_CHARS: usize = 4_000;

/// The longest single line of a summary, in characters.
const MAX_SUMMARY_LINE_CHARS: usize = 600;

/// A summary built line by line. [`Summary::finish`] keeps whole lines up to
/// [`MAX_SUMMARY_CHARS`] and says how many it left out.
#[derive(Debug, Default)]
pub struct Summary {
    lines: Vec<String>,
}

impl Summary {
    pub fn new() -> Self {
        Summary::default()
    }

    /// Adds a line; one longer than 600 characters is cut there with "…".
    pub fn line(&mut self, line: impl Into<String>) {
        let line = line.into();
        if line.chars().count() > MAX_SUMMARY_LINE_CHARS {
            let mut cut: String = line.chars().take(MAX_SUMMARY_LINE_CHARS - 1).collect();
            cut.push('…');
            self.lines.push(cut);
        } else {
            self.lines.push(line);
        }
    }

    pub fn finish(self) -> String {
        let length = |lines: &[String]| -> usize {
            lines.iter().map(|line| line.chars().count()).sum::<usize>()
                + lines.len().saturating_sub(1)
        };
        if length(&self.lines) <= MAX_SUMMARY_CHARS {
            return self.lines.join("\n");
        }
        // Room for the closing note, "… 12345 more lines left out".
        let budget = MAX_SUMMARY_CHARS - 40;
        let mut kept = 0;
        let mut used = 0;
        for line in &self.lines {
            let cost = line.chars().count() + usize::from(kept > 0);
            if used + cost > budget {
                break;
            }
            used += cost;
            kept += 1;
        }
        let left_out = self.lines.len() - kept;
        let mut text = self.lines[..kept].join("\n");
        if kept > 0 {
            text.push('\n');
        }
        text.push_str(&format!("… {left_out} more lines left out"));
        text
    }
}

/// The 1-based line holding byte `offset` of `file`.
pub fn line_number(file: &SourceFile, offset: usize) -> u32 {
    file.line_index.line_of(offset) + 1
}

/// The text of `range` in `file`, at most [`EXCERPT_CHARS`] characters (a
/// strict prefix, so it can be found again); empty for a range the text
/// does not have.
pub fn quote(file: &SourceFile, range: TextRange) -> String {
    file.text
        .get(range.start..range.end)
        .map(excerpt)
        .unwrap_or_default()
}

/// `text` on one line: runs of whitespace, line breaks included, become one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Rounds to `places` decimal places, for figures a writer reads.
pub fn round_to(value: f64, places: i32) -> f64 {
    let factor = 10f64.powi(places);
    (value * factor).round() / factor
}

/// Adds `file_ref` unless an equal one is already there.
pub fn push_ref(file_refs: &mut Vec<FileRef>, file_ref: FileRef) {
    if !file_refs.contains(&file_ref) {
        file_refs.push(file_ref);
    }
}

/// What a file is, in a writer's words ("a character card", "the outline").
pub fn describe_kind(file: &SourceFile) -> String {
    match &file.content {
        FileContent::Scene(_) => "a scene".to_owned(),
        FileContent::Outline(_) => "the outline".to_owned(),
        FileContent::Card(card) => format!("a {} card", card.type_name),
        FileContent::AntiPatterns(_) => "the anti-pattern sheet".to_owned(),
        FileContent::Other => "a note".to_owned(),
    }
}

/// A diagnostic as a tool reports it: code, severity, 1-based first and last
/// lines, message, the text it covers (`quote`, at most [`EXCERPT_CHARS`]
/// characters) and the related places in other files.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub code: &'static str,
    pub severity: &'static str,
    pub line: u32,
    pub end_line: u32,
    pub message: String,
    pub quote: String,
    /// `(path, 1-based line, message)`; the line is `None` for a file the
    /// index no longer holds.
    pub related: Vec<(String, Option<u32>, String)>,
}

impl Finding {
    pub fn new(workspace: &Workspace, file: &SourceFile, diagnostic: &Diagnostic) -> Finding {
        let range = diagnostic.range;
        Finding {
            code: diagnostic.code.as_str(),
            severity: diagnostic.severity.as_str(),
            line: line_number(file, range.start),
            end_line: line_number(file, range.end.saturating_sub(1).max(range.start)),
            message: diagnostic.message.clone(),
            quote: quote(file, range),
            related: diagnostic
                .related
                .iter()
                .map(|related| {
                    let line = workspace
                        .file(&related.path)
                        .map(|other| line_number(other, related.range.start));
                    (related.path.to_string(), line, related.message.clone())
                })
                .collect(),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "code": self.code,
            "severity": self.severity,
            "line": self.line,
            "end_line": self.end_line,
            "message": self.message,
            "quote": self.quote,
            "related": self
                .related
                .iter()
                .map(|(path, line, message)| json!({"path": path, "line": line, "message": message}))
                .collect::<Vec<_>>(),
        })
    }

    /// One summary line: `line 14, warning attribute-mismatch: … (“quote”)`.
    pub fn describe(&self) -> String {
        let quote = one_line(&self.quote);
        let quoted = if quote.is_empty() || self.message.contains(&quote) {
            String::new()
        } else {
            format!(" (“{quote}”)")
        };
        format!(
            "line {}, {} {}: {}{quoted}",
            self.line, self.severity, self.code, self.message
        )
    }
}

/// The spans of other files that `diagnostic` points at, for receipts.
pub fn related_refs(workspace: &Workspace, diagnostic: &Diagnostic) -> Vec<FileRef> {
    diagnostic
        .related
        .iter()
        .filter_map(|related| {
            let file = workspace.file(&related.path)?;
            let range = related.range;
            (range.end <= file.text.len()).then(|| FileRef::span(file, range))
        })
        .collect()
}

/// A scene's first entry in the workspace's outline, with its 1-based
/// position among the outline's entries (story order).
pub fn outline_entry<'w>(
    workspace: &'w Workspace,
    scene_id: &str,
) -> Option<(usize, &'w OutlineEntry)> {
    let outline = workspace.catalog().outline()?.outline()?;
    outline
        .entries
        .iter()
        .enumerate()
        .find(|(_, entry)| entry.scene_id == scene_id)
        .map(|(index, entry)| (index + 1, entry))
}

/// The further beats of an outline entry: the text of every list item nested
/// in it, in order. Read from the outline's blocks rather than
/// [`OutlineEntry::sub_beats`], which misses the last nested item (its range
/// runs past the entry's trimmed range by the final line break).
pub fn entry_sub_beats(outline_file: &SourceFile, entry: &OutlineEntry) -> Vec<String> {
    use crate::syntax::BlockKind;
    outline_file
        .syntax
        .blocks
        .iter()
        .filter(|block| {
            block.kind == BlockKind::ListItem
                && block.range.start > entry.range.start
                && block.range.start < entry.range.end
        })
        .filter_map(|block| {
            let text = outline_file
                .text
                .get(block.inline.start..block.inline.end)?;
            let text = text.trim();
            (!text.is_empty()).then(|| text.to_owned())
        })
        .collect()
}

/// One scene of the story in outline order.
#[derive(Clone, Debug)]
pub struct StoryScene<'w> {
    /// 1-based position of the scene's first entry among the outline's entries.
    pub position: usize,
    pub entry: &'w OutlineEntry,
    /// The scene's file, when it has one.
    pub file: Option<&'w Arc<SourceFile>>,
}

/// The scenes the workspace's outline lists, in story order, each once (at
/// its first entry). Scene files the outline does not list are not here.
pub fn story_scenes(workspace: &Workspace) -> Vec<StoryScene<'_>> {
    let catalog = workspace.catalog();
    let Some(outline) = catalog.outline().and_then(|file| file.outline()) else {
        return Vec::new();
    };
    let mut seen = std::collections::HashSet::new();
    outline
        .entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| seen.insert(entry.scene_id.as_str()))
        .map(|(index, entry)| StoryScene {
            position: index + 1,
            entry,
            file: catalog.scene(&entry.scene_id),
        })
        .collect()
}

/// A scene named by a tool's `scene_path` or `scene_id` argument.
#[derive(Clone, Debug)]
pub struct SceneTarget<'w> {
    /// The argument that named the scene, `scene_path` or `scene_id`, for errors.
    pub argument: &'static str,
    pub id: String,
    /// The scene file's path; for a scene without a file, the path asked for
    /// (or `None` when it was named by id).
    pub path: Option<String>,
    pub file: Option<&'w Arc<SourceFile>>,
    /// The scene's 1-based outline position and entry.
    pub entry: Option<(usize, &'w OutlineEntry)>,
}

impl<'w> SceneTarget<'w> {
    /// `SCN-x (path)`, or the id alone.
    pub fn label(&self) -> String {
        match &self.path {
            Some(path) => format!("{} ({path})", self.id),
            None => self.id.clone(),
        }
    }

    /// The scene's file, or an error naming the argument for a scene that
    /// only the outline knows.
    pub fn require_file(&self) -> Result<&'w Arc<SourceFile>, ToolError> {
        self.file.ok_or_else(|| {
            ToolArgs::bad(
                self.argument,
                format!(
                    "`{}` has no scene file yet: the outline lists it, but it is not written",
                    self.path.as_deref().unwrap_or(&self.id)
                ),
            )
        })
    }
}

/// The scene that `scene_path` (checked by [`ToolArgs::path`]) or, failing
/// that, `scene_id` names; `None` when neither is given.
///
/// A path of an indexed file must be a scene. A path the index does not hold
/// names the scene whose id is its file stem: the scene file with that id if
/// there is one elsewhere, else the outline's entry for a scene not yet
/// written. A name that is neither is a bad argument.
pub fn scene_target<'w>(
    context: &ToolContext<'w>,
    args: &ToolArgs,
) -> Result<Option<SceneTarget<'w>>, ToolError> {
    let workspace = context.workspace;
    let catalog = workspace.catalog();
    if let Some(path) = args.path("scene_path")? {
        let target = scene_at_path(workspace, path)
            .map_err(|message| ToolArgs::bad("scene_path", message))?;
        if target.file.is_none() && target.entry.is_none() {
            return Err(ToolArgs::bad(
                "scene_path",
                format!(
                    "`{path}` is not a scene file of this workspace, and the outline lists no scene `{}`",
                    target.id
                ),
            ));
        }
        return Ok(Some(target));
    }
    let Some(id) = args.string("scene_id")? else {
        return Ok(None);
    };
    let id = id.trim();
    let file = catalog.scene(id);
    let entry = outline_entry(workspace, id);
    if file.is_none() && entry.is_none() {
        return Err(ToolArgs::bad(
            "scene_id",
            format!("no scene file or outline entry has the id `{id}`"),
        ));
    }
    Ok(Some(SceneTarget {
        argument: "scene_id",
        id: id.to_owned(),
        path: file.map(|file| file.path.to_string()),
        file,
        entry,
    }))
}

/// The scene a workspace-relative `path` names, as [`scene_target`] reads a
/// path, without requiring that it exist: the result may have neither file
/// nor outline entry. An indexed file that is not a scene is an error, in
/// words.
pub fn scene_at_path<'w>(workspace: &'w Workspace, path: &str) -> Result<SceneTarget<'w>, String> {
    if let Some(file) = workspace.file(path) {
        let Some(scene) = file.scene() else {
            return Err(format!("`{path}` is {}, not a scene", describe_kind(file)));
        };
        return Ok(SceneTarget {
            argument: "scene_path",
            id: scene.id.clone(),
            path: Some(path.to_owned()),
            file: Some(file),
            entry: outline_entry(workspace, &scene.id),
        });
    }
    let id = crate::index::file::file_stem(path);
    let file = workspace.catalog().scene(id);
    Ok(SceneTarget {
        argument: "scene_path",
        id: id.to_owned(),
        path: Some(file.map_or_else(|| path.to_owned(), |file| file.path.to_string())),
        file,
        entry: outline_entry(workspace, id),
    })
}

/// A file's text must have been read: an unreadable file is a failure that
/// says why.
pub fn require_readable(file: &SourceFile) -> Result<(), ToolError> {
    match &file.load_error {
        Some(reason) => Err(ToolError::Failed(format!(
            "`{}` could not be read: {reason}",
            file.path
        ))),
        None => Ok(()),
    }
}

/// A character whose name or alias the prose of a file mentions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CharacterMention {
    /// The character card's path.
    pub card: FilePath,
    /// The card's name.
    pub name: String,
    pub count: usize,
    /// 1-based line of the first mention.
    pub first_line: u32,
}

/// The characters (character cards only) mentioned in `file`'s prose, in
/// order of first mention.
pub fn characters_mentioned(workspace: &Workspace, file: &SourceFile) -> Vec<CharacterMention> {
    let catalog = workspace.catalog();
    let mut found: Vec<CharacterMention> = Vec::new();
    for mention in workspace.mentions(&file.path) {
        if let Some(seen) = found.iter_mut().find(|seen| seen.card == mention.card) {
            seen.count += 1;
            continue;
        }
        let Some(card) = catalog.card(&mention.card).and_then(|card| card.card()) else {
            continue;
        };
        if card.kind != CardKind::Character {
            continue;
        }
        found.push(CharacterMention {
            card: mention.card.clone(),
            name: card.display_name().to_owned(),
            count: 1,
            first_line: line_number(file, mention.range.start),
        });
    }
    found
}

/// The cards of `kinds` whose names the outline entry's text mentions, in
/// order of first mention, without repeats.
pub fn cards_in_entry(
    workspace: &Workspace,
    entry: &OutlineEntry,
    kinds: &[CardKind],
) -> Vec<FilePath> {
    let catalog = workspace.catalog();
    let Some(outline) = catalog.outline() else {
        return Vec::new();
    };
    let mut cards: Vec<FilePath> = Vec::new();
    for mention in workspace.mentions(&outline.path) {
        if !entry.range.contains_range(mention.range) || cards.contains(&mention.card) {
            continue;
        }
        let kind = catalog
            .card(&mention.card)
            .and_then(|card| card.card())
            .map(|card| card.kind);
        if kind.is_some_and(|kind| kinds.contains(&kind)) {
            cards.push(mention.card.clone());
        }
    }
    cards
}

/// The sentences of the body: not headings, with at least one word.
pub fn body_sentences(prose: &Prose) -> impl Iterator<Item = &Sentence> {
    prose.sentences.iter().filter(|sentence| {
        !sentence.heading && prose.sentence_tokens(sentence).iter().any(|t| t.is_word())
    })
}

/// Word and sentence counts of a file's body (headings left out). A word is
/// a prose word token (letters and digits, with inner apostrophes and
/// hyphens); a dialogue word is one between quotation marks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProseFigures {
    pub words: usize,
    pub dialogue_words: usize,
    pub sentences: usize,
}

impl ProseFigures {
    pub fn of(prose: &Prose) -> ProseFigures {
        let mut figures = ProseFigures::default();
        for sentence in body_sentences(prose) {
            figures.sentences += 1;
            for token in prose.sentence_tokens(sentence) {
                if token.is_word() {
                    figures.words += 1;
                    if token.quoted {
                        figures.dialogue_words += 1;
                    }
                }
            }
        }
        figures
    }

    /// Words per sentence, to one decimal; 0 without sentences.
    pub fn mean_sentence_words(&self) -> f64 {
        if self.sentences == 0 {
            return 0.0;
        }
        round_to(self.words as f64 / self.sentences as f64, 1)
    }

    /// Dialogue words over all words, to three decimals; 0 without words.
    pub fn dialogue_ratio(&self) -> f64 {
        if self.words == 0 {
            return 0.0;
        }
        round_to(self.dialogue_words as f64 / self.words as f64, 3)
    }
}

/// A word as the tools count it: lower case, `’` as `'`, without a
/// possessive ending.
pub fn normalised_word(word: &str) -> String {
    crate::index::catalog::normalise_word(crate::prose::strip_possessive(word))
}

/// `count` per 1,000 of `words`, to one decimal; 0 without words.
pub fn per_thousand(count: usize, words: usize) -> f64 {
    if words == 0 {
        return 0.0;
    }
    round_to(count as f64 * 1000.0 / words as f64, 1)
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A small manuscript in a temp dir, and ways to run tools on it.

    use std::path::Path;

    use serde_json::{Map, Value};
    use tempfile::TempDir;

    use super::{FileRef, ToolContext, ToolError, ToolOutput, sha256_hex};
    use crate::index::Workspace;

    /// *The Salt Road* in miniature. Planted: an attribute mismatch (gate,
    /// line 14), a name typo (saltmaster, line 17), a date out of order
    /// (saltmaster, line 6), a dead character in `characters` and speaking
    /// (vigil, lines 4 and 13), a zero-tolerance anti-pattern (arrival, line
    /// 18), an undated scene (vigil) and a scene with no file (reckoning).
    pub(crate) const SALT_ROAD: &[(&str, &str)] = &[
        (
            "Story/SCN-outline.md",
            "# The Salt Road\n\
             \n\
             ## Chapter 1: The Gate\n\
             \n\
             - SCN-the-arrival: Kael reaches the Salt Fortress at nightfall and is refused entry.\n\
             - SCN-the-gate: Iria lets him in against orders.\n  \
               - The Commander catches them at it.\n\
             - SCN-the-saltmaster: Old Tomas shows Kael the cracked ward-stone.\n\
             \n\
             ## Chapter 2: The Tide\n\
             \n\
             - SCN-the-fall: The storm comes in, and the sea takes Tomas off the wall.\n\
             - SCN-the-vigil: Kael and Iria keep the lamp burning.\n\
             - SCN-the-reckoning: Ysolde answers for the barred gate.\n",
        ),
        (
            "Story/Scenes/SCN-the-arrival.md",
            "---\n\
             title: The Arrival\n\
             pov: Kael Maren\n\
             location: The Salt Fortress\n\
             characters: [Kael, Iria]\n\
             date: 1203-04-12\n\
             words: 60\n\
             ---\n\
             \n\
             # The Arrival\n\
             \n\
             The salt road ran eleven miles across the flats, and Kael had walked every one of them. The fortress stood up out of the white like a broken tooth.\n\
             \n\
             \"Gate's closed,\" Iria called down. \"Who's asking?\"\n\
             \n\
             \"Kael Maren. The ward at the ninth waystone is lost, and the sea is coming. If the wards fail, we die.\"\n\
             \n\
             Suddenly the shutter closed.\n",
        ),
        (
            "Story/Scenes/SCN-the-gate.md",
            "---\n\
             title: The Gate\n\
             pov: Iria Vell\n\
             location: The Salt Fortress\n\
             characters: [Iria, Kael, Ysolde]\n\
             date: 1203-04-12\n\
             words: 200\n\
             ---\n\
             \n\
             # The Gate\n\
             \n\
             Iria put her shoulder to the bar and it did not move, so she put her shoulder to it again, and this time it gave with a groan that must have carried all the way to the sea-wall and back.\n\
             \n\
             In the lamplight Kael's blue eyes looked sore and tired. The gate was old. The gate was heavy. The gate was shut.\n\
             \n\
             \"Quickly,\" she said. \"Before I change my mind.\"\n",
        ),
        (
            "Story/Scenes/SCN-the-saltmaster.md",
            "---\n\
             title: The Saltmaster\n\
             pov: Kael Maren\n\
             location: The Salt Fortress\n\
             characters: [Kael, Tomas, Iria]\n\
             date: 1203-04-11\n\
             ---\n\
             \n\
             # The Saltmaster\n\
             \n\
             Old Tomas turned the cracked lantern over without speaking. Iria stood by the door.\n\
             \n\
             \"How long?\" Iria asked.\n\
             \n\
             \"A month. Less, if the tide is high,\" Tomas said. \"I patch it, and I sing to it, and I hope.\"\n\
             \n\
             \"Then we do the same,\" Kale said.\n",
        ),
        (
            "Story/Scenes/SCN-the-fall.md",
            "---\n\
             title: The Fall\n\
             pov: Kael Maren\n\
             location: The Salt Fortress\n\
             characters: [Kael, Tomas, Iria, Ysolde]\n\
             date: 1203-04-14\n\
             words: 40\n\
             ---\n\
             \n\
             # The Fall\n\
             \n\
             The storm came in on the second night, and the sea came with it.\n\
             \n\
             \"Get off the wall,\" Ysolde shouted. \"That's an order.\"\n\
             \n\
             \"Then it won't fail,\" Tomas said, and climbed onto the parapet. The wave took him off the wall, and he was gone. Kael would never forget it.\n",
        ),
        (
            "Story/Scenes/SCN-the-vigil.md",
            "---\n\
             title: The Vigil\n\
             pov: Kael Maren\n\
             characters: [Kael, Iria, Tomas]\n\
             ---\n\
             \n\
             # The Vigil\n\
             \n\
             There was no body. Iria kept the lamp burning until dawn.\n\
             \n\
             \"He taught me to trim a lamp,\" Iria said. \"Who keeps them now?\"\n\
             \n\
             \"We do,\" Tomas said.\n",
        ),
        (
            "Compendium/Characters/CHAR-kael-maren.md",
            "---\n\
             type: character\n\
             name: Kael Maren\n\
             aliases: [Kael, the Warden]\n\
             status: alive\n\
             eyes: grey\n\
             hair: black\n\
             age: 34\n\
             ---\n\
             \n\
             # Kael Maren\n\
             \n\
             A warden of the salt road who keeps the ward-lanterns lit.\n",
        ),
        (
            "Compendium/Characters/CHAR-iria-vell.md",
            "---\n\
             type: character\n\
             name: Iria Vell\n\
             aliases: [Iria]\n\
             eyes: green\n\
             hair: auburn\n\
             age: 27\n\
             ---\n\
             \n\
             Keeper of the great gate.\n",
        ),
        (
            "Compendium/Characters/CHAR-old-tomas.md",
            "---\n\
             type: character\n\
             name: Old Tomas\n\
             aliases: [Tomas]\n\
             status: dead\n\
             died_in: SCN-the-fall\n\
             age: 71\n\
             ---\n\
             \n\
             Saltmaster of the fortress for forty years.\n",
        ),
        (
            "Compendium/Characters/CHAR-ysolde-harrow.md",
            "---\n\
             type: character\n\
             name: Ysolde Harrow\n\
             aliases: [Ysolde, the Commander]\n\
             eyes: brown\n\
             hair: silver\n\
             ---\n\
             \n\
             Commander of the fortress.\n",
        ),
        (
            "Compendium/Locations/LOC-the-salt-fortress.md",
            "---\n\
             type: location\n\
             name: The Salt Fortress\n\
             aliases: [the fortress]\n\
             ---\n\
             \n\
             A grey keep at the end of the salt road.\n",
        ),
        (
            "Compendium/Voice/anti-patterns.md",
            "# Anti-patterns\n\
             \n\
             ## Zero tolerance\n\
             \n\
             - suddenly\n\
             \n\
             ## Deduction\n\
             \n\
             - very\n",
        ),
    ];

    /// A manuscript with `files` written into a temp dir, and its index.
    /// Keep the dir alive as long as the workspace is used.
    pub(crate) fn workspace(files: &[(&str, &str)]) -> (TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("a temp dir");
        for (path, text) in files {
            let full = dir.path().join(path);
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent).expect("folders");
            }
            std::fs::write(&full, text).expect("a file");
        }
        let workspace = Workspace::load(dir.path());
        (dir, workspace)
    }

    /// [`SALT_ROAD`] with `changes`: a file replaced or added by path.
    pub(crate) fn salt_road_with(changes: &[(&str, &str)]) -> (TempDir, Workspace) {
        let mut files: Vec<(&str, &str)> = SALT_ROAD
            .iter()
            .filter(|(path, _)| !changes.iter().any(|(changed, _)| changed == path))
            .copied()
            .collect();
        files.extend_from_slice(changes);
        workspace(&files)
    }

    pub(crate) fn salt_road() -> (TempDir, Workspace) {
        workspace(SALT_ROAD)
    }

    /// Runs `tool` through the dispatcher with `args` (a JSON object).
    pub(crate) fn run(
        workspace: &Workspace,
        tool: &str,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        let args: Map<String, Value> = match args {
            Value::Object(map) => map,
            other => panic!("tool arguments must be an object, not {other}"),
        };
        super::run(tool, &ToolContext { workspace }, &args)
    }

    /// Runs `tool`, expecting success.
    pub(crate) fn output(workspace: &Workspace, tool: &str, args: Value) -> ToolOutput {
        run(workspace, tool, args).unwrap_or_else(|error| panic!("{tool} failed: {error}"))
    }

    /// The error's argument name, for a `BadArgument`.
    pub(crate) fn bad_argument(result: Result<ToolOutput, ToolError>) -> (String, String) {
        match result {
            Err(ToolError::BadArgument { name, message }) => (name, message),
            other => panic!("expected a bad argument, got {other:?}"),
        }
    }

    /// The file reference for `path`, checked against the file on disk: its
    /// sha256 is the file's and its excerpt starts the span's first line.
    pub(crate) fn file_ref<'a>(output: &'a ToolOutput, root: &Path, path: &str) -> &'a FileRef {
        let found = output
            .file_refs
            .iter()
            .find(|file_ref| file_ref.path == path)
            .unwrap_or_else(|| panic!("no file ref for {path} in {:?}", output.file_refs));
        let text = std::fs::read_to_string(root.join(path)).expect("the file");
        assert_eq!(found.sha256.len(), 64);
        assert!(
            found
                .sha256
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(
            found.sha256,
            sha256_hex(text.as_bytes()),
            "sha256 of {path}"
        );
        assert!(found.start_line >= 1 && found.start_line <= found.end_line);
        let first_line = text
            .lines()
            .nth(found.start_line as usize - 1)
            .expect("the span's first line exists");
        let excerpt_head: String = found.excerpt.lines().next().unwrap_or("").to_owned();
        assert!(
            first_line.contains(&excerpt_head),
            "excerpt {excerpt_head:?} is on line {} of {path}",
            found.start_line
        );
        found
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::test_support::{run, salt_road, workspace};
    use super::{MAX_SUMMARY_CHARS, Summary, TOOLS, ToolError};

    #[test]
    fn summaries_are_cut_at_whole_lines_with_a_note() {
        let mut summary = Summary::new();
        for index in 0..200 {
            summary.line(format!("line {index:03} {}", "x".repeat(40)));
        }
        let text = summary.finish();
        assert!(text.chars().count() <= MAX_SUMMARY_CHARS);
        let lines: Vec<&str> = text.lines().collect();
        let last = lines.last().copied().unwrap_or("");
        assert!(
            last.starts_with("… ") && last.ends_with(" more lines left out"),
            "{last}"
        );
        let kept = lines.len() - 1;
        assert_eq!(last, format!("… {} more lines left out", 200 - kept));
        assert!(lines[..kept].iter().all(|line| line.len() == 49));

        let mut short = Summary::new();
        short.line("one");
        short.line("two");
        assert_eq!(short.finish(), "one\ntwo");

        let mut long_line = Summary::new();
        long_line.line("y".repeat(5_000));
        let text = long_line.finish();
        assert_eq!(text.chars().count(), 600);
        assert!(text.ends_with('…'));
    }

    /// Every tool on workspaces with nothing, or with nothing usable, answers
    /// with data or a named error, never a panic.
    #[test]
    fn every_tool_copes_with_empty_and_broken_workspaces() {
        let (_dir, empty) = workspace(&[]);
        let (_dir, broken) = workspace(&[
            ("Story/SCN-outline.md", "# Nothing listed\n"),
            ("Story/Scenes/SCN-bin.md", "\u{0}\u{1}binary"),
            (
                "Story/Scenes/SCN-yaml.md",
                "---\npov: [unclosed\ndate: 12/04\n---\n",
            ),
            (
                "Compendium/Characters/CHAR-nameless.md",
                "---\nage: old\n---\n",
            ),
        ]);
        for tool in TOOLS {
            for (label, ws) in [("empty", &empty), ("broken", &broken)] {
                let result = run(ws, tool, json!({}));
                let needs_scene = matches!(
                    *tool,
                    "canon_checker"
                        | "consistency_checker"
                        | "prose_analyzer"
                        | "scene_draft_validator"
                );
                match result {
                    Ok(out) => {
                        assert!(!needs_scene, "{tool} on {label} ran without a scene");
                        assert!(!out.summary.is_empty(), "{tool} on {label}: no summary");
                    }
                    Err(ToolError::BadArgument { name, .. }) => {
                        assert!(needs_scene, "{tool} on {label}: bad argument {name}");
                        assert_eq!(name, "scene_path");
                    }
                    Err(ToolError::Failed(message)) => {
                        assert_eq!(*tool, "outline_analyzer", "{tool} on {label}: {message}");
                    }
                    Err(other) => panic!("{tool} on {label}: {other}"),
                }
                for scene in ["Story/Scenes/SCN-bin.md", "Story/Scenes/SCN-yaml.md"] {
                    // Only that it returns; what it returns is each tool's business.
                    let _ = run(
                        ws,
                        tool,
                        json!({"scene_path": scene, "scene_id": "SCN-yaml"}),
                    );
                }
            }
        }
        let validated = run(
            &broken,
            "scene_draft_validator",
            json!({"scene_path": "Story/Scenes/SCN-bin.md"}),
        )
        .expect("a draft that cannot be read is a problem, not an error");
        assert_eq!(validated.data["readable"], false);
        assert_eq!(validated.data["valid"], false);
    }

    #[test]
    fn every_path_argument_stays_inside_the_workspace() {
        let (_dir, ws) = salt_road();
        let path_arguments = [
            ("file_locator", "scene_path"),
            ("outline_analyzer", "outline_path"),
            ("outline_analyzer", "scene_path"),
            ("canon_checker", "scene_path"),
            ("consistency_checker", "scene_path"),
            ("prose_analyzer", "scene_path"),
            ("scene_draft_validator", "scene_path"),
            ("timeline_validator", "scene_path"),
            ("stakes_mapper", "scene_path"),
            ("reader_experience_simulator", "scene_path"),
        ];
        for (tool, argument) in path_arguments {
            for escape in [
                "../secret.md",
                "/etc/passwd",
                "Story/../../secret.md",
                "C:\\secret.md",
            ] {
                let error = run(&ws, tool, json!({ argument: escape })).expect_err(escape);
                assert!(
                    matches!(&error, ToolError::BadArgument { name, .. } if name == argument),
                    "{tool} {argument}={escape}: {error:?}"
                );
            }
        }
        let error = run(
            &ws,
            "canon_checker",
            json!({"scene_path": "Story/Scenes/SCN-the-gate.md", "canon_paths": ["../x.md"]}),
        )
        .expect_err("a canon path outside");
        assert!(matches!(error, ToolError::BadArgument { ref name, .. } if name == "canon_paths"));
    }

    #[test]
    fn unknown_tools_and_argument_kinds_are_errors() {
        let (_dir, ws) = salt_road();
        assert_eq!(
            run(&ws, "crystal_ball", json!({})),
            Err(ToolError::Unknown("crystal_ball".into()))
        );
        let error = run(&ws, "prose_analyzer", json!({"scene_path": 42})).expect_err("a number");
        assert!(matches!(error, ToolError::BadArgument { ref name, .. } if name == "scene_path"));
        let error = run(
            &ws,
            "canon_checker",
            json!({"scene_path": "Story/Scenes/SCN-the-gate.md", "canon_paths": "a\\b.md"}),
        )
        .expect_err("a backslash");
        assert!(matches!(error, ToolError::BadArgument { ref name, .. } if name == "canon_paths"));
    }
}
