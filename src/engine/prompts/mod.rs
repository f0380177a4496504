//! Phase B prompts: the context sandwich of the agent-instruction spec,
//! assembled per step from the prompt registry of appendix F.
//!
//! A step's messages are a system prompt of layers (identity, process map,
//! the mode's rules, the session state, the output protocol) and a user
//! message, the step's template with its `{{slot}}` placeholders filled (a
//! tool slot's summary, an agent slot's full text, `{{task.description}}`,
//! `{{task.args.NAME}}`). The model the step goes to picks the tier from the
//! capability matrix, the tier picks each file's variant (t1, t3, t5), and
//! the whole is trimmed to the model's context window less the reply's
//! reserve: first the process map, then the mode rules' long form, then the
//! session state's detail, then the knowledge entries, then the longest tool
//! summaries (marked where cut). An agent's text is never cut; a prompt that
//! still does not fit fails the step, naming the model and the figures.

pub mod capabilities;
pub mod registry;
pub mod state;

use std::path::Path;

use serde_json::{Map, Value};

use self::capabilities::{Capabilities, Profile};
pub use self::registry::{
    Output, PROJECT_DIR, PromptFile, PromptLibrary, TemplateEntry, Variant, Variants,
};
use self::state::{Decision, StateInputs};
use super::model::Message;
use super::recipe::AgentStep;
use crate::index::Workspace;

/// Joins the layers of the system prompt.
const LAYER_SEPARATOR: &str = "\n\n---\n\n";

/// §9.3: restated for models that follow the XML protocol unreliably.
const XML_REMINDER: &str = "CRITICAL FORMAT REMINDER:\n\
- Put the prose you write inside <content_update target=\"…\">…</content_update>, or reply with the prose alone.\n\
- Put anything you say to the writer inside <message>…</message>.\n\
- Reasoning goes inside <thinking>…</thinking>; it is never shown or saved.\n\
- Do not use JSON. Use XML only.";

/// An estimate of the tokens `text` costs: about four characters each.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// What kind of slot a placeholder injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// A tool's output, injected as its summary: may be shortened to fit.
    Pointer,
    /// An agent's text, injected whole: never cut.
    Artifact,
}

/// One input slot's text for the template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotText<'a> {
    pub name: &'a str,
    pub text: String,
    pub kind: SlotKind,
}

/// What a prompt may draw on.
pub struct PromptInputs<'a> {
    pub task_description: &'a str,
    pub task_args: &'a Map<String, Value>,
    /// The step's input slots with the text to inject for each.
    pub slots: Vec<SlotText<'a>>,
    /// The model the step will go to, when known (it selects the tier).
    pub model: Option<&'a str>,
    /// The reply's token limit from the configuration, if set.
    pub max_tokens: Option<u32>,
    /// A tier forced by the caller (`control-room prompt --tier`).
    pub tier: Option<&'a str>,
    pub workspace: Option<&'a Workspace>,
}

/// One part of an assembled prompt, for inspection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub source: String,
    pub tokens: usize,
}

/// An assembled prompt.
#[derive(Clone, Debug)]
pub struct Assembly {
    pub messages: Vec<Message>,
    pub output: Output,
    /// The mode whose rules framed the prompt.
    pub mode: Option<String>,
    /// The schema a JSON reply must follow, and its source.
    pub schema: Option<(String, Value)>,
    pub profile: Profile,
    /// The template variant used.
    pub variant: Variant,
    pub parts: Vec<Part>,
    /// What was left out or cut to fit, in words.
    pub trimmed: Vec<String>,
    pub tokens: usize,
    pub budget: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    #[error("no prompt template `{0}`")]
    NoTemplate(String),
    #[error("prompt template `{0}` has no file for any tier")]
    NoVariant(String),
    #[error(
        "{template}: placeholder `{{{{{placeholder}}}}}` names nothing this step is given (it is given {available})"
    )]
    UnknownPlaceholder {
        template: String,
        placeholder: String,
        available: String,
    },
    #[error(
        "the prompt for `{prompt_type}` needs about {tokens} tokens even trimmed, but {model} leaves {budget} for the prompt (context window {window}); choose a model with a larger context window or a smaller scene"
    )]
    TooLarge {
        prompt_type: String,
        model: String,
        tokens: usize,
        budget: usize,
        window: usize,
    },
    #[error("unknown tier `{0}` (the capability matrix defines {1})")]
    UnknownTier(String, String),
}

/// Builds the messages of a phase B step.
pub trait PromptBuilder: Send + Sync {
    fn build(&self, step: &AgentStep, inputs: &PromptInputs) -> Result<Assembly, PromptError>;

    /// Whether `prompt_type` replies prose or JSON.
    fn output(&self, prompt_type: &str) -> Output;
}

/// Every prompt of a workspace, its capability matrix and its knowledge base.
#[derive(Clone, Debug)]
pub struct Prompts {
    pub library: PromptLibrary,
    pub capabilities: Capabilities,
    pub decisions: Vec<Decision>,
    /// Problems found while loading, each naming its file.
    pub problems: Vec<String>,
}

impl Prompts {
    /// The bundled prompts only, with no knowledge base.
    pub fn bundled() -> Prompts {
        Prompts::from_library(PromptLibrary::bundled(), Vec::new())
    }

    /// The workspace's prompts: bundled, the writer's
    /// (`$XDG_CONFIG_HOME/control-room/prompts`) and the project's.
    pub fn load(root: &Path) -> Prompts {
        let user = registry::user_dir(&|name| std::env::var(name).ok());
        Prompts::load_with(root, user.as_deref())
    }

    /// As [`Prompts::load`] with the writer's directory given.
    pub fn load_with(root: &Path, user: Option<&Path>) -> Prompts {
        let library = PromptLibrary::load(root, user);
        let mut problems = Vec::new();
        let decisions = state::load_decisions(root, &mut problems);
        Prompts::from_library(library, decisions).with_problems(problems)
    }

    fn from_library(library: PromptLibrary, decisions: Vec<Decision>) -> Prompts {
        let mut problems = library.problems.clone();
        let capabilities = Capabilities::from_files(&library.capability_files, &mut problems);
        Prompts {
            library,
            capabilities,
            decisions,
            problems,
        }
    }

    fn with_problems(mut self, problems: Vec<String>) -> Prompts {
        self.problems.extend(problems);
        self
    }

    pub fn has(&self, prompt_type: &str) -> bool {
        self.library.has(prompt_type)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.library.names()
    }

    fn profile(&self, inputs: &PromptInputs) -> Result<Profile, PromptError> {
        match inputs.tier {
            Some(tier) => self
                .capabilities
                .with_tier(inputs.model, tier)
                .ok_or_else(|| {
                    PromptError::UnknownTier(
                        tier.to_owned(),
                        self.capabilities
                            .tier_names()
                            .collect::<Vec<_>>()
                            .join(", "),
                    )
                }),
            None => Ok(self.capabilities.profile(inputs.model)),
        }
    }
}

/// How far a prompt has been trimmed.
#[derive(Clone, Copy, Debug, Default)]
struct Trim {
    no_process_map: bool,
    short_mode_rules: bool,
    minimal_state: bool,
    no_knowledge: bool,
}

impl PromptBuilder for Prompts {
    fn output(&self, prompt_type: &str) -> Output {
        self.library
            .template(prompt_type)
            .map_or(Output::Prose, |entry| entry.output)
    }

    fn build(&self, step: &AgentStep, inputs: &PromptInputs) -> Result<Assembly, PromptError> {
        let entry = self
            .library
            .template(&step.prompt_type)
            .ok_or_else(|| PromptError::NoTemplate(step.prompt_type.clone()))?;
        let profile = self.profile(inputs)?;
        let (variant, template) = entry
            .variants
            .pick(profile.variant)
            .ok_or_else(|| PromptError::NoVariant(step.prompt_type.clone()))?;
        let budget = profile.prompt_budget(inputs.max_tokens);
        let mut slots = inputs.slots.clone();
        let mut trim = Trim::default();
        let mut trimmed = Vec::new();
        loop {
            let (messages, parts) =
                self.sandwich(step, entry, template, &profile, inputs, &slots, trim)?;
            let tokens: usize = messages.iter().map(|m| estimate_tokens(&m.content)).sum();
            if tokens <= budget {
                return Ok(Assembly {
                    messages,
                    output: entry.output,
                    mode: entry.mode.clone(),
                    schema: entry.schema.clone(),
                    profile,
                    variant,
                    parts,
                    trimmed,
                    tokens,
                    budget,
                });
            }
            let over = tokens - budget;
            if !trim.no_process_map && self.layer(&profile, "process_map").is_some() {
                trim.no_process_map = true;
                trimmed.push("the process map".to_owned());
            } else if !trim.short_mode_rules
                && profile.variant != Variant::T1
                && entry.mode.is_some()
            {
                trim.short_mode_rules = true;
                trimmed.push("the mode rules' long form".to_owned());
            } else if !trim.minimal_state && profile.variant != Variant::T1 {
                trim.minimal_state = true;
                trimmed.push("the session state's scene and voice detail".to_owned());
            } else if !trim.no_knowledge && !self.decisions.is_empty() {
                trim.no_knowledge = true;
                trimmed.push("the knowledge entries".to_owned());
            } else if let Some(cut) = cut_longest_pointer(&mut slots, over) {
                trimmed.push(cut);
            } else {
                return Err(PromptError::TooLarge {
                    prompt_type: step.prompt_type.clone(),
                    model: inputs.model.unwrap_or("the model").to_owned(),
                    tokens,
                    budget,
                    window: profile.caps.context_window,
                });
            }
        }
    }
}

impl Prompts {
    fn layer(&self, profile: &Profile, name: &str) -> Option<&PromptFile> {
        self.library
            .layers
            .get(name)
            .and_then(|variants| variants.pick(profile.variant))
            .map(|(_, file)| file)
    }

    #[allow(clippy::too_many_arguments)]
    fn sandwich(
        &self,
        step: &AgentStep,
        entry: &TemplateEntry,
        template: &PromptFile,
        profile: &Profile,
        inputs: &PromptInputs,
        slots: &[SlotText],
        trim: Trim,
    ) -> Result<(Vec<Message>, Vec<Part>), PromptError> {
        let mut layers: Vec<(String, String, String)> = Vec::new();
        fn push(layers: &mut Vec<(String, String, String)>, name: &str, file: &PromptFile) {
            layers.push((
                name.to_owned(),
                file.source.clone(),
                file.text.trim().to_owned(),
            ));
        }
        if let Some(file) = self.layer(profile, "identity") {
            push(&mut layers, "identity", file);
        }
        if !trim.no_process_map
            && let Some(file) = self.layer(profile, "process_map")
        {
            push(&mut layers, "process_map", file);
        }
        if let Some(mode) = &entry.mode
            && let Some(variants) = self.library.modes.get(mode)
        {
            let variant = if trim.short_mode_rules {
                Variant::T1
            } else {
                profile.variant
            };
            if let Some((_, file)) = variants.pick(variant) {
                push(&mut layers, &format!("modes/{mode}"), file);
            }
        }
        let mut state_profile = profile.clone();
        if trim.minimal_state {
            state_profile.variant = Variant::T1;
        }
        let no_decisions: [Decision; 0] = [];
        let state = state::session_state(
            &StateInputs {
                mode: entry.mode.as_deref(),
                step_id: &step.step_id,
                archetype: &step.agent_archetype,
                workspace: inputs.workspace,
                task_args: inputs.task_args,
                decisions: if trim.no_knowledge {
                    &no_decisions
                } else {
                    &self.decisions
                },
            },
            &state_profile,
        );
        layers.push(("session_state".into(), "generated".into(), state));
        let protocol = match entry.output {
            Output::Prose => "protocols",
            Output::Json => "protocols_json",
        };
        if let Some(file) = self.layer(profile, protocol) {
            push(&mut layers, protocol, file);
        }
        if entry.output == Output::Prose && profile.needs_xml_reminder() {
            layers.push((
                "xml_reminder".into(),
                "§9.3".into(),
                XML_REMINDER.to_owned(),
            ));
        }
        let role = format!(
            "You are the {} for this step (`{}`). Use no tools: everything you may rely on is in this prompt.",
            step.agent_archetype, step.step_id
        );
        layers.push(("role".into(), "generated".into(), role));
        let user = fill(template, inputs, slots)?;
        let mut parts: Vec<Part> = layers
            .iter()
            .map(|(name, source, text)| Part {
                name: name.clone(),
                source: source.clone(),
                tokens: estimate_tokens(text),
            })
            .collect();
        parts.push(Part {
            name: "template".into(),
            source: template.source.clone(),
            tokens: estimate_tokens(&user),
        });
        let system = layers
            .into_iter()
            .map(|(_, _, text)| text)
            .collect::<Vec<_>>()
            .join(LAYER_SEPARATOR);
        Ok((vec![Message::system(system), Message::user(user)], parts))
    }
}

/// Shortens the longest tool summary by what the prompt is over, plus room
/// for the marker; `None` when nothing more can be cut.
fn cut_longest_pointer(slots: &mut [SlotText], over_tokens: usize) -> Option<String> {
    const KEEP_AT_LEAST: usize = 400;
    let slot = slots
        .iter_mut()
        .filter(|slot| slot.kind == SlotKind::Pointer)
        .max_by_key(|slot| slot.text.chars().count())?;
    let chars = slot.text.chars().count();
    let cut = (over_tokens * 4 + 200).min(chars.saturating_sub(KEEP_AT_LEAST));
    if cut < 100 {
        return None;
    }
    let keep = chars - cut;
    let end = slot
        .text
        .char_indices()
        .nth(keep)
        .map_or(slot.text.len(), |(at, _)| at);
    // Cut at a line break where one is near, so no line is left half.
    let end = slot.text[..end]
        .rfind('\n')
        .filter(|at| *at > end / 2)
        .unwrap_or(end);
    let removed = slot.text[end..].chars().count();
    slot.text.truncate(end);
    slot.text.push_str(&format!(
        "\n[… {removed} characters of this context were cut to fit the model's context window …]"
    ));
    Some(format!("{removed} characters of `{}`", slot.name))
}

/// The placeholders of a template, as written between the braces.
pub fn placeholders(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            break;
        };
        found.push(after[..close].trim().to_owned());
        rest = &after[close + 2..];
    }
    found
}

/// Replaces `{{name}}` placeholders in `template` (`{{a | b}}` takes the
/// first alternative given).
pub fn fill(
    template: &PromptFile,
    inputs: &PromptInputs,
    slots: &[SlotText],
) -> Result<String, PromptError> {
    let text = &template.text;
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        // `{{a | b}}`: the first of the alternatives the step is given, so
        // one template serves recipes that feed it different slots.
        let spec = after[..close].trim();
        let alternatives: Vec<&str> = spec.split('|').map(str::trim).collect();
        let found = alternatives
            .iter()
            .find_map(|name| value(name, inputs, slots));
        match found {
            Some(text) => out.push_str(&text),
            None => return Err(unknown_placeholder(template, spec, inputs, slots)),
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out.trim().to_owned())
}

fn value(name: &str, inputs: &PromptInputs, slots: &[SlotText]) -> Option<String> {
    if name == "task.description" {
        return Some(inputs.task_description.to_owned());
    }
    if let Some(arg) = name.strip_prefix("task.args.") {
        return inputs.task_args.get(arg).map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        });
    }
    slots
        .iter()
        .find(|slot| slot.name == name)
        .map(|slot| slot.text.clone())
}

fn unknown_placeholder(
    template: &PromptFile,
    spec: &str,
    inputs: &PromptInputs,
    slots: &[SlotText],
) -> PromptError {
    let mut available: Vec<String> = slots.iter().map(|slot| slot.name.to_owned()).collect();
    available.push("task.description".into());
    available.extend(
        inputs
            .task_args
            .keys()
            .map(|key| format!("task.args.{key}")),
    );
    PromptError::UnknownPlaceholder {
        template: template.source.clone(),
        placeholder: spec.to_owned(),
        available: available.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::engine::recipe::Registry;

    fn step(prompt_type: &str, inputs: &[&str]) -> AgentStep {
        AgentStep {
            step_id: "brief".into(),
            agent_archetype: "planner".into(),
            input_slots: inputs.iter().map(|s| (*s).to_owned()).collect(),
            output_slot: "scene_brief".into(),
            prompt_type: prompt_type.into(),
        }
    }

    fn inputs<'a>(
        args: &'a Map<String, Value>,
        slots: Vec<SlotText<'a>>,
        model: Option<&'a str>,
        tier: Option<&'a str>,
    ) -> PromptInputs<'a> {
        PromptInputs {
            task_description: "Draft SCN-the-gate",
            task_args: args,
            slots,
            model,
            max_tokens: None,
            tier,
            workspace: None,
        }
    }

    fn slot(name: &str, text: &str, kind: SlotKind) -> SlotText<'static> {
        SlotText {
            name: Box::leak(name.to_owned().into_boxed_str()),
            text: text.to_owned(),
            kind,
        }
    }

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_bundled_library_loads_without_problems() {
        let prompts = Prompts::bundled();
        assert_eq!(prompts.problems, Vec::<String>::new());
        for layer in ["identity", "process_map", "protocols", "protocols_json"] {
            assert!(prompts.library.layers.contains_key(layer), "{layer}");
        }
        for mode in ["architect", "voice_calibration", "director", "editor"] {
            assert!(prompts.library.modes.contains_key(mode), "{mode}");
        }
        for (name, entry) in &prompts.library.templates {
            assert!(entry.mode.is_some(), "{name} has no mode");
            assert_eq!(
                entry.output == Output::Json,
                entry.schema.is_some(),
                "{name}: a JSON step has a schema and a prose step none"
            );
        }
    }

    /// Every agent step of every bundled recipe assembles at every tier
    /// from exactly the slots the recipe gives it.
    #[test]
    fn every_recipe_step_assembles_at_every_tier() {
        let prompts = Prompts::bundled();
        let registry = Registry::load(Path::new("/nonexistent"), &prompts);
        assert!(registry.errors().is_empty());
        let args = Map::new();
        let mut assembled = 0;
        for recipe in registry.recipes() {
            for agent in &recipe.phase_b {
                for tier in ["minimal", "medium", "full"] {
                    let slots = agent
                        .input_slots
                        .iter()
                        .map(|name| slot(name, &format!("TEXT OF {name}"), SlotKind::Artifact))
                        .collect();
                    let assembly = prompts
                        .build(agent, &inputs(&args, slots, None, Some(tier)))
                        .unwrap_or_else(|e| {
                            panic!("{}/{} at {tier}: {e}", recipe.recipe_id, agent.step_id)
                        });
                    let user = &assembly.messages[1].content;
                    assert!(!user.contains("{{"), "{}: {user}", agent.prompt_type);
                    assert!(
                        agent
                            .input_slots
                            .iter()
                            .any(|name| user.contains(&format!("TEXT OF {name}"))),
                        "{}/{} injects none of its inputs",
                        recipe.recipe_id,
                        agent.step_id
                    );
                    assembled += 1;
                }
            }
        }
        assert!(assembled >= 3 * 18, "{assembled}");
    }

    #[test]
    fn tiers_come_from_the_capability_matrix() {
        let prompts = Prompts::bundled();
        let args = Map::new();
        let build = |model: Option<&str>| {
            prompts
                .build(
                    &step("refine_brief", &["outline_beat", "canon_context"]),
                    &inputs(
                        &args,
                        vec![
                            slot("outline_beat", "BEAT", SlotKind::Pointer),
                            slot("canon_context", "CANON", SlotKind::Pointer),
                        ],
                        model,
                        None,
                    ),
                )
                .unwrap()
        };
        let full = build(Some("claude-sonnet-4-5"));
        assert_eq!(
            (full.profile.tier.as_str(), full.variant),
            ("full", Variant::T5)
        );
        let names: Vec<&str> = full.parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "identity",
                "process_map",
                "modes/architect",
                "session_state",
                "protocols",
                "role",
                "template"
            ]
        );
        assert!(
            full.parts
                .iter()
                .any(|p| p.source == "prompts/templates/refine_brief.t5.md")
        );

        let minimal = build(Some("llama3.2:3b"));
        assert_eq!(
            (minimal.profile.tier.as_str(), minimal.variant),
            ("minimal", Variant::T1)
        );
        let names: Vec<&str> = minimal.parts.iter().map(|p| p.name.as_str()).collect();
        // No process map at the minimal tier, and the XML reminder of §9.3.
        assert_eq!(
            names,
            [
                "identity",
                "modes/architect",
                "session_state",
                "protocols",
                "xml_reminder",
                "role",
                "template"
            ]
        );
        assert!(
            minimal
                .parts
                .iter()
                .any(|p| p.source == "prompts/identity.t1.md")
        );
        assert!(minimal.tokens < full.tokens);

        // A router's prefix is ignored; an unknown model gets the default.
        let routed = build(Some("openrouter/anthropic/claude-sonnet-4-5"));
        assert_eq!(routed.profile.tier, "full");
        let unknown = build(Some("my-finetune"));
        assert_eq!(
            (
                unknown.profile.tier.as_str(),
                unknown.profile.matched.as_deref()
            ),
            ("medium", None)
        );
    }

    #[test]
    fn variants_fall_back_to_the_closest_and_null_omits() {
        let file = |name: &str| PromptFile {
            source: name.into(),
            text: name.into(),
        };
        let mut variants = Variants::default();
        variants.set(Variant::T1, Some(file("one")));
        variants.set(Variant::T3, Some(file("three")));
        assert_eq!(variants.pick(Variant::T5).unwrap().1.text, "three");
        assert_eq!(variants.pick(Variant::T1).unwrap().1.text, "one");
        let mut only_small = Variants::default();
        only_small.set(Variant::T1, Some(file("one")));
        assert_eq!(only_small.pick(Variant::T5).unwrap().1.text, "one");
        let mut omitted = Variants::default();
        omitted.set(Variant::T1, None);
        omitted.set(Variant::T3, Some(file("three")));
        assert!(omitted.pick(Variant::T1).is_none());
        assert_eq!(omitted.pick(Variant::T5).unwrap().1.text, "three");
    }

    #[test]
    fn user_and_project_prompts_shadow_the_bundled_ones() {
        let root = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        // The writer's directory replaces the identity at every tier…
        write(user.path(), "identity.md", "USER IDENTITY");
        // …and one variant of a template; the project replaces it again.
        write(
            user.path(),
            "templates/refine_brief.t5.md",
            "USER T5 {{outline_beat}}",
        );
        write(
            root.path(),
            ".control-room/prompts/templates/refine_brief.t5.md",
            "PROJECT T5 {{outline_beat}}",
        );
        // A new prompt type with its registry entry and schema.
        write(
            root.path(),
            ".control-room/prompts/prompts.json",
            r#"{"pipeline_templates": {"rate_tension": {"label": "Rate tension", "mode": "editor", "output": "json", "schema": "schemas/rate_tension.json", "variants": {"t3": "templates/rate_tension.md"}}}}"#,
        );
        write(
            root.path(),
            ".control-room/prompts/templates/rate_tension.md",
            "Rate {{edited_draft}}",
        );
        write(
            root.path(),
            ".control-room/prompts/schemas/rate_tension.json",
            r#"{"type": "object", "required": ["score"]}"#,
        );
        // A project capability matrix entry wins over the bundled one.
        write(
            root.path(),
            ".control-room/prompts/models.json",
            r#"{"models": [{"match": "llama3.2:3b", "context_window": 131072, "xml_reliability": "high", "tier": "full"}]}"#,
        );
        let prompts = Prompts::load_with(root.path(), Some(user.path()));
        assert_eq!(prompts.problems, Vec::<String>::new());
        let args = Map::new();
        let assembly = prompts
            .build(
                &step("refine_brief", &["outline_beat", "canon_context"]),
                &inputs(
                    &args,
                    vec![
                        slot("outline_beat", "BEAT", SlotKind::Pointer),
                        slot("canon_context", "CANON", SlotKind::Pointer),
                    ],
                    Some("llama3.2:3b"),
                    None,
                ),
            )
            .unwrap();
        assert_eq!(assembly.profile.tier, "full");
        assert_eq!(assembly.messages[1].content, "PROJECT T5 BEAT");
        assert!(assembly.messages[0].content.starts_with("USER IDENTITY"));
        // At the minimal tier the user's identity serves too; t3 of the
        // template is still the bundled one.
        let small = prompts
            .build(
                &step("refine_brief", &["outline_beat", "canon_context"]),
                &inputs(
                    &args,
                    vec![
                        slot("outline_beat", "BEAT", SlotKind::Pointer),
                        slot("canon_context", "CANON", SlotKind::Pointer),
                    ],
                    None,
                    Some("medium"),
                ),
            )
            .unwrap();
        assert!(small.messages[0].content.starts_with("USER IDENTITY"));
        assert!(
            small
                .parts
                .iter()
                .any(|p| p.source == "prompts/templates/refine_brief.t3.md")
        );

        let entry = prompts.library.template("rate_tension").unwrap();
        assert_eq!(entry.output, Output::Json);
        assert_eq!(
            entry.schema.as_ref().unwrap().0,
            ".control-room/prompts/schemas/rate_tension.json"
        );
        assert!(entry.variants.pick(Variant::T5).is_some());
    }

    #[test]
    fn broken_prompt_files_are_reported_by_file_and_line() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            ".control-room/prompts/prompts.json",
            "{\n  \"layers\": {,\n}",
        );
        write(root.path(), ".control-room/prompts/models.json", "[1, 2");
        write(
            root.path(),
            ".control-room/kb/decisions.jsonl",
            "{\"category\": \"character\", \"key\": \"k\", \"value\": \"v\"}\nnot json\n",
        );
        let prompts = Prompts::load_with(root.path(), None);
        assert_eq!(prompts.problems.len(), 3, "{:?}", prompts.problems);
        assert!(
            prompts.problems[0].starts_with(".control-room/prompts/prompts.json:2:"),
            "{:?}",
            prompts.problems
        );
        assert!(
            prompts.problems[1].starts_with(".control-room/prompts/models.json:1:"),
            "{:?}",
            prompts.problems
        );
        assert!(
            prompts.problems[2].starts_with(".control-room/kb/decisions.jsonl:2:"),
            "{:?}",
            prompts.problems
        );
        // The bundled prompts still serve, and the good decision is kept.
        assert!(prompts.has("draft_scene"));
        assert_eq!(prompts.decisions.len(), 1);
    }

    #[test]
    fn a_small_context_window_trims_layers_then_tool_summaries_never_agent_text() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            ".control-room/prompts/models.json",
            r#"{"models": [{"match": "tiny", "context_window": 6000, "xml_reliability": "high", "tier": "full"}]}"#,
        );
        let prompts = Prompts::load_with(root.path(), None);
        let args = Map::new();
        let canon = "Kael Maren has grey eyes.\n".repeat(300);
        let draft = "The gate stood open. ".repeat(100);
        let assembly = prompts
            .build(
                &step("check_continuity", &["edited_draft", "canon_context"]),
                &inputs(
                    &args,
                    vec![
                        slot("edited_draft", &draft, SlotKind::Artifact),
                        slot("canon_context", &canon, SlotKind::Pointer),
                    ],
                    Some("tiny"),
                    None,
                ),
            )
            .unwrap();
        assert!(
            assembly.tokens <= assembly.budget,
            "{} > {}",
            assembly.tokens,
            assembly.budget
        );
        assert_eq!(assembly.budget, 6000 - 4000);
        let user = &assembly.messages[1].content;
        assert!(user.contains(draft.trim()), "the agent's text was cut");
        assert!(
            user.contains("characters of this context were cut to fit"),
            "{user}"
        );
        assert!(
            assembly.trimmed.iter().any(|t| t == "the process map"),
            "{:?}",
            assembly.trimmed
        );
        assert!(
            assembly
                .trimmed
                .iter()
                .any(|t| t.ends_with("of `canon_context`")),
            "{:?}",
            assembly.trimmed
        );
        assert!(!assembly.parts.iter().any(|p| p.name == "process_map"));

        // An agent's text that cannot fit fails the step with the figures.
        let error = prompts
            .build(
                &step("check_continuity", &["edited_draft", "canon_context"]),
                &inputs(
                    &args,
                    vec![
                        slot("edited_draft", &draft.repeat(20), SlotKind::Artifact),
                        slot("canon_context", "short", SlotKind::Pointer),
                    ],
                    Some("tiny"),
                    None,
                ),
            )
            .unwrap_err();
        let PromptError::TooLarge { model, window, .. } = &error else {
            panic!("{error}")
        };
        assert_eq!((model.as_str(), *window), ("tiny", 6000));
        assert!(
            error
                .to_string()
                .contains("choose a model with a larger context window")
        );
    }

    #[test]
    fn an_unknown_placeholder_names_the_template() {
        let prompts = Prompts::bundled();
        let args = Map::new();
        let error = prompts
            .build(
                &step("refine_brief", &["outline_beat"]),
                &inputs(
                    &args,
                    vec![slot("outline_beat", "b", SlotKind::Pointer)],
                    None,
                    Some("medium"),
                ),
            )
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "prompts/templates/refine_brief.t3.md: placeholder `{{canon_context}}` names nothing this step is given (it is given outline_beat, task.description)"
        );
    }
}
