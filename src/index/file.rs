//! One manuscript file, read and understood on its own.
//!
//! A [`SourceFile`] depends only on its path, its text and the configured
//! paths; everything that needs other files (names, outline order) lives in
//! the [`super::Catalog`].

use std::path::Path;
use std::sync::Arc;

use crate::prose::Prose;
use crate::syntax::{FrontMatter, MarkdownParser, MarkdownSyntax, front_matter};
use crate::text::{LineIndex, TextRange};

use super::config::PathsConfig;
use super::model::{self, AntiPattern, Card, CardKind, FieldProblem, Outline, Scene};

/// A file's path relative to the workspace root, with `/` separators.
pub type FilePath = Arc<str>;

/// Files larger than this are not read from disk (a scene is rarely above 100 kB).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Files larger than this are kept as text with their front matter, but their
/// body is not analysed: no Markdown tree, names or prose. The tree costs about fifty times
/// the text while it is kept, twice that while an edit is parsed, so a file
/// just under the limit peaks near 200 MB in the editor; a novel of 170,000
/// words still fits in one file.
pub const MAX_ANALYSED_BYTES: usize = 1024 * 1024;

/// What a file is to the manuscript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileKind {
    Scene,
    Outline,
    Card {
        kind: CardKind,
        type_name: String,
    },
    AntiPatterns,
    /// One of the Story Bible's templates.
    Bible(super::bible::BibleKind),
    /// The voice bundle's gold standard.
    VoiceGold,
    Other,
}

/// What was read from a file, by kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileContent {
    Scene(Scene),
    Outline(Outline),
    Card(Card),
    AntiPatterns(Vec<AntiPattern>),
    Bible(super::bible::Bible),
    VoiceGold(super::voice::VoiceGold),
    Other,
}

#[derive(Debug, PartialEq)]
pub struct SourceFile {
    pub path: FilePath,
    pub text: Arc<str>,
    pub line_index: LineIndex,
    pub front_matter: Option<FrontMatter>,
    pub syntax: MarkdownSyntax,
    pub content: FileContent,
    /// Front matter that could not be read or used.
    pub problems: Vec<FieldProblem>,
    /// Why the file could not be read at all; its text is then empty.
    pub load_error: Option<String>,
    /// The codes of front matter `allow: [...]`, silenced in this file.
    pub allow: Vec<model::Spanned>,
    /// A card or the outline read for the catalog alone (see
    /// [`SourceFile::catalogued`]): its Markdown is still to be parsed, and
    /// its syntax is empty meanwhile.
    pub catalogued: bool,
    /// The words its prose capitalises inside a sentence that are no
    /// ordinary word (names, as the book uses them), sorted; read on first
    /// use (`Workspace::is_name_in_prose`).
    pub names_in_prose: std::sync::OnceLock<Box<[Box<str>]>>,
}

impl SourceFile {
    /// Reads and understands a file from disk. Never fails: an unreadable,
    /// binary, non-UTF-8 or oversized file becomes an empty file with a `load_error`.
    pub fn read(root: &Path, path: FilePath, paths: &PathsConfig) -> SourceFile {
        SourceFile::read_with(root, path, paths, SourceFile::parse)
    }

    /// Reads a file from disk and understands it with `understand`; a file
    /// that cannot be read is kept with why ([`SourceFile::unreadable`]).
    pub(super) fn read_with(
        root: &Path,
        path: FilePath,
        paths: &PathsConfig,
        understand: impl FnOnce(FilePath, Arc<str>, &PathsConfig) -> SourceFile,
    ) -> SourceFile {
        match read_text(&root.join(&*path)) {
            Ok(text) => understand(path, text.into(), paths),
            Err(reason) => SourceFile::unreadable(path, reason.to_string(), paths),
        }
    }

    /// A card or the outline read for the catalog alone, without parsing
    /// its Markdown: a card's front matter and summary, the outline's
    /// headings and entries, which is all another file's checks read of
    /// them (most of a cold start's first diagnostics went to parsing the
    /// cards and the outline). `None` for any other file, or where only a
    /// parse can read it (see [`super::summary`] and [`super::outline`]).
    /// Its syntax is empty until it is read again.
    pub fn catalogued(path: FilePath, text: Arc<str>, paths: &PathsConfig) -> Option<SourceFile> {
        if is_too_large_to_analyse(text.len()) {
            return None;
        }
        // The scanners first: they stop at the first line of another shape,
        // so a file only a parse can read costs no front matter read here.
        let summary = super::summary::plain_first_paragraph(&text);
        let plain_outline = super::outline::plain_outline(&text);
        if summary.is_none() && plain_outline.is_none() {
            return None;
        }
        let mut file = SourceFile::with_syntax(path, text, MarkdownSyntax::default(), paths);
        match &mut file.content {
            FileContent::Card(card) => card.summary = summary?,
            FileContent::Outline(outline) => *outline = plain_outline?,
            _ => return None,
        }
        file.catalogued = true;
        Some(file)
    }

    /// Understands `text` with a fresh parse, or keeps it unchecked when it
    /// is too large to analyse (see [`MAX_ANALYSED_BYTES`]).
    pub fn parse(path: FilePath, text: Arc<str>, paths: &PathsConfig) -> SourceFile {
        if is_too_large_to_analyse(text.len()) {
            return SourceFile::unanalysed(path, text, paths);
        }
        let syntax = MarkdownParser::parse_fresh(&text);
        SourceFile::with_syntax(path, text, syntax, paths)
    }

    /// A file too large to analyse: its text is kept (a run that replaces a
    /// scene compares it and keeps its front matter, and the editor's edits
    /// apply to it) and its front matter read (what a scene or a card says
    /// of itself costs little), but not its body, so it costs about its size.
    pub fn unanalysed(path: FilePath, text: Arc<str>, paths: &PathsConfig) -> SourceFile {
        SourceFile::with_syntax(path, text, MarkdownSyntax::default(), paths)
    }

    /// Whether the file was kept without being analysed (see [`SourceFile::unanalysed`]).
    pub fn is_unanalysed(&self) -> bool {
        is_too_large_to_analyse(self.text.len())
    }

    /// Whether the index's cache keeps this file's syntax: read, analysed,
    /// and parsed (not read for the catalog alone).
    pub fn is_cached_syntax(&self) -> bool {
        self.load_error.is_none() && !self.is_unanalysed() && !self.catalogued
    }

    /// Understands `text` whose Markdown syntax is already known (open documents
    /// parse incrementally).
    pub fn with_syntax(
        path: FilePath,
        text: Arc<str>,
        syntax: MarkdownSyntax,
        paths: &PathsConfig,
    ) -> SourceFile {
        let front_matter = front_matter::parse(&text);
        let mut problems: Vec<FieldProblem> = front_matter
            .iter()
            .flat_map(|front| &front.errors)
            .map(|error| FieldProblem {
                range: error.range,
                message: error.message.clone(),
            })
            .collect();
        let declared_type = front_matter
            .as_ref()
            .and_then(|front| front.get("type"))
            .and_then(|entry| entry.value.as_scalar_text(&text))
            .map(|value| value.trim().to_ascii_lowercase());
        let kind = classify(&path, declared_type.as_deref(), paths);
        let stem = file_stem(&path);
        let content = match &kind {
            FileKind::Scene => FileContent::Scene(model::read_scene(
                stem,
                &text,
                front_matter.as_ref(),
                &syntax,
                &mut problems,
            )),
            FileKind::Outline => FileContent::Outline(super::outline::read_outline(&text, &syntax)),
            FileKind::Card { kind, type_name } => FileContent::Card(model::read_card(
                stem,
                *kind,
                type_name,
                &text,
                front_matter.as_ref(),
                &syntax,
                &mut problems,
            )),
            FileKind::AntiPatterns => {
                FileContent::AntiPatterns(model::read_anti_patterns(&text, &syntax))
            }
            FileKind::Bible(kind) => FileContent::Bible(super::bible::read_bible(
                *kind,
                &text,
                front_matter.as_ref(),
                &syntax,
                &mut problems,
            )),
            FileKind::VoiceGold => FileContent::VoiceGold(super::voice::read_gold(
                &text,
                front_matter.as_ref(),
                &syntax,
                &mut problems,
            )),
            FileKind::Other => FileContent::Other,
        };
        let allow = model::read_allow(&text, front_matter.as_ref(), &mut problems);
        SourceFile {
            line_index: LineIndex::new(&text),
            allow,
            path,
            text,
            front_matter,
            syntax,
            content,
            problems,
            load_error: None,
            catalogued: false,
            names_in_prose: std::sync::OnceLock::new(),
        }
    }

    /// A file that could not be read. A scene file still counts as the scene
    /// its name says (so the outline does not call it missing), with nothing known about it.
    pub fn unreadable(path: FilePath, reason: String, paths: &PathsConfig) -> SourceFile {
        let content = match classify(&path, None, paths) {
            FileKind::Scene => FileContent::Scene(model::read_scene(
                file_stem(&path),
                "",
                None,
                &MarkdownSyntax::default(),
                &mut Vec::new(),
            )),
            _ => FileContent::Other,
        };
        SourceFile {
            path,
            text: Arc::from(""),
            line_index: LineIndex::new(""),
            front_matter: None,
            syntax: MarkdownSyntax::default(),
            content,
            problems: Vec::new(),
            load_error: Some(reason),
            allow: Vec::new(),
            catalogued: false,
            names_in_prose: std::sync::OnceLock::new(),
        }
    }

    /// The file's prose as tokens and sentences. Not kept: a whole novel's
    /// tokens would double the index's memory, and diagnostics are cached
    /// instead, so a file is analysed again only when it is checked again.
    pub fn analyse_prose(&self) -> Prose {
        Prose::analyse(&self.text, &self.syntax)
    }

    pub fn scene(&self) -> Option<&Scene> {
        match &self.content {
            FileContent::Scene(scene) => Some(scene),
            _ => None,
        }
    }

    pub fn card(&self) -> Option<&Card> {
        match &self.content {
            FileContent::Card(card) => Some(card),
            _ => None,
        }
    }

    pub fn bible(&self) -> Option<&super::bible::Bible> {
        match &self.content {
            FileContent::Bible(bible) => Some(bible),
            _ => None,
        }
    }

    pub fn voice_gold(&self) -> Option<&super::voice::VoiceGold> {
        match &self.content {
            FileContent::VoiceGold(gold) => Some(gold),
            _ => None,
        }
    }

    pub fn outline(&self) -> Option<&Outline> {
        match &self.content {
            FileContent::Outline(outline) => Some(outline),
            _ => None,
        }
    }

    /// The range just after the front matter: where a file-level diagnostic goes
    /// when nothing more precise exists (the title heading if there is one).
    pub fn head_range(&self) -> TextRange {
        if let Some(block) = self.syntax.blocks.iter().find(|block| {
            matches!(block.kind, crate::syntax::BlockKind::Heading { .. })
                && self
                    .front_matter
                    .as_ref()
                    .is_none_or(|front| block.range.start >= front.range.end)
        }) {
            return block.inline;
        }
        self.line_index
            .line_range(0, &self.text)
            .unwrap_or_default()
    }
}

/// Whether a text of `bytes` bytes is too large to analyse (over [`MAX_ANALYSED_BYTES`]).
pub fn is_too_large_to_analyse(bytes: usize) -> bool {
    bytes > MAX_ANALYSED_BYTES
}

/// Whether `path` is a draft a run kept beside its scene
/// (`SCN-x.draft-run_….md`) because the scene changed meanwhile: the
/// writer's to merge, not part of the manuscript.
pub fn is_beside_draft(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .is_some_and(|(stem, _)| stem.contains(".draft-run_"))
}

/// Whether `path` is a scene's scaffold (`SCN-x.scaffold.md`): the plan of
/// a scene, not its prose.
pub fn is_scaffold(path: &str) -> bool {
    path.ends_with(SCAFFOLD_SUFFIX)
}

/// The file name ending of a scene's scaffold.
pub const SCAFFOLD_SUFFIX: &str = ".scaffold.md";

/// Decides a file's kind from its declared `type:` or, failing that, its folder.
pub fn classify(path: &str, declared_type: Option<&str>, paths: &PathsConfig) -> FileKind {
    if is_beside_draft(path) || is_scaffold(path) || declared_type == Some("scaffold") {
        return FileKind::Other;
    }
    if let Some(kind) = declared_type.and_then(super::bible::BibleKind::parse) {
        return FileKind::Bible(kind);
    }
    match declared_type {
        Some(super::voice::GOLD_TYPE) => return FileKind::VoiceGold,
        Some("scene") => return FileKind::Scene,
        Some("outline") => return FileKind::Outline,
        Some("character") => {
            return FileKind::Card {
                kind: CardKind::Character,
                type_name: "character".into(),
            };
        }
        Some("location") => {
            return FileKind::Card {
                kind: CardKind::Location,
                type_name: "location".into(),
            };
        }
        Some(other) if !other.is_empty() => {
            return FileKind::Card {
                kind: CardKind::Other,
                type_name: other.to_owned(),
            };
        }
        _ => {}
    }
    if path == paths.outline {
        FileKind::Outline
    } else if path == paths.anti_patterns {
        FileKind::AntiPatterns
    } else if path == paths.voice_file(super::voice::GOLD_STANDARD) {
        FileKind::VoiceGold
    } else if is_under(path, &paths.characters) {
        FileKind::Card {
            kind: CardKind::Character,
            type_name: "character".into(),
        }
    } else if is_under(path, &paths.locations) {
        FileKind::Card {
            kind: CardKind::Location,
            type_name: "location".into(),
        }
    } else if is_under(path, &paths.scenes) {
        FileKind::Scene
    } else if let Some(rest) = under(path, &paths.bible) {
        // The templates by their names; anything else there is a note.
        match super::bible::BibleKind::parse(file_stem(rest)) {
            Some(kind) if !rest.contains('/') => FileKind::Bible(kind),
            _ => FileKind::Other,
        }
    } else if let Some(rest) = under(path, &paths.compendium) {
        // `Compendium/Items/…` is other canon of type `item`; files directly in
        // the compendium and the voice folder are notes, not canon.
        match rest.split_once('/') {
            Some((folder, _)) if !folder.eq_ignore_ascii_case("voice") => FileKind::Card {
                kind: CardKind::Other,
                type_name: folder.trim_end_matches('s').to_lowercase(),
            },
            _ => FileKind::Other,
        }
    } else {
        FileKind::Other
    }
}

fn under<'a>(path: &'a str, folder: &str) -> Option<&'a str> {
    let folder = folder.trim_end_matches('/');
    path.strip_prefix(folder)?.strip_prefix('/')
}

fn is_under(path: &str, folder: &str) -> bool {
    under(path, folder).is_some()
}

/// `absolute`'s path relative to `root`, with `/` separators; `None` outside
/// the root or when the path is not valid UTF-8.
pub fn relative_path(root: &Path, absolute: &Path) -> Option<FilePath> {
    let relative = absolute.strip_prefix(root).ok()?;
    let parts: Vec<&str> = relative
        .iter()
        .map(|part| part.to_str())
        .collect::<Option<_>>()?;
    Some(parts.join("/").into())
}

pub fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

/// Why a file is not indexed, in a writer's words (they show as the
/// file's `load_error`). The underlying error is part of the message rather
/// than a source, so a chain printed with `{:#}` says it once.
#[derive(Debug, thiserror::Error)]
pub enum ReadTextError {
    #[error("cannot read the file: {0}")]
    Unreadable(std::io::Error),
    #[error(
        "the file is too large to index ({:.1} MiB; the limit is {} MiB)",
        *bytes as f64 / 1_048_576.0,
        MAX_FILE_BYTES / 1_048_576
    )]
    TooLarge { bytes: u64 },
    #[error("the file looks binary (it contains NUL bytes), so it is not indexed")]
    Binary,
    #[error("the file is not UTF-8 text (invalid byte at offset {offset}), so it is not indexed")]
    NotUtf8 { offset: usize },
}

/// Reads a file as text, or says in a writer's words why it cannot be.
/// The file is opened once: its size is read from the open file, and no
/// more than the limit and a byte is read of one that grew meanwhile.
pub fn read_text(path: &Path) -> Result<String, ReadTextError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(ReadTextError::Unreadable)?;
    let size = file.metadata().map_err(ReadTextError::Unreadable)?.len();
    if size > MAX_FILE_BYTES {
        return Err(ReadTextError::TooLarge { bytes: size });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadTextError::Unreadable)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadTextError::TooLarge {
            bytes: bytes.len() as u64,
        });
    }
    text_from_bytes(bytes)
}

pub fn text_from_bytes(bytes: Vec<u8>) -> Result<String, ReadTextError> {
    if memchr::memchr(0, &bytes).is_some() {
        return Err(ReadTextError::Binary);
    }
    let mut text = String::from_utf8(bytes).map_err(|error| ReadTextError::NotUtf8 {
        offset: error.utf8_error().valid_up_to(),
    })?;
    if text.starts_with('\u{feff}') {
        // A byte order mark would hide the front matter; positions stay right
        // because editors drop it too.
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Every file of the manuscript, by path (a persistent map: a clone shares it).
pub type Files = imbl::OrdMap<FilePath, Arc<SourceFile>>;

/// Something of each file, by path (a persistent map: a clone shares it).
pub type ByFile<T> = imbl::HashMap<FilePath, T>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_comes_from_type_then_folder() {
        let paths = PathsConfig::default();
        assert_eq!(
            classify("Story/Scenes/a/SCN-x.md", None, &paths),
            FileKind::Scene
        );
        assert_eq!(
            classify("Story/SCN-outline.md", None, &paths),
            FileKind::Outline
        );
        assert_eq!(
            classify("Story/Scenes/SCN-x.md", Some("character"), &paths),
            FileKind::Card {
                kind: CardKind::Character,
                type_name: "character".into()
            }
        );
        assert_eq!(
            classify("Compendium/Items/ITEM-key.md", None, &paths),
            FileKind::Card {
                kind: CardKind::Other,
                type_name: "item".into()
            }
        );
        assert_eq!(
            classify("Compendium/Voice/anti-patterns.md", None, &paths),
            FileKind::AntiPatterns
        );
        assert_eq!(
            classify("Compendium/Voice/style.md", None, &paths),
            FileKind::Other
        );
        assert_eq!(
            classify("Compendium/Voice/gold-standard.md", None, &paths),
            FileKind::VoiceGold
        );
        assert_eq!(
            classify("Notes/voice.md", Some("voice-gold-standard"), &paths),
            FileKind::VoiceGold
        );
        assert_eq!(classify("README.md", None, &paths), FileKind::Other);
    }

    /// A draft run replaces a scene's text after its front matter: a scene
    /// too large to analyse must still know where its front matter ends.
    #[test]
    fn a_file_too_large_to_analyse_keeps_its_text_and_front_matter_but_no_tree() {
        let paths = PathsConfig::default();
        let text = format!(
            "---\nid: SCN-long\npov: Kael\n---\n\n# Long\n\n{}",
            "Kael walked on. ".repeat(MAX_ANALYSED_BYTES / 16 + 1)
        );
        let file = SourceFile::parse("Story/Scenes/SCN-x.md".into(), text.clone().into(), &paths);
        assert!(file.is_unanalysed());
        assert_eq!(&*file.text, text);
        assert_eq!(
            file.front_matter.as_ref().unwrap().range.end,
            text.find("\n# Long").unwrap()
        );
        assert!(file.syntax.blocks.is_empty() && file.syntax.prose.is_empty());
        let scene = file.scene().unwrap();
        assert_eq!((scene.id.as_str(), scene.word_count), ("SCN-long", 0));
        assert_eq!(scene.pov.as_ref().unwrap().text, "Kael");
    }

    #[test]
    fn bad_bytes_are_reasons_not_panics() {
        assert!(
            text_from_bytes(vec![0xff, 0xfe, b'a'])
                .unwrap_err()
                .to_string()
                .contains("not UTF-8")
        );
        assert!(
            text_from_bytes(vec![b'a', 0, b'b'])
                .unwrap_err()
                .to_string()
                .contains("binary")
        );
        assert_eq!(text_from_bytes("\u{feff}---\n".into()).unwrap(), "---\n");
    }
}
