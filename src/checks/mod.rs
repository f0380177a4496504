//! Diagnostics: one file per code, each a pure function of the workspace.
//!
//! A check reads a [`Workspace`] snapshot and returns [`Diagnostic`]s with
//! byte ranges; the CLI and the LSP adapter turn them into lines and columns.
//! Checks never fail: whatever they cannot understand, they leave alone.
//! Severity comes from the code's default, overridden by
//! `[diagnostics.severity]` in `control-room.toml` and, above that, by the
//! editor's `controlRoom.diagnostics.severity` (either may say `off`). Diagnostics the writer marked
//! intentional are dropped (see `allow`), and every other one offers that mark.
//!
//! ## Parts
//!
//! one file per diagnostic code; a check is a pure function of a snapshot. A check that reads
//! another file declares it in `depends_on`. What several checks read the same way is shared,
//! computed once per file and check (`LazyProse`): `referents` (who a pronoun means, across
//! sentences: agreement from cards, the previous subject, the point of view; ambiguous says
//! nothing; in the scene being typed in each sentence's reading kept by its text, names,
//! genders, point of view and the focus before it, so typing reads one sentence again),
//! `speakers` (who speaks each line of dialogue: attribution, pronoun, narrator, action beat,
//! the one addressed, turn-taking),
//! `appearance` (whether a named character is present: speaking or acting, not in memory,
//! dream, letter or hypothesis), `speech` (attributions and narrated acts). In the scene the
//! writer is typing in (`Workspace::is_typed_in`) `spelling` keeps each line's misspellings by
//! its text, its words' dialogue marks and the manuscript's words, so typing spells one line
//! again.

mod allow;
mod anti_pattern;
mod appearance;
mod attribute_mismatch;
mod card_spelling;
mod dead_character;
mod duplicate_id;
mod echo;
mod front_matter;
mod grammar;
mod lifespan;
mod missing_scene;
mod name_typo;
mod orphan_scene;
mod possession;
mod pov_leak;
mod presence;
mod referents;
mod secret;
pub mod speakers;
mod speech;
mod spelling;
mod story_bible;
mod timeline_order;
mod too_large;
mod travel_time;
mod two_places;
mod unknown_reference;
mod unknown_speaker;
mod unreadable;
mod voice_drift;
mod wound;

use std::fmt;

pub(crate) use attribute_mismatch::colour_families;

use crate::index::{CardKind, FilePath, SourceFile, Workspace};
use crate::prose::Prose;
use crate::text::TextRange;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }

    pub fn parse(name: &str) -> Option<Severity> {
        Some(match name {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            "information" => Severity::Information,
            "hint" => Severity::Hint,
            _ => return None,
        })
    }
}

/// Every diagnostic code the server reports, as in the manuscript format's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    FrontMatter,
    UnknownReference,
    DuplicateId,
    DeadCharacter,
    AttributeMismatch,
    NameTypo,
    MissingScene,
    OrphanScene,
    TimelineOrder,
    AntiPattern,
    /// The same uncommon word or phrase again too soon.
    Echo,
    /// A file that could not be read as text, or a broken `control-room.toml`.
    Unreadable,
    /// A file kept but not checked because of its size.
    TooLarge,
    CardSpelling,
    PovLeak,
    Presence,
    TwoPlaces,
    UnknownSpeaker,
    Possession,
    Wound,
    Secret,
    /// A word in no dictionary of the manuscript.
    Spelling,
    /// What harper's rules a novelist wants find in a paragraph.
    Grammar,
    /// Somewhere too soon for the roads between the places.
    TravelTime,
    /// In a scene dated before the birth or after the death.
    Lifespan,
    /// A Story Bible template that misses a part, or names what is not there.
    StoryBible,
    /// A scene whose measured voice is far from the gold standard's.
    VoiceDrift,
    /// Scenes in a row at one pace and tension (health check A1).
    PacingPlateau,
    /// A beat of the beat sheet outside its share of the book (A2).
    BeatProgress,
    /// A character without a function: never mentioned, never speaking, or
    /// gone for a long stretch (B2).
    CastFunction,
    /// A motif that does not recur, or goes missing for long (C1).
    MotifGap,
}

impl Code {
    /// Every code, in the manuscript format's order.
    pub const ALL: [Code; 31] = [
        Code::FrontMatter,
        Code::UnknownReference,
        Code::DuplicateId,
        Code::DeadCharacter,
        Code::AttributeMismatch,
        Code::NameTypo,
        Code::MissingScene,
        Code::OrphanScene,
        Code::TimelineOrder,
        Code::AntiPattern,
        Code::Echo,
        Code::Unreadable,
        Code::TooLarge,
        Code::CardSpelling,
        Code::PovLeak,
        Code::Presence,
        Code::TwoPlaces,
        Code::UnknownSpeaker,
        Code::Possession,
        Code::Wound,
        Code::Secret,
        Code::Spelling,
        Code::Grammar,
        Code::TravelTime,
        Code::Lifespan,
        Code::StoryBible,
        Code::VoiceDrift,
        Code::PacingPlateau,
        Code::BeatProgress,
        Code::CastFunction,
        Code::MotifGap,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::FrontMatter => "front-matter",
            Code::UnknownReference => "unknown-reference",
            Code::DuplicateId => "duplicate-id",
            Code::DeadCharacter => "dead-character",
            Code::AttributeMismatch => "attribute-mismatch",
            Code::NameTypo => "name-typo",
            Code::MissingScene => "missing-scene",
            Code::OrphanScene => "orphan-scene",
            Code::TimelineOrder => "timeline-order",
            Code::AntiPattern => "anti-pattern",
            Code::Echo => "echo",
            Code::Unreadable => "unreadable",
            Code::TooLarge => "too-large",
            Code::CardSpelling => "card-spelling",
            Code::PovLeak => "pov-leak",
            Code::Presence => "presence",
            Code::TwoPlaces => "two-places",
            Code::UnknownSpeaker => "unknown-speaker",
            Code::Possession => "possession",
            Code::Wound => "wound",
            Code::Secret => "secret",
            Code::Spelling => "spelling",
            Code::Grammar => "grammar",
            Code::TravelTime => "travel-time",
            Code::Lifespan => "lifespan",
            Code::StoryBible => "story-bible",
            Code::VoiceDrift => "voice-drift",
            Code::PacingPlateau => "pacing-plateau",
            Code::BeatProgress => "beat-progress",
            Code::CastFunction => "cast-function",
            Code::MotifGap => "motif-gap",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place in another file that explains a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub path: FilePath,
    pub range: TextRange,
    pub message: String,
}

/// A text replacement in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEdit {
    pub path: FilePath,
    pub range: TextRange,
    pub new_text: String,
}

/// A fix for a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub edits: Vec<FileEdit>,
    pub kind: FixKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixKind {
    /// Corrects the problem (use the card's value, replace with the name).
    Correction,
    /// Marks the diagnostic intentional with an allow comment or entry.
    MarkIntentional,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: FilePath,
    pub range: TextRange,
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    pub related: Vec<Related>,
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    pub fn new(
        file: &SourceFile,
        range: TextRange,
        severity: Severity,
        code: Code,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            path: file.path.clone(),
            range,
            severity,
            code,
            message: message.into(),
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    pub fn with_related(
        mut self,
        path: &FilePath,
        range: TextRange,
        message: impl Into<String>,
    ) -> Self {
        self.related.push(Related {
            path: path.clone(),
            range,
            message: message.into(),
        });
        self
    }

    fn with_fix(mut self, fix: Fix) -> Self {
        self.fixes.push(fix);
        self
    }
}

/// A file's prose and who its pronouns mean, analysed when the first check
/// asks for them and shared by the checks of one [`check_file`] call.
struct LazyProse<'a> {
    file: &'a SourceFile,
    /// The writer is typing in it: its blocks are kept ([`Prose::analyse_typed_in`]).
    typed_in: bool,
    prose: std::sync::OnceLock<Prose>,
    referents: std::sync::OnceLock<referents::Referents>,
    speakers: std::sync::OnceLock<Vec<speakers::Line>>,
}

impl<'a> LazyProse<'a> {
    fn new(workspace: &Workspace, file: &'a SourceFile) -> Self {
        LazyProse {
            file,
            typed_in: workspace.is_typed_in(&file.path),
            prose: std::sync::OnceLock::new(),
            referents: std::sync::OnceLock::new(),
            speakers: std::sync::OnceLock::new(),
        }
    }

    fn get(&self) -> &Prose {
        self.prose.get_or_init(|| {
            let file = self.file;
            if self.typed_in {
                Prose::analyse_typed_in(&file.path, &file.text, &file.syntax)
            } else {
                file.analyse_prose()
            }
        })
    }

    fn speakers(&self, workspace: &Workspace) -> &[speakers::Line] {
        self.speakers
            .get_or_init(|| speakers::lines(workspace, self.file, self.get()))
    }

    fn referents(&self, workspace: &Workspace) -> &referents::Referents {
        self.referents
            .get_or_init(|| referents::Referents::resolve(workspace, self.file, self.get()))
    }
}

/// The characters (their cards' files) who speak a line of dialogue in
/// the file at `path`, as the checks read the speakers (attribution, action
/// beat, turn-taking).
pub fn speaking(workspace: &Workspace, path: &str) -> std::collections::BTreeSet<FilePath> {
    let Some(file) = workspace.file(path) else {
        return Default::default();
    };
    LazyProse::new(workspace, file)
        .speakers(workspace)
        .iter()
        .filter_map(|line| match &line.speaker {
            speakers::Speaker::Card(card) => Some(card.clone()),
            speakers::Speaker::Unknown(_) | speakers::Speaker::Nobody => None,
        })
        .collect()
}

/// Who speaks each paragraph of dialogue in the file at `path`, and how it
/// was found: the reading the checks act on, for `control-room speakers`
/// and the editor's hints.
pub fn speaker_lines(workspace: &Workspace, path: &str) -> Vec<speakers::Line> {
    let Some(file) = workspace.file(path) else {
        return Vec::new();
    };
    LazyProse::new(workspace, file).speakers(workspace).to_vec()
}

/// A check of one file, with the file's prose shared by the checks.
type Check = fn(&Workspace, &SourceFile, &LazyProse, &mut Vec<Diagnostic>);

/// The checks that read a scene's referents (who its pronouns mean), with
/// the spelling and the names' typos: about half the cost of a scene's
/// checks, as typing in it reads them (its referents kept sentence by
/// sentence, `echo` its words line by line).
const WITH_REFERENTS: &[Check] = &[
    attribute_mismatch::check,
    possession::check,
    pov_leak::check,
    wound::check,
    spelling::check,
    name_typo::check,
];

/// The other half of a scene's checks.
const THE_REST: &[Check] = &[
    echo::check,
    dead_character::check,
    anti_pattern::check,
    presence::check,
    unknown_speaker::check,
    secret::check,
    lifespan::check,
    voice_drift::check,
    grammar::check,
];

/// The diagnostics of one file, sorted by position.
///
/// A scene's checks run as two halves at once (rayon's `join`: on the pool
/// that calls, so a pass over many files keeps its cores busy with files,
/// and one scene being typed in gets two cores); they read the scene's
/// prose, analysed once before them.
pub fn check_file(workspace: &Workspace, path: &str) -> Vec<Diagnostic> {
    let Some(file) = workspace.file(path) else {
        return Vec::new();
    };
    let mut diagnostics = Vec::new();
    let prose = LazyProse::new(workspace, file);
    unreadable::check(file, &mut diagnostics);
    too_large::check(file, &mut diagnostics);
    front_matter::check(workspace, file, &mut diagnostics);
    unknown_reference::check(workspace, file, &mut diagnostics);
    duplicate_id::check(workspace, file, &mut diagnostics);
    missing_scene::check(workspace, file, &mut diagnostics);
    orphan_scene::check(workspace, file, &mut diagnostics);
    timeline_order::check(workspace, file, &mut diagnostics);
    card_spelling::check(workspace, file, &mut diagnostics);
    two_places::check(workspace, file, &mut diagnostics);
    travel_time::check(workspace, file, &mut diagnostics);
    story_bible::check(workspace, file, &mut diagnostics);
    if file.scene().is_some() {
        // What characters look like, which phrases to avoid, who is where:
        // matters of a scene's prose alone. (The order of the checks does
        // not matter: the diagnostics are sorted below.)
        prose.get();
        // Each half settles what it found (a typed-in scene's diagnostics
        // are mostly theirs), so only the sort waits for both.
        let run = |checks: &[Check]| {
            let mut found = Vec::new();
            for check in checks {
                check(workspace, file, &prose, &mut found);
            }
            settle_each(workspace, file, &mut found);
            found
        };
        let (with_referents, rest) = rayon::join(|| run(WITH_REFERENTS), || run(THE_REST));
        settle_each(workspace, file, &mut diagnostics);
        diagnostics.extend(with_referents);
        diagnostics.extend(rest);
    } else {
        dead_character::check(workspace, file, &prose, &mut diagnostics);
        name_typo::check(workspace, file, &prose, &mut diagnostics);
        spelling::check(workspace, file, &prose, &mut diagnostics);
        settle_each(workspace, file, &mut diagnostics);
    }
    sort(&mut diagnostics);
    diagnostics
}

/// What every diagnostic of `file` goes through before the writer sees it,
/// whoever found it (the checks here, the story's health): the severity
/// settings, the writer's marks of what is intentional (dropped, and the
/// fix that marks one offered), and the order of the text.
pub fn settle(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    settle_each(workspace, file, diagnostics);
    sort(diagnostics);
}

/// [`settle`] but the order: what it does to each diagnostic alone.
fn settle_each(workspace: &Workspace, file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) {
    apply_severity_settings(workspace, diagnostics);
    diagnostics.retain(|diagnostic| !allow::is_allowed(file, diagnostic));
    for diagnostic in diagnostics.iter_mut() {
        if let Some(fix) = allow::allow_fix(file, diagnostic) {
            diagnostic.fixes.push(fix);
        }
    }
}

/// The order of the text (and of the codes, at one place).
fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (a.range.start, a.range.end, a.code).cmp(&(b.range.start, b.range.end, b.code))
    });
}

/// A key for everything outside `file` that [`check_file`] reads for it:
/// while the file (the same `Arc`) and its key are unchanged, its
/// diagnostics are too. Names, ids and the outline's identity (which
/// `unknown-reference`, `duplicate-id`, `missing-scene`, `name-typo` and the
/// mentions read) and the severity settings concern every file; each check
/// with other cross-file reads adds its own in a `depends_on` beside it, so
/// editing a card's eyes re-checks only the scenes that mention it.
pub fn dependency_key(workspace: &Workspace, file: &SourceFile) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    workspace.settings_fingerprint().hash(&mut hasher);
    workspace.catalog().names_fingerprint().hash(&mut hasher);
    // `name-typo` and `card-spelling` read the manuscript's spellings of names.
    workspace.variants().fingerprint().hash(&mut hasher);
    orphan_scene::depends_on(workspace, file, &mut hasher);
    dead_character::depends_on(workspace, file, &mut hasher);
    if file.scene().is_some() {
        // What the prose checks read of the characters a scene names and of
        // its point of view (`attribute-mismatch`, and through `referents`
        // `pov-leak`, `possession`, `wound`): eyes, hair, gender.
        mentioned_facts(workspace, file).hash(&mut hasher);
    }
    timeline_order::depends_on(workspace, file, &mut hasher);
    anti_pattern::depends_on(workspace, file, &mut hasher);
    two_places::depends_on(workspace, file, &mut hasher);
    travel_time::depends_on(workspace, file, &mut hasher);
    lifespan::depends_on(workspace, file, &mut hasher);
    story_bible::depends_on(workspace, file, &mut hasher);
    possession::depends_on(workspace, file, &mut hasher);
    wound::depends_on(workspace, file, &mut hasher);
    secret::depends_on(workspace, file, &mut hasher);
    echo::depends_on(workspace, file, &mut hasher);
    voice_drift::depends_on(workspace, file, &mut hasher);
    // `spelling` reads the manuscript's words; `grammar`, whether the file
    // is proofread (the rules are in the settings' fingerprint).
    workspace.lexicon().fingerprint().hash(&mut hasher);
    (workspace.proofreads(&file.path) && crate::language::grammar::is_ready()).hash(&mut hasher);
    hasher.finish()
}

/// A scene as messages name it: “The Fall” (SCN-the-fall), or its id.
fn scene_label(scene: &crate::index::Scene) -> String {
    match &scene.title {
        Some(title) => format!("“{title}” ({})", scene.id),
        None => scene.id.clone(),
    }
}

/// The facts of every character a scene names, and of its point of view,
/// combined in no order: each card once (the mentions of one file share
/// their card's path, so the path's address tells them apart).
fn mentioned_facts(workspace: &Workspace, file: &SourceFile) -> u64 {
    let catalog = workspace.catalog();
    let mut cards: Vec<&FilePath> = workspace
        .mentions(&file.path)
        .iter()
        .map(|mention| &mention.card)
        .collect();
    cards.sort_unstable_by_key(|card| std::sync::Arc::as_ptr(card).cast::<u8>() as usize);
    cards.dedup_by_key(|card| std::sync::Arc::as_ptr(card).cast::<u8>() as usize);
    let pov = file
        .scene()
        .and_then(|scene| scene.pov.as_ref())
        .and_then(|pov| catalog.resolve_card(&pov.text, &[CardKind::Character]));
    let pov_facts = pov.and_then(|card| workspace.card_facts(&card.path));
    cards
        .into_iter()
        .filter_map(|card| workspace.card_facts(card))
        .fold(pov_facts.unwrap_or(1), u64::wrapping_add)
}

/// Diagnostics about the workspace's configuration file, which is not Markdown.
pub fn check_config(workspace: &Workspace) -> Option<Diagnostic> {
    let error = workspace.config_error()?;
    Some(Diagnostic {
        path: crate::index::config::CONFIG_FILE.into(),
        range: error.range,
        severity: Severity::Error,
        code: Code::Unreadable,
        message: error.message.clone(),
        related: Vec::new(),
        fixes: Vec::new(),
    })
}

/// Every diagnostic of the workspace, by path then position.
pub fn check_workspace(workspace: &Workspace) -> Vec<Diagnostic> {
    use rayon::prelude::*;
    let files: Vec<_> = workspace.files().collect();
    let mut diagnostics: Vec<Diagnostic> = files
        .par_iter()
        .flat_map_iter(|file| check_file(workspace, &file.path))
        .collect();
    // The configuration file takes its place in path order.
    if let Some(config) = check_config(workspace) {
        let at = diagnostics.partition_point(|diagnostic| *diagnostic.path < *config.path);
        diagnostics.insert(at, config);
    }
    diagnostics
}

fn apply_severity_settings(workspace: &Workspace, diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.retain_mut(|diagnostic| {
        match workspace.severity_setting(diagnostic.code.as_str()) {
            Some("off") => false,
            Some(name) => {
                if let Some(severity) = Severity::parse(name) {
                    diagnostic.severity = severity;
                }
                true
            }
            None => true,
        }
    });
}

#[cfg(test)]
mod tests;
