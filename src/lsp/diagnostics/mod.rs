//! Diagnostics for the editor: cached per file, recomputed on snapshots,
//! pushed debounced with the document version ([`publish`]), or pulled;
//! either way assembled by [`assemble`].
//!
//! A file's cached diagnostics stay valid while the file (the same `Arc`) and
//! its [`checks::dependency_key`] are unchanged, so an edit re-checks the
//! edited file and the files that read what changed: a card's eyes, the
//! scenes that mention it; the outline's order, the scenes whose preceding
//! deaths or dates moved; a name, everything.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use tower_lsp_server::ls_types as lsp;

use super::convert;

pub mod assemble;
pub mod publish;
use crate::checks;
use crate::health::{Health, Measures};
use crate::index::{FilePath, SourceFile, Workspace};
use crate::lsp::shared::lock;
use crate::text::PositionEncoding;

/// Reads the manuscript from disk again, checks every file and answers how
/// many problems it has (see [`summary`]).
pub const CHECK_WORKSPACE: &str = "controlRoom.checkWorkspace";

/// What `controlRoom.checkWorkspace` answers: the files checked, how many of
/// them have diagnostics, and the diagnostics by severity and by code.
pub fn summary(checked: &[(FilePath, Arc<Vec<lsp::Diagnostic>>)]) -> serde_json::Value {
    let mut severities = [0usize; 4];
    let mut by_code: BTreeMap<String, usize> = BTreeMap::new();
    for diagnostic in checked
        .iter()
        .flat_map(|(_, diagnostics)| diagnostics.iter())
    {
        let index = match diagnostic.severity {
            Some(lsp::DiagnosticSeverity::ERROR) => 0,
            Some(lsp::DiagnosticSeverity::WARNING) | None => 1,
            Some(lsp::DiagnosticSeverity::INFORMATION) => 2,
            _ => 3,
        };
        severities[index] += 1;
        let code = match &diagnostic.code {
            Some(lsp::NumberOrString::String(code)) => code.clone(),
            Some(lsp::NumberOrString::Number(code)) => code.to_string(),
            None => "unknown".to_owned(),
        };
        *by_code.entry(code).or_default() += 1;
    }
    let [errors, warnings, information, hints] = severities;
    serde_json::json!({
        "files": checked.len(),
        "files_with_problems": checked.iter().filter(|(_, diagnostics)| !diagnostics.is_empty()).count(),
        "errors": errors,
        "warnings": warnings,
        "information": information,
        "hints": hints,
        "by_code": by_code,
    })
}

struct Published {
    diagnostics: Arc<Vec<lsp::Diagnostic>>,
    version: Option<i32>,
    pass: u64,
    /// False when the pass that computed them left them for a later one
    /// without sending them (see [`DiagnosticsCache::left_unsent`]).
    sent: bool,
}

struct CacheEntry {
    file: Arc<SourceFile>,
    key: u64,
    diagnostics: Arc<Vec<lsp::Diagnostic>>,
}

/// What a pass does of the story's health, which reads the whole book.
#[derive(Clone, Copy)]
pub enum HealthPass<'a> {
    /// Nothing (the workspace is not whole yet).
    Skip,
    /// The health's diagnostics of the last measure, unchanged: the
    /// edited file's own are sent at once, and [`refresh_health`]
    /// follows with what the edit changed of the health.
    Last,
    /// Measured afresh through the memo, then added.
    Fresh(&'a std::sync::Mutex<Measures>),
}

/// Passes go through the open documents one at a time, and through the
/// rest of the manuscript one at a time: a pass for the scene the writer
/// opens waits only for another such pass, never for one over the whole
/// manuscript, and twenty scenes opened at once are not checked twenty
/// times over: a pass that finds a later one waiting leaves its work to it.
#[derive(Default)]
pub struct Gates {
    pub open: tokio::sync::Mutex<()>,
    pub rest: tokio::sync::Mutex<()>,
    /// Passes asked for so far; the last one asked is the one that runs.
    pub asked: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
pub struct DiagnosticsCache {
    pub gates: Arc<Gates>,
    /// Each file's checks key, from the last pass that computed it.
    keys: HashMap<FilePath, u64>,
    /// The story's health's diagnostics of each file, as last measured
    /// (shared: a pass of the open documents reads it, never copies it).
    book: Arc<HashMap<FilePath, Vec<lsp::Diagnostic>>>,
    entries: HashMap<FilePath, CacheEntry>,
    /// What the client was last sent, per file (push mode): the
    /// diagnostics, the document version and the pass they were computed in.
    published: HashMap<FilePath, Published>,
    /// How many files the last `compute` had to check afresh.
    pub last_recomputed: usize,
    /// Set when the configuration file's problem was last published.
    config_published: Option<Vec<lsp::Diagnostic>>,
    /// What the client was last sent for each open recipe file, and for which version.
    recipes_published: HashMap<FilePath, (Vec<lsp::Diagnostic>, i32)>,
}

/// The diagnostics of the given files (all files when `None`), recomputing
/// only what the cache cannot vouch for. The story's health's diagnostics
/// are added as `health` says.
///
/// The cache's lock is held only to read and store entries: the checks and
/// the health's measures run outside it, so a pass for the document the
/// writer opens never waits behind a pass over the whole manuscript.
pub fn compute(
    cache: &Mutex<DiagnosticsCache>,
    workspace: &Workspace,
    only: Option<&[FilePath]>,
    encoding: PositionEncoding,
    health: HealthPass,
) -> Vec<(FilePath, Arc<Vec<lsp::Diagnostic>>)> {
    compute_unless(cache, workspace, only, encoding, health, &|| false)
        .expect("a pass nothing stops ends")
}

/// [`compute`], given up as soon as `stop` says so (the writer typed: a
/// newer pass will do the work on a newer snapshot), between one file's
/// checks and the next: `None` then. The files checked before it stopped
/// are kept in the cache, so a pass that keystrokes keep stopping still
/// gets through the manuscript, a few files at a time.
pub fn compute_unless(
    cache: &Mutex<DiagnosticsCache>,
    workspace: &Workspace,
    only: Option<&[FilePath]>,
    encoding: PositionEncoding,
    health: HealthPass,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Vec<(FilePath, Arc<Vec<lsp::Diagnostic>>)>> {
    let files: Vec<&Arc<SourceFile>> = match only {
        Some(paths) => paths
            .iter()
            .filter_map(|path| workspace.file(path))
            .collect(),
        None => workspace.files().collect(),
    };
    let lone = lone_changed(cache, &files);
    let vouchable: Vec<&Arc<SourceFile>> = files
        .iter()
        .copied()
        .filter(|file| lone.is_none_or(|lone| !Arc::ptr_eq(lone, file)))
        .collect();
    // Keys in parallel: on a large manuscript this is most of an edit's cost.
    let keyed: Vec<(&Arc<SourceFile>, u64)> = vouchable
        .par_iter()
        .map(|file| (*file, checks::dependency_key(workspace, file)))
        .collect();
    // What the cache vouches for (taken now: another pass may replace an
    // entry meanwhile), and what must be checked afresh.
    let (mut known, stale) = {
        let mut cache = lock(cache);
        cache
            .keys
            .extend(keyed.iter().map(|(file, key)| (file.path.clone(), *key)));
        let mut known: HashMap<FilePath, Arc<Vec<lsp::Diagnostic>>> = HashMap::new();
        let mut stale: Vec<(&Arc<SourceFile>, Option<u64>)> = Vec::new();
        for (file, key) in &keyed {
            match cache.entries.get(&file.path) {
                Some(entry) if Arc::ptr_eq(&entry.file, file) && entry.key == *key => {
                    known.insert(file.path.clone(), entry.diagnostics.clone());
                }
                _ => stale.push((*file, Some(*key))),
            }
        }
        stale.extend(lone.map(|file| (file, None)));
        (known, stale)
    };
    let check = |file: &SourceFile| -> Vec<lsp::Diagnostic> {
        let mut convert = convert::Diagnostics::new(workspace, encoding);
        checks::check_file(workspace, &file.path)
            .iter()
            .map(|diagnostic| convert.convert(diagnostic))
            .collect()
    };
    if stop() {
        return None;
    }
    // Indexed (a `filter` would collect through a linked list of vectors):
    // a file not checked, the pass stopped first, is `None`.
    let fresh: Vec<Option<(FilePath, CacheEntry)>> = stale
        .par_iter()
        .map(|(file, key)| {
            if stop() {
                return None;
            }
            let (key, diagnostics) = match key {
                Some(key) => (*key, check(file)),
                // The key while the checks read the prose, before their halves.
                None => {
                    let (diagnostics, key) =
                        rayon::join(|| check(file), || checks::dependency_key(workspace, file));
                    (key, diagnostics)
                }
            };
            Some((
                file.path.clone(),
                CacheEntry {
                    file: Arc::clone(file),
                    key,
                    diagnostics: Arc::new(diagnostics),
                },
            ))
        })
        .collect();
    let keys = {
        let mut cache = lock(cache);
        cache.last_recomputed = fresh.iter().flatten().count();
        for (path, entry) in fresh.into_iter().flatten() {
            cache.keys.insert(path.clone(), entry.key);
            known.insert(path.clone(), entry.diagnostics.clone());
            cache.entries.insert(path, entry);
        }
        if only.is_none() {
            cache
                .entries
                .retain(|path, _| workspace.file(path).is_some());
            cache.keys.retain(|path, _| workspace.file(path).is_some());
        }
        matches!(health, HealthPass::Fresh(_)).then(|| cache.keys.clone())
    };
    if stop() {
        return None;
    }
    let book = match (health, keys) {
        (HealthPass::Fresh(measures), Some(keys)) => {
            let book = Arc::new(measure_health(workspace, encoding, measures, &keys));
            lock(cache).book = book.clone();
            book
        }
        (HealthPass::Skip, _) => Arc::default(),
        _ => lock(cache).book.clone(),
    };
    let diagnostics = files
        .iter()
        .map(|file| {
            let checked = &known[&file.path];
            let diagnostics = match book.get(&file.path) {
                Some(more) => Arc::new(checked.iter().chain(more).cloned().collect()),
                None => checked.clone(),
            };
            (file.path.clone(), diagnostics)
        })
        .collect();
    Some(diagnostics)
}

/// The one file among `files` whose last entry is not of this very file
/// (the one the writer types in), if only one is: checked afresh whatever
/// its key, its key is found beside its checks, not before them. Several
/// such (a start, files opened together) fill the cores one file a thread,
/// keys first: a thread waiting for a key would take up another file's
/// checks, and hold both files' prose at once.
fn lone_changed<'f>(
    cache: &Mutex<DiagnosticsCache>,
    files: &[&'f Arc<SourceFile>],
) -> Option<&'f Arc<SourceFile>> {
    let cache = lock(cache);
    let mut changed = files.iter().filter(|file| {
        !cache
            .entries
            .get(&file.path)
            .is_some_and(|entry| Arc::ptr_eq(&entry.file, file))
    });
    match (changed.next(), changed.next()) {
        (Some(file), None) => Some(*file),
        _ => None,
    }
}

/// The story's health's diagnostics of each file, measured through
/// `measures` with the checks' keys of the last pass; none when the writer
/// turned them all off.
fn measure_health(
    workspace: &Workspace,
    encoding: PositionEncoding,
    measures: &Mutex<Measures>,
    keys: &HashMap<FilePath, u64>,
) -> HashMap<FilePath, Vec<lsp::Diagnostic>> {
    let mut book: HashMap<FilePath, Vec<lsp::Diagnostic>> = HashMap::new();
    if crate::health::diagnostics_off(workspace) {
        return book;
    }
    let mut measures = lock(measures);
    let report = Health::check_keyed(workspace, &mut measures, &|file| {
        keys.get(&file.path)
            .copied()
            .unwrap_or_else(|| checks::dependency_key(workspace, file))
    });
    let mut convert = convert::Diagnostics::new(workspace, encoding);
    for diagnostic in report.diagnostics(workspace) {
        book.entry(diagnostic.path.clone())
            .or_default()
            .push(convert.convert(&diagnostic));
    }
    book
}

/// After a pass that showed the last health ([`HealthPass::Last`]): the
/// health measured afresh (outside the cache's lock), and each file whose
/// diagnostics it changed, with its checks' diagnostics (cached) and its new
/// health's.
pub fn refresh_health(
    cache: &Mutex<DiagnosticsCache>,
    workspace: &Workspace,
    encoding: PositionEncoding,
    measures: &Mutex<Measures>,
) -> Vec<(FilePath, Arc<Vec<lsp::Diagnostic>>)> {
    let keys = lock(cache).keys.clone();
    let fresh = measure_health(workspace, encoding, measures, &keys);
    let mut cache = lock(cache);
    let mut changed: Vec<FilePath> = fresh
        .keys()
        .chain(cache.book.keys())
        .filter(|path| fresh.get(*path) != cache.book.get(*path))
        .cloned()
        .collect();
    changed.sort();
    changed.dedup();
    cache.book = Arc::new(fresh);
    changed
        .into_iter()
        .filter_map(|path| {
            let checked = &cache.entries.get(&path)?.diagnostics;
            let diagnostics: Vec<lsp::Diagnostic> = checked
                .iter()
                .chain(cache.book.get(&path).into_iter().flatten())
                .cloned()
                .collect();
            Some((path, Arc::new(diagnostics)))
        })
        .collect()
}

impl DiagnosticsCache {
    /// Of `computed`, what differs from what the client last saw, plus empty
    /// lists for files that vanished (push mode bookkeeping). An open document
    /// is also republished when its version moved on, even with the same
    /// diagnostics, so the client knows they are current for what it shows.
    /// A file a later pass (a greater `pass`) already published is left to it.
    pub fn changes_to_publish(
        &mut self,
        workspace: &Workspace,
        computed: Vec<(FilePath, Arc<Vec<lsp::Diagnostic>>)>,
        complete: bool,
        versions: &HashMap<FilePath, i32>,
        pass: u64,
    ) -> Vec<(FilePath, Arc<Vec<lsp::Diagnostic>>, Option<i32>)> {
        let mut changes = Vec::new();
        for (path, diagnostics) in computed {
            let version = versions.get(&path).copied();
            let unchanged = match self.published.get(&path) {
                Some(seen) if seen.pass > pass => true,
                Some(seen) if !seen.sent => false,
                Some(seen) => seen.diagnostics == diagnostics && seen.version == version,
                None => diagnostics.is_empty() && version.is_none(),
            };
            if !unchanged {
                self.published.insert(
                    path.clone(),
                    Published {
                        diagnostics: diagnostics.clone(),
                        version,
                        pass,
                        sent: true,
                    },
                );
                changes.push((path, diagnostics, version));
            }
        }
        if complete {
            let gone: Vec<FilePath> = self
                .published
                .keys()
                .filter(|path| workspace.file(path).is_none())
                .cloned()
                .collect();
            for path in gone {
                self.published.remove(&path);
                changes.push((path, Arc::new(Vec::new()), None));
            }
        }
        changes
    }

    /// Marks files [`DiagnosticsCache::changes_to_publish`] gave that were
    /// not sent after all (a later pass was asked for first): that pass
    /// sends them, whatever it computes.
    pub fn left_unsent(&mut self, paths: impl IntoIterator<Item = FilePath>) {
        for path in paths {
            if let Some(seen) = self.published.get_mut(&path) {
                seen.sent = false;
            }
        }
    }

    /// Of the open recipes' diagnostics, what the client has not seen yet,
    /// plus empty lists for recipe files closed since (their errors are shown
    /// only while they are open).
    pub fn recipe_changes(
        &mut self,
        computed: Vec<(FilePath, Vec<lsp::Diagnostic>, i32)>,
    ) -> Vec<(FilePath, Vec<lsp::Diagnostic>, Option<i32>)> {
        let closed: Vec<FilePath> = self
            .recipes_published
            .keys()
            .filter(|path| !computed.iter().any(|(open, _, _)| open == *path))
            .cloned()
            .collect();
        let mut changes: Vec<_> = closed
            .into_iter()
            .map(|path| {
                self.recipes_published.remove(&path);
                (path, Vec::new(), None)
            })
            .collect();
        for (path, diagnostics, version) in computed {
            let seen =
                self.recipes_published
                    .get(&path)
                    .is_some_and(|(previous, previous_version)| {
                        *previous == diagnostics && *previous_version == version
                    });
            if !seen {
                self.recipes_published
                    .insert(path.clone(), (diagnostics.clone(), version));
                changes.push((path, diagnostics, Some(version)));
            }
        }
        changes
    }

    /// The configuration file's diagnostics if they changed since last time.
    pub fn config_change(
        &mut self,
        workspace: &Workspace,
        encoding: PositionEncoding,
    ) -> Option<Vec<lsp::Diagnostic>> {
        let mut convert = convert::Diagnostics::new(workspace, encoding);
        let current: Vec<lsp::Diagnostic> = checks::check_config(workspace)
            .iter()
            .map(|diagnostic| convert.convert(diagnostic))
            .collect();
        let previous = self.config_published.clone().unwrap_or_default();
        if previous == current {
            return None;
        }
        self.config_published = Some(current.clone());
        Some(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SourceFile;

    fn example() -> Workspace {
        Workspace::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road"),
        )
    }

    fn edited(workspace: &mut Workspace, path: &str, edit: impl Fn(&str) -> String) {
        let text = edit(&workspace.file(path).unwrap().text);
        let file = SourceFile::parse(path.into(), text.into(), &workspace.config().paths.clone());
        workspace.insert_file(file);
    }

    /// A pass over every file, the health skipped.
    fn full_pass(
        cache: &Mutex<DiagnosticsCache>,
        workspace: &Workspace,
    ) -> Vec<(FilePath, Arc<Vec<lsp::Diagnostic>>)> {
        compute(
            cache,
            workspace,
            None,
            PositionEncoding::Utf16,
            HealthPass::Skip,
        )
    }

    #[test]
    fn an_edit_rechecks_what_depends_on_it() {
        let mut workspace = example();
        let cache = Mutex::new(DiagnosticsCache::default());
        let pass = |workspace: &Workspace| {
            full_pass(&cache, workspace);
            lock(&cache).last_recomputed
        };
        let all = full_pass(&cache, &workspace).len();
        assert_eq!(lock(&cache).last_recomputed, all);
        assert_eq!(pass(&workspace), 0, "nothing changed, nothing re-checked");

        // A card's description is read by no other file: only the card is re-checked.
        let card = "Compendium/Characters/CHAR-iria-vell.md";
        edited(&mut workspace, card, |text| {
            format!("{text}\nShe keeps a salt-cellar of river stones.\n")
        });
        assert_eq!(pass(&workspace), 1);

        // A scene's prose: only the scene.
        edited(&mut workspace, "Story/Scenes/SCN-the-gate.md", |text| {
            format!("{text}\nRain.\n")
        });
        assert_eq!(pass(&workspace), 1);

        // A card's name is read everywhere: everything is re-checked.
        edited(&mut workspace, card, |text| {
            text.replacen("aliases: [Iria]", "aliases: [Iria, Vell]", 1)
        });
        assert_eq!(pass(&workspace), all);
    }

    #[test]
    fn a_pass_the_writer_interrupts_gives_up_and_keeps_the_files_it_checked() {
        let workspace = example();
        let cache = Mutex::new(DiagnosticsCache::default());
        // Asked once before the checks, then once a file: two files are
        // checked, then the writer types.
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let stop = || asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 3;
        let stopped = compute_unless(
            &cache,
            &workspace,
            None,
            PositionEncoding::Utf16,
            HealthPass::Skip,
            &stop,
        );
        assert!(stopped.is_none(), "the pass gave up");
        assert_eq!(lock(&cache).last_recomputed, 2);
        let all = full_pass(&cache, &workspace).len();
        assert_eq!(
            lock(&cache).last_recomputed,
            all - 2,
            "the next pass checks only what the first did not"
        );
    }

    #[test]
    fn files_a_pass_left_unsent_are_sent_by_the_next_even_unchanged() {
        let workspace = example();
        let cache = Mutex::new(DiagnosticsCache::default());
        let computed = || full_pass(&cache, &workspace);
        let versions = HashMap::new();
        let first = computed();
        let sent = lock(&cache).changes_to_publish(&workspace, first, true, &versions, 1);
        assert!(!sent.is_empty());
        // Nothing changed: nothing to send again.
        let files = computed();
        let again = lock(&cache).changes_to_publish(&workspace, files, true, &versions, 2);
        assert!(again.is_empty());
        // Pass 3 sent the first file and stopped for a later pass: the
        // later one sends the rest, though nothing in them changed.
        let unsent: Vec<FilePath> = sent
            .iter()
            .skip(1)
            .map(|(path, _, _)| path.clone())
            .collect();
        lock(&cache).left_unsent(unsent.clone());
        let files = computed();
        let later = lock(&cache).changes_to_publish(&workspace, files, true, &versions, 4);
        let later: Vec<FilePath> = later.into_iter().map(|(path, _, _)| path).collect();
        assert_eq!(later, unsent);
        let files = computed();
        let after = lock(&cache).changes_to_publish(&workspace, files, true, &versions, 5);
        assert!(after.is_empty());
    }
}
