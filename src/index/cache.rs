//! The index's cache on disk: each file's Markdown syntax kept by the hash of
//! its text, so a restart on an unchanged manuscript parses nothing again.
//!
//! [`CACHE_FILE`] is postcard: a header (the format, the build that wrote
//! it, a SHA-256 of the entries) and one entry per analysed file (its path,
//! the SHA-256 of its text, its blocks and prose ranges). Nothing in it is
//! trusted: another build's cache, a checksum that does not match or bytes
//! that do not decode are ignored whole; a file whose text hashes otherwise,
//! or whose entry has a range that does not fit its text, is parsed again.
//! Either way the result is what a cold start gives; the cache only saves
//! the parse.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::config::PathsConfig;
use super::file::{FilePath, SourceFile, is_too_large_to_analyse};
use crate::syntax::{Block, BlockKind, MarkdownSyntax};
use crate::text::TextRange;

/// Where the cache lives, relative to the manuscript root.
pub const CACHE_FILE: &str = ".control-room/index/syntax.bin";

/// Bumped whenever what is saved, or how it is read, changes.
const FORMAT: u32 = 1;

type Digest256 = [u8; 32];

#[derive(Serialize, Deserialize)]
struct Saved {
    format: u32,
    /// The build that wrote it: a build reads only its own cache, since
    /// another may parse the same text otherwise.
    build: String,
    /// SHA-256 of `entries`.
    checksum: Digest256,
    /// The postcard of `Vec<Entry>`.
    entries: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    path: String,
    hash: Digest256,
    blocks: Vec<SavedBlock>,
    prose: Vec<(u32, u32)>,
}

#[derive(Serialize, Deserialize)]
struct SavedBlock {
    kind: u8,
    level: u8,
    range: (u32, u32),
    inline: (u32, u32),
    list_depth: u16,
}

/// The cache of a manuscript read from disk when a file first needs it: a
/// start's first diagnostics never read it (the cards and the outline are
/// read for the catalog alone, the few files only a parse can read are
/// parsed, which costs less than reading the whole cache), so its reading
/// waits until they are out.
pub struct LazyCache {
    root: PathBuf,
    cache: OnceLock<Arc<IndexCache>>,
}

impl LazyCache {
    pub fn new(root: &Path) -> LazyCache {
        LazyCache {
            root: root.to_path_buf(),
            cache: OnceLock::new(),
        }
    }

    /// The cache, read on the first call (the other callers wait for it).
    pub fn get(&self) -> &Arc<IndexCache> {
        self.cache
            .get_or_init(|| Arc::new(IndexCache::load(&self.root)))
    }

    /// The cache if it has been read, without reading it.
    pub fn loaded(&self) -> Option<&Arc<IndexCache>> {
        self.cache.get()
    }
}

/// The cache as read at start, and what the files read through it hashed to.
#[derive(Default)]
pub struct IndexCache {
    entries: HashMap<Box<str>, Entry>,
    /// Each file read through the cache and the hash of its text, so that
    /// saving hashes nothing twice.
    hashes: Mutex<HashMap<FilePath, Digest256>>,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

impl IndexCache {
    /// The cache of the manuscript at `root`; empty when there is none, or
    /// when it is another build's, corrupt or unreadable.
    pub fn load(root: &Path) -> IndexCache {
        let entries = build_id()
            .and_then(|build| {
                let bytes = std::fs::read(root.join(CACHE_FILE)).ok()?;
                unseal::<Vec<Entry>>(&bytes, FORMAT, build)
            })
            .unwrap_or_default();
        IndexCache {
            entries: entries
                .into_iter()
                .map(|entry| (entry.path.clone().into_boxed_str(), entry))
                .collect(),
            ..IndexCache::default()
        }
    }

    /// The syntax of `text`, the file at `path`, when the cache holds it
    /// for exactly this text and its ranges fit it.
    pub fn syntax(&self, path: &FilePath, text: &str) -> Option<MarkdownSyntax> {
        let found = self
            .entry_for(path, text)
            .and_then(|entry| restore(entry, text));
        self.count(found.is_some());
        found
    }

    /// Counts `text`, the file at `path` parsed before the cache was read
    /// (a start's first diagnostics), as read through it: a hit when the
    /// cache holds this very text, so that an unchanged manuscript leaves
    /// the cache as it is.
    pub fn note_parsed(&self, path: &FilePath, text: &str) {
        self.count(self.entry_for(path, text).is_some());
    }

    /// The entry of `path` if it was saved for exactly `text`; the text's
    /// hash is kept for saving.
    fn entry_for(&self, path: &FilePath, text: &str) -> Option<&Entry> {
        let hash: Digest256 = Sha256::digest(text.as_bytes()).into();
        self.hashes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(path.clone(), hash);
        self.entries.get(&**path).filter(|entry| entry.hash == hash)
    }

    fn count(&self, hit: bool) {
        let counter = if hit { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Files whose syntax came from the cache.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }

    /// Files parsed because the cache did not hold their text.
    pub fn misses(&self) -> usize {
        self.misses.load(Ordering::Relaxed)
    }

    /// Whether saving would change the cache: a file was parsed, or the
    /// cache holds a file that was not read.
    pub fn is_stale(&self) -> bool {
        self.misses() > 0 || self.hits() != self.entries.len()
    }

    /// Makes the cache's folder. A server does it at `initialize`, before
    /// the editor watches the manuscript's folders: Eglot's shutdown gives
    /// the server a tenth of a second, and a folder that appears under a
    /// watched one in that time leaves the server killed.
    pub fn prepare(root: &Path) -> std::io::Result<()> {
        let folder = root.join(CACHE_FILE);
        std::fs::create_dir_all(folder.parent().expect("the cache file is in a folder"))
    }

    /// Writes the syntax of `files` (those analysed) atomically; a file not
    /// read through this cache is hashed here.
    pub fn save<'a>(
        &self,
        root: &Path,
        files: impl Iterator<Item = &'a SourceFile>,
    ) -> std::io::Result<()> {
        let Some(build) = build_id() else {
            return Ok(());
        };
        let hashes = self
            .hashes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let entries: Vec<Entry> = files
            .filter(|file| file.is_cached_syntax())
            .map(|file| {
                let hash = hashes
                    .get(&file.path)
                    .copied()
                    .unwrap_or_else(|| Sha256::digest(file.text.as_bytes()).into());
                save_entry(file, hash)
            })
            .collect();
        drop(hashes);
        let bytes = seal(FORMAT, build, &entries)?;
        write_in_cache_folder(root, CACHE_FILE, &bytes)
    }
}

/// Writes `bytes` to `relative` (a file of the cache's folder) under
/// `root` atomically, the folder made with its `.gitignore` when missing:
/// like any build cache, never committed with the manuscript.
pub(crate) fn write_in_cache_folder(
    root: &Path,
    relative: &str,
    bytes: &[u8],
) -> std::io::Result<()> {
    use std::io::Write;
    IndexCache::prepare(root)?;
    let path = root.join(relative);
    let folder = path.parent().expect("a cache file is in a folder");
    let ignore = folder.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(ignore, "# The index's cache, rebuilt when missing.\n*\n")?;
    }
    let mut temporary = tempfile::NamedTempFile::new_in(folder)?;
    temporary.write_all(bytes)?;
    temporary.as_file().sync_data()?;
    temporary.persist(&path).map_err(|error| error.error)?;
    Ok(())
}

/// This build's identity: its version and the executable's size and time,
/// so that a rebuild never reads an older build's cache. None when the
/// executable cannot be found: then nothing is cached.
pub(crate) fn build_id() -> Option<&'static str> {
    static BUILD: OnceLock<Option<String>> = OnceLock::new();
    BUILD
        .get_or_init(|| {
            let metadata = std::env::current_exe().ok()?.metadata().ok()?;
            let modified = metadata
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            Some(format!(
                "{} {} {}",
                env!("CARGO_PKG_VERSION"),
                metadata.len(),
                modified.as_nanos()
            ))
        })
        .as_deref()
}

/// A cache file's bytes: `entries` under a header of their format, the
/// build that wrote them and their SHA-256.
pub(crate) fn seal(format: u32, build: &str, entries: &impl Serialize) -> std::io::Result<Vec<u8>> {
    let entries = postcard::to_stdvec(entries).map_err(std::io::Error::other)?;
    let saved = Saved {
        format,
        build: build.to_owned(),
        checksum: Sha256::digest(&entries).into(),
        entries,
    };
    postcard::to_stdvec(&saved).map_err(std::io::Error::other)
}

/// The entries of a cache file [`seal`] wrote, when they are of `format`,
/// from this `build`, and whole; `None` otherwise.
pub(crate) fn unseal<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    format: u32,
    build: &str,
) -> Option<T> {
    let saved: Saved = postcard::from_bytes(bytes).ok()?;
    if saved.format != format || saved.build != build {
        return None;
    }
    let checksum: Digest256 = Sha256::digest(&saved.entries).into();
    if checksum != saved.checksum {
        return None;
    }
    postcard::from_bytes(&saved.entries).ok()
}

fn save_entry(file: &SourceFile, hash: Digest256) -> Entry {
    let span = |range: TextRange| (range.start as u32, range.end as u32);
    Entry {
        path: file.path.to_string(),
        hash,
        blocks: file
            .syntax
            .blocks
            .iter()
            .map(|block| {
                let (kind, level) = kind_code(block.kind);
                SavedBlock {
                    kind,
                    level,
                    range: span(block.range),
                    inline: span(block.inline),
                    list_depth: block.list_depth,
                }
            })
            .collect(),
        prose: file.syntax.prose.iter().map(|&range| span(range)).collect(),
    }
}

/// The syntax an entry holds, if every range fits `text`: within it, on
/// character boundaries, and the prose ranges sorted and apart.
fn restore(entry: &Entry, text: &str) -> Option<MarkdownSyntax> {
    let range = |(start, end): (u32, u32)| {
        let (start, end) = (start as usize, end as usize);
        (start <= end
            && end <= text.len()
            && text.is_char_boundary(start)
            && text.is_char_boundary(end))
        .then(|| TextRange::new(start, end))
    };
    let blocks = entry
        .blocks
        .iter()
        .map(|block| {
            Some(Block {
                kind: kind_from(block.kind, block.level)?,
                range: range(block.range)?,
                inline: range(block.inline)?,
                list_depth: block.list_depth,
            })
        })
        .collect::<Option<Vec<Block>>>()?;
    let prose = entry
        .prose
        .iter()
        .map(|&span| range(span))
        .collect::<Option<Vec<TextRange>>>()?;
    if prose.windows(2).any(|pair| pair[0].end > pair[1].start) {
        return None;
    }
    Some(MarkdownSyntax { blocks, prose })
}

fn kind_code(kind: BlockKind) -> (u8, u8) {
    match kind {
        BlockKind::Heading { level } => (0, level),
        BlockKind::Paragraph => (1, 0),
        BlockKind::ListItem => (2, 0),
        BlockKind::CodeBlock => (3, 0),
        BlockKind::HtmlBlock => (4, 0),
        BlockKind::Quote => (5, 0),
        BlockKind::Table => (6, 0),
        BlockKind::ThematicBreak => (7, 0),
        BlockKind::FrontMatter => (8, 0),
    }
}

fn kind_from(code: u8, level: u8) -> Option<BlockKind> {
    Some(match code {
        0 if (1..=6).contains(&level) => BlockKind::Heading { level },
        1 => BlockKind::Paragraph,
        2 => BlockKind::ListItem,
        3 => BlockKind::CodeBlock,
        4 => BlockKind::HtmlBlock,
        5 => BlockKind::Quote,
        6 => BlockKind::Table,
        7 => BlockKind::ThematicBreak,
        8 => BlockKind::FrontMatter,
        _ => return None,
    })
}

/// Reading a file with the cache's help.
impl SourceFile {
    /// Reads a file from disk, taking its syntax from `cache` when it holds
    /// this very text .
    pub fn read_cached(
        root: &Path,
        path: FilePath,
        paths: &PathsConfig,
        cache: Option<&IndexCache>,
    ) -> SourceFile {
        SourceFile::read_with(root, path, paths, |path, text, paths| {
            SourceFile::cached_or_parsed(path, text, paths, cache)
        })
    }

    /// Reads a file for the first diagnostics of a start: a card or the
    /// outline for the catalog alone where it can be
    /// ([`SourceFile::catalogued`]); any other file, or one only a parse can
    /// read, parsed, its syntax taken from `cache` only if it has already
    /// been read (never read for it: the whole cache costs more to read
    /// than the few such files do to parse).
    pub fn read_for_catalog(
        root: &Path,
        path: FilePath,
        paths: &PathsConfig,
        cache: Option<&LazyCache>,
    ) -> SourceFile {
        SourceFile::read_with(root, path, paths, |path, text, paths| {
            SourceFile::catalogued(path.clone(), text.clone(), paths).unwrap_or_else(|| {
                let cache = cache.and_then(|cache| cache.loaded()).map(|cache| &**cache);
                SourceFile::cached_or_parsed(path, text, paths, cache)
            })
        })
    }

    /// `text` with its syntax from `cache` when it holds this very text,
    /// else parsed.
    pub(super) fn cached_or_parsed(
        path: FilePath,
        text: Arc<str>,
        paths: &PathsConfig,
        cache: Option<&IndexCache>,
    ) -> SourceFile {
        let cached = cache
            .filter(|_| !is_too_large_to_analyse(text.len()))
            .and_then(|cache| cache.syntax(&path, &text));
        match cached {
            Some(syntax) => SourceFile::with_syntax(path, text, syntax, paths),
            None => SourceFile::parse(path, text, paths),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Workspace;
    use crate::index::test_support::example_copy;
    use crate::syntax::MarkdownParser;

    /// A copy of the example without a cache, loaded once (which saves one).
    fn cold() -> (tempfile::TempDir, Workspace) {
        let (dir, _) = example_copy();
        let _ = std::fs::remove_dir_all(dir.path().join(".control-room/index"));
        let workspace = Workspace::load(dir.path());
        (dir, workspace)
    }

    fn read_through(workspace: &Workspace, cache: &IndexCache) -> Vec<SourceFile> {
        let paths: Vec<FilePath> = workspace.files().map(|file| file.path.clone()).collect();
        workspace.read_files_cached(&paths, Some(cache))
    }

    fn assert_as_fresh(files: &[SourceFile]) {
        for file in files.iter().filter(|file| !file.is_unanalysed()) {
            assert_eq!(
                file.syntax,
                MarkdownParser::parse_fresh(&file.text),
                "{}",
                file.path
            );
        }
    }

    #[test]
    fn a_card_or_outline_read_for_the_catalog_alone_is_never_saved_as_its_syntax() {
        let (dir, workspace) = cold();
        let _ = std::fs::remove_dir_all(dir.path().join(".control-room/index"));
        let paths: Vec<FilePath> = workspace.files().map(|file| file.path.clone()).collect();
        let files = workspace.read_files_for_catalog(&paths, None);
        let catalogued: Vec<&SourceFile> = files.iter().filter(|file| file.catalogued).collect();
        assert!(catalogued.iter().any(|file| file.card().is_some()));
        assert!(
            catalogued
                .iter()
                .any(|file| matches!(file.content, crate::index::FileContent::Outline(_)))
        );
        IndexCache::default()
            .save(dir.path(), files.iter())
            .unwrap();
        let cache = IndexCache::load(dir.path());
        for file in catalogued {
            assert_eq!(cache.syntax(&file.path, &file.text), None, "{}", file.path);
        }
        assert_eq!(cache.hits(), 0);
        let parsed = read_through(&workspace, &cache);
        assert!(cache.hits() > 0, "the files that were parsed are saved");
        assert_as_fresh(&parsed);
    }

    #[test]
    fn a_file_only_a_parse_can_read_does_not_read_the_cache_before_a_starts_first_diagnostics() {
        // The anti-pattern sheet, which only a parse reads, read the whole
        // cache before every warm start's first diagnostics.
        let (dir, workspace) = cold();
        let mut paths: Vec<FilePath> = workspace.files().map(|file| file.path.clone()).collect();
        // A card that cannot be read, which the cache never holds.
        let unreadable = "Compendium/Characters/CHAR-unreadable.md";
        std::fs::write(dir.path().join(unreadable), b"---\nname: \xff\xfe\n---\n").unwrap();
        paths.push(unreadable.into());
        let lazy = LazyCache::new(dir.path());
        let files = workspace.read_files_for_catalog(&paths, Some(&lazy));
        assert!(files.iter().any(|file| file.catalogued));
        assert!(files.iter().any(|file| file.load_error.is_some()));
        // What the indexer counts once the cache is read.
        let parsed: Vec<&SourceFile> = files
            .iter()
            .filter(|file| file.is_cached_syntax())
            .collect();
        assert!(!parsed.is_empty());
        assert!(lazy.loaded().is_none(), "the cache was read");
        for file in parsed.iter().filter(|file| !file.is_unanalysed()) {
            assert_eq!(file.syntax, MarkdownParser::parse_fresh(&file.text));
        }

        // Read after them, it counts the files parsed as read through it:
        // an unchanged manuscript leaves it as it is.
        let cache = lazy.get();
        for file in &parsed {
            cache.note_parsed(&file.path, &file.text);
        }
        let catalogued: Vec<FilePath> = files
            .iter()
            .filter(|file| file.catalogued)
            .map(|file| file.path.clone())
            .collect();
        workspace.read_files_cached(&catalogued, Some(cache));
        assert_eq!(cache.misses(), 0);
        assert!(!cache.is_stale());
        // A file changed since is a miss.
        cache.note_parsed(&parsed[0].path, "Another text.");
        assert!(cache.is_stale());
    }

    #[test]
    fn a_restart_on_an_unchanged_manuscript_parses_nothing_and_reads_what_a_cold_start_read() {
        let (dir, workspace) = cold();
        assert!(dir.path().join(CACHE_FILE).is_file());
        let cache = IndexCache::load(dir.path());
        let files = read_through(&workspace, &cache);
        assert_eq!(cache.misses(), 0);
        assert_eq!(cache.hits(), files.len());
        assert!(!cache.is_stale());
        assert_as_fresh(&files);
        for file in &files {
            assert_eq!(Some(&**workspace.file(&file.path).unwrap()), Some(file));
        }
    }

    #[test]
    fn a_file_changed_since_the_cache_was_saved_is_parsed_again() {
        let (dir, workspace) = cold();
        let scene = "Story/Scenes/SCN-the-gate.md";
        let text = std::fs::read_to_string(dir.path().join(scene)).unwrap();
        let changed = text.replacen(
            "\n\n",
            "\n\n# A heading the cache never saw\n\n> Quoted.\n\n",
            1,
        );
        std::fs::write(dir.path().join(scene), changed).unwrap();
        let cache = IndexCache::load(dir.path());
        let files = read_through(&workspace, &cache);
        assert_eq!(cache.misses(), 1);
        assert!(cache.is_stale());
        assert_as_fresh(&files);
        // Loading saves it again: the next start hits every file.
        Workspace::load(dir.path());
        let again = IndexCache::load(dir.path());
        read_through(&workspace, &again);
        assert_eq!((again.misses(), again.is_stale()), (0, false));
    }

    #[test]
    fn a_corrupt_cache_is_ignored_and_rebuilt() {
        let (dir, workspace) = cold();
        let path = dir.path().join(CACHE_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x55;
        std::fs::write(&path, &bytes).unwrap();
        let cache = IndexCache::load(dir.path());
        let files = read_through(&workspace, &cache);
        assert_eq!(cache.hits(), 0);
        assert_as_fresh(&files);
        std::fs::write(&path, b"not a cache").unwrap();
        assert_eq!(IndexCache::load(dir.path()).entries.len(), 0);
        Workspace::load(dir.path());
        assert_eq!(IndexCache::load(dir.path()).entries.len(), files.len());
    }

    #[test]
    fn another_builds_cache_is_not_read() {
        let (dir, _) = cold();
        let path = dir.path().join(CACHE_FILE);
        let mut saved: Saved = postcard::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
        saved.build.push_str(" and another");
        std::fs::write(&path, postcard::to_stdvec(&saved).unwrap()).unwrap();
        assert!(IndexCache::load(dir.path()).entries.is_empty());
    }

    #[test]
    fn an_entry_whose_ranges_do_not_fit_its_text_is_parsed_again() {
        let text = "# Title\n\nOne paragraph — with a dash.\n";
        let path: FilePath = "Story/Scenes/SCN-a.md".into();
        let file = SourceFile::parse(path.clone(), text.into(), &Default::default());
        let hash: Digest256 = Sha256::digest(text.as_bytes()).into();
        let good = save_entry(&file, hash);
        assert_eq!(restore(&good, text), Some(file.syntax.clone()));
        let mut beyond = save_entry(&file, hash);
        beyond.prose[0].1 = text.len() as u32 + 1;
        let mut inside_a_char = save_entry(&file, hash);
        inside_a_char.blocks[1].range.1 = text.find('—').unwrap() as u32 + 1;
        let mut unknown_kind = save_entry(&file, hash);
        unknown_kind.blocks[0].kind = 200;
        let mut overlapping = save_entry(&file, hash);
        overlapping.prose = vec![(9, 20), (15, 25)];
        for entry in [beyond, inside_a_char, unknown_kind, overlapping] {
            assert_eq!(restore(&entry, text), None);
            let cache = IndexCache {
                entries: HashMap::from([(Box::from(&*path), entry)]),
                ..IndexCache::default()
            };
            assert_eq!(cache.syntax(&path, text), None);
            assert_eq!(cache.misses(), 1);
        }
    }
}
