//! `control-room.toml`: paths, diagnostic settings, the manuscript's title
//! and author, word targets, and the echo check's settings.
//!
//! Every key is optional; a missing file means the defaults of the manuscript
//! format. A broken file is reported (with its line) and the defaults are used.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::text::TextRange;

pub const CONFIG_FILE: &str = "control-room.toml";

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Config {
    pub paths: PathsConfig,
    pub diagnostics: DiagnosticsConfig,
    pub manuscript: ManuscriptConfig,
    pub targets: TargetsConfig,
    pub echo: EchoConfig,
    pub language: LanguageConfig,
    /// `[voice]`: the voice-drift check.
    pub voice: VoiceConfig,
    /// `[health]`: the story's deterministic health checks.
    pub health: HealthConfig,
    /// The world's calendar (`[calendar] months`), else the Gregorian one.
    pub calendar: super::calendar::CalendarConfig,
    /// Sections owned by other parts of the product (`[llm]`, `[recipes]`…),
    /// kept so that a setting for them is not an error here.
    #[serde(flatten)]
    pub other: BTreeMap<String, toml::Value>,
}

/// Where the manuscript's parts live, relative to the workspace root.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PathsConfig {
    pub scenes: String,
    pub outline: String,
    pub compendium: String,
    pub characters: String,
    pub locations: String,
    pub anti_patterns: String,
    /// The Story Bible's folder: the protagonist profile, the beat sheet,
    /// the theme and the world rules.
    pub bible: String,
}

impl Default for PathsConfig {
    fn default() -> Self {
        Self {
            scenes: "Story/Scenes".into(),
            outline: "Story/SCN-outline.md".into(),
            compendium: "Compendium".into(),
            characters: "Compendium/Characters".into(),
            locations: "Compendium/Locations".into(),
            anti_patterns: "Compendium/Voice/anti-patterns.md".into(),
            bible: "Story/Bible".into(),
        }
    }
}

impl PathsConfig {
    /// The voice folder: where the anti-pattern sheet is, and the voice
    /// bundle beside it.
    pub fn voice_folder(&self) -> &str {
        self.anti_patterns
            .rsplit_once('/')
            .map_or("", |(folder, _)| folder)
    }

    /// The file `name` in the voice folder.
    pub fn voice_file(&self, name: &str) -> String {
        match self.voice_folder() {
            "" => name.to_owned(),
            folder => format!("{folder}/{name}"),
        }
    }

    /// Puts back the default of every path that would leave the manuscript
    /// (absolute, with `..`, or with `\\`), and says so for the first one:
    /// the manuscript is read from its own folder only.
    fn keep_inside(&mut self, text: &str) -> Option<ConfigError> {
        let defaults = PathsConfig::default();
        let mut first = None;
        for (name, value, default) in [
            ("scenes", &mut self.scenes, defaults.scenes),
            ("outline", &mut self.outline, defaults.outline),
            ("compendium", &mut self.compendium, defaults.compendium),
            ("characters", &mut self.characters, defaults.characters),
            ("locations", &mut self.locations, defaults.locations),
            (
                "anti_patterns",
                &mut self.anti_patterns,
                defaults.anti_patterns,
            ),
            ("bible", &mut self.bible, defaults.bible),
        ] {
            if leaves_the_manuscript(value) {
                first.get_or_insert_with(|| ConfigError {
                    range: value_range(text, name, value),
                    message: format!(
                        "{CONFIG_FILE}: [paths] {name} = \"{value}\" leaves the manuscript; paths are relative to the folder of {CONFIG_FILE} and stay inside it (the default `{default}` is used)"
                    ),
                });
                *value = default;
            }
        }
        first
    }
}

/// Whether a path from the configuration would leave the manuscript's folder.
fn leaves_the_manuscript(value: &str) -> bool {
    value.starts_with('/')
        || value.contains('\\')
        || value.contains(':')
        || value.split('/').any(|part| part == "..")
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiagnosticsConfig {
    /// Delay between the last edit and recomputed diagnostics, in milliseconds.
    pub debounce_ms: u64,
    /// Severity per diagnostic code: `error`, `warning`, `information`, `hint` or `off`.
    pub severity: BTreeMap<String, String>,
}

impl Default for DiagnosticsConfig {
    fn default() -> Self {
        Self {
            debounce_ms: 150,
            severity: BTreeMap::new(),
        }
    }
}

/// What the compiled manuscript says of itself (`[manuscript]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ManuscriptConfig {
    /// The book's title; default: the outline's one top heading, else the folder's name.
    pub title: Option<String>,
    /// The author's name, on the title page.
    pub author: Option<String>,
    /// The typeface of a compiled DOCX: "Times New Roman" (default) or
    /// "Courier New", as manuscript format asks.
    pub font: Option<String>,
}

/// Word targets (`[targets]`): a scene's own `words:` wins over `scene`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TargetsConfig {
    /// The target of a scene without `words:` in its front matter.
    pub scene: Option<u32>,
    /// The target of every chapter (an outline heading that holds scenes).
    pub chapter: Option<u32>,
    /// The whole manuscript's target.
    pub manuscript: Option<u32>,
    /// Words a day, for the day's progress.
    pub daily: Option<u32>,
}

/// The `echo` check's settings (`[echo]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EchoConfig {
    /// How many words apart two uses of a word or phrase still echo.
    pub span: u32,
    /// Words and phrases never reported (any case).
    pub ignore: Vec<String>,
    /// Report the dialogue tags ("said", "asked"…), ignored by default.
    pub dialogue_tags: bool,
}

impl Default for EchoConfig {
    fn default() -> Self {
        Self {
            span: 50,
            ignore: Vec::new(),
            dialogue_tags: false,
        }
    }
}

/// `[voice]`: how far a scene may drift from the gold standard's voice.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VoiceConfig {
    /// The drift a scene may have before it is reported: 1.0 is a difference
    /// a reader hears (sentences 1.8 times as long, dialogue 75 points
    /// apart…); lower is stricter.
    pub drift: f64,
    /// Scenes shorter than this many words are not measured.
    pub min_words: u32,
    /// A tournament's contestants when the writer names none (the editor's
    /// "Voice tournament on this passage").
    pub contestants: Vec<String>,
}

impl Default for VoiceConfig {
    fn default() -> Self {
        Self {
            drift: 1.0,
            min_words: 300,
            contestants: vec!["sparse".into(), "lyrical".into(), "close".into()],
        }
    }
}

/// `[health]`: when the story's health checks speak.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HealthConfig {
    /// `pacing-plateau`: how many scenes in a row at one pace and tension
    /// make a plateau.
    pub plateau_scenes: u32,
    /// `beat-progress`: how many points of percent a beat may land outside
    /// its expected share of the book.
    pub beat_tolerance: f64,
    /// `cast-function`: the share of the book, in percent, a character who
    /// carries it may go unseen, unheard and unspoken of.
    pub cast_gap: f64,
    /// `motif-gap`: the share of the book, in percent, a motif may go
    /// without a word of it.
    pub motif_gap: f64,
    /// B1 and C2 (read by a model): how many judged scenes in a row that
    /// leave the protagonist's flaw unchallenged, or the theme unanswered,
    /// make a finding.
    pub model_gap: u32,
    /// A3, B1 and C2: how many judged scenes a check needs before it scores
    /// the book; 0, the default, is a quarter of the written scenes, at
    /// least three.
    pub model_scenes: u32,
}

impl Default for HealthConfig {
    fn default() -> Self {
        Self {
            plateau_scenes: 4,
            beat_tolerance: 5.0,
            cast_gap: 40.0,
            motif_gap: 40.0,
            model_gap: 5,
            model_scenes: 0,
        }
    }
}

/// `[language]`: spelling and grammar.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LanguageConfig {
    /// Report words outside the dictionaries (`spelling`).
    pub spelling: bool,
    /// Where grammar is checked: `open` (the default: the scenes open in
    /// the editor, and every scene in `check`), `all` (every scene), or
    /// `off`.
    pub grammar: GrammarScope,
    /// The writer's own dictionary, one word per line, relative to the root.
    pub dictionary: String,
    /// More words the writer spells as they mean to.
    pub words: Vec<String>,
    /// Grammar rules turned on or off by name (`RepeatedWords = false`).
    pub rules: BTreeMap<String, bool>,
    /// The English of the manuscript: `american`, `british`, `canadian`,
    /// `australian` or `indian`.
    pub dialect: Dialect,
}

impl Default for LanguageConfig {
    fn default() -> Self {
        Self {
            spelling: true,
            grammar: GrammarScope::default(),
            dictionary: "Compendium/dictionary.txt".into(),
            words: Vec::new(),
            rules: BTreeMap::new(),
            dialect: Dialect::American,
        }
    }
}

/// Where grammar is checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrammarScope {
    /// The default: the scenes open in the editor, and every scene in
    /// `check` (grammar costs about 20 µs a word the first time a
    /// paragraph is read, nothing after: `language::saved`).
    #[default]
    Open,
    /// Every scene, in the editor and in `check`.
    All,
    /// Nowhere: harper's dictionary (about 150 MB) is never loaded.
    Off,
}

/// The English a manuscript is written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    #[default]
    American,
    British,
    Canadian,
    Australian,
    Indian,
}

/// A problem with `control-room.toml`, where it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    pub range: TextRange,
    pub message: String,
}

impl Config {
    /// Parses the configuration file's text; on error, the defaults and the error.
    pub fn parse(text: &str) -> (Config, Option<ConfigError>) {
        match toml::from_str::<Config>(text) {
            Ok(mut config) => {
                if let Some(error) = config.paths.keep_inside(text) {
                    return (config, Some(error));
                }
                if leaves_the_manuscript(&config.language.dictionary) {
                    let value = std::mem::take(&mut config.language.dictionary);
                    let default = LanguageConfig::default().dictionary;
                    let error = ConfigError {
                        range: value_range(text, "dictionary", &value),
                        message: format!(
                            "{CONFIG_FILE}: [language] dictionary = \"{value}\" leaves the manuscript; it is relative to the folder of {CONFIG_FILE} and stays inside it (the default `{default}` is used)"
                        ),
                    };
                    config.language.dictionary = default;
                    return (config, Some(error));
                }
                if let Some(problem) = config.calendar.problem() {
                    let error = ConfigError {
                        range: section_range(text, "[calendar]"),
                        message: format!(
                            "{CONFIG_FILE}: {problem} (the Gregorian calendar is used)"
                        ),
                    };
                    config.calendar = Default::default();
                    return (config, Some(error));
                }
                match config.validate(text) {
                    Ok(()) => (config, None),
                    Err(error) => (config, Some(error)),
                }
            }
            Err(error) => {
                let range = error.span().map_or(TextRange::empty(0), TextRange::from);
                let message = format!("{CONFIG_FILE} is not valid: {}", error.message());
                (Config::default(), Some(ConfigError { range, message }))
            }
        }
    }

    fn validate(&self, text: &str) -> Result<(), ConfigError> {
        for (code, severity) in &self.diagnostics.severity {
            if !matches!(
                severity.as_str(),
                "error" | "warning" | "information" | "hint" | "off"
            ) {
                return Err(ConfigError {
                    range: value_range(text, code, severity),
                    message: format!(
                        "{CONFIG_FILE}: severity of `{code}` is `{severity}`; use error, warning, information, hint or off"
                    ),
                });
            }
        }
        if !(2..=1000).contains(&self.echo.span) {
            let span = self.echo.span.to_string();
            return Err(ConfigError {
                range: value_range(text, "span", &span),
                message: format!(
                    "{CONFIG_FILE}: [echo] span = {span}; give a number of words from 2 to 1000"
                ),
            });
        }
        if !(self.voice.drift.is_finite() && self.voice.drift > 0.0 && self.voice.drift <= 100.0) {
            let drift = self.voice.drift.to_string();
            return Err(ConfigError {
                range: value_range(text, "drift", &drift),
                message: format!(
                    "{CONFIG_FILE}: [voice] drift = {drift}; give a number above 0 (1.0 is a difference a reader hears)"
                ),
            });
        }
        let health = &self.health;
        for (key, value, range) in [
            ("beat_tolerance", health.beat_tolerance, 0.0..=100.0),
            ("cast_gap", health.cast_gap, 1.0..=100.0),
            ("motif_gap", health.motif_gap, 1.0..=100.0),
        ] {
            if !(value.is_finite() && range.contains(&value)) {
                let shown = value.to_string();
                return Err(ConfigError {
                    range: value_range(text, key, &shown),
                    message: format!(
                        "{CONFIG_FILE}: [health] {key} = {shown}; give a share of the book in percent, from {} to {}",
                        range.start(),
                        range.end()
                    ),
                });
            }
        }
        for (key, value) in [
            ("plateau_scenes", health.plateau_scenes),
            ("model_gap", health.model_gap),
        ] {
            if value < 2 {
                let shown = value.to_string();
                return Err(ConfigError {
                    range: value_range(text, key, &shown),
                    message: format!(
                        "{CONFIG_FILE}: [health] {key} = {shown}; give a number of scenes, at least 2"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Where a section's header is written; the start of the file if it is not.
fn section_range(text: &str, header: &str) -> TextRange {
    text.find(header).map_or(TextRange::empty(0), |at| {
        TextRange::new(at, at + header.len())
    })
}

/// Where `key = "value"` is written, for pointing at a setting toml accepted
/// but we did not; the start of the file if it cannot be found.
fn value_range(text: &str, key: &str, value: &str) -> TextRange {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let unquoted = trimmed
            .strip_prefix('"')
            .and_then(|rest| rest.strip_prefix(key))
            .and_then(|rest| rest.strip_prefix('"'));
        let after_key = unquoted.or_else(|| trimmed.strip_prefix(key));
        if let Some(after_key) = after_key
            && after_key.trim_start().starts_with('=')
            && let Some(at) = line.find(value)
        {
            return TextRange::new(offset + at, offset + at + value.len());
        }
        offset += line.len();
    }
    TextRange::empty(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_manuscript_are_an_error_and_the_defaults_are_kept() {
        let text = "[paths]\nscenes = \"../elsewhere\"\noutline = \"Plan.md\"\n";
        let (config, error) = Config::parse(text);
        let error = error.expect("an error");
        assert!(
            error
                .message
                .contains("scenes = \"../elsewhere\" leaves the manuscript"),
            "{}",
            error.message
        );
        assert_eq!(error.range.slice(text), "../elsewhere");
        assert_eq!(config.paths.scenes, "Story/Scenes");
        assert_eq!(config.paths.outline, "Plan.md");
        let (_, error) = Config::parse("[paths]\ncharacters = \"/etc\"\n");
        assert!(error.is_some());
    }

    #[test]
    fn paths_override_defaults_and_other_sections_are_kept() {
        let (config, error) = Config::parse(
            "[paths]\nscenes = \"Draft\"\n[diagnostics]\ndebounce_ms = 40\n[llm]\nmodel = \"x\"\n",
        );
        assert_eq!(error, None);
        assert_eq!(config.paths.scenes, "Draft");
        assert_eq!(config.paths.outline, "Story/SCN-outline.md");
        assert_eq!(config.diagnostics.debounce_ms, 40);
        assert!(config.other.contains_key("llm"));
    }

    #[test]
    fn the_manuscript_targets_and_echo_sections_are_read() {
        let (config, error) = Config::parse(
            "[manuscript]\ntitle = \"The Salt Road\"\nauthor = \"A. Writer\"\n\
             [targets]\nscene = 2000\nchapter = 6000\nmanuscript = 80000\ndaily = 500\n\
             [echo]\nspan = 80\nignore = [\"salt\"]\n",
        );
        assert_eq!(error, None);
        assert_eq!(config.manuscript.title.as_deref(), Some("The Salt Road"));
        assert_eq!(config.manuscript.author.as_deref(), Some("A. Writer"));
        assert_eq!(config.targets.scene, Some(2000));
        assert_eq!(config.targets.chapter, Some(6000));
        assert_eq!(config.targets.manuscript, Some(80000));
        assert_eq!(config.targets.daily, Some(500));
        assert_eq!(config.echo.span, 80);
        assert_eq!(config.echo.ignore, ["salt"]);
        let (config, error) = Config::parse("[voice]\ndrift = 0.6\nmin_words = 100\n");
        assert!(error.is_none(), "{error:?}");
        assert_eq!(config.voice.drift, 0.6);
        assert_eq!(config.voice.min_words, 100);
        let (_, error) = Config::parse("[voice]\ndrift = -1\n");
        assert!(error.unwrap().message.contains("[voice] drift = -1"));
        let (config, error) =
            Config::parse("[health]\nplateau_scenes = 6\nmotif_gap = 25\ncast_gap = 50.5\n");
        assert!(error.is_none(), "{error:?}");
        assert_eq!(config.health.plateau_scenes, 6);
        assert_eq!(config.health.motif_gap, 25.0);
        assert_eq!(config.health.cast_gap, 50.5);
        let (_, error) = Config::parse("[health]\nmotif_gap = 0\n");
        assert!(error.unwrap().message.contains("[health] motif_gap = 0"));
        let (_, error) = Config::parse("[health]\nplateau_scenes = 1\n");
        assert!(
            error
                .unwrap()
                .message
                .contains("[health] plateau_scenes = 1")
        );
        let (_, error) = Config::parse("[echo]\nspan = 1\n");
        assert!(error.unwrap().message.contains("[echo] span = 1"));
        let (_, error) = Config::parse("[targets]\nchapters = 5\n");
        assert!(error.is_some(), "a misspelt key is reported");
    }

    #[test]
    fn a_broken_file_names_the_place() {
        let (config, error) = Config::parse("[paths]\nscenes = \n");
        assert_eq!(config, Config::default());
        let error = error.unwrap();
        assert!(
            error.message.starts_with("control-room.toml is not valid"),
            "{}",
            error.message
        );
        assert!(error.range.start > 0);
    }
}
