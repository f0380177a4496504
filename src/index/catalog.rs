//! What files know about each other: cards by name, scenes by id, the
//! outline's order, and the name matcher.
//!
//! The catalog is rebuilt from the files after every change but typing in a
//! scene's prose, which copies it with the scene's `Arc` swapped: its maps
//! are shared (`Arc`s), so the copy costs a few reference counts.
//! [`Catalog::names_fingerprint`] covers who is called what; `checks::dependency_key` adds, per file, the other
//! facts its checks read from other files.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::calendar::TimeWindow;
use super::file::{FileContent, FilePath, SourceFile};
use super::mentions::NameMatcher;
use super::model::{AntiPattern, Card, CardKind, Scene, StoryDate};
use super::names::NameWords;

#[derive(Clone, Debug, Default)]
pub struct Catalog {
    cards: Vec<Arc<SourceFile>>,
    by_name: Arc<HashMap<String, Vec<FilePath>>>,
    by_card_id: Arc<HashMap<String, Vec<FilePath>>>,
    scenes: Vec<Arc<SourceFile>>,
    scenes_by_id: Arc<HashMap<String, Vec<FilePath>>>,
    outline: Option<Arc<SourceFile>>,
    outline_position: Arc<HashMap<String, usize>>,
    anti_patterns: Option<Arc<SourceFile>>,
    /// The voice bundle's gold standard (the first by path).
    voice_gold: Option<Arc<SourceFile>>,
    /// The first file of each Story Bible template, by path order.
    bible: BTreeMap<super::bible::BibleKind, Arc<SourceFile>>,
    matcher: Arc<NameMatcher>,
    name_words: Arc<NameWords>,
    /// The names the matcher was built from, to know when to rebuild it.
    matcher_names: Arc<Vec<(FilePath, CardKind, Vec<String>)>>,
    anti_phrases: Arc<PhraseIndex>,
    /// For each outline entry, the latest story date of the entries before it.
    latest_date_before: Arc<Vec<Option<(StoryDate, String)>>>,
    /// For each outline entry, its scene's story date (flashbacks left out).
    entry_dates: Arc<Vec<Option<StoryDate>>>,
    names_fingerprint: u64,
    tracking: Arc<super::tracking::Tracking>,
    clock: Arc<super::clock::Clock>,
    /// Each character card's gender, when one is known.
    genders: Arc<HashMap<FilePath, Option<super::gender::Gender>>>,
    /// For each character card, a hash of what the prose checks read of it:
    /// its eyes, hair and gender (declared or implied).
    card_facts: Arc<rustc_hash::FxHashMap<FilePath, u64>>,
    /// For each character card with a life in dates (`born`, `died`, or a
    /// `died_in`), a hash of it: the dates, the death scene's date and
    /// place in the outline, the status.
    life_facts: Arc<rustc_hash::FxHashMap<FilePath, u64>>,
}

impl Catalog {
    /// Builds the catalog of `files`, reusing `previous`'s matcher when no name changed.
    pub fn build(
        files: &super::file::Files,
        previous: Option<&Catalog>,
        calendar: &Arc<super::calendar::Calendar>,
    ) -> Catalog {
        let mut catalog = Catalog::default();
        for file in files.values() {
            match &file.content {
                FileContent::Card(card) => {
                    for name in card.names() {
                        let owners = Arc::make_mut(&mut catalog.by_name)
                            .entry(name.text.clone())
                            .or_default();
                        if !owners.contains(&file.path) {
                            owners.push(file.path.clone());
                        }
                    }
                    Arc::make_mut(&mut catalog.by_card_id)
                        .entry(card.id.clone())
                        .or_default()
                        .push(file.path.clone());
                    catalog.cards.push(file.clone());
                }
                FileContent::Scene(scene) => {
                    Arc::make_mut(&mut catalog.scenes_by_id)
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
                FileContent::VoiceGold(_) if catalog.voice_gold.is_none() => {
                    catalog.voice_gold = Some(file.clone());
                }
                FileContent::Bible(bible) => {
                    catalog
                        .bible
                        .entry(bible.kind)
                        .or_insert_with(|| file.clone());
                }
                _ => {}
            }
        }
        catalog.find_outline_dates();
        catalog.matcher_names = Arc::new(
            catalog
                .cards
                .iter()
                .filter_map(|file| {
                    let card = file.card()?;
                    let names: Vec<String> = card.names().map(|name| name.text.clone()).collect();
                    (!names.is_empty()).then(|| (file.path.clone(), card.kind, names))
                })
                .collect(),
        );
        let kept = previous.filter(|previous| previous.matcher_names == catalog.matcher_names);
        if let Some(previous) = kept {
            catalog.matcher = previous.matcher.clone();
            catalog.name_words = previous.name_words.clone();
            // Nothing to build beside the rest: asking rayon's pool from a
            // thread outside it would wait for whatever that pool was given
            // first (a start's first read of the cards, while a scene opens).
            catalog.find_the_rest(kept, calendar);
        } else {
            // The name automaton is the longest part of a catalog with new
            // names: it is built beside the rest, which does not read it.
            let matcher_names = catalog.matcher_names.clone();
            let (matcher, ()) = rayon::join(
                || {
                    NameMatcher::new(matcher_names.iter().map(|(card, _, names)| {
                        (card.clone(), names.iter().map(String::as_str).collect())
                    }))
                },
                || {
                    catalog.name_words = Arc::new(NameWords::new(
                        catalog.matcher_names.iter().map(|(card, kind, names)| {
                            (
                                card.clone(),
                                *kind,
                                names.iter().map(String::as_str).collect(),
                            )
                        }),
                    ));
                    catalog.find_the_rest(previous, calendar);
                },
            );
            catalog.matcher = Arc::new(matcher);
        }
        catalog.names_fingerprint = catalog.compute_names_fingerprint();
        catalog
    }

    /// What the catalog knows beside its names: the anti-patterns' phrases,
    /// the cards' facts, the tracking and the story clock.
    fn find_the_rest(
        &mut self,
        previous: Option<&Catalog>,
        calendar: &Arc<super::calendar::Calendar>,
    ) {
        self.anti_phrases = Arc::new(PhraseIndex::new(self.anti_patterns()));
        self.find_card_facts(previous);
        self.tracking = Arc::new(super::tracking::Tracking::build(
            &self.scenes,
            &self.cards,
            |id| self.outline_position.get(id).copied(),
        ));
        self.find_life_facts();
        self.clock = Arc::new(super::clock::Clock::build(
            calendar.clone(),
            &self.scenes,
            &self.cards,
            self,
        ));
    }

    /// The catalog after `new` replaced `old`, a scene whose front matter
    /// reads the same (the writer typed in its prose): what the catalog
    /// knows is unchanged, and only where it keeps the file is the file
    /// swapped. `None` for any other change, which [`Catalog::build`] reads.
    pub fn with_prose_changed(
        &self,
        old: &Arc<SourceFile>,
        new: &Arc<SourceFile>,
    ) -> Option<Catalog> {
        let (Some(before), Some(after)) = (old.scene(), new.scene()) else {
            return None;
        };
        let same_scene = Scene {
            word_count: before.word_count,
            ..after.clone()
        } == *before;
        let same_file = old.path == new.path
            && old.front_matter == new.front_matter
            && old.problems == new.problems
            && old.allow == new.allow
            && old.load_error == new.load_error;
        if !(same_scene && same_file) {
            return None;
        }
        let mut catalog = self.clone();
        let at = catalog
            .scenes
            .binary_search_by(|file| file.path.cmp(&new.path))
            .ok()?;
        if !Arc::ptr_eq(&catalog.scenes[at], old) {
            return None;
        }
        catalog.scenes[at] = new.clone();
        if catalog.tracking.holds(old) {
            Arc::make_mut(&mut catalog.tracking).replace(old, new);
        }
        if catalog.clock.holds(old) {
            Arc::make_mut(&mut catalog.clock).replace(old, new);
        }
        Some(catalog)
    }

    /// The outline's positions and, for each entry, its scene's date and the
    /// latest date before it.
    fn find_outline_dates(&mut self) {
        if let Some(outline) = self.outline.clone()
            && let Some(outline) = outline.outline()
        {
            let mut latest: Option<(StoryDate, String)> = None;
            let mut latest_order = None;
            for (position, entry) in outline.entries.iter().enumerate() {
                Arc::make_mut(&mut self.outline_position)
                    .entry(entry.scene_id.clone())
                    .or_insert(position);
                Arc::make_mut(&mut self.latest_date_before).push(latest.clone());
                let scene = self
                    .scene(&entry.scene_id)
                    .and_then(|file| file.scene())
                    .filter(|scene| !scene.flashback);
                let date = scene.and_then(|scene| scene.story_date);
                // The latest so far, with unknown fields counting as earliest
                // ("1203-05" then "1203-05-30": the latter is the latest), and
                // on one day the one whose time of day begins latest.
                let order = date.map(|date| {
                    let starts = scene
                        .and_then(|scene| scene.time.as_ref())
                        .and_then(|time| TimeWindow::parse(&time.text))
                        .map(|window| window.earliest);
                    (date.year, date.month, date.day, starts)
                });
                Arc::make_mut(&mut self.entry_dates).push(date);
                if let (Some(date), Some(order)) = (date, order)
                    && latest_order.is_none_or(|latest| latest < order)
                {
                    latest = Some((date, entry.scene_id.clone()));
                    latest_order = Some(order);
                }
            }
        }
    }

    /// The story clock (see [`super::clock`]).
    pub fn clock(&self) -> &super::clock::Clock {
        &self.clock
    }

    /// The gender of a character card: `None` for no character card,
    /// `Some(None)` when it is not known.
    pub fn gender(&self, card: &str) -> Option<Option<super::gender::Gender>> {
        self.genders.get(card).copied()
    }

    /// Whether some character card says nothing of its gender.
    pub fn has_unknown_gender(&self) -> bool {
        self.genders.values().any(Option::is_none)
    }

    /// A hash of what the prose checks read of a character card (eyes, hair,
    /// gender); `None` for other files.
    pub fn card_facts(&self, card: &str) -> Option<u64> {
        self.card_facts.get(card).copied()
    }

    /// Tracked objects and wounds, and scenes by day and time.
    pub fn tracking(&self) -> &super::tracking::Tracking {
        &self.tracking
    }

    /// Each character's gender (kept from `previous` for an unchanged card)
    /// and the hash of what the prose checks read of it.
    fn find_card_facts(&mut self, previous: Option<&Catalog>) {
        // A card unchanged since the previous catalog keeps its gender.
        let unchanged = |file: &Arc<SourceFile>| {
            previous
                .and_then(|previous| previous.card(&file.path))
                .is_some_and(|before| Arc::ptr_eq(before, file))
        };
        self.genders = Arc::new(
            self.cards
                .iter()
                .filter_map(|file| {
                    let card = file
                        .card()
                        .filter(|card| card.kind == CardKind::Character)?;
                    let gender =
                        match previous.and_then(|previous| previous.genders.get(&file.path)) {
                            Some(gender) if unchanged(file) => *gender,
                            _ => super::gender::card_gender(card),
                        };
                    Some((file.path.clone(), gender))
                })
                .collect(),
        );
        let card_facts = self
            .cards
            .iter()
            .filter_map(|file| {
                let card = file
                    .card()
                    .filter(|card| card.kind == CardKind::Character)?;
                let mut hasher = DefaultHasher::new();
                file.path.hash(&mut hasher);
                for key in ["eyes", "hair", "gender", "sex", "pronouns"] {
                    card.attribute(key).hash(&mut hasher);
                }
                self.genders
                    .get(&file.path)
                    .map(|gender| gender.map(|gender| gender as u8))
                    .hash(&mut hasher);
                Some((file.path.clone(), hasher.finish()))
            })
            .collect();
        self.card_facts = Arc::new(card_facts);
    }

    /// What `lifespan` reads of each character card with a life in dates.
    fn find_life_facts(&mut self) {
        let facts = self
            .cards
            .iter()
            .filter_map(|file| {
                let card = file.card()?;
                if card.kind != CardKind::Character
                    || (card.born.is_none() && card.died.is_none() && card.died_in.is_none())
                {
                    return None;
                }
                let mut hasher = DefaultHasher::new();
                (
                    &file.path,
                    &card.born,
                    &card.died,
                    &card.died_in,
                    card.status,
                )
                    .hash(&mut hasher);
                if let Some(died_in) = &card.died_in {
                    let scene = self.scene(&died_in.text).and_then(|file| file.scene());
                    scene
                        .map(|scene| (&scene.date, &scene.id))
                        .hash(&mut hasher);
                    self.outline_position(&died_in.text).hash(&mut hasher);
                }
                Some((file.path.clone(), hasher.finish()))
            })
            .collect();
        self.life_facts = Arc::new(facts);
    }

    /// A hash of a character card's life in dates, when it has one.
    pub fn life_facts(&self, card: &str) -> Option<u64> {
        self.life_facts.get(card).copied()
    }

    /// Whether the matcher is the same one as in `other` (so mentions stay valid).
    pub fn same_names_as(&self, other: &Catalog) -> bool {
        Arc::ptr_eq(&self.matcher, &other.matcher)
    }

    pub fn matcher(&self) -> &NameMatcher {
        &self.matcher
    }

    /// The words of every name, for the name-typo check.
    pub fn name_words(&self) -> &NameWords {
        &self.name_words
    }

    /// The anti-pattern sheet's phrases as word sequences.
    pub fn anti_phrases(&self) -> &PhraseIndex {
        &self.anti_phrases
    }

    /// A hash of who is called what: every card's id, kind, names and
    /// aliases (with where they are written), every scene's id, and which
    /// file is the outline. Checks that read names or ids depend on it.
    pub fn names_fingerprint(&self) -> u64 {
        self.names_fingerprint
    }

    /// The latest story date among the scenes before outline entry `position`
    /// (flashbacks left out), with the scene that has it.
    pub fn latest_date_before(&self, position: usize) -> Option<&(StoryDate, String)> {
        self.latest_date_before.get(position)?.as_ref()
    }

    /// The story date of the scene at outline entry `position`, unless it is
    /// a flashback.
    pub fn entry_date(&self, position: usize) -> Option<StoryDate> {
        self.entry_dates.get(position).copied().flatten()
    }

    /// Every card, in path order.
    pub fn cards(&self) -> impl Iterator<Item = (&FilePath, &Card)> {
        self.cards
            .iter()
            .filter_map(|file| Some((&file.path, file.card()?)))
    }

    /// The name of the card at `path` (its `name`, else its id), or the path
    /// itself when no card is there: how a message names a character or place.
    pub fn card_name(&self, path: &str) -> String {
        self.card(path)
            .and_then(|file| file.card())
            .map_or_else(|| path.to_owned(), |card| card.display_name().to_owned())
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

    /// Whether `card` is dead in `scene`'s present: its `status` is dead and
    /// its `died_in` scene comes before `scene` in the outline, which is no
    /// flashback. `dead-character`, `lifespan` and the semantic tokens ask.
    pub fn dead_by_outline(&self, card: &Card, scene: &Scene) -> bool {
        if card.kind != CardKind::Character
            || card.status != super::LifeStatus::Dead
            || scene.flashback
        {
            return false;
        }
        let death = card
            .died_in
            .as_ref()
            .and_then(|died_in| self.outline_position(&died_in.text));
        matches!((death, self.outline_position(&scene.id)), (Some(death), Some(here)) if death < here)
    }

    /// A character's death by date and where it is written: the card's
    /// `died:` (the card at `path`), else its `died_in` scene's `date`.
    pub fn death_date<'a>(
        &'a self,
        path: &'a FilePath,
        card: &'a Card,
    ) -> Option<(StoryDate, &'a FilePath, crate::text::TextRange)> {
        if let Some(died) = &card.died {
            return Some((died.date, path, died.written.range));
        }
        let death = self.scene(&card.died_in.as_ref()?.text)?;
        let scene = death.scene()?;
        Some((scene.story_date?, &death.path, scene.date.as_ref()?.range))
    }

    /// The anti-pattern sheet.
    /// The Story Bible's template of `kind` (the first by path when two say they are it).
    pub fn bible(&self, kind: super::bible::BibleKind) -> Option<&Arc<SourceFile>> {
        self.bible.get(&kind)
    }

    /// The voice bundle's gold standard, with what it says.
    pub fn voice_gold(&self) -> Option<(&Arc<SourceFile>, &super::voice::VoiceGold)> {
        let file = self.voice_gold.as_ref()?;
        Some((file, file.voice_gold()?))
    }

    pub fn anti_patterns_file(&self) -> Option<&Arc<SourceFile>> {
        self.anti_patterns.as_ref()
    }

    pub fn anti_patterns(&self) -> &[AntiPattern] {
        match self.anti_patterns.as_ref().map(|file| &file.content) {
            Some(FileContent::AntiPatterns(patterns)) => patterns,
            _ => &[],
        }
    }

    fn compute_names_fingerprint(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        for file in &self.cards {
            if let Some(card) = file.card() {
                (&file.path, &card.id, card.kind, &card.name, &card.aliases).hash(&mut hasher);
            }
        }
        for file in &self.scenes {
            if let Some(scene) = file.scene() {
                (&file.path, &scene.id, scene.id_range).hash(&mut hasher);
            }
        }
        self.outline
            .as_ref()
            .map(|file| &file.path)
            .hash(&mut hasher);
        hasher.finish()
    }
}

impl super::clock::Resolve for Catalog {
    fn card(&self, reference: &str, kinds: &[CardKind]) -> Option<FilePath> {
        self.resolve_card(reference, kinds)
            .map(|file| file.path.clone())
    }
}

/// Phrases as sequences of lower-case words, looked up by their first word.
/// Apostrophes are normalised (`’` → `'`), so "didn’t" matches "didn't".
#[derive(Clone, Debug, Default)]
pub struct PhraseIndex {
    by_first_word: HashMap<String, Vec<(Vec<String>, usize)>>,
}

impl PhraseIndex {
    /// Indexes the phrases of `patterns`; a phrase's value is its index there.
    pub fn new(patterns: &[AntiPattern]) -> PhraseIndex {
        let mut index = PhraseIndex::default();
        for (position, pattern) in patterns.iter().enumerate() {
            let words: Vec<String> = phrase_words(&pattern.phrase).collect();
            if let Some(first) = words.first() {
                index
                    .by_first_word
                    .entry(first.clone())
                    .or_default()
                    .push((words, position));
            }
        }
        // Longest phrase first, so the longest match wins.
        for phrases in index.by_first_word.values_mut() {
            phrases.sort_by_key(|(words, _)| std::cmp::Reverse(words.len()));
        }
        index
    }

    pub fn is_empty(&self) -> bool {
        self.by_first_word.is_empty()
    }

    /// The phrases starting with `word` (already normalised), longest first.
    pub fn starting_with(&self, word: &str) -> &[(Vec<String>, usize)] {
        self.by_first_word.get(word).map_or(&[], Vec::as_slice)
    }
}

/// A word as phrases are compared: lower case, with `’` as `'`.
pub fn normalise_word(word: &str) -> String {
    word.to_lowercase().replace('’', "'")
}

fn phrase_words(phrase: &str) -> impl Iterator<Item = String> + '_ {
    phrase
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’' || c == '-'))
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|word| !word.is_empty())
        .map(normalise_word)
}
