//! The whole manuscript: every file, the catalog, and the mention index.
//!
//! A [`Workspace`] is a value: cloning it costs a few reference counts (its
//! maps by file are persistent maps, which share all but the path to what
//! an edit changed, and the rest is in `Arc`s) and gives an immutable
//! snapshot that checks and queries can use off the server's lock while the
//! next edit is applied to the original.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::cache::IndexCache;
use super::calendar::Calendar;
use super::catalog::Catalog;
use super::config::{CONFIG_FILE, Config, ConfigError, PathsConfig};
use super::file::{FilePath, SourceFile};
use super::gender::{Gender, PronounTally, pronoun_tally};
use super::lexicon::Lexicon;
use super::mentions::Mention;
use super::variants::{NearName, Variants};

pub use super::file::{ByFile, Files};

/// What a file's prose says of the cards' names: its mentions and its near misses.
type FileNames = (FilePath, Arc<[Mention]>, Arc<[NearName]>, PronounTally);

#[derive(Clone, Debug, Default)]
pub struct Workspace {
    root: Arc<PathBuf>,
    config: Arc<Config>,
    config_error: Option<ConfigError>,
    /// The calendar of `[calendar]`, which the story clock counts in.
    calendar: Arc<Calendar>,
    files: Files,
    mentions: ByFile<Arc<[Mention]>>,
    /// Each scene's capitalised words near a name, found with its mentions.
    near_names: ByFile<Arc<[NearName]>>,
    /// Each file's subject pronouns after its names, found with its mentions.
    pronouns: ByFile<PronounTally>,
    /// The manuscript's consistent spellings of names, summed on first use.
    variants: Arc<OnceLock<Variants>>,
    /// The genders the prose gives characters whose cards say none, read
    /// on first use after a change.
    genders_in_prose: Arc<OnceLock<HashMap<FilePath, Gender>>>,
    catalog: Arc<Catalog>,
    /// Severities set in the editor (`controlRoom.diagnostics.severity`),
    /// which take precedence over `control-room.toml`.
    editor_severity: Arc<BTreeMap<String, String>>,
    /// Grammar rules turned on or off in the editor
    /// (`controlRoom.language.rules`), over `[language.rules]`.
    editor_rules: Arc<BTreeMap<String, bool>>,
    /// The text of the writer's dictionary file (`[language] dictionary`).
    dictionary: Arc<str>,
    /// The manuscript's own words, found on first use after a change.
    lexicon: Arc<OnceLock<Lexicon>>,
    /// The files whose grammar is checked when `[language] grammar` is
    /// `open`: the scenes open in the editor.
    proofread: Arc<BTreeSet<FilePath>>,
    /// The file the writer is typing in.
    typing: Option<FilePath>,
}

/// The manuscript root `start` lies in: the nearest folder, `start` itself
/// or above it, holding `control-room.toml`, or both `Story/` and
/// `Compendium/`. The editors' plugins look for the same markers.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let marked = dir.join(CONFIG_FILE).is_file()
            || (dir.join("Story").is_dir() && dir.join("Compendium").is_dir());
        marked.then(|| dir.to_path_buf())
    })
}

impl Workspace {
    /// Where the scaffold of scene `id` is (`SCN-x.scaffold.md`): beside its
    /// file, or in the scenes folder when it has none yet.
    pub fn scaffold_path(&self, id: &str) -> FilePath {
        let folder = match self.catalog().scene(id) {
            Some(file) => file
                .path
                .rsplit_once('/')
                .map_or(String::new(), |(folder, _)| folder.to_owned()),
            None => self.config().paths.scenes.trim_end_matches('/').to_owned(),
        };
        let name = format!("{id}{}", super::file::SCAFFOLD_SUFFIX);
        if folder.is_empty() {
            name.into()
        } else {
            format!("{folder}/{name}").into()
        }
    }

    /// The scaffold of scene `id`, when the writer has one.
    pub fn scaffold(&self, id: &str) -> Option<&Arc<SourceFile>> {
        self.file(&self.scaffold_path(id))
    }

    /// An empty workspace at `root` with its configuration read.
    pub fn new(root: &Path) -> Workspace {
        let (config, config_error) = match std::fs::read_to_string(root.join(CONFIG_FILE)) {
            Ok(text) => Config::parse(&text),
            Err(_) => (Config::default(), None),
        };
        let mut workspace = Workspace {
            root: Arc::new(root.to_path_buf()),
            calendar: Arc::new(Calendar::new(&config.calendar)),
            config: Arc::new(config),
            config_error,
            ..Workspace::default()
        };
        workspace.read_dictionary();
        workspace
    }

    /// Discovers, reads and indexes every manuscript file under `root`.
    pub fn load(root: &Path) -> Workspace {
        let mut workspace = Workspace::new(root);
        let paths = workspace.discover();
        let cache = IndexCache::load(root);
        let files = workspace.read_files_cached(&paths, Some(&cache));
        workspace.insert_files(files);
        if cache.is_stale() {
            // The cache only saves time: a folder that cannot be written
            // is indexed afresh next time.
            let _ = cache.save(root, workspace.files().map(|file| &**file));
        }
        workspace
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn config_error(&self) -> Option<&ConfigError> {
        self.config_error.as_ref()
    }

    /// The severity setting for a diagnostic code: the editor's, else the
    /// configuration file's (`error`, `warning`, `information`, `hint`, `off`).
    pub fn severity_setting(&self, code: &str) -> Option<&str> {
        self.editor_severity
            .get(code)
            .or_else(|| self.config.diagnostics.severity.get(code))
            .map(String::as_str)
    }

    pub fn editor_severity(&self) -> &Arc<BTreeMap<String, String>> {
        &self.editor_severity
    }

    /// Replaces the editor's severity settings.
    pub fn set_editor_severity(&mut self, severity: Arc<BTreeMap<String, String>>) {
        self.editor_severity = severity;
    }

    /// The grammar rules the editor turns on or off.
    pub fn editor_rules(&self) -> &BTreeMap<String, bool> {
        &self.editor_rules
    }

    /// Replaces the editor's grammar rules.
    pub fn set_editor_rules(&mut self, rules: Arc<BTreeMap<String, bool>>) {
        self.editor_rules = rules;
    }

    /// Whether `other` is this very state of the manuscript (a clone of it,
    /// neither changed since): everything read from the files and the
    /// configuration is shared, not compared. A cache keyed by a snapshot
    /// holds a clone, so a change to either makes new maps and `false`.
    pub fn is_same_state(&self, other: &Workspace) -> bool {
        Arc::ptr_eq(&self.root, &other.root)
            && Arc::ptr_eq(&self.config, &other.config)
            && Arc::ptr_eq(&self.calendar, &other.calendar)
            && Arc::ptr_eq(&self.catalog, &other.catalog)
            && Arc::ptr_eq(&self.dictionary, &other.dictionary)
            && self.files.ptr_eq(&other.files)
            && self.mentions.ptr_eq(&other.mentions)
            && self.near_names.ptr_eq(&other.near_names)
    }

    /// A hash of everything that decides severities and the checks'
    /// settings, for caches of diagnostics.
    pub fn settings_fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (&*self.editor_severity, &self.config.diagnostics.severity).hash(&mut hasher);
        (&*self.editor_rules, &self.config.language).hash(&mut hasher);
        hasher.finish()
    }

    /// The manuscript's own words: the cards', the dictionary file's and
    /// the configuration's.
    pub fn lexicon(&self) -> &Lexicon {
        self.lexicon.get_or_init(|| {
            Lexicon::build(&self.catalog, &self.dictionary, &self.config.language.words)
        })
    }

    /// The writer's dictionary file, relative to the root.
    pub fn dictionary_path(&self) -> &str {
        &self.config.language.dictionary
    }

    /// Reads the writer's dictionary file (a missing one has no words).
    pub fn read_dictionary(&mut self) {
        let path = self.root.join(&self.config.language.dictionary);
        let text = std::fs::read_to_string(path).unwrap_or_default();
        self.set_dictionary(&text);
    }

    /// Replaces the text of the writer's dictionary file (after a word was
    /// added to it).
    pub fn set_dictionary(&mut self, text: &str) {
        if *self.dictionary != *text {
            self.dictionary = text.into();
            self.lexicon = Arc::default();
        }
    }

    /// Whether the grammar of `path` is checked: every scene when
    /// `[language] grammar` is `all`, the scenes open in the editor when it
    /// is `open`, none when it is `off`.
    pub fn proofreads(&self, path: &str) -> bool {
        use super::config::GrammarScope;
        match self.config.language.grammar {
            GrammarScope::All => true,
            GrammarScope::Open => self.proofread.contains(path),
            GrammarScope::Off => false,
        }
    }

    /// Whether `path` is the file the writer is typing in: the checks
    /// keep what they read of it line by line ([`crate::text::line_memo`]).
    pub fn is_typed_in(&self, path: &str) -> bool {
        self.typing.as_deref() == Some(path)
    }

    /// Sets the file the writer is typing in (`None`: none).
    pub fn set_typing(&mut self, path: Option<FilePath>) {
        self.typing = path;
    }

    /// Sets the files open in the editor, whose grammar is checked when
    /// `[language] grammar` is `open`.
    pub fn set_proofread(&mut self, paths: BTreeSet<FilePath>) {
        if *self.proofread != paths {
            self.proofread = Arc::new(paths);
        }
    }

    /// Checks grammar everywhere, whatever the configuration says
    /// (`control-room check --grammar`).
    pub fn proofread_everything(&mut self) {
        let mut config = (*self.config).clone();
        config.language.grammar = super::config::GrammarScope::All;
        self.config = Arc::new(config);
    }

    /// The story clock: dated scenes, the roads between places, itineraries.
    pub fn clock(&self) -> &super::clock::Clock {
        self.catalog.clock()
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The Markdown files under the root, respecting `.gitignore`, without
    /// hidden folders (`.control-room/`, `.git/`).
    pub fn discover(&self) -> Vec<FilePath> {
        super::discover::markdown_files(&self.root)
    }

    /// Reads and parses files in parallel; never fails (see [`SourceFile::read`]).
    pub fn read_files(&self, paths: &[FilePath]) -> Vec<SourceFile> {
        self.read_files_cached(paths, None)
    }

    /// Reads and parses files in parallel, taking each file's syntax from
    /// `cache` when it holds its text.
    pub fn read_files_cached(
        &self,
        paths: &[FilePath],
        cache: Option<&IndexCache>,
    ) -> Vec<SourceFile> {
        self.read_each(paths, |root, path, config| {
            SourceFile::read_cached(root, path, config, cache)
        })
    }

    /// Reads `paths` for the first diagnostics of a start: the cards and the
    /// outline for the catalog alone where they can be, the others parsed,
    /// the cache not read for them (see [`SourceFile::read_for_catalog`]);
    /// read them again through the cache before the index is done.
    pub fn read_files_for_catalog(
        &self,
        paths: &[FilePath],
        cache: Option<&super::cache::LazyCache>,
    ) -> Vec<SourceFile> {
        self.read_each(paths, |root, path, config| {
            SourceFile::read_for_catalog(root, path, config, cache)
        })
    }

    /// `read` of every path, in parallel.
    fn read_each(
        &self,
        paths: &[FilePath],
        read: impl Fn(&Path, FilePath, &PathsConfig) -> SourceFile + Sync,
    ) -> Vec<SourceFile> {
        paths
            .par_iter()
            .map(|path| read(&self.root, path.clone(), &self.config.paths))
            .collect()
    }

    /// Adds or replaces files, then brings the catalog and mentions up to date.
    pub fn insert_files(&mut self, files: Vec<SourceFile>) {
        self.insert_shared(files.into_iter().map(Arc::new));
    }

    fn insert_shared(&mut self, files: impl IntoIterator<Item = Arc<SourceFile>>) {
        for file in files {
            self.mentions.remove(&file.path);
            self.near_names.remove(&file.path);
            self.pronouns.remove(&file.path);
            self.files.insert(file.path.clone(), file);
        }
        self.refresh();
    }

    /// Adds or replaces one file. A scene whose prose alone changed (what
    /// typing does) leaves the catalog as it was but for the file's
    /// `Arc`s, and its own mentions are found again.
    pub fn insert_file(&mut self, file: SourceFile) {
        let file = Arc::new(file);
        let catalog = self
            .files
            .get(&file.path)
            .and_then(|old| self.catalog.with_prose_changed(old, &file));
        let Some(catalog) = catalog else {
            self.insert_shared([file]);
            return;
        };
        self.catalog = Arc::new(catalog);
        self.variants = Arc::default();
        let old = self.files.get(&file.path);
        let kept = old.zip(
            self.mentions
                .get(&file.path)
                .zip(self.near_names.get(&file.path)),
        );
        let rescanned = kept.and_then(|(old, (mentions, near))| {
            super::rescan::names_after_edit(&self.catalog, old, &file, mentions, near)
        });
        let (path, mentions, near, pronouns) = match rescanned {
            Some((mentions, near)) => {
                let pronouns = pronoun_tally(&file.text, &mentions);
                (file.path.clone(), mentions.into(), near.into(), pronouns)
            }
            None => names_in(&self.catalog, &file),
        };
        self.mentions.insert(path.clone(), mentions);
        self.near_names.insert(path.clone(), near);
        // Typing seldom changes what the prose says of anyone's gender: the
        // genders read stand unless it did.
        if self.pronouns.get(&path) != Some(&pronouns) {
            self.genders_in_prose = Arc::default();
        }
        self.pronouns.insert(path, pronouns);
        self.files.insert(file.path.clone(), file);
    }

    pub fn remove_file(&mut self, path: &str) -> Option<Arc<SourceFile>> {
        let removed = self.files.remove(path)?;
        self.mentions.remove(path);
        self.near_names.remove(path);
        self.pronouns.remove(path);
        self.refresh();
        Some(removed)
    }

    pub fn file(&self, path: &str) -> Option<&Arc<SourceFile>> {
        self.files.get(path)
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl ExactSizeIterator<Item = &Arc<SourceFile>> {
        self.files.values()
    }

    /// The mentions of card names in one file's prose.
    pub fn mentions(&self, path: &str) -> &[Mention] {
        self.mentions.get(path).map_or(&[], |mentions| mentions)
    }

    /// The manuscript's consistent spellings of names that differ from their cards.
    pub fn variants(&self) -> &Variants {
        self.variants.get_or_init(|| {
            Variants::build(&self.files, &self.near_names, &self.mentions, &self.catalog)
        })
    }

    /// The gender of a character card: the card's (see
    /// [`Catalog::gender`]), else the one the book's own prose gives it
    /// ([`super::gender::genders_in_prose`]). `None` for no character card,
    /// `Some(None)` when neither says.
    pub fn gender(&self, card: &str) -> Option<Option<Gender>> {
        let declared = self.catalog.gender(card)?;
        Some(declared.or_else(|| self.genders_in_prose().get(card).copied()))
    }

    /// A hash of what the prose checks read of a character card (see
    /// [`Catalog::card_facts`]), with the gender the prose gives it when
    /// the card gives none; `None` for other files.
    pub fn card_facts(&self, card: &str) -> Option<u64> {
        let facts = self.catalog.card_facts(card)?;
        Some(match self.catalog.gender(card) {
            Some(None) => {
                let read = self
                    .genders_in_prose()
                    .get(card)
                    .map_or(0, |gender| *gender as u64 + 1);
                facts.wrapping_add(read.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            }
            _ => facts,
        })
    }

    fn genders_in_prose(&self) -> &HashMap<FilePath, Gender> {
        self.genders_in_prose.get_or_init(|| {
            let unknown = |card: &FilePath| self.catalog.gender(card) == Some(None);
            if !self.catalog.has_unknown_gender() {
                return HashMap::new();
            }
            super::gender::genders_in_prose(self.pronouns.values(), unknown)
        })
    }

    /// Whether the manuscript's prose capitalises `word` inside a sentence
    /// somewhere: a name as the book uses it, card or no card.
    pub fn is_name_in_prose(&self, word: &str) -> bool {
        self.files.values().any(|file| {
            file.names_in_prose
                .get_or_init(|| super::variants::names_in_prose(file))
                .binary_search_by(|name| (**name).cmp(word))
                .is_ok()
        })
    }

    /// Every mention of `card` across the manuscript, in path order.
    pub fn mentions_of<'a>(
        &'a self,
        card: &'a str,
    ) -> impl Iterator<Item = (&'a FilePath, &'a Mention)> + 'a {
        self.files.keys().flat_map(move |path| {
            self.mentions(path)
                .iter()
                .filter(move |mention| &*mention.card == card)
                .map(move |mention| (path, mention))
        })
    }

    /// The path of `absolute` relative to the root, with `/` separators.
    pub fn relative_path(&self, absolute: &Path) -> Option<FilePath> {
        super::file::relative_path(&self.root, absolute)
    }

    pub fn absolute_path(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    fn refresh(&mut self) {
        let catalog = Catalog::build(&self.files, Some(&self.catalog), &self.calendar);
        if !catalog.same_names_as(&self.catalog) {
            self.mentions.clear();
            self.near_names.clear();
            self.pronouns.clear();
            // The lexicon reads only the cards' names and aliases.
            self.lexicon = Arc::default();
        }
        self.catalog = Arc::new(catalog);
        self.variants = Arc::default();
        self.genders_in_prose = Arc::default();
        let missing: Vec<&Arc<SourceFile>> = self
            .files
            .values()
            .filter(|file| !self.mentions.contains_key(&file.path))
            .collect();
        let computed: Vec<FileNames> = missing
            .par_iter()
            .map(|file| names_in(&self.catalog, file))
            .collect();
        for (path, mentions, near, pronouns) in computed {
            self.near_names.insert(path.clone(), near);
            self.pronouns.insert(path.clone(), pronouns);
            self.mentions.insert(path, mentions);
        }
    }
}

/// What `file`'s prose says of the catalog's names: its mentions and its
/// near misses.
fn names_in(catalog: &Catalog, file: &SourceFile) -> FileNames {
    let mentions = catalog.matcher().find(&file.text, &file.syntax);
    let pronouns = pronoun_tally(&file.text, &mentions);
    (
        file.path.clone(),
        mentions.into(),
        super::variants::near_names(file, catalog.name_words()).into(),
        pronouns,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::index::config::PathsConfig;

    /// A scene opened while a start read the cards on rayon's pool went
    /// into the index through `rayon::join` (a catalog whose names had not
    /// changed, nothing to build beside it), which, from a thread outside
    /// the pool, waited for the pool to finish the read: up to 7 ms of the
    /// first diagnostics, the session locked meanwhile. With the pool's
    /// every thread held, one file must still go in (one file's names are
    /// found on the calling thread: rayon splits no work of one item).
    #[test]
    fn a_file_opened_while_rayons_pool_is_busy_goes_in_without_waiting_for_it() {
        let paths = PathsConfig::default();
        let folder = tempfile::tempdir().unwrap();
        let mut workspace = Workspace::new(folder.path());
        let card = "---\nname: Iria Vell\naliases: [Iria]\n---\n\n# Iria Vell\n\nKeeper.\n";
        workspace.insert_files(vec![SourceFile::parse(
            "Compendium/Characters/CHAR-iria.md".into(),
            card.into(),
            &paths,
        )]);
        let scene = "---\nid: SCN-one\npov: Iria Vell\n---\n\n# One\n\nIria waited.\n";
        let scene = SourceFile::parse("Story/Scenes/SCN-one.md".into(), scene.into(), &paths);

        let held = crate::index::test_support::hold_rayons_pool();
        let (inserted, answer) = mpsc::channel();
        std::thread::spawn(move || {
            workspace.insert_files(vec![scene]);
            let _ = inserted.send(workspace.mentions("Story/Scenes/SCN-one.md").len());
        });
        let answered = answer.recv_timeout(Duration::from_secs(5));
        drop(held);
        assert_eq!(answered, Ok(1), "the file waited for rayon's pool");
    }
}
