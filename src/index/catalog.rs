//! What files know about each other: cards by name, scenes by id, the
//! outline's order, and the name matcher.
//!
//! The catalog is rebuilt from the files after every change (it holds `Arc`s
//! and small maps, so that is cheap). Its [`Catalog::fingerprint`] covers
//! everything a check may read from another file; while it is unchanged, a
//! file's diagnostics depend on that file alone.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::file::{FileContent, FilePath, SourceFile};
use super::mentions::NameMatcher;
use super::model::{AntiPattern, Card, CardKind, Scene};

#[derive(Clone, Debug, Default)]
pub struct Catalog {
    cards: Vec<Arc<SourceFile>>,
    by_name: HashMap<String, Vec<FilePath>>,
    by_card_id: HashMap<String, Vec<FilePath>>,
    scenes: Vec<Arc<SourceFile>>,
    scenes_by_id: HashMap<String, Vec<FilePath>>,
    outline: Option<Arc<SourceFile>>,
    outline_position: HashMap<String, usize>,
    anti_patterns: Option<Arc<SourceFile>>,
    matcher: Arc<NameMatcher>,
    /// The names the matcher was built from, to know when to rebuild it.
    matcher_names: Vec<(FilePath, Vec<String>)>,
    fingerprint: u64,
}

impl Catalog {
    /// Builds the catalog of `files`, reusing `previous`'s matcher when no name changed.
    pub fn build(
        files: &BTreeMap<FilePath, Arc<SourceFile>>,
        previous: Option<&Catalog>,
    ) -> Catalog {
        let mut catalog = Catalog::default();
        for file in files.values() {
            match &file.content {
                FileContent::Card(card) => {
                    for name in card.names() {
                        let owners = catalog.by_name.entry(name.text.clone()).or_default();
                        if !owners.contains(&file.path) {
                            owners.push(file.path.clone());
                        }
                    }
                    catalog
                        .by_card_id
                        .entry(card.id.clone())
                        .or_default()
                        .push(file.path.clone());
                    catalog.cards.push(file.clone());
                }
                FileContent::Scene(scene) => {
                    catalog
                        .scenes_by_id
                        .entry(scene.id.clone())
                        .or_default()
                        .push(file.path.clone());
                    catalog.scenes.push(file.clone());
                }
                FileContent::Outline(_) if catalog.outline.is_none() => {
                    catalog.outline = Some(file.clone())
                }
                FileContent::AntiPatterns(_) if catalog.anti_patterns.is_none() => {
                    catalog.anti_patterns = Some(file.clone());
                }
                _ => {}
            }
        }
        if let Some(outline) = catalog.outline.as_ref().and_then(|file| file.outline()) {
            for (position, entry) in outline.entries.iter().enumerate() {
                catalog
                    .outline_position
                    .entry(entry.scene_id.clone())
                    .or_insert(position);
            }
        }
        catalog.matcher_names = catalog
            .cards
            .iter()
            .filter_map(|file| {
                let card = file.card()?;
                let names: Vec<String> = card.names().map(|name| name.text.clone()).collect();
                (!names.is_empty()).then(|| (file.path.clone(), names))
            })
            .collect();
        catalog.matcher = match previous {
            Some(previous) if previous.matcher_names == catalog.matcher_names => {
                previous.matcher.clone()
            }
            _ => Arc::new(NameMatcher::new(catalog.matcher_names.iter().map(
                |(card, names)| (card.clone(), names.iter().map(String::as_str).collect()),
            ))),
        };
        catalog.fingerprint = catalog.compute_fingerprint();
        catalog
    }

    /// Whether the matcher is the same one as in `other` (so mentions stay valid).
    pub fn same_names_as(&self, other: &Catalog) -> bool {
        Arc::ptr_eq(&self.matcher, &other.matcher)
    }

    pub fn matcher(&self) -> &NameMatcher {
        &self.matcher
    }

    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Every card, in path order.
    pub fn cards(&self) -> impl Iterator<Item = (&FilePath, &Card)> {
        self.cards
            .iter()
            .filter_map(|file| Some((&file.path, file.card()?)))
    }

    pub fn card(&self, path: &str) -> Option<&Arc<SourceFile>> {
        let index = self
            .cards
            .binary_search_by(|file| (*file.path).cmp(path))
            .ok()?;
        Some(&self.cards[index])
    }

    /// The cards whose name or alias is exactly `name`.
    pub fn cards_named(&self, name: &str) -> &[FilePath] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The card a front matter reference means: a name, an alias or a card id,
    /// of one of `kinds`.
    pub fn resolve_card(&self, reference: &str, kinds: &[CardKind]) -> Option<&Arc<SourceFile>> {
        let by_name = self.by_name.get(reference).into_iter().flatten();
        let by_id = self.by_card_id.get(reference).into_iter().flatten();
        by_name
            .chain(by_id)
            .filter_map(|path| self.card(path))
            .find(|file| file.card().is_some_and(|card| kinds.contains(&card.kind)))
    }

    pub fn cards_with_id(&self, id: &str) -> &[FilePath] {
        self.by_card_id.get(id).map_or(&[], Vec::as_slice)
    }

    /// Every scene file, in path order.
    pub fn scenes(&self) -> impl Iterator<Item = (&Arc<SourceFile>, &Scene)> {
        self.scenes
            .iter()
            .filter_map(|file| Some((file, file.scene()?)))
    }

    pub fn scene_files(&self, id: &str) -> &[FilePath] {
        self.scenes_by_id.get(id).map_or(&[], Vec::as_slice)
    }

    pub fn scene(&self, id: &str) -> Option<&Arc<SourceFile>> {
        let path = self.scene_files(id).first()?;
        let index = self
            .scenes
            .binary_search_by(|file| (*file.path).cmp(path))
            .ok()?;
        Some(&self.scenes[index])
    }

    pub fn outline(&self) -> Option<&Arc<SourceFile>> {
        self.outline.as_ref()
    }

    /// A scene's place in story order: its first entry in the outline.
    pub fn outline_position(&self, scene_id: &str) -> Option<usize> {
        self.outline_position.get(scene_id).copied()
    }

    pub fn anti_patterns(&self) -> &[AntiPattern] {
        match self.anti_patterns.as_ref().map(|file| &file.content) {
            Some(FileContent::AntiPatterns(patterns)) => patterns,
            _ => &[],
        }
    }

    fn compute_fingerprint(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        for file in &self.cards {
            if let Some(card) = file.card() {
                (
                    &file.path,
                    card.kind,
                    &card.name,
                    &card.aliases,
                    card.status,
                    &card.died_in,
                    &card.attributes,
                )
                    .hash(&mut hasher);
            }
        }
        for file in &self.scenes {
            if let Some(scene) = file.scene() {
                (
                    &file.path,
                    &scene.id,
                    &scene.date,
                    scene.flashback,
                    &scene.title,
                )
                    .hash(&mut hasher);
            }
        }
        if let Some(outline) = &self.outline {
            outline.path.hash(&mut hasher);
            if let Some(outline) = outline.outline() {
                for entry in &outline.entries {
                    (&entry.scene_id, &entry.beat).hash(&mut hasher);
                }
            }
        }
        for pattern in self.anti_patterns() {
            (&pattern.phrase, pattern.tolerance as u8).hash(&mut hasher);
        }
        hasher.finish()
    }
}
