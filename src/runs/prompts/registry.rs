//! The prompt registry of appendix F: `prompts.json` names, for every layer
//! of the context sandwich, every mode and every pipeline template, the file
//! of each tier variant (`t1`, `t3`, `t5`).
//!
//! Three directories are read in order, each shadowing the one before at the
//! grain of one variant: the bundled `prompts/` (compiled into the binary),
//! the writer's `$XDG_CONFIG_HOME/control-room/prompts`, and the project's
//! `.control-room/prompts`. In the last two a file takes effect by its name
//! alone: `templates/draft_scene.t5.md` replaces the t5 variant of
//! `draft_scene`, `templates/draft_scene.md` every variant that is not
//! deliberately omitted (`null` in a registry), `modes/editor.md` and
//! `identity.md` likewise, `schemas/check_continuity.json` the schema. A
//! `prompts.json` there may add prompt types or remap variants.
//!
//! A broken `prompts.json`, a registry entry naming a missing file, or a
//! schema that is not JSON is reported (file and line) and skipped; the
//! layers below it still serve.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use include_dir::{Dir, include_dir};
use serde::Deserialize;
use serde_json::Value;

static BUNDLED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/prompts");

/// A bundled prompt file's text (`schemas/receipt.v0.2.json`…).
pub fn bundled_text(relative: &str) -> Option<&'static str> {
    BUNDLED.get_file(relative)?.contents_utf8()
}

/// Where project prompts live, relative to the workspace root.
pub const PROJECT_DIR: &str = ".control-room/prompts";

/// A tier variant of a prompt file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    T1,
    T3,
    T5,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::T1, Variant::T3, Variant::T5];

    pub fn as_str(self) -> &'static str {
        match self {
            Variant::T1 => "t1",
            Variant::T3 => "t3",
            Variant::T5 => "t5",
        }
    }

    pub fn parse(text: &str) -> Option<Variant> {
        match text {
            "t1" => Some(Variant::T1),
            "t3" => Some(Variant::T3),
            "t5" => Some(Variant::T5),
            _ => None,
        }
    }

    /// The variants to try, closest first: a missing t5 falls back to t3, a
    /// missing t3 to t1 (appendix F), and a missing t1 to the next larger.
    fn preference(self) -> [Variant; 3] {
        match self {
            Variant::T1 => [Variant::T1, Variant::T3, Variant::T5],
            Variant::T3 => [Variant::T3, Variant::T1, Variant::T5],
            Variant::T5 => [Variant::T5, Variant::T3, Variant::T1],
        }
    }
}

/// One prompt file's text and where it came from (for messages and for
/// `control-room prompt`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptFile {
    pub source: String,
    pub text: String,
}

/// The variants of one prompt: `Some(file)` serves a tier, `None` omits the
/// prompt at that tier on purpose.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Variants(BTreeMap<Variant, Option<PromptFile>>);

impl Variants {
    /// The file for `variant` after fallback, or `None` when the prompt is
    /// omitted at that tier or has no file at all.
    pub fn pick(&self, variant: Variant) -> Option<(Variant, &PromptFile)> {
        for candidate in variant.preference() {
            match self.0.get(&candidate) {
                Some(Some(file)) => return Some((candidate, file)),
                Some(None) => return None,
                None => {}
            }
        }
        None
    }

    pub fn files(&self) -> impl Iterator<Item = (Variant, &PromptFile)> {
        self.0
            .iter()
            .filter_map(|(variant, file)| file.as_ref().map(|file| (*variant, file)))
    }

    pub fn set(&mut self, variant: Variant, file: Option<PromptFile>) {
        self.0.insert(variant, file);
    }

    /// Replaces every variant not deliberately omitted, and fills absent ones.
    fn set_all(&mut self, file: PromptFile) {
        for variant in Variant::ALL {
            if !matches!(self.0.get(&variant), Some(None)) {
                self.0.insert(variant, Some(file.clone()));
            }
        }
    }
}

/// What a pipeline step's reply is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Output {
    Prose,
    /// One JSON object that follows the prompt type's schema.
    Json,
    /// The agent's receipt for its task packet (prompt-hardening's task
    /// boundary rule): one JSON object, the agent's part of a receipt v0.1,
    /// which the runner completes, signs and keeps as the step's artifact.
    Receipt,
    /// The Foreman's reply: a message to the writer and the actions it
    /// asks for, under its own protocol.
    Foreman,
}

impl Output {
    /// Whether the reply is one JSON object (a schema's, or a receipt).
    pub fn is_json(self) -> bool {
        matches!(self, Output::Json | Output::Receipt)
    }

    /// Its name (`prose`, `json`, `receipt`); a receipt step's packet says
    /// `json`, with the receipt reply's schema, as packet v0.2 allows.
    pub fn as_str(self) -> &'static str {
        match self {
            Output::Prose => "prose",
            Output::Json => "json",
            Output::Receipt => "receipt",
            Output::Foreman => "foreman",
        }
    }
}

/// A pipeline template (one `prompt_type`).
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateEntry {
    pub label: String,
    /// The mode whose rules frame the step (`architect`, `director`…).
    pub mode: Option<String>,
    pub output: Output,
    /// The JSON Schema a JSON reply must follow, and its source.
    pub schema: Option<(String, Value)>,
    pub variants: Variants,
    /// How a t1 model answers this step in micro-steps, if it does.
    pub micro_steps: Option<MicroSteps>,
}

/// A finding step split for the smallest models (execution-modes.md, tier-based
/// step sizing): a triage names the problems, then one reply per problem
/// gives its finding, then one per finding quotes its evidence; the runner
/// assembles the step's own reply from them.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MicroSteps {
    /// The prompt type that lists the problems (`{"problems": […]}`, and
    /// any other key of the step's reply, such as a summary).
    pub triage: String,
    /// The prompt type that states one problem's finding.
    pub finding: String,
    /// The prompt type that quotes one finding's evidence.
    pub evidence: String,
    /// The key of the step's reply that holds its findings.
    pub findings: String,
    /// The step's boolean verdict, false when any finding is an error.
    #[serde(default)]
    pub verdict: Option<String>,
    /// The slots whose text an evidence's quote must be in, the first the
    /// step has (the text under review, never another agent's reply);
    /// empty: every slot that is not JSON.
    #[serde(default)]
    pub evidence_in: Vec<String>,
}

/// Every prompt the workspace can use, merged from the three directories.
#[derive(Clone, Debug, Default)]
pub struct PromptLibrary {
    pub layers: BTreeMap<String, Variants>,
    pub modes: BTreeMap<String, Variants>,
    pub templates: BTreeMap<String, TemplateEntry>,
    /// The capability matrix files (`models.json`), lowest layer first.
    pub capability_files: Vec<(String, String)>,
    /// Problems found while loading, each naming its file.
    pub problems: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegistryFile {
    #[serde(default)]
    layers: BTreeMap<String, RegistryEntry>,
    #[serde(default)]
    modes: BTreeMap<String, RegistryEntry>,
    #[serde(default)]
    pipeline_templates: BTreeMap<String, RegistryEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegistryEntry {
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    output: Option<Output>,
    #[serde(default)]
    schema: Option<String>,
    #[serde(default)]
    variants: BTreeMap<String, Option<String>>,
    #[serde(default)]
    micro_steps: Option<MicroSteps>,
}

/// A directory of prompts: the bundled one or one on disk.
enum Source<'a> {
    Bundled,
    Disk { dir: &'a Path, shown: String },
}

impl Source<'_> {
    fn read(&self, relative: &str) -> Option<String> {
        match self {
            Source::Bundled => BUNDLED
                .get_file(relative)
                .and_then(|file| file.contents_utf8())
                .map(str::to_owned),
            Source::Disk { dir, .. } => std::fs::read_to_string(dir.join(relative)).ok(),
        }
    }

    fn shown(&self, relative: &str) -> String {
        match self {
            Source::Bundled => format!("prompts/{relative}"),
            Source::Disk { shown, .. } => format!("{shown}/{relative}"),
        }
    }

    /// The names of the files directly in `sub` ("" for the top).
    fn list(&self, sub: &str) -> Vec<String> {
        let mut names: Vec<String> = match self {
            Source::Bundled => {
                let dir = if sub.is_empty() {
                    Some(&BUNDLED)
                } else {
                    BUNDLED.get_dir(sub)
                };
                dir.map(|dir| {
                    dir.files()
                        .filter_map(|file| file.path().file_name()?.to_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
            }
            Source::Disk { dir, .. } => std::fs::read_dir(dir.join(sub))
                .map(|entries| {
                    entries
                        .flatten()
                        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
                        .filter_map(|entry| entry.file_name().to_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        };
        names.sort();
        names
    }

    fn file(&self, relative: &str) -> Option<PromptFile> {
        self.read(relative).map(|text| PromptFile {
            source: self.shown(relative),
            text,
        })
    }
}

/// `NAME.md` → (NAME, None); `NAME.t3.md` → (NAME, Some(T3)).
fn split_name(file_name: &str, extension: &str) -> Option<(String, Option<Variant>)> {
    let stem = file_name.strip_suffix(extension)?;
    if stem.is_empty() || stem.starts_with('.') {
        return None;
    }
    if let Some((name, variant)) = stem.rsplit_once('.')
        && let Some(variant) = Variant::parse(variant)
    {
        return Some((name.to_owned(), Some(variant)));
    }
    Some((stem.to_owned(), None))
}

/// The writer's own prompt directory: `$XDG_CONFIG_HOME/control-room/prompts`,
/// or `~/.config/control-room/prompts`.
pub fn user_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            env("HOME")
                .filter(|value| !value.is_empty())
                .map(|home| Path::new(&home).join(".config"))
        })?;
    Some(base.join("control-room").join("prompts"))
}

impl PromptLibrary {
    /// The bundled prompts only (read and checked once per process).
    pub fn bundled() -> PromptLibrary {
        static LIBRARY: LazyLock<PromptLibrary> = LazyLock::new(|| {
            let mut library = PromptLibrary::default();
            library.merge(&Source::Bundled);
            library
        });
        LIBRARY.clone()
    }

    /// Bundled prompts shadowed by the writer's and then the project's.
    pub fn load(root: &Path, user: Option<&Path>) -> PromptLibrary {
        let mut library = PromptLibrary::bundled();
        if let Some(dir) = user
            && dir.is_dir()
        {
            library.merge(&Source::Disk {
                dir,
                shown: dir.display().to_string(),
            });
        }
        let project = root.join(PROJECT_DIR);
        if project.is_dir() {
            library.merge(&Source::Disk {
                dir: &project,
                shown: PROJECT_DIR.to_owned(),
            });
        }
        library
    }

    /// The template of `prompt_type`, if any directory defines it.
    pub fn template(&self, prompt_type: &str) -> Option<&TemplateEntry> {
        self.templates.get(prompt_type)
    }

    pub fn has(&self, prompt_type: &str) -> bool {
        self.templates.contains_key(prompt_type)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.templates.keys().map(String::as_str)
    }

    fn merge(&mut self, source: &Source) {
        // Files by name first (a whole prompt before its tier variants); a
        // registry in the same directory then says what names cannot
        // (labels, modes, outputs, omitted tiers).
        for sub in ["", "modes", "templates"] {
            let mut files: Vec<(String, Option<Variant>, String)> = source
                .list(sub)
                .into_iter()
                .filter_map(|name| {
                    let (stem, variant) = split_name(&name, ".md")?;
                    let relative = if sub.is_empty() {
                        name
                    } else {
                        format!("{sub}/{name}")
                    };
                    Some((stem, variant, relative))
                })
                .collect();
            files.sort_by_key(|(_, variant, _)| variant.is_some());
            for (stem, variant, relative) in files {
                let Some(file) = source.file(&relative) else {
                    self.problems.push(format!(
                        "{}: not readable as UTF-8 text",
                        source.shown(&relative)
                    ));
                    continue;
                };
                let variants = match sub {
                    "" => self.layers.entry(stem).or_default(),
                    "modes" => self.modes.entry(stem).or_default(),
                    _ => &mut self.template_entry(&stem).variants,
                };
                match variant {
                    Some(variant) => variants.set(variant, Some(file)),
                    None => variants.set_all(file),
                }
            }
        }
        if let Some(text) = source.read("models.json") {
            self.capability_files
                .push((source.shown("models.json"), text));
        }
        if let Some(text) = source.read("prompts.json") {
            self.merge_registry(source, &text);
        }
        // A writer's schema file replaces the schema of its prompt type.
        if !matches!(source, Source::Bundled) {
            for name in source.list("schemas") {
                let Some((stem, None)) = split_name(&name, ".json") else {
                    continue;
                };
                if !self.templates.contains_key(&stem) {
                    continue;
                }
                if let Some(schema) = self.read_schema(source, &format!("schemas/{name}")) {
                    self.template_entry(&stem).schema = Some(schema);
                }
            }
        }
    }

    fn template_entry(&mut self, name: &str) -> &mut TemplateEntry {
        self.templates
            .entry(name.to_owned())
            .or_insert_with(|| TemplateEntry {
                label: name.replace('_', " "),
                mode: None,
                output: Output::Prose,
                schema: None,
                variants: Variants::default(),
                micro_steps: None,
            })
    }

    fn read_schema(&mut self, source: &Source, relative: &str) -> Option<(String, Value)> {
        let shown = source.shown(relative);
        let Some(text) = source.read(relative) else {
            self.problems.push(format!("{shown}: no such file"));
            return None;
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(schema) => match jsonschema::meta::validate(&schema) {
                Ok(()) => Some((shown, schema)),
                Err(error) => {
                    self.problems
                        .push(format!("{shown}: not a valid JSON Schema: {error}"));
                    None
                }
            },
            Err(error) => {
                self.problems.push(format!(
                    "{shown}:{}:{}: {error}",
                    error.line(),
                    error.column()
                ));
                None
            }
        }
    }

    fn merge_registry(&mut self, source: &Source, text: &str) {
        let shown = source.shown("prompts.json");
        let registry: RegistryFile = match serde_json::from_str(text) {
            Ok(registry) => registry,
            Err(error) => {
                self.problems.push(format!(
                    "{shown}:{}:{}: {error}",
                    error.line(),
                    error.column()
                ));
                return;
            }
        };
        for (kind, entries) in [
            ("layers", registry.layers),
            ("modes", registry.modes),
            ("pipeline_templates", registry.pipeline_templates),
        ] {
            for (name, entry) in entries {
                let mut variants = Vec::new();
                for (variant_name, path) in &entry.variants {
                    let Some(variant) = Variant::parse(variant_name) else {
                        self.problems.push(format!(
                            "{shown}: {kind}.{name}: unknown variant `{variant_name}` (expected t1, t3 or t5)"
                        ));
                        continue;
                    };
                    let file = match path {
                        None => None,
                        Some(path) => match source.file(path) {
                            Some(file) => Some(file),
                            None => {
                                self.problems.push(format!(
                                    "{shown}: {kind}.{name}.variants.{variant_name} names `{path}`, which does not exist"
                                ));
                                continue;
                            }
                        },
                    };
                    variants.push((variant, file));
                }
                let target = match kind {
                    "layers" => self.layers.entry(name.clone()).or_default(),
                    "modes" => self.modes.entry(name.clone()).or_default(),
                    _ => {
                        let schema = match &entry.schema {
                            Some(path) => self.read_schema(source, path),
                            None => None,
                        };
                        let template = self.template_entry(&name);
                        if let Some(label) = &entry.label {
                            template.label = label.clone();
                        }
                        if let Some(mode) = &entry.mode {
                            template.mode = Some(mode.clone());
                        }
                        if let Some(output) = entry.output {
                            template.output = output;
                        }
                        if schema.is_some() {
                            template.schema = schema;
                        }
                        if entry.micro_steps.is_some() {
                            template.micro_steps = entry.micro_steps.clone();
                        }
                        &mut template.variants
                    }
                };
                for (variant, file) in variants {
                    target.set(variant, file);
                }
            }
        }
    }
}
