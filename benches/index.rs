//! Indexing benchmarks on synthetic manuscripts.
//!
//! Run with `cargo bench --bench index` (the whole run takes about two minutes on
//! two cores, corpus generation included). Pass a filter to run a subset, e.g.
//! `cargo bench --bench index -- cold_index`; `cargo test --benches` runs every
//! benchmark once as a smoke test. Criterion prints a confidence interval for
//! the mean; the medians are in `target/criterion/<benchmark>/new/estimates.json`
//! (`median.point_estimate`, in nanoseconds). HTML plots are off to save time;
//! add `-- --plotting-backend plotters` to get them.
//!
//! The corpora are written by `benches/support/corpus.rs` into one temporary
//! folder per bench process, on first use and only for the sizes a selected
//! benchmark needs: medium (200 scenes, ~400k words, ~2.4 MB) and large
//! (500 scenes, ~1M words, ~5.9 MB), plus cards and the outline. Files are read
//! from the OS page cache after the first iteration, so "cold" means a cold
//! process (no parser, catalog or mention state), not a cold disk.
//!
//! | Benchmark | What is timed | Target |
//! |---|---|---|
//! | `parse_floor/discover/{medium,large}` | walking the root for Markdown files (`index::discover::markdown_files`) | (breakdown only) |
//! | `parse_floor/block_only/{medium,large}` | tree-sitter-md block grammar parse of every file, texts in memory, parallel across files (rayon) | the floor |
//! | `parse_floor/block_and_inline/{medium,large}` | `tree_sitter_md::MarkdownParser` (block tree plus every inline tree) on every file, parallel | (reference) |
//! | `parse_floor/ours/{medium,large}` | `MarkdownParser::parse_fresh` on every file, parallel: plain prose by a line scan, the rest by the grammar | (reference) |
//! | `parse_floor/ours_grammar_only/{medium,large}` | `MarkdownParser::parse_with_grammar` on every file, parallel: what `ours` was before the line scan | (reference) |
//! | `parse_floor/read_and_block_only_one_core/{medium,large}` | the same on one thread | the floor on one core |
//! | `parse_floor/read_and_block_only/{medium,large}` | reading every file (`index::file::read_text`) and block-parsing it, parallel | the floor `cold_index` is compared with |
//! | `cold_index/{medium,large}` | `Workspace::load(root)` without the index's cache: discover, read, parse, front matter, catalog, mentions, the cache saved | large ≤ 1.0 s and ≤ 1.3 × `parse_floor/read_and_block_only/large` |
//! | `check/large` | `Workspace::load` then `checks::check_workspace` | (reference) |
//! | `check/process_large` | `control-room check --format json` as a process, without the index's cache | within 1.15 × `parse_floor/read_and_block_only/large` (issue "Speed and cost") |
//! | `check/process_large_warm` | the same with the cache the last run left | (reference) |
//! | `warm_index/large` | `Workspace::load` with each file's syntax from the cache | (reference) |
//! | `references/large` | `workspace.mentions_of(protagonist card).count()` | ≤ 5 ms |
//! | `references/ide_large` | `ide::references` from the protagonist card's name: mentions, front matter, sorted | |
//! | `workspace_symbols/large` | every scene and card name containing "ar", case-insensitively | ≤ 5 ms |
//! | `semantic_tokens/scene_5k_words` | `ide::semantic_tokens` of a ~5,000-word scene of the large workspace: its names, dialogue and the dead | ≤ 2 ms |
//! | `incremental/sentence_edit_5k_words` | one iteration = one edit, alternately inserting and deleting a sentence in the middle of a ~5,000-word scene in the large workspace; each edit is `MarkdownParser::apply_edit`, `SourceFile::with_syntax`, `Workspace::insert_file` and `checks::check_file` | median ≤ 10 ms |
//!
//! Outputs of the timed routines are dropped inside the timing except for
//! `cold_index`, whose workspaces are dropped outside it (a server never drops
//! its index).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use control_room::checks;
use control_room::ide::{self, SemanticKind};
use control_room::index::{FilePath, SourceFile, Workspace, discover, file::read_text};
use control_room::syntax::{MarkdownParser, TextEdit};
use control_room::text::TextRange;
use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode};
use rayon::prelude::*;

#[path = "support/corpus.rs"]
mod corpus;

use corpus::{CorpusSpec, GeneratedCorpus};

#[derive(Clone, Copy)]
enum Size {
    Medium,
    Large,
}

impl Size {
    const ALL: [Size; 2] = [Size::Medium, Size::Large];

    fn name(self) -> &'static str {
        match self {
            Size::Medium => "medium",
            Size::Large => "large",
        }
    }

    fn spec(self) -> CorpusSpec {
        match self {
            Size::Medium => CorpusSpec::medium(),
            Size::Large => CorpusSpec::large(),
        }
    }
}

/// One generated manuscript and what the benchmarks preload from it.
struct Corpus {
    root: PathBuf,
    generated: GeneratedCorpus,
    /// Absolute paths of every Markdown file, as discovery finds them.
    paths: Vec<PathBuf>,
    /// The text of every file in `paths`.
    texts: Vec<String>,
    /// The workspace loaded once, for the query benchmarks (built on first use).
    workspace: OnceCell<Workspace>,
}

impl Corpus {
    fn generate(size: Size, root: PathBuf) -> Corpus {
        let generated = corpus::generate(&size.spec(), &root)
            .expect("the corpus generator writes into a temp dir");
        let added = corpus::add_continuity_data(&root, &generated)
            .expect("continuity data is written into the temp dir");
        let paths: Vec<PathBuf> = discover::markdown_files(&root)
            .iter()
            .map(|path| root.join(&**path))
            .collect();
        assert_eq!(
            paths.len(),
            generated.files + added,
            "discovery finds every generated file"
        );
        let texts = paths
            .iter()
            .map(|path| read_text(path).expect("generated files are UTF-8 text"))
            .collect();
        eprintln!(
            "corpus {}: {} files, {} words, {:.1} MB at {}",
            size.name(),
            generated.files,
            generated.words,
            generated.bytes as f64 / 1e6,
            root.display()
        );
        Corpus {
            root,
            generated,
            paths,
            texts,
            workspace: OnceCell::new(),
        }
    }

    fn workspace(&self) -> &Workspace {
        self.workspace.get_or_init(|| Workspace::load(&self.root))
    }
}

/// The temp dir and the corpora generated into it, each on first use.
struct Fixtures {
    dir: tempfile::TempDir,
    medium: OnceCell<Corpus>,
    large: OnceCell<Corpus>,
}

impl Fixtures {
    fn new() -> Fixtures {
        Fixtures {
            dir: tempfile::tempdir().expect("a temp dir for the corpora"),
            medium: OnceCell::new(),
            large: OnceCell::new(),
        }
    }

    fn corpus(&self, size: Size) -> &Corpus {
        let cell = match size {
            Size::Medium => &self.medium,
            Size::Large => &self.large,
        };
        cell.get_or_init(|| Corpus::generate(size, self.dir.path().join(size.name())))
    }
}

fn block_parser() -> tree_sitter::Parser {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_md::LANGUAGE.into())
        .expect("the block grammar matches the tree-sitter ABI");
    parser
}

/// Block-parses `text` and keeps only a number, so the tree is dropped inside the timing.
fn block_parse(parser: &mut tree_sitter::Parser, text: &str) -> usize {
    let tree = parser
        .parse(text, None)
        .expect("no timeout or cancellation is set");
    tree.root_node().end_byte()
}

/// How long to measure a whole-corpus benchmark: enough for ten one-iteration
/// samples of `large_secs` / 10 seconds at large (medium is about 2.4 × smaller).
fn measurement(size: Size, large_secs: u64) -> Duration {
    match size {
        Size::Medium => {
            Duration::from_secs_f64(large_secs as f64 / 2.4).max(Duration::from_secs(3))
        }
        Size::Large => Duration::from_secs(large_secs),
    }
}

fn parse_floor(c: &mut Criterion, fixtures: &Fixtures) {
    let mut group = c.benchmark_group("parse_floor");
    group
        .warm_up_time(Duration::from_millis(500))
        .sampling_mode(SamplingMode::Flat);
    for size in Size::ALL {
        group
            .sample_size(30)
            .measurement_time(Duration::from_secs(1));
        group.bench_function(BenchmarkId::new("discover", size.name()), |b| {
            let corpus = fixtures.corpus(size);
            b.iter(|| discover::markdown_files(black_box(&corpus.root)).len());
        });
        group.sample_size(10).measurement_time(measurement(size, 7));
        group.bench_function(BenchmarkId::new("block_only", size.name()), |b| {
            let texts = &fixtures.corpus(size).texts;
            b.iter(|| -> usize {
                texts
                    .par_iter()
                    .map_init(block_parser, |parser, text| block_parse(parser, text))
                    .sum()
            });
        });
        group.measurement_time(measurement(size, 12));
        group.bench_function(BenchmarkId::new("block_and_inline", size.name()), |b| {
            let texts = &fixtures.corpus(size).texts;
            b.iter(|| -> usize {
                texts
                    .par_iter()
                    .map_init(tree_sitter_md::MarkdownParser::default, |parser, text| {
                        let tree = parser
                            .parse(text.as_bytes(), None)
                            .expect("no timeout or cancellation is set");
                        tree.inline_trees().len()
                    })
                    .sum()
            });
        });
        group.measurement_time(measurement(size, 7));
        group.bench_function(BenchmarkId::new("ours", size.name()), |b| {
            let texts = &fixtures.corpus(size).texts;
            b.iter(|| -> usize {
                texts
                    .par_iter()
                    .map(|text| MarkdownParser::parse_fresh(text).prose.len())
                    .sum()
            });
        });
        group.bench_function(BenchmarkId::new("ours_grammar_only", size.name()), |b| {
            let texts = &fixtures.corpus(size).texts;
            b.iter(|| -> usize {
                texts
                    .par_iter()
                    .map(|text| MarkdownParser::parse_with_grammar(text).prose.len())
                    .sum()
            });
        });
        // The same work on one core: the floor a single thread meets.
        let one_core = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a one-thread pool");
        group.bench_function(
            BenchmarkId::new("read_and_block_only_one_core", size.name()),
            |b| {
                let paths = &fixtures.corpus(size).paths;
                b.iter(|| one_core.install(|| read_and_block_parse(paths)));
            },
        );
        group.bench_function(BenchmarkId::new("read_and_block_only", size.name()), |b| {
            let paths = &fixtures.corpus(size).paths;
            b.iter(|| read_and_block_parse(paths));
        });
    }
    group.finish();
}

/// Every file read and block-parsed, in parallel on the current pool.
fn read_and_block_parse(paths: &[PathBuf]) -> usize {
    paths
        .par_iter()
        .map_init(block_parser, |parser, path| {
            let text = read_text(path).expect("generated files are UTF-8 text");
            block_parse(parser, &text)
        })
        .sum()
}

fn cold_index(c: &mut Criterion, fixtures: &Fixtures) {
    let mut group = c.benchmark_group("cold_index");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .sampling_mode(SamplingMode::Flat);
    for size in Size::ALL {
        group.measurement_time(measurement(size, 8));
        group.bench_function(size.name(), |b| {
            let root = &fixtures.corpus(size).root;
            b.iter_batched(
                || forget_cache(root),
                |()| Workspace::load(black_box(root)),
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
    // A restart on the unchanged manuscript: each file's syntax from the
    // index's cache (`.control-room/index/`), which the first load saves.
    let mut group = c.benchmark_group("warm_index");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .sampling_mode(SamplingMode::Flat);
    group.measurement_time(measurement(Size::Large, 8));
    group.bench_function(Size::Large.name(), |b| {
        let root = &fixtures.corpus(Size::Large).root;
        drop(Workspace::load(root));
        b.iter_with_large_drop(|| Workspace::load(black_box(root)));
    });
    group.finish();
}

/// Removes the index's cache, so that the next load is cold.
fn forget_cache(root: &Path) {
    let _ = std::fs::remove_dir_all(root.join(".control-room/index"));
}

fn check(c: &mut Criterion, fixtures: &Fixtures) {
    let mut group = c.benchmark_group("check");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(9))
        .sampling_mode(SamplingMode::Flat);
    group.bench_function("large", |b| {
        let root = &fixtures.corpus(Size::Large).root;
        b.iter_batched(
            || forget_cache(root),
            |()| {
                let workspace = Workspace::load(black_box(root));
                checks::check_workspace(&workspace).len()
            },
            BatchSize::PerIteration,
        );
    });
    // `control-room check` as the writer runs it: a whole process, without
    // the index's cache and with it.
    group.bench_function("process_large", |b| {
        let root = &fixtures.corpus(Size::Large).root;
        b.iter_batched(
            || forget_cache(root),
            |()| check_process(root),
            BatchSize::PerIteration,
        );
    });
    group.bench_function("process_large_warm", |b| {
        let root = &fixtures.corpus(Size::Large).root;
        check_process(root);
        b.iter(|| check_process(root));
    });
    group.finish();
}

/// `control-room check --format json` on `root`: the length of its report.
fn check_process(root: &Path) -> usize {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", "--format", "json"])
        .arg(root)
        .output()
        .expect("control-room check runs");
    assert!(
        output.status.code().is_some_and(|code| code <= 1),
        "check could not run"
    );
    output.stdout.len()
}

/// The path of the protagonist's card (the generator's cast member 0).
fn protagonist_card(corpus: &Corpus) -> FilePath {
    let name = &corpus.generated.character_names[0];
    let (path, _) = corpus
        .workspace()
        .catalog()
        .cards()
        .find(|(_, card)| card.display_name() == name)
        .expect("the protagonist has a card");
    path.clone()
}

fn queries(c: &mut Criterion, fixtures: &Fixtures) {
    let mut group = c.benchmark_group("references");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("large", |b| {
        let corpus = fixtures.corpus(Size::Large);
        let workspace = corpus.workspace();
        let card = protagonist_card(corpus);
        assert!(
            workspace.mentions_of(&card).count() > 0,
            "the protagonist is mentioned"
        );
        b.iter(|| workspace.mentions_of(black_box(&card)).count());
    });
    // What the editor's request computes before its answer is written: the
    // mentions, the scenes' front matter that names the card, in order.
    group.bench_function("ide_large", |b| {
        let corpus = fixtures.corpus(Size::Large);
        let workspace = corpus.workspace();
        let card = protagonist_card(corpus);
        let name = workspace
            .catalog()
            .card(&card)
            .and_then(|file| file.card())
            .and_then(|card| card.names().next())
            .expect("the protagonist's card has a name")
            .range
            .start;
        let found = ide::references(workspace, &card, name, false).len();
        assert!(
            found > workspace.mentions_of(&card).count() / 2,
            "the mentions are found from the card's name ({found})"
        );
        b.iter(|| ide::references(workspace, black_box(&card), name, false).len());
    });
    group.finish();

    let mut group = c.benchmark_group("workspace_symbols");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("large", |b| {
        let workspace = fixtures.corpus(Size::Large).workspace();
        assert!(
            !workspace_symbols(workspace, "ar").is_empty(),
            "some names contain \"ar\""
        );
        b.iter(|| workspace_symbols(workspace, black_box("ar")).len());
    });
    group.finish();
}

/// The names of scenes (title, else id) and cards that contain `query`, ignoring case.
fn workspace_symbols<'a>(workspace: &'a Workspace, query: &str) -> Vec<(&'a str, &'a FilePath)> {
    let query = query.to_lowercase();
    let matches = |name: &str| name.to_lowercase().contains(&query);
    let catalog = workspace.catalog();
    let scenes = catalog
        .scenes()
        .map(|(file, scene)| (scene.title.as_deref().unwrap_or(&scene.id), &file.path));
    let cards = catalog
        .cards()
        .map(|(path, card)| (card.display_name(), path));
    scenes
        .chain(cards)
        .filter(|(name, _)| matches(name))
        .collect()
}

/// A scene of at least `words` words of prose: the first scene's front matter
/// and body, then the bodies of the following scenes.
fn long_scene(corpus: &Corpus, words: usize) -> String {
    let mut scenes = corpus
        .generated
        .scene_paths
        .iter()
        .map(|path| read_text(path).expect("scenes are text"));
    let mut text = scenes.next().expect("the corpus has scenes");
    let body_start = |text: &str| {
        text[3..]
            .find("\n---\n")
            .map_or(0, |end| 3 + end + "\n---\n".len())
    };
    let mut count = text[body_start(&text)..].split_whitespace().count();
    for scene in scenes {
        if count >= words {
            break;
        }
        let body = scene[body_start(&scene)..].trim();
        text.push('\n');
        text.push_str(body);
        text.push('\n');
        count += body.split_whitespace().count();
    }
    text
}

/// The semantic tokens of a ~5,000-word scene (names, dialogue, the dead),
/// as `textDocument/semanticTokens/full` computes them before encoding.
fn semantic_tokens(c: &mut Criterion, fixtures: &Fixtures) {
    let mut group = c.benchmark_group("semantic_tokens");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("scene_5k_words", |b| {
        let corpus = fixtures.corpus(Size::Large);
        let mut workspace = corpus.workspace().clone();
        let path = workspace
            .relative_path(&corpus.generated.scene_paths[0])
            .expect("the scene is under the root");
        let text = long_scene(corpus, 5_000);
        let paths = workspace.config().paths.clone();
        workspace.insert_file(SourceFile::parse(path.clone(), text.into(), &paths));
        let tokens = ide::semantic_tokens(&workspace, &path);
        for kind in [SemanticKind::Character, SemanticKind::Dialogue] {
            assert!(
                tokens.iter().any(|token| token.kind == kind),
                "the long scene has {kind:?} tokens"
            );
        }
        b.iter(|| ide::semantic_tokens(&workspace, black_box(&path)).len());
    });
    group.finish();
}

/// Where to insert a sentence: just after the first sentence end past the middle.
fn sentence_boundary(text: &str) -> usize {
    let middle = text.len() / 2;
    let after = text[middle..]
        .find(". ")
        .expect("prose has sentences past the middle");
    middle + after + ". ".len()
}

struct EditedFile {
    path: FilePath,
    text: Arc<str>,
    parser: MarkdownParser,
}

impl EditedFile {
    /// Applies `edit` the way the server does for an open document and returns
    /// the file's diagnostics.
    fn apply(&mut self, workspace: &mut Workspace, edit: TextEdit) -> usize {
        let mut new_text = String::with_capacity(self.text.len() + edit.new_text.len());
        new_text.push_str(&self.text[..edit.range.start]);
        new_text.push_str(&edit.new_text);
        new_text.push_str(&self.text[edit.range.end..]);
        let syntax = self.parser.apply_edit(&self.text, &edit, &new_text);
        self.text = new_text.into();
        let file = SourceFile::with_syntax(
            self.path.clone(),
            self.text.clone(),
            syntax,
            &workspace.config().paths,
        );
        workspace.insert_file(file);
        checks::check_file(workspace, &self.path).len()
    }
}

fn incremental(c: &mut Criterion, fixtures: &Fixtures) {
    let mut group = c.benchmark_group("incremental");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sampling_mode(SamplingMode::Flat);
    group.bench_function("sentence_edit_5k_words", |b| {
        let corpus = fixtures.corpus(Size::Large);
        let mut workspace = corpus.workspace().clone();
        let text = long_scene(corpus, 5_000);
        let path = workspace
            .relative_path(&corpus.generated.scene_paths[0])
            .expect("the scene is under the root");
        let mut parser = MarkdownParser::new();
        let syntax = parser.parse(&text);
        let text: Arc<str> = text.into();
        let paths = &workspace.config().paths;
        workspace.insert_file(SourceFile::with_syntax(
            path.clone(),
            text.clone(),
            syntax,
            paths,
        ));
        let words = workspace
            .file(&path)
            .and_then(|file| file.scene())
            .map_or(0, |scene| scene.word_count);
        assert!(
            (5_000..6_500).contains(&words),
            "the long scene has {words} words"
        );

        let first_name = corpus.generated.character_names[0]
            .split(' ')
            .next()
            .expect("a first name");
        let sentence = format!("{first_name} stopped at the door and listened for a long moment. ");
        let at = sentence_boundary(&text);
        let mut file = EditedFile { path, text, parser };
        // One iteration is one didChange: iterations alternate between typing
        // the sentence and deleting it, so the scene stays the same size.
        let mut present = false;
        b.iter(|| {
            let edit = if present {
                TextEdit {
                    range: TextRange::new(at, at + sentence.len()),
                    new_text: String::new(),
                }
            } else {
                TextEdit {
                    range: TextRange::empty(at),
                    new_text: sentence.clone(),
                }
            };
            present = !present;
            file.apply(&mut workspace, edit)
        });
    });
    group.finish();
}

/// Re-checks what a change made stale, as the server's cache does: files
/// that are new `Arc`s or whose dependency key changed. Returns how many.
struct Rechecker {
    keys: HashMap<FilePath, (Arc<SourceFile>, u64)>,
}

impl Rechecker {
    fn new(workspace: &Workspace) -> Self {
        let mut rechecker = Rechecker {
            keys: HashMap::new(),
        };
        rechecker.recheck(workspace);
        rechecker
    }

    fn recheck(&mut self, workspace: &Workspace) -> usize {
        let stale: Vec<(&Arc<SourceFile>, u64)> = workspace
            .files()
            .collect::<Vec<_>>()
            .par_iter()
            .map(|file| (*file, checks::dependency_key(workspace, file)))
            .filter(|(file, key)| {
                !self
                    .keys
                    .get(&file.path)
                    .is_some_and(|(old, old_key)| Arc::ptr_eq(old, file) && old_key == key)
            })
            .collect();
        let checked: usize = stale
            .par_iter()
            .map(|(file, _)| checks::check_file(workspace, &file.path).len())
            .sum();
        black_box(checked);
        for (file, key) in &stale {
            self.keys
                .insert(file.path.clone(), (Arc::clone(file), *key));
        }
        stale.len()
    }
}

/// One iteration edits a file (alternating between two texts) and re-checks what depends on it.
fn bench_dependent_edit(
    b: &mut criterion::Bencher<'_>,
    workspace: &Workspace,
    path: &FilePath,
    edited: impl Fn(&str) -> String,
) -> (usize, usize) {
    let mut workspace = workspace.clone();
    let original: Arc<str> = workspace.file(path).expect("the file exists").text.clone();
    let changed: Arc<str> = edited(&original).into();
    assert_ne!(original, changed, "the edit changes {path}");
    let mut rechecker = Rechecker::new(&workspace);
    let paths = workspace.config().paths.clone();
    let mut toggle = false;
    let mut counts = (0, 0);
    b.iter(|| {
        toggle = !toggle;
        let text = if toggle { &changed } else { &original };
        workspace.insert_file(SourceFile::parse(path.clone(), text.clone(), &paths));
        let rechecked = rechecker.recheck(&workspace);
        counts = (rechecked, workspace.files().len());
        rechecked
    });
    counts
}

fn dependent_edits(c: &mut Criterion, fixtures: &Fixtures) {
    let mut group = c.benchmark_group("incremental");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sampling_mode(SamplingMode::Flat);
    let corpus = fixtures.corpus(Size::Large);
    let workspace = corpus.workspace();
    // A supporting character's eyes: only the scenes that mention them depend on it.
    let card = {
        let name = &corpus.generated.character_names[corpus.generated.character_names.len() / 2];
        let (path, _) = workspace
            .catalog()
            .cards()
            .find(|(_, card)| card.display_name() == name)
            .expect("the character has a card");
        path.clone()
    };
    let mut counts = (0, 0);
    group.bench_function("card_edit_1m_words", |b| {
        counts = bench_dependent_edit(b, workspace, &card, |text| {
            let eyes = text.find("\neyes: ").expect("cards have eyes") + "\neyes: ".len();
            let end = eyes + text[eyes..].find('\n').expect("a line end");
            format!("{}violet{}", &text[..eyes], &text[end..])
        });
    });
    eprintln!("card edit re-checks {} of {} files", counts.0, counts.1);
    // Two outline entries in the middle change places.
    let outline: FilePath = "Story/SCN-outline.md".into();
    group.bench_function("outline_edit_1m_words", |b| {
        counts = bench_dependent_edit(b, workspace, &outline, |text| {
            let lines: Vec<&str> = text.lines().collect();
            let entries: Vec<usize> = (0..lines.len())
                .filter(|&index| lines[index].starts_with("- SCN-"))
                .collect();
            let middle = entries.len() / 2;
            let (a, b) = (entries[middle], entries[middle + 1]);
            let mut swapped = lines.clone();
            swapped.swap(a, b);
            swapped.join("\n") + "\n"
        });
    });
    eprintln!("outline edit re-checks {} of {} files", counts.0, counts.1);
    group.finish();
}

fn main() {
    let fixtures = Fixtures::new();
    // Plots cost about three seconds per benchmark; `-- --plotting-backend plotters`
    // turns them back on.
    let mut c = Criterion::default().without_plots().configure_from_args();
    parse_floor(&mut c, &fixtures);
    cold_index(&mut c, &fixtures);
    check(&mut c, &fixtures);
    queries(&mut c, &fixtures);
    semantic_tokens(&mut c, &fixtures);
    incremental(&mut c, &fixtures);
    dependent_edits(&mut c, &fixtures);
    c.final_summary();
}
