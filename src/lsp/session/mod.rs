//! The server's state: the workspace and the documents open in the editor.
//!
//! Architecture invariant: the session is mutated only by state-changing
//! notifications, synchronously, in the order they arrived (each handler
//! takes the lock before its first `.await`). Queries and diagnostics work on
//! snapshots (`Workspace` clones) taken under the lock and used after it.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent};

use crate::evidence::ReceiptBook;
use crate::index::{FilePath, SourceFile, Workspace};
use crate::runs::findings::FindingStore;
use crate::runs::prompts::Prompts;
use crate::runs::recipe::Registry;
use crate::syntax::MarkdownParser;
use crate::syntax::markdown::TreeEdit;
use crate::text::PositionEncoding;

/// A document open in the editor: its text as a rope, its version and, for
/// Markdown, the parser that re-parses it incrementally. A project recipe
/// (`.control-room/recipes/*.json`) or a plan's checklist
/// (`.control-room/sessions/<id>/plan.md`) is not part of the manuscript; it
/// is validated as what it is instead.
pub struct Document {
    pub rope: Rope,
    pub version: i32,
    /// What the document is to the manuscript.
    role: Role,
}

enum Role {
    /// A recipe, a plan checklist or the knowledge base.
    Side,
    /// A manuscript file, with its parser and the tree it keeps; none until
    /// it is written in, once it is not among the [`TREES_KEPT`] written in
    /// last, and while it is too large to analyse (the tree would cost
    /// about fifty times the text).
    Manuscript(Option<MarkdownParser>),
}

impl Document {
    /// Whether the document is a manuscript file (not a recipe or a plan).
    pub fn is_manuscript(&self) -> bool {
        matches!(self.role, Role::Manuscript(_))
    }
}

/// Whether a workspace path is a project recipe file.
pub fn is_recipe_path(path: &str) -> bool {
    path.strip_prefix(crate::runs::recipe::PROJECT_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|name| name.ends_with(".json") && !name.contains('/'))
}

/// Whether a workspace path is a session plan's checklist
/// (`.control-room/sessions/<id>/plan.md`), which is not manuscript either.
pub fn is_plan_path(path: &str) -> bool {
    path.strip_prefix(crate::plan::SESSIONS_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|rest| rest.strip_suffix("/plan.md"))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// Whether a workspace path is the knowledge base of decisions, a document
/// of the session like a plan checklist.
pub fn is_kb_path(path: &str) -> bool {
    path == crate::runs::prompts::state::KB_FILE
}

/// Whether an open document is the session's own, not the manuscript's.
fn is_side_document(path: &str) -> bool {
    is_recipe_path(path) || is_plan_path(path) || is_kb_path(path)
}

pub struct Session {
    pub workspace: Workspace,
    pub documents: HashMap<FilePath, Document>,
    pub encoding: PositionEncoding,
    /// Whether the initial index has finished; until then only open documents
    /// and the priority files (cards, outline) are indexed.
    pub indexed: bool,
    /// Whether the priority files (cards, outline, the anti-pattern sheet)
    /// are indexed, so that an open document can be checked: before, its
    /// names would all be unknown.
    pub checkable: bool,
    /// Open documents whose version went backwards or repeated: a client bug
    /// or reordering, which must never happen (kept for tests and logs).
    pub out_of_order: Vec<(FilePath, i32, i32)>,
    /// The editor's `controlRoom.llm` layer, for the runs the server starts.
    pub editor_llm: Option<crate::llm::config::LlmLayer>,
    /// The editor's `controlRoom.diagnostics.debounceMs`, which wins over
    /// `[diagnostics] debounce_ms`.
    pub editor_debounce_ms: Option<u64>,
    /// Agents' findings from finished runs, shown as diagnostics.
    pub findings: Arc<Mutex<FindingStore>>,
    /// Each scene's measures for the story's health, kept between snapshots.
    pub health: Arc<Mutex<crate::health::Measures>>,
    /// Each scene's part of the story's graph, kept between the graphs the
    /// charts and the prompts build; loaded from `.control-room/graph/`
    /// and saved there at shutdown.
    pub graph: crate::kb::graph::GraphCache,
    /// The workspace's tool receipts, for evidence diagnostics and hover.
    pub receipts: Arc<Mutex<ReceiptBook>>,
    /// The recipes, for the actions the editor offers; dropped when a
    /// recipe file changes and loaded again when next asked for.
    recipes: Option<Arc<Registry>>,
    /// The scenes' words when the initial index finished: what this
    /// session's count of words written starts from.
    pub words_at_start: Option<usize>,
    /// When to ask the client for semantic tokens again
    /// (`ide::semantic_tokens_key`: names, deaths, the outline's order).
    pub semantic_tokens_refresh: Refresh,
    /// When to ask the client for inlay hints again (`ide::inlay_hints_key`:
    /// dates, times, points of view, birth dates, the calendar).
    pub inlay_hints_refresh: Refresh,
    /// The documents that keep their syntax tree, the one opened or
    /// changed last first (at most [`TREES_KEPT`]).
    trees: VecDeque<FilePath>,
    /// Files read again from disk (or found deleted) while the initial index
    /// runs: newer than what the index may have read of them before.
    read_while_indexing: HashSet<FilePath>,
}

/// How many open documents keep their syntax tree for the next edit: the
/// ones written in last (a document opened keeps none until it is written
/// in). A tree costs about twenty times its scene's text (some 460 KB for
/// 2,000 words); a document without one is parsed afresh at its next edit
/// (about 5 ms for 5,000 words) and keeps it again.
const TREES_KEPT: usize = 4;

/// A view the client keeps of other files than the one it shows (semantic
/// tokens, inlay hints), and asks for again only when told: whether it can
/// be told, and the key of what the view read when it last was.
#[derive(Debug, Default)]
pub struct Refresh {
    pub supported: bool,
    told: Option<u64>,
}

impl Refresh {
    /// Whether the view's key is not the one the client was last told of
    /// (it is to be told now). Never for a client that cannot be told; the
    /// key is computed only for one that can.
    pub fn changed(&mut self, key: impl FnOnce() -> u64) -> bool {
        if !self.supported {
            return false;
        }
        let key = key();
        self.told.replace(key) != Some(key)
    }
}

impl Session {
    pub fn new(root: &Path, encoding: PositionEncoding) -> Session {
        Session {
            workspace: Workspace::new(root),
            documents: HashMap::new(),
            encoding,
            indexed: false,
            checkable: false,
            out_of_order: Vec::new(),
            trees: VecDeque::new(),
            editor_llm: None,
            editor_debounce_ms: None,
            findings: Arc::new(Mutex::new(FindingStore::default())),
            health: Arc::default(),
            graph: crate::kb::graph::GraphCache::load(root),
            receipts: Arc::new(Mutex::new(ReceiptBook::default())),
            recipes: None,
            words_at_start: None,
            semantic_tokens_refresh: Refresh::default(),
            inlay_hints_refresh: Refresh::default(),
            read_while_indexing: HashSet::new(),
        }
    }

    /// Whether the client is to be asked for its semantic tokens and its
    /// inlay hints again: what they read of other files changed since it
    /// was last asked.
    pub fn views_changed(&mut self) -> (bool, bool) {
        let workspace = &self.workspace;
        (
            self.semantic_tokens_refresh
                .changed(|| crate::ide::semantic_tokens_key(workspace)),
            self.inlay_hints_refresh
                .changed(|| crate::ide::inlay_hints_key(workspace)),
        )
    }

    /// Marks the initial index finished, and the words the session starts from.
    pub fn finish_indexing(&mut self) {
        self.indexed = true;
        self.read_while_indexing = HashSet::new();
        self.words_at_start
            .get_or_insert_with(|| crate::stats::scene_words(&self.workspace));
    }

    /// The recipes the workspace can run (bundled, shadowed by the
    /// project's, the editor's unsaved text of open recipe files winning).
    pub fn recipes(&mut self) -> Arc<Registry> {
        if let Some(registry) = &self.recipes {
            return registry.clone();
        }
        let root = self.workspace.root().to_path_buf();
        let registry = Arc::new(Registry::load_with_open(
            &root,
            &Prompts::load(&root),
            &self.open_recipe_texts(),
        ));
        self.recipes = Some(registry.clone());
        registry
    }

    /// The open recipe files' text, by workspace path.
    pub fn open_recipe_texts(&self) -> BTreeMap<String, String> {
        self.documents
            .iter()
            .filter(|(path, _)| is_recipe_path(path))
            .map(|(path, document)| (path.to_string(), document.rope.to_string()))
            .collect()
    }

    pub fn open(&mut self, path: FilePath, text: String, version: i32) {
        let rope = Rope::from_str(&text);
        if is_side_document(&path) {
            self.recipes = None;
            let document = Document {
                rope,
                version,
                role: Role::Side,
            };
            self.documents.insert(path, document);
            return;
        }
        // A document opened as the index read it is that file, shared: no
        // parse, no names found again, and its diagnostics are the cache's.
        // (A file is a pure function of its path, text and settings; one
        // read for the catalog alone, or not read at all, is parsed.)
        let indexed = self.workspace.file(&path).is_some_and(|file| {
            !file.catalogued && file.load_error.is_none() && *file.text == *text
        });
        // An opened document keeps no tree until it is written in: most are
        // opened to be read (a restored session opens twenty), and a tree
        // costs about twenty times the text. Its first edit parses afresh.
        let file = (!indexed).then(|| understand(&path, text, &mut None, true, &self.workspace));
        self.documents.insert(
            path.clone(),
            Document {
                rope,
                version,
                role: Role::Manuscript(None),
            },
        );
        if let Some(file) = file {
            self.workspace.insert_file(file);
        }
        self.proofread_open_scenes();
    }

    /// Applies one `didChange` in order. Returns false if the document is not open.
    pub fn change(
        &mut self,
        path: &FilePath,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> bool {
        let encoding = self.encoding;
        let Some(document) = self.documents.get_mut(path) else {
            return false;
        };
        if version <= document.version {
            self.out_of_order
                .push((path.clone(), document.version, version));
        }
        let mut replaced = false;
        for change in changes {
            match change.range {
                Some(range) => {
                    let start = char_index(&document.rope, range.start, encoding);
                    let end = char_index(&document.rope, range.end, encoding).max(start);
                    let edit = tree_edit(&document.rope, start, end, &change.text);
                    if let Role::Manuscript(Some(parser)) = &mut document.role {
                        let removed: String = document.rope.slice(start..end).chars().collect();
                        parser.edit_tree(&edit, &removed, &change.text);
                    }
                    document.rope.remove(start..end);
                    document.rope.insert(start, &change.text);
                }
                None => {
                    document.rope = Rope::from_str(&change.text);
                    replaced = true;
                }
            }
        }
        document.version = version;
        let Role::Manuscript(parser) = &mut document.role else {
            self.recipes = None;
            return true;
        };
        let text = document.rope.to_string();
        let file = understand(path, text, parser, replaced, &self.workspace);
        self.keep_tree(path);
        self.workspace.insert_file(file);
        self.workspace.set_typing(Some(path.clone()));
        true
    }

    /// Puts `path` first among the documents that keep their tree (unless
    /// it has none: too large to analyse), and drops the parser of the one
    /// that falls off the end.
    fn keep_tree(&mut self, path: &FilePath) {
        self.trees.retain(|kept| kept != path);
        if !self.has_tree(path) {
            return;
        }
        self.trees.push_front(path.clone());
        while self.trees.len() > TREES_KEPT {
            let Some(dropped) = self.trees.pop_back() else {
                break;
            };
            if let Some(Document {
                role: Role::Manuscript(parser),
                ..
            }) = self.documents.get_mut(&dropped)
            {
                *parser = None;
            }
        }
    }

    /// Whether an open document keeps its syntax tree.
    fn has_tree(&self, path: &str) -> bool {
        self.documents
            .get(path)
            .is_some_and(|document| matches!(document.role, Role::Manuscript(Some(_))))
    }

    /// Closes a document; the file on disk is the truth again.
    pub fn close(&mut self, path: &FilePath) {
        if is_recipe_path(path) {
            self.recipes = None;
        }
        self.trees.retain(|kept| kept != path);
        if self.workspace.is_typed_in(path) {
            self.workspace.set_typing(None);
        }
        if self.documents.remove(path).is_some() {
            self.proofread_open_scenes();
            self.reload_from_disk(path);
        }
    }

    /// The open recipe documents: path, text and version.
    pub fn open_recipes(&self) -> Vec<(FilePath, String, i32)> {
        self.open_matching(is_recipe_path)
    }

    /// The open plan checklists: path, text and version.
    pub fn open_plans(&self) -> Vec<(FilePath, String, i32)> {
        self.open_matching(is_plan_path)
    }

    /// The knowledge base, when it is open: path, text and version.
    pub fn open_kb(&self) -> Vec<(FilePath, String, i32)> {
        self.open_matching(is_kb_path)
    }

    fn open_matching(&self, wanted: fn(&str) -> bool) -> Vec<(FilePath, String, i32)> {
        self.documents
            .iter()
            .filter(|(path, _)| wanted(path))
            .map(|(path, document)| (path.clone(), document.rope.to_string(), document.version))
            .collect()
    }

    /// Re-reads a file changed outside the editor (ignored while it is open:
    /// the editor's buffer wins until it is saved or closed).
    pub fn reload_from_disk(&mut self, path: &FilePath) {
        if self.documents.contains_key(path) {
            return;
        }
        if is_side_document(path) {
            // Not manuscript; the next diagnostics run re-reads them.
            self.recipes = None;
            return;
        }
        if !self.indexed {
            self.read_while_indexing.insert(path.clone());
        }
        let absolute = self.workspace.absolute_path(path);
        if absolute.is_file() {
            let file = SourceFile::read(
                self.workspace.root(),
                path.clone(),
                &self.workspace.config().paths,
            );
            self.workspace.insert_file(file);
        } else {
            self.workspace.remove_file(path);
        }
    }

    /// Inserts files read by the initial index, without clobbering open
    /// documents or files read again since a change on disk (the index may
    /// have read them before it).
    pub fn insert_indexed(&mut self, files: Vec<SourceFile>) {
        let files: Vec<SourceFile> = files
            .into_iter()
            .filter(|file| {
                !self.documents.contains_key(&file.path)
                    && !self.read_while_indexing.contains(&file.path)
            })
            .collect();
        self.workspace.insert_files(files);
    }

    /// Takes the editor's settings in, answering what was wrong with them. A
    /// part the settings leave out keeps what is in force.
    pub fn apply_settings(&mut self, settings: super::settings::EditorSettings) -> Vec<String> {
        if settings.diagnostics_given {
            self.workspace
                .set_editor_severity(Arc::new(settings.severity));
            self.editor_debounce_ms = settings.debounce_ms;
        }
        if settings.llm_given {
            self.editor_llm = settings.llm;
        }
        if settings.language_given {
            self.workspace.set_editor_rules(Arc::new(settings.rules));
        }
        settings.problems
    }

    /// Swaps in a workspace freshly loaded from disk (after `control-room.toml`
    /// changed), keeping the editor's text of open documents.
    pub fn replace_workspace(&mut self, workspace: Workspace) {
        let open: Vec<(FilePath, Arc<str>)> = self
            .documents
            .keys()
            .filter_map(|path| Some((path.clone(), self.workspace.file(path)?.text.clone())))
            .collect();
        let editor_severity = self.workspace.editor_severity().clone();
        let editor_rules = Arc::new(self.workspace.editor_rules().clone());
        self.workspace = workspace;
        self.workspace.set_editor_severity(editor_severity);
        self.workspace.set_editor_rules(editor_rules);
        self.proofread_open_scenes();
        let files = open
            .into_iter()
            .map(|(path, text)| SourceFile::parse(path, text, &self.workspace.config().paths))
            .collect();
        self.workspace.insert_files(files);
        self.indexed = true;
        self.checkable = true;
        self.recipes = None;
    }

    /// The open Markdown documents.
    /// An immutable snapshot for handlers and diagnostics passes.
    pub fn snapshot(&mut self) -> super::snapshot::Snapshot {
        let registry = self.recipes();
        self.snapshot_with(registry)
    }

    /// A snapshot for a diagnostics pass: the recipes are loaded only when
    /// an open plan checklist needs them, so the first diagnostics do not
    /// wait for the recipes and prompts to be read.
    pub fn snapshot_for_diagnostics(&mut self) -> super::snapshot::Snapshot {
        let registry = if self.open_plans().is_empty() {
            Arc::new(Registry::default())
        } else {
            self.recipes()
        };
        self.snapshot_with(registry)
    }

    fn snapshot_with(&self, registry: Arc<Registry>) -> super::snapshot::Snapshot {
        super::snapshot::Snapshot {
            workspace: self.workspace.clone(),
            encoding: self.encoding,
            recipes: self.open_recipes(),
            plans: self.open_plans(),
            kb: self.open_kb(),
            registry,
            findings: self.findings.clone(),
            receipts: self.receipts.clone(),
            open: self.open_paths(),
            health: self.health.clone(),
        }
    }

    /// Tells the workspace which scenes are open: their grammar is checked
    /// (`[language] grammar = "open"`).
    fn proofread_open_scenes(&mut self) {
        let open = self.open_paths().into_iter().collect();
        self.workspace.set_proofread(open);
    }

    pub fn open_paths(&self) -> HashSet<FilePath> {
        self.documents
            .iter()
            .filter(|(_, document)| document.is_manuscript())
            .map(|(path, _)| path.clone())
            .collect()
    }

    pub fn version(&self, path: &str) -> Option<i32> {
        self.documents.get(path).map(|document| document.version)
    }

    /// A file's text as the editor has it, with the open document's
    /// version; else as it is on disk, with no version; `None` without a file.
    pub fn text_now(&self, path: &str) -> Option<(String, Option<i32>)> {
        match self.documents.get(path) {
            Some(document) => Some((document.rope.to_string(), Some(document.version))),
            None => std::fs::read_to_string(self.workspace.root().join(path))
                .ok()
                .map(|text| (text, None)),
        }
    }
}

/// An open document's text as a file of the manuscript. Its `parser` keeps
/// the tree for the next edit; `fresh` when the text is not the tree's
/// after the edits it was told of (opened, or replaced whole). A text too
/// large to analyse is kept without a tree, and the parser is dropped with
/// the memory it holds; one that shrinks below the limit gets a new one.
fn understand(
    path: &FilePath,
    text: String,
    parser: &mut Option<MarkdownParser>,
    fresh: bool,
    workspace: &Workspace,
) -> SourceFile {
    let paths = &workspace.config().paths;
    if crate::index::file::is_too_large_to_analyse(text.len()) {
        *parser = None;
        return SourceFile::unanalysed(path.clone(), text.into(), paths);
    }
    let syntax = match parser {
        Some(parser) if !fresh => parser.reparse_after_edits(&text),
        Some(parser) => parser.parse(&text),
        None => parser.insert(MarkdownParser::new()).parse(&text),
    };
    SourceFile::with_syntax(path.clone(), text.into(), syntax, paths)
}

/// The char index of an LSP position in `rope`, clamped to the line's end.
fn char_index(rope: &Rope, position: Position, encoding: PositionEncoding) -> usize {
    let line = position.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let line_start = rope.line_to_char(line);
    let wanted = position.character as usize;
    let mut units = 0;
    let mut chars = 0;
    for ch in rope.line(line).chars() {
        if ch == '\n' || ch == '\r' {
            break;
        }
        let width = match encoding {
            PositionEncoding::Utf8 => ch.len_utf8(),
            PositionEncoding::Utf16 => ch.len_utf16(),
            PositionEncoding::Utf32 => 1,
        };
        if units + width > wanted {
            break;
        }
        units += width;
        chars += 1;
    }
    line_start + chars
}

/// The tree edit for replacing chars `start..end` of `rope` with `new_text`.
fn tree_edit(rope: &Rope, start: usize, end: usize, new_text: &str) -> TreeEdit {
    let point = |char_index: usize| {
        let byte = rope.char_to_byte(char_index);
        let line = rope.byte_to_line(byte);
        (line, byte - rope.line_to_byte(line))
    };
    let start_byte = rope.char_to_byte(start);
    let start_position = point(start);
    let newlines = new_text.matches('\n').count();
    let new_end_position = match new_text.rfind('\n') {
        Some(last) => (start_position.0 + newlines, new_text.len() - last - 1),
        None => (start_position.0, start_position.1 + new_text.len()),
    };
    TreeEdit {
        start_byte,
        old_end_byte: rope.char_to_byte(end),
        new_end_byte: start_byte + new_text.len(),
        start_position,
        old_end_position: point(end),
        new_end_position,
    }
}

#[cfg(test)]
mod tests;
