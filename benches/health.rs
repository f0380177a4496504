//! The story's health and graph on the generated 1M-word manuscript (500
//! scenes), in process.
//!
//! | Benchmark | What is timed | Target |
//! |---|---|---|
//! | `health/cold_index/large` | `Workspace::load`, for the others to be read against | (reference) |
//! | `health/first_pass/large` | `Health::check` with an empty memo: every scene measured | (reference: once, in the background of the first diagnostics) |
//! | `health/unchanged/large` | `Health::check` again, nothing changed (each scene's checks key computed) | (reference) |
//! | `health/unchanged_keys_known/large` | the same with the keys known, as the editor's diagnostics pass has them | ≤ 5 ms |
//! | `health/after_sentence_edit/large` | a sentence inserted into (or taken out of) a scene (not timed), then `Health::check_keyed` with the keys known: that scene measured again | (reference) |
//! | `graph/build/large` | `StoryGraph::build` (cards, scenes, mentions, PageRank's input), cold | within 30% of `health/cold_index/large` |
//! | `graph/warm_start/large` | the memo a previous process saved loaded, and the graph built from it | (reference) |
//! | `graph/after_sentence_edit/large` | a sentence in (or out of) a scene (not timed), the graph built again through the memo | ≤ 5 ms |
//! | `graph/unchanged/large` | the graph built again through the memo, nothing changed | (reference) |
//!
//! Run with `cargo bench --bench health`; medians are in
//! `target/criterion/<group>/<bench>/new/estimates.json`.

#[path = "support/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use control_room::health::{Health, Measures};
use control_room::index::{SourceFile, Workspace};
use control_room::kb::graph::{SceneMemo, StoryGraph};
use control_room::storage::Disk;
use criterion::{Criterion, SamplingMode};

fn main() {
    let dir = tempfile::tempdir().expect("a temp dir for the corpus");
    let root = dir.path().join("large");
    let generated =
        corpus::generate(&corpus::CorpusSpec::large(), &root).expect("the corpus is written");
    corpus::add_continuity_data(&root, &generated).expect("continuity data is written");
    let workspace = Workspace::load(&root);
    let mut c = Criterion::default().without_plots().configure_from_args();

    let mut group = c.benchmark_group("health");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
        .sampling_mode(SamplingMode::Flat);
    group.bench_function("cold_index/large", |b| {
        b.iter_with_large_drop(|| Workspace::load(&root));
    });
    group.bench_function("first_pass/large", |b| {
        b.iter(|| {
            Health::check(&workspace, &mut Measures::default())
                .checks
                .len()
        });
    });
    let mut measures = Measures::default();
    Health::check(&workspace, &mut measures);
    group.bench_function("unchanged/large", |b| {
        b.iter(|| Health::check(&workspace, &mut measures).checks.len());
    });
    // As the editor runs it: the checks' keys of every file already known.
    let keys: std::collections::HashMap<&str, u64> = workspace
        .files()
        .map(|file| {
            (
                &*file.path,
                control_room::checks::dependency_key(&workspace, file),
            )
        })
        .collect();
    group.bench_function("unchanged_keys_known/large", |b| {
        b.iter(|| {
            Health::check_keyed(&workspace, &mut measures, &|file| keys[&*file.path])
                .checks
                .len()
        });
    });
    // A sentence in and out of the first scene, alternately.
    let path = workspace
        .relative_path(&generated.scene_paths[0])
        .expect("the scene is under the root");
    let original: Arc<str> = workspace.file(&path).expect("the scene").text.clone();
    let edited: Arc<str> = format!("{original}\nThe lamp guttered and went out.\n").into();
    let mut edit_workspace = workspace.clone();
    let mut inserted = false;
    // The edit itself (the index's work) is not timed.
    let edit = |workspace: &mut Workspace, inserted: &mut bool| {
        let text = if *inserted { &original } else { &edited };
        *inserted = !*inserted;
        let file = SourceFile::parse(path.clone(), text.clone(), &workspace.config().paths);
        workspace.insert_file(file);
    };
    group.bench_function("after_sentence_edit/large", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                edit(&mut edit_workspace, &mut inserted);
                let keys: std::collections::HashMap<&str, u64> = edit_workspace
                    .files()
                    .map(|file| {
                        let key = control_room::checks::dependency_key(&edit_workspace, file);
                        (&*file.path, key)
                    })
                    .collect();
                let started = std::time::Instant::now();
                black_box(
                    Health::check_keyed(&edit_workspace, &mut measures, &|file| keys[&*file.path])
                        .checks
                        .len(),
                );
                total += started.elapsed();
            }
            total
        });
    });
    group.finish();

    let mut group = c.benchmark_group("graph");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
        .sampling_mode(SamplingMode::Flat);
    group.bench_function("build/large", |b| {
        b.iter(|| StoryGraph::build(&workspace).graph.node_count());
    });
    // Every scene's facts from the memo a previous process saved.
    let mut memo = SceneMemo::default();
    StoryGraph::build_with(&workspace, &mut memo);
    memo.save(&Disk::default(), &root)
        .expect("the memo is saved");
    group.bench_function("warm_start/large", |b| {
        b.iter(|| {
            let mut loaded = SceneMemo::load(&root);
            StoryGraph::build_with(&workspace, &mut loaded)
                .graph
                .node_count()
        });
    });
    // A sentence in and out of a scene, the graph built again through the memo.
    let mut inserted = false;
    group.bench_function("after_sentence_edit/large", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                edit(&mut edit_workspace, &mut inserted);
                let started = std::time::Instant::now();
                black_box(
                    StoryGraph::build_with(&edit_workspace, &mut memo)
                        .graph
                        .edge_count(),
                );
                total += started.elapsed();
            }
            total
        });
    });
    let mut unchanged = SceneMemo::default();
    StoryGraph::build_with(&workspace, &mut unchanged);
    group.bench_function("unchanged/large", |b| {
        b.iter(|| {
            StoryGraph::build_with(&workspace, &mut unchanged)
                .graph
                .edge_count()
        });
    });
    group.finish();
    c.final_summary();
}
