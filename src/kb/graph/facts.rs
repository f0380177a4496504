//! What one scene gives the story's graph: its point of view, its place,
//! each card in it with how often (its mentions, and once for each place
//! the front matter names it: `pov`, `characters`, `location`), who speaks
//! in it, and the theme's motifs its prose carries with how often.
//! [`SceneMemo`] keeps each scene's facts by the scene's version, the
//! cards' names and the motifs' words, so the graph of an edited manuscript reads one scene again;
//! it is saved under `.control-room/graph/` in a versioned format
//! ([`SceneMemo::save`], [`SceneMemo::load`]) so that a new process starts
//! from the facts of the last one, each kept only while its scene's text
//! hashes the same.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::index::motifs::Motifs;
use crate::index::{CardKind, FilePath, Scene, SourceFile, Workspace};

/// Where the memo is saved, under the manuscript's root.
pub const MEMO_FILE: &str = ".control-room/graph/scenes.json";
/// The saved format's version; another is not read (it is rebuilt).
const VERSION: u32 = 2;

/// One scene's part of the graph, by the cards' keys (their paths).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SceneFacts {
    pub pov: Option<String>,
    pub place: Option<String>,
    /// Each card in the scene and how often, in the cards' order.
    pub counts: Vec<(String, f64)>,
    /// The characters who speak a line (as the checks read the speakers).
    pub speaks: Vec<String>,
    /// Each motif of the theme whose words the prose holds, and how often.
    pub motifs: Vec<(String, f64)>,
}

impl SceneFacts {
    /// The facts of `scene` in `file`, with the theme's `motifs`.
    pub fn of(
        workspace: &Workspace,
        file: &SourceFile,
        scene: &Scene,
        motifs: &Motifs,
    ) -> SceneFacts {
        let catalog = workspace.catalog();
        let mut counts: HashMap<&str, f64> = HashMap::new();
        for mention in workspace.mentions(&file.path) {
            *counts.entry(&mention.card).or_default() += 1.0;
        }
        let named = |name: &str, kind: CardKind| {
            catalog
                .resolve_card(name, &[kind])
                .map(|card| card.path.clone())
        };
        let pov = scene
            .pov
            .as_ref()
            .and_then(|pov| named(&pov.text, CardKind::Character));
        let place = scene
            .location
            .as_ref()
            .and_then(|place| named(&place.text, CardKind::Location));
        let listed: Vec<FilePath> = scene
            .characters
            .iter()
            .filter_map(|name| named(&name.text, CardKind::Character))
            .collect();
        for card in pov.iter().chain(place.iter()).chain(&listed) {
            *counts.entry(card).or_default() += 1.0;
        }
        let mut counts: Vec<(String, f64)> = counts
            .into_iter()
            .map(|(key, count)| (key.to_owned(), count))
            .collect();
        counts.sort_by(|a, b| a.0.cmp(&b.0));
        let speaks = crate::checks::speaking(workspace, &file.path)
            .into_iter()
            .map(|card| card.to_string())
            .collect();
        let motifs = motifs
            .list
            .iter()
            .zip(motifs.count(file))
            .filter(|(_, count)| *count > 0)
            .map(|(motif, count)| (motif.name.clone(), count as f64))
            .collect();
        SceneFacts {
            pov: pov.map(|key| key.to_string()),
            place: place.map(|key| key.to_string()),
            counts,
            speaks,
            motifs,
        }
    }
}

/// A [`SceneMemo`] shared by a long-lived owner (the editor's session, a
/// run, a command) across the graphs it builds, so each build after the
/// first reads only the scenes that changed; read from `.control-room/graph/`
/// at its first build (not when it is made: a server's start reads nothing
/// for it) and saved there, so that the next process starts warm too.
#[derive(Clone, Debug, Default)]
pub struct GraphCache(Arc<std::sync::Mutex<Cached>>);

#[derive(Debug, Default)]
struct Cached {
    memo: SceneMemo,
    /// Where the saved memo is, until the first build reads it.
    saved: Option<std::path::PathBuf>,
    /// The last graph [`GraphCache::story`] built, with the snapshot and
    /// the decisions it was built from: the steps of a run ask for the
    /// graph of one manuscript again and again.
    last: Option<Last>,
}

#[derive(Debug)]
struct Last {
    workspace: Workspace,
    decisions: Vec<crate::kb::Decision>,
    story: Arc<super::StoryGraph>,
}

impl GraphCache {
    /// The cache of the manuscript at `root`, whose saved memo the first
    /// build reads.
    pub fn load(root: &Path) -> GraphCache {
        GraphCache(Arc::new(std::sync::Mutex::new(Cached {
            memo: SceneMemo::default(),
            saved: Some(root.to_path_buf()),
            last: None,
        })))
    }

    /// The graph of `workspace` with its knowledge base's decisions.
    pub fn build(&self, workspace: &Workspace) -> super::StoryGraph {
        self.with(|memo| super::StoryGraph::build_with(workspace, memo))
    }

    /// The graph of `workspace` with `decisions`: the last one built again
    /// when the manuscript is that very snapshot (or a clone of it, neither
    /// changed: [`Workspace::is_same_state`]) and the decisions are the same.
    pub fn story(
        &self,
        workspace: &Workspace,
        decisions: &[crate::kb::Decision],
    ) -> Arc<super::StoryGraph> {
        self.with_cached(|cached| {
            if let Some(last) = &cached.last
                && last.workspace.is_same_state(workspace)
                && last.decisions == decisions
            {
                return Arc::clone(&last.story);
            }
            let story = Arc::new(super::StoryGraph::build_from(
                workspace,
                &mut cached.memo,
                decisions,
            ));
            cached.last = Some(Last {
                workspace: workspace.clone(),
                decisions: decisions.to_vec(),
                story: Arc::clone(&story),
            });
            story
        })
    }

    /// Saves the memo under `root` once a build has used it (a cache: a
    /// failure costs the next process a cold build, nothing else); a cache
    /// no build used leaves the saved memo as it was.
    pub fn save(&self, disk: &crate::storage::Disk, root: &Path) -> std::io::Result<()> {
        let cached = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cached.memo.built {
            cached.memo.save(disk, root)
        } else {
            Ok(())
        }
    }

    /// How many scenes the builds have read afresh, in all.
    pub fn read(&self) -> usize {
        self.with(|memo| memo.read)
    }

    /// `f` on the memo, the saved one read first if no build has yet.
    fn with<R>(&self, f: impl FnOnce(&mut SceneMemo) -> R) -> R {
        self.with_cached(|cached| f(&mut cached.memo))
    }

    fn with_cached<R>(&self, f: impl FnOnce(&mut Cached) -> R) -> R {
        // A build that panicked left facts that are each whole: keep them.
        let mut cached = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(root) = cached.saved.take() {
            cached.memo = SceneMemo::load(&root);
        }
        f(&mut cached)
    }
}

/// One remembered scene: the text it was read from (the file's `Arc`, and
/// a hash of its text for the facts loaded from disk) and the names.
#[derive(Clone, Debug)]
struct Entry {
    file: Option<Arc<SourceFile>>,
    text_hash: u64,
    names: u64,
    facts: Arc<SceneFacts>,
}

/// Each scene's facts, kept by its version and the cards' names.
#[derive(Clone, Debug, Default)]
pub struct SceneMemo {
    scenes: HashMap<FilePath, Entry>,
    /// How many scenes [`SceneMemo::facts`] has read afresh, in all.
    pub read: usize,
    /// Whether a build has gone through it since it was made or loaded.
    built: bool,
}

/// The saved memo.
#[derive(Serialize, Deserialize)]
struct Saved {
    version: u32,
    scenes: Vec<SavedScene>,
}

#[derive(Serialize, Deserialize)]
struct SavedScene {
    path: String,
    text_hash: u64,
    names: u64,
    facts: SceneFacts,
}

fn text_hash(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

impl SceneMemo {
    /// The facts of each of `scenes`, in order, read again only where the
    /// scene, the cards' names or the motifs' words changed.
    pub fn facts(
        &mut self,
        workspace: &Workspace,
        scenes: &[(&Arc<SourceFile>, &Scene)],
        motifs: &Motifs,
    ) -> Vec<Arc<SceneFacts>> {
        use rayon::prelude::*;
        let names = {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            workspace.catalog().names_fingerprint().hash(&mut hasher);
            motifs.fingerprint().hash(&mut hasher);
            hasher.finish()
        };
        let known = |memo: &HashMap<FilePath, Entry>, file: &Arc<SourceFile>| {
            let entry = memo.get(&file.path)?;
            let same = match &entry.file {
                Some(known) => Arc::ptr_eq(known, file),
                None => entry.text_hash == text_hash(&file.text),
            };
            (same && entry.names == names).then(|| Arc::clone(&entry.facts))
        };
        let missing: Vec<usize> = (0..scenes.len())
            .filter(|&at| known(&self.scenes, scenes[at].0).is_none())
            .collect();
        let fresh: Vec<(usize, SceneFacts, u64)> = missing
            .par_iter()
            .map(|&at| {
                let (file, scene) = scenes[at];
                (
                    at,
                    SceneFacts::of(workspace, file, scene, motifs),
                    text_hash(&file.text),
                )
            })
            .collect();
        self.read += fresh.len();
        self.built = true;
        for (at, facts, hash) in fresh {
            let file = scenes[at].0;
            self.scenes.insert(
                file.path.clone(),
                Entry {
                    file: Some(Arc::clone(file)),
                    text_hash: hash,
                    names,
                    facts: Arc::new(facts),
                },
            );
        }
        // Loaded entries now vouched for take the file's `Arc`.
        for (file, _) in scenes {
            if let Some(entry) = self.scenes.get_mut(&file.path)
                && entry.file.is_none()
                && entry.text_hash == text_hash(&file.text)
            {
                entry.file = Some(Arc::clone(file));
            }
        }
        let present: std::collections::HashSet<&str> =
            scenes.iter().map(|(file, _)| &*file.path).collect();
        self.scenes.retain(|path, _| present.contains(&**path));
        scenes
            .iter()
            .map(|(file, _)| known(&self.scenes, file).expect("read above"))
            .collect()
    }

    /// Writes the memo under `root` (see [`MEMO_FILE`]), whole, through
    /// `disk`.
    pub fn save(&self, disk: &crate::storage::Disk, root: &Path) -> std::io::Result<()> {
        let mut scenes: Vec<SavedScene> = self
            .scenes
            .iter()
            .map(|(path, entry)| SavedScene {
                path: path.to_string(),
                text_hash: entry.text_hash,
                names: entry.names,
                facts: (*entry.facts).clone(),
            })
            .collect();
        scenes.sort_by(|a, b| a.path.cmp(&b.path));
        let text = serde_json::to_string(&Saved {
            version: VERSION,
            scenes,
        })
        .map_err(std::io::Error::other)?;
        let path = root.join(MEMO_FILE);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        disk.write_atomic(&path, text.as_bytes())
    }

    /// The memo saved under `root`; empty when there is none, it is of
    /// another version, or it cannot be read (it is only a cache).
    pub fn load(root: &Path) -> SceneMemo {
        let Ok(text) = std::fs::read_to_string(root.join(MEMO_FILE)) else {
            return SceneMemo::default();
        };
        let Ok(saved) = serde_json::from_str::<Saved>(&text) else {
            return SceneMemo::default();
        };
        if saved.version != VERSION {
            return SceneMemo::default();
        }
        SceneMemo {
            scenes: saved
                .scenes
                .into_iter()
                .map(|scene| {
                    (
                        FilePath::from(scene.path),
                        Entry {
                            file: None,
                            text_hash: scene.text_hash,
                            names: scene.names,
                            facts: Arc::new(scene.facts),
                        },
                    )
                })
                .collect(),
            read: 0,
            built: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::graph::StoryGraph;

    #[test]
    fn a_saved_memo_spares_the_next_process_every_scene_but_the_one_edited() {
        let (dir, workspace) = crate::index::test_support::example_copy();
        let root = dir.path();
        let mut memo = SceneMemo::default();
        let first = StoryGraph::build_with(&workspace, &mut memo);
        let scenes = workspace.catalog().scenes().count();
        assert_eq!(memo.read, scenes);
        memo.save(&crate::storage::Disk::default(), root).unwrap();

        // A new process: the same manuscript read again, the memo loaded.
        let again = Workspace::load(root);
        let mut loaded = SceneMemo::load(root);
        let second = StoryGraph::build_with(&again, &mut loaded);
        assert_eq!(
            loaded.read, 0,
            "every scene's facts came from the saved memo"
        );
        assert_eq!(first.graph.edge_count(), second.graph.edge_count());
        let ranks = |story: &StoryGraph| -> Vec<String> {
            story
                .centrality()
                .into_iter()
                .map(|(node, _)| story.graph[node].key.clone())
                .collect()
        };
        assert_eq!(ranks(&first), ranks(&second));

        // One scene edited on disk: only it is read again.
        let gate = root.join("Story/Scenes/SCN-the-gate.md");
        let text = std::fs::read_to_string(&gate).unwrap();
        std::fs::write(
            &gate,
            format!("{text}\nOld Tomas watched from the stair.\n"),
        )
        .unwrap();
        let edited = Workspace::load(root);
        let mut loaded = SceneMemo::load(root);
        StoryGraph::build_with(&edited, &mut loaded);
        assert_eq!(loaded.read, 1);

        // Another version, or a broken file, is a cold start, not an error.
        let file = root.join(MEMO_FILE);
        let saved = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, saved.replacen("\"version\":2", "\"version\":99", 1)).unwrap();
        assert_eq!(SceneMemo::load(root).scenes.len(), 0);
        std::fs::write(&file, "{not json").unwrap();
        assert_eq!(SceneMemo::load(root).scenes.len(), 0);
    }

    #[test]
    fn a_graph_cache_reads_each_scene_once_and_saves_only_once_used() {
        let (dir, workspace) = crate::index::test_support::example_copy();
        let root = dir.path();
        let disk = crate::storage::Disk::default();
        let cache = GraphCache::load(root);
        // Unused, it leaves the saved memo alone (here: none).
        cache.save(&disk, root).unwrap();
        assert!(!root.join(MEMO_FILE).exists());
        let first = cache.build(&workspace);
        let scenes = workspace.catalog().scenes().count();
        assert_eq!(cache.read(), scenes);
        // A clone shares it: a second build reads nothing again.
        let second = cache.clone().build(&workspace);
        assert_eq!(cache.read(), scenes);
        assert_eq!(first.graph.edge_count(), second.graph.edge_count());
        cache.save(&disk, root).unwrap();
        assert_eq!(SceneMemo::load(root).scenes.len(), scenes);
    }

    #[test]
    fn the_graph_of_an_unchanged_snapshot_is_built_once_and_a_change_builds_it_again() {
        let (_dir, workspace) = crate::index::test_support::example_copy();
        let cache = GraphCache::default();
        let first = cache.story(&workspace, &[]);
        // The same snapshot, or a clone of it: the graph already built.
        assert!(Arc::ptr_eq(&first, &cache.story(&workspace, &[])));
        assert!(Arc::ptr_eq(&first, &cache.story(&workspace.clone(), &[])));

        // A decision saved: the graph relates it, so it is built again.
        let decision = crate::kb::Decision {
            category: "constraint".into(),
            key: "gate".into(),
            value: "The gate is never opened at night.".into(),
            source: None,
            scene: Some("SCN-the-gate".into()),
            created_at: None,
            updated_at: None,
            promoted: false,
        };
        let decided = cache.story(&workspace, std::slice::from_ref(&decision));
        assert!(!Arc::ptr_eq(&first, &decided));
        assert_eq!(decided.decisions_about("SCN-the-gate").count(), 1);
        assert_eq!(first.decisions_about("SCN-the-gate").count(), 0);

        // A scene's prose edited in the editor (the catalog kept): built
        // again, with the edit in it.
        let path = "Story/Scenes/SCN-the-gate.md";
        let mut edited = workspace.clone();
        let text = format!(
            "{}\nOld Tomas watched from the stair.\n",
            edited.file(path).unwrap().text
        );
        let paths = edited.config().paths.clone();
        edited.insert_file(SourceFile::parse(path.into(), text.into(), &paths));
        assert!(!edited.is_same_state(&workspace));
        let after = cache.story(&edited, &[]);
        assert!(!Arc::ptr_eq(&first, &after));
        let cast = |story: &StoryGraph| {
            story
                .around_scene("SCN-the-gate")
                .iter()
                .filter(|(entity, _, _)| entity.kind == super::super::EntityKind::Character)
                .map(|(entity, _, weight)| format!("{} {weight}", entity.label))
                .collect::<Vec<_>>()
        };
        assert_ne!(cast(&first), cast(&after), "the edit's mention counts");
        // The snapshot before the edit is not the one cached any more.
        assert!(!Arc::ptr_eq(&after, &cache.story(&workspace, &[])));
    }
}
