//! What the health checks read of one scene, measured once per version of
//! it: its words, its pace (words per sentence of narration, the share of
//! dialogue), its tension (questions and exclamations per 1,000 words),
//! who is in it and how (the same reading as the presence chart's), and
//! how often each motif's words occur.
//!
//! [`SceneMeasures::of`] is a pure function of the scene and what the
//! checks read for it (`checks::dependency_key`) and of the motifs' words;
//! [`Measures`] keeps each scene's by that key, so an edit measures again
//! only the scene it touched.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::index::{CardKind, FilePath, SourceFile, Workspace};
use crate::prose::voice::VoiceTraits;

use crate::index::motifs::Motifs;

/// Who is in a scene, and how: the same reading as the presence chart's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SceneCast {
    /// The point of view's card.
    pub pov: Option<FilePath>,
    /// The characters who speak a line (as the checks read the speakers).
    pub speaks: BTreeSet<FilePath>,
    /// The characters the front matter lists.
    pub present: BTreeSet<FilePath>,
    /// Every card named in the prose, with how many times.
    pub mentioned: BTreeMap<FilePath, usize>,
}

impl SceneCast {
    /// The cast of the scene in `file` as `workspace` reads it.
    pub fn of(workspace: &Workspace, file: &SourceFile) -> SceneCast {
        let mut cast = SceneCast::default();
        let Some(scene) = file.scene() else {
            return cast;
        };
        let catalog = workspace.catalog();
        let card = |name: &str| {
            catalog
                .resolve_card(name, &[CardKind::Character])
                .map(|card| card.path.clone())
        };
        for mention in workspace.mentions(&file.path) {
            *cast.mentioned.entry(mention.card.clone()).or_default() += 1;
        }
        cast.present = scene
            .characters
            .iter()
            .filter_map(|name| card(&name.text))
            .collect();
        cast.speaks = crate::checks::speaking(workspace, &file.path);
        cast.pov = scene.pov.as_ref().and_then(|pov| card(&pov.text));
        cast
    }
}

/// One scene, measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneMeasures {
    pub words: usize,
    /// Words per sentence of narration (dialogue left out).
    pub narration: f64,
    /// The share of the words in dialogue, 0 to 1.
    pub dialogue: f64,
    /// Questions and exclamations (`?`, `!`) per 1,000 words.
    pub tension: f64,
    pub cast: SceneCast,
    /// How many times each motif's words occur, in the motifs' order.
    pub motifs: Vec<usize>,
}

impl SceneMeasures {
    pub fn of(workspace: &Workspace, file: &SourceFile, motifs: &Motifs) -> SceneMeasures {
        let prose = file.analyse_prose();
        let traits = VoiceTraits::measure(&file.text, &prose, None);
        SceneMeasures {
            words: file.scene().map_or(0, |scene| scene.word_count),
            narration: traits.narration_mean,
            dialogue: traits.dialogue,
            tension: tension(file, traits.words),
            cast: SceneCast::of(workspace, file),
            motifs: motifs.count(file),
        }
    }
}

/// Questions and exclamations (`?`, `!`) per 1,000 words, in the prose
/// only (no comment, link or code counts).
fn tension(file: &SourceFile, words: usize) -> f64 {
    let marks: usize = file
        .syntax
        .prose
        .iter()
        .map(|range| {
            range
                .slice(&file.text)
                .chars()
                .filter(|c| matches!(c, '?' | '!'))
                .count()
        })
        .sum();
    if words == 0 {
        0.0
    } else {
        1000.0 * marks as f64 / words as f64
    }
}

/// Each scene's measures, kept by the key of what they were measured on.
#[derive(Debug, Default)]
pub struct Measures {
    scenes: HashMap<FilePath, (Arc<SourceFile>, u64, Arc<SceneMeasures>)>,
    /// How many scenes [`Measures::get_all`] has measured afresh, in all.
    pub measured: usize,
}

impl Measures {
    /// The measures of the scenes in `files` (each with its
    /// `checks::dependency_key`), in order, measured again only where the
    /// file or what its reading depends on changed; those in parallel.
    pub fn get_all(
        &mut self,
        workspace: &Workspace,
        files: &[(&Arc<SourceFile>, u64)],
        motifs: &Motifs,
    ) -> Vec<Arc<SceneMeasures>> {
        use rayon::prelude::*;
        let fingerprint = motifs.fingerprint();
        let keyed: Vec<u64> = files
            .iter()
            .map(|(_, checks_key)| {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                checks_key.hash(&mut hasher);
                fingerprint.hash(&mut hasher);
                hasher.finish()
            })
            .collect();
        let known = |scenes: &HashMap<_, (Arc<SourceFile>, u64, Arc<SceneMeasures>)>,
                     file: &Arc<SourceFile>,
                     key: u64| {
            scenes
                .get(&file.path)
                .and_then(|(known, known_key, measures)| {
                    (Arc::ptr_eq(known, file) && *known_key == key).then(|| Arc::clone(measures))
                })
        };
        let missing: Vec<usize> = (0..files.len())
            .filter(|&at| known(&self.scenes, files[at].0, keyed[at]).is_none())
            .collect();
        let fresh: Vec<(usize, Arc<SceneMeasures>)> = missing
            .par_iter()
            .map(|&at| {
                (
                    at,
                    Arc::new(SceneMeasures::of(workspace, files[at].0, motifs)),
                )
            })
            .collect();
        self.measured += fresh.len();
        for (at, measures) in fresh {
            let file = files[at].0;
            self.scenes
                .insert(file.path.clone(), (Arc::clone(file), keyed[at], measures));
        }
        (0..files.len())
            .map(|at| known(&self.scenes, files[at].0, keyed[at]).expect("measured above"))
            .collect()
    }

    /// Forgets the scenes `workspace` no longer has.
    pub fn retain(&mut self, workspace: &Workspace) {
        self.scenes.retain(|path, _| workspace.file(path).is_some());
    }
}

#[cfg(test)]
mod tests {
    use crate::health::{Health, Measures};
    use crate::index::{SourceFile, Workspace};

    fn edited(workspace: &mut Workspace, path: &str, edit: impl Fn(&str) -> String) {
        let file = workspace.file(path).unwrap();
        let text = edit(&file.text);
        let file = SourceFile::parse(path.into(), text.into(), &workspace.config().paths);
        workspace.insert_file(file);
    }

    #[test]
    fn an_edit_measures_one_scene_again_and_the_motifs_or_the_names_every_scene() {
        let (_dir, mut workspace) = crate::index::test_support::example_copy();
        let scenes = workspace.catalog().scenes().count();
        let mut measures = Measures::default();
        Health::check(&workspace, &mut measures);
        let first = measures.measured;
        assert!(first > 0 && first <= scenes, "{first} of {scenes}");
        Health::check(&workspace, &mut measures);
        assert_eq!(
            measures.measured, first,
            "nothing changed, nothing measured"
        );

        edited(&mut workspace, "Story/Scenes/SCN-the-gate.md", |text| {
            format!("{text}\nRain on the wall.\n")
        });
        Health::check(&workspace, &mut measures);
        assert_eq!(measures.measured, first + 1, "the edited scene alone");

        // The theme's motifs: every scene's counts are read again.
        edited(&mut workspace, "Story/Bible/theme.md", |text| {
            format!("{text}\n## Motifs\n\n- **Salt**: brine\n")
        });
        Health::check(&workspace, &mut measures);
        assert_eq!(measures.measured, first * 2 + 1);

        // A card's aliases change what the scenes name: every scene again.
        edited(
            &mut workspace,
            "Compendium/Characters/CHAR-iria-vell.md",
            |text| text.replacen("aliases: [Iria]", "aliases: [Iria, Vell]", 1),
        );
        Health::check(&workspace, &mut measures);
        assert_eq!(measures.measured, first * 3 + 1);
    }
}
