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

mod fill;
mod knowledge;
mod sandwich;

use sandwich::Picked;
mod tier;
mod trim;
mod work_order;

/// `text` with the characters XML gives a meaning escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;

use std::path::Path;

use serde_json::{Map, Value};

use self::capabilities::{Capabilities, Profile};
pub use self::registry::{
    MicroSteps, Output, PROJECT_DIR, PromptFile, PromptLibrary, TemplateEntry, Variant, Variants,
};
use self::state::Decision;
use crate::index::Workspace;
use crate::llm::model::Message;

pub use self::fill::{fill, placeholders};
use self::trim::Trim;

/// An estimate of the tokens `text` costs: about four characters each.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// The tokens `text` costs at `chars_per_token` characters a token (as
/// measured for a model), or four when not measured.
pub fn estimate_tokens_at(text: &str, chars_per_token: Option<f32>) -> usize {
    match chars_per_token.filter(|cpt| cpt.is_finite() && *cpt >= 0.5) {
        Some(cpt) => (text.chars().count() as f64 / f64::from(cpt)).ceil() as usize,
        None => estimate_tokens(text),
    }
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

/// The step a prompt is built for: which step, who answers it, and the
/// prompt type whose template it fills (a recipe's agent step gives its own,
/// `AgentStep::prompt_step`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PromptStep<'a> {
    pub step_id: &'a str,
    pub agent_archetype: &'a str,
    pub prompt_type: &'a str,
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
    /// A tier forced by the caller (`control-room prompt --tier`, or the
    /// `[llm] tier` setting).
    pub tier: Option<&'a str>,
    /// The model's context window from the settings, over the matrix's.
    pub context_window: Option<u32>,
    /// Characters per token as measured for the model (default four).
    pub chars_per_token: Option<f32>,
    pub workspace: Option<&'a Workspace>,
    /// The conversation before this message (layer 6), oldest first: the
    /// Foreman's desk; empty for a recipe's step.
    pub history: &'a [Message],
    /// Messages after the user message: on the Foreman's retry, its reply
    /// and the system's report of what its actions did.
    pub follow_up: &'a [Message],
    /// The step's task packet as it is sent ([`crate::receipts::audit::Packet::sent`]),
    /// closing the user message; `None` where no packet goes (the Foreman's
    /// desk, a tournament's contestant).
    pub packet: Option<&'a str>,
    /// The story's graph kept between builds; `None` builds it afresh.
    pub graph: Option<&'a crate::kb::graph::GraphCache>,
}

impl<'a> PromptInputs<'a> {
    /// The inputs of a prompt for the model `target` (its name, reply limit,
    /// tier, window and characters per token, each where it is known), with
    /// no history.
    pub fn for_target(
        task_description: &'a str,
        task_args: &'a Map<String, Value>,
        slots: Vec<SlotText<'a>>,
        target: Option<&'a crate::llm::model::ModelTarget>,
        workspace: Option<&'a Workspace>,
    ) -> PromptInputs<'a> {
        PromptInputs {
            task_description,
            task_args,
            slots,
            model: target.map(|t| t.model.as_str()),
            max_tokens: target.and_then(|t| t.max_tokens),
            tier: target.and_then(|t| t.tier.as_deref()),
            context_window: target.and_then(|t| t.context_window),
            chars_per_token: target.and_then(|t| t.chars_per_token),
            workspace,
            history: &[],
            follow_up: &[],
            packet: None,
            graph: None,
        }
    }

    /// The tokens `text` costs the model these inputs are for.
    pub fn tokens(&self, text: &str) -> usize {
        estimate_tokens_at(text, self.chars_per_token)
    }
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
    /// The characters a token `tokens` was counted at, when measured for
    /// the model (else about four).
    pub chars_per_token: Option<f32>,
}

impl Assembly {
    /// The reply's token limit this prompt was fitted for: the tier's
    /// reserve for the reply, sent when the writer sets no `max_tokens`.
    pub fn reply_limit(&self) -> u32 {
        u32::try_from(self.profile.spec.response_reserve).unwrap_or(u32::MAX)
    }

    /// The context window this prompt was fitted to.
    pub fn window(&self) -> u32 {
        u32::try_from(self.profile.caps.context_window).unwrap_or(u32::MAX)
    }

    /// The model request of this prompt for step `step_id` of `archetype`:
    /// its messages, its reply limit and window, JSON with its schema when
    /// its output is JSON.
    pub fn request(
        self,
        step_id: String,
        archetype: &str,
        prompt_type: &str,
    ) -> crate::llm::model::ModelRequest {
        let json = self.output.is_json();
        crate::llm::model::ModelRequest {
            step_id,
            agent_archetype: archetype.to_owned(),
            prompt_type: prompt_type.to_owned(),
            reply_limit: Some(self.reply_limit()),
            context_window: Some(self.window()),
            schema: if json {
                self.schema.map(|(_, schema)| schema)
            } else {
                None
            },
            json_reply: json,
            messages: self.messages,
            model: None,
        }
    }
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
    fn build(&self, step: PromptStep<'_>, inputs: &PromptInputs) -> Result<Assembly, PromptError>;

    /// Whether `prompt_type` replies prose, JSON or its receipt.
    fn output(&self, prompt_type: &str) -> Output {
        self.contract(prompt_type).output
    }

    /// What a reply of `prompt_type` is held to, as its task packet says.
    fn contract(&self, prompt_type: &str) -> Contract;
}

/// What a prompt type's reply is held to: prose, JSON or a receipt, the
/// schema's source, and the mode whose rules frame it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contract {
    pub output: Output,
    pub schema: Option<String>,
    pub mode: Option<String>,
    /// How a t1 model answers the step in micro-steps, if it does.
    pub micro_steps: Option<MicroSteps>,
}

/// Every prompt of a workspace, its capability matrix and its knowledge base.
#[derive(Clone, Debug)]
pub struct Prompts {
    pub library: PromptLibrary,
    pub capabilities: Capabilities,
    pub decisions: Vec<Decision>,
    /// The project's mode, when the prompts were loaded from a workspace
    /// whose mode file could be read.
    pub mode: Option<crate::kb::mode::ModeState>,
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
        let mode = crate::kb::mode::load(root)
            .map_err(|error| problems.push(error.to_string()))
            .ok();
        let mut prompts = Prompts::from_library(library, decisions);
        prompts.mode = mode;
        prompts.with_problems(problems)
    }

    fn from_library(library: PromptLibrary, decisions: Vec<Decision>) -> Prompts {
        let mut problems = library.problems.clone();
        let capabilities = Capabilities::from_files(&library.capability_files, &mut problems);
        Prompts {
            library,
            capabilities,
            decisions,
            mode: None,
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
}

impl PromptBuilder for Prompts {
    fn contract(&self, prompt_type: &str) -> Contract {
        let entry = self.library.template(prompt_type);
        Contract {
            output: entry.map_or(Output::Prose, |entry| entry.output),
            schema: entry.and_then(|entry| entry.schema.as_ref().map(|(source, _)| source.clone())),
            mode: entry.and_then(|entry| entry.mode.clone()),
            micro_steps: entry.and_then(|entry| entry.micro_steps.clone()),
        }
    }

    fn build(&self, step: PromptStep<'_>, inputs: &PromptInputs) -> Result<Assembly, PromptError> {
        let entry = self
            .library
            .template(step.prompt_type)
            .ok_or_else(|| PromptError::NoTemplate(step.prompt_type.to_owned()))?;
        let profile = self.profile(inputs)?;
        let (variant, template) = entry
            .variants
            .pick(profile.variant)
            .ok_or_else(|| PromptError::NoVariant(step.prompt_type.to_owned()))?;
        let budget = profile.prompt_budget(inputs.max_tokens);
        let mut slots = inputs.slots.clone();
        let mut trim = Trim::default();
        let mut trimmed = Vec::new();
        let picked = Picked { entry, template };
        loop {
            let (messages, parts) = self.sandwich(step, picked, &profile, inputs, &slots, trim)?;
            let tokens: usize = messages.iter().map(|m| inputs.tokens(&m.content)).sum();
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
                    chars_per_token: inputs.chars_per_token,
                });
            }
            let over = tokens - budget;
            match trim.further(self, &profile, entry, &mut slots, over, inputs.history) {
                Some(what) => trimmed.push(what),
                None => {
                    return Err(PromptError::TooLarge {
                        prompt_type: step.prompt_type.to_owned(),
                        model: inputs.model.unwrap_or("the model").to_owned(),
                        tokens,
                        budget,
                        window: profile.caps.context_window,
                    });
                }
            }
        }
    }
}
