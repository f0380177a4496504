//! What the tools share beside their dispatch: scenes named by arguments,
//! story order, the canon a scene involves, diagnostics as findings, prose
//! figures and summaries cut to what a prompt can hold.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{FileRef, ToolArgs, ToolContext, ToolError, excerpt};
use crate::checks::Diagnostic;
use crate::index::{CardKind, FileContent, FilePath, OutlineEntry, SourceFile, Workspace};
use crate::prose::{Prose, Sentence};
use crate::text::TextRange;

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
        FileContent::Bible(bible) => format!("the Story Bible's {}", bible.kind.title()),
        FileContent::VoiceGold(_) => "the voice's gold standard".to_owned(),
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
            .map_err(|error| ToolArgs::bad("scene_path", error.to_string()))?;
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

/// An indexed file named where a scene was wanted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{path}` is {kind}, not a scene")]
pub struct NotAScene {
    pub path: String,
    /// What the file is instead, as [`describe_kind`] says it.
    pub kind: String,
}

/// The scene a workspace-relative `path` names, as [`scene_target`] reads a
/// path, without requiring that it exist: the result may have neither file
/// nor outline entry. An indexed file that is not a scene is an error, in
/// words.
pub fn scene_at_path<'w>(
    workspace: &'w Workspace,
    path: &str,
) -> Result<SceneTarget<'w>, NotAScene> {
    if let Some(file) = workspace.file(path) {
        let Some(scene) = file.scene() else {
            return Err(NotAScene {
                path: path.to_owned(),
                kind: describe_kind(file),
            });
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
