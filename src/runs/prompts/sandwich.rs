//! The context sandwich: the system prompt's layers (identity, process map,
//! the mode's rules, the session state, the output protocol, the step's role)
//! joined in order, and the step's filled template as the user message.

use super::capabilities::Profile;
use super::state::{self, Decision, StateInputs};
use super::tier::history_window;
use super::trim::Trim;
use super::{
    Output, Part, PromptError, PromptFile, PromptInputs, PromptStep, Prompts, SlotText,
    TemplateEntry, Variant, fill,
};
use crate::llm::model::Message;

/// The system prompt, layer 6 (the conversation so far, its oldest turns
/// left out first) and the user message, as messages; the history's part.
fn with_history(
    system: String,
    user: String,
    inputs: &PromptInputs,
    variant: Variant,
    trim: Trim,
    parts: &mut Vec<Part>,
) -> Vec<Message> {
    let kept = history_window(inputs.history, variant, trim.history_dropped);
    if !kept.is_empty() {
        parts.push(Part {
            name: "history".into(),
            source: format!("{} of {} turns", kept.len(), inputs.history.len()),
            tokens: kept
                .iter()
                .map(|message| inputs.tokens(&message.content))
                .sum(),
        });
    }
    let mut messages = Vec::with_capacity(kept.len() + 2 + inputs.follow_up.len());
    messages.push(Message::system(system));
    messages.extend(kept.iter().cloned());
    messages.push(Message::user(user));
    if !inputs.follow_up.is_empty() {
        parts.push(Part {
            name: "follow_up".into(),
            source: format!("{} messages", inputs.follow_up.len()),
            tokens: inputs
                .follow_up
                .iter()
                .map(|message| inputs.tokens(&message.content))
                .sum(),
        });
        messages.extend(inputs.follow_up.iter().cloned());
    }
    messages
}

/// Joins the layers of the system prompt.
const LAYER_SEPARATOR: &str = "\n\n---\n\n";

/// §9.3 for the Foreman, whose reply is a message and actions.
const FOREMAN_XML_REMINDER: &str = "CRITICAL FORMAT REMINDER:\n\
- Put what you say to the writer inside <message>…</message>.\n\
- Put each action inside <action type=\"NAME\">…</action>, its parameters as child elements.\n\
- Never write scene prose and never use <content_update>.\n\
- Do not use JSON. Use XML only.";

/// §9.3: restated for models that follow the XML protocol unreliably.
const XML_REMINDER: &str = "CRITICAL FORMAT REMINDER:\n\
- Put the prose you write inside <content_update target=\"…\">…</content_update>, or reply with the prose alone.\n\
- Put anything you say to the writer inside <message>…</message>.\n\
- Reasoning goes inside <thinking>…</thinking>; it is never shown or saved.\n\
- Do not use JSON. Use XML only.";
/// A step's template: its entry in the library and the variant picked for
/// the model's profile.
#[derive(Clone, Copy)]
pub(super) struct Picked<'a> {
    pub entry: &'a TemplateEntry,
    pub template: &'a PromptFile,
}

impl Prompts {
    pub(super) fn sandwich(
        &self,
        step: PromptStep<'_>,
        Picked { entry, template }: Picked<'_>,
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
        // The Foreman has layers of its own: it guides the writer through
        // the modes, and is none of the recipes' agents.
        let foreman = entry.output == Output::Foreman;
        let own = |name: &str| {
            if foreman {
                format!("foreman_{name}")
            } else {
                name.to_owned()
            }
        };
        if let Some(file) = self.layer(profile, &own("identity")) {
            push(&mut layers, &own("identity"), file);
        }
        if !trim.no_process_map
            && let Some(file) = self.layer(profile, &own("process_map"))
        {
            push(&mut layers, &own("process_map"), file);
        }
        // `"mode": "project"` frames the prompt by the project's mode (the
        // Foreman's desk); any other names the step's own.
        let mode = entry.mode.as_deref().map(|mode| match mode {
            "project" => self
                .mode
                .as_ref()
                .map_or(crate::kb::mode::Mode::Architect, |state| state.mode)
                .id(),
            mode => mode,
        });
        // The agents' rules for a mode are theirs; the Foreman's process
        // map says what it does in each.
        if let Some(mode) = mode.filter(|_| !foreman)
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
        let decisions: &[Decision] = (!trim.no_knowledge)
            .then_some(&self.decisions)
            .map_or(&[], |d| d);
        let state = state::session_state(
            &StateInputs {
                mode,
                project: self.mode.as_ref(),
                step_id: step.step_id,
                archetype: step.agent_archetype,
                workspace: inputs.workspace,
                task_args: inputs.task_args,
                decisions,
                graph: inputs.graph,
            },
            &state_profile,
        );
        layers.push(("session_state".into(), "generated".into(), state));
        let protocol = match entry.output {
            Output::Prose => "protocols",
            Output::Json => "protocols_json",
            Output::Receipt => "protocols_receipt",
            Output::Foreman => "foreman_protocols",
        };
        if let Some(file) = self.layer(profile, protocol) {
            push(&mut layers, protocol, file);
        }
        let reminder = match entry.output {
            Output::Prose => Some(XML_REMINDER),
            Output::Foreman => Some(FOREMAN_XML_REMINDER),
            Output::Json | Output::Receipt => None,
        };
        if let Some(reminder) = reminder.filter(|_| profile.needs_xml_reminder()) {
            layers.push(("xml_reminder".into(), "§9.3".into(), reminder.to_owned()));
        }
        let role = if foreman {
            "You are the Foreman at the writer's desk: the conversation so far follows, then the writer's message. Act only through the actions allowed now.".to_owned()
        } else {
            format!(
                "You are the {} for this step (`{}`). Use no tools: everything you may rely on is in this prompt.",
                step.agent_archetype, step.step_id
            )
        };
        layers.push(("role".into(), "generated".into(), role));
        let user = fill(template, inputs, slots)?;
        let mut parts: Vec<Part> = layers
            .iter()
            .map(|(name, source, text)| Part {
                name: name.clone(),
                source: source.clone(),
                tokens: inputs.tokens(text),
            })
            .collect();
        parts.push(Part {
            name: "template".into(),
            source: template.source.clone(),
            tokens: inputs.tokens(&user),
        });
        // The packet closes the message: what is asked comes first, and
        // the contract is the last thing the agent reads.
        let user = match inputs.packet {
            Some(packet) => {
                parts.push(Part {
                    name: "task_packet".into(),
                    source: "generated".into(),
                    tokens: inputs.tokens(packet),
                });
                format!("{user}\n\n{packet}")
            }
            None => user,
        };
        let system = layers
            .into_iter()
            .map(|(_, _, text)| text)
            .collect::<Vec<_>>()
            .join(LAYER_SEPARATOR);
        let messages = with_history(system, user, inputs, profile.variant, trim, &mut parts);
        Ok((messages, parts))
    }
}
