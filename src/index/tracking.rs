//! What the continuity checks read across scenes, found once per change:
//! the scenes whose `tracks:` say what happens to objects and wounds, in
//! outline order, the cards that carry objects, and the scenes grouped by
//! the day and time they happen. A check reads its slice of these instead
//! of walking every scene, so checking every file stays linear.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use super::file::SourceFile;
use super::model::{CardKind, Scene};

#[derive(Clone, Debug, Default)]
pub struct Tracking {
    /// Scenes with `tracks:`, with their outline position, earliest first
    /// (scenes the outline does not list have no place and are left out).
    pub tracked: Vec<(usize, Arc<SourceFile>)>,
    /// Character cards with `carries:`.
    pub carriers: Vec<Arc<SourceFile>>,
    /// A hash of every tracked scene's tracks, id and title, and of every
    /// carrier's `carries:`.
    pub fingerprint: u64,
    /// Scenes that give a `date` and a `time` (not flashbacks), by both.
    pub by_moment: HashMap<Moment, Vec<Arc<SourceFile>>>,
}

/// A story date and a time of day, as written (the time without case or spaces).
pub type Moment = (String, String);

/// The moment a scene happens at, when it gives both its date and its time.
pub fn moment(scene: &Scene) -> Option<Moment> {
    if scene.flashback {
        return None;
    }
    let (date, time) = (scene.story_date?, scene.time.as_ref()?);
    let date = date.to_string();
    let time: String = time
        .text
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    Some((date, time))
}

impl Tracking {
    /// Whether `file` (this very `Arc`) is among the scenes tracked or met.
    pub fn holds(&self, file: &Arc<SourceFile>) -> bool {
        self.tracked.iter().any(|(_, kept)| Arc::ptr_eq(kept, file))
            || self
                .by_moment
                .values()
                .flatten()
                .any(|kept| Arc::ptr_eq(kept, file))
    }

    /// Keeps `new` wherever `old` was kept (the same scene, its prose
    /// changed: nothing tracked moved).
    pub fn replace(&mut self, old: &Arc<SourceFile>, new: &Arc<SourceFile>) {
        let scenes = self
            .tracked
            .iter_mut()
            .map(|(_, kept)| kept)
            .chain(self.by_moment.values_mut().flatten());
        for kept in scenes {
            if Arc::ptr_eq(kept, old) {
                *kept = new.clone();
            }
        }
    }

    pub fn build(
        scenes: &[Arc<SourceFile>],
        cards: &[Arc<SourceFile>],
        position: impl Fn(&str) -> Option<usize>,
    ) -> Tracking {
        let mut tracking = Tracking::default();
        let mut hasher = DefaultHasher::new();
        for file in scenes {
            let Some(scene) = file.scene() else { continue };
            if let Some(moment) = moment(scene) {
                tracking
                    .by_moment
                    .entry(moment)
                    .or_default()
                    .push(file.clone());
            }
            if scene.tracks.is_empty() {
                continue;
            }
            if let Some(at) = position(&scene.id) {
                tracking.tracked.push((at, file.clone()));
            }
        }
        tracking.tracked.sort_by_key(|(at, _)| *at);
        for (at, file) in &tracking.tracked {
            let scene = file.scene().expect("a tracked scene is a scene");
            (at, &file.path, &scene.id, &scene.title, &scene.tracks).hash(&mut hasher);
        }
        for file in cards {
            let is_character = file
                .card()
                .is_some_and(|card| card.kind == CardKind::Character);
            let carries = file
                .front_matter
                .as_ref()
                .and_then(|front| front.get("carries"));
            if let (true, Some(carries)) = (is_character, carries) {
                (&file.path, carries.value.range.slice(&file.text)).hash(&mut hasher);
                tracking.carriers.push(file.clone());
            }
        }
        tracking.fingerprint = hasher.finish();
        tracking
    }
}
