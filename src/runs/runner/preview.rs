//! The prompt preview (`control-room prompt`): the messages an agent step
//! would be sent, assembled without running the recipe's agents.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::agent::agent_packet;
use super::prompted::Agents;
use super::slots::{Slots, slot_texts};
use super::tool;
use super::{RunError, Runner, StepFailure};
use crate::runs::contract::PathGuard;
use crate::runs::prompts::{Assembly, PromptInputs};
use crate::runs::recipe::AgentStep;
use crate::runs::router;
use crate::runs::store::{Cache, CacheSlot, RunFiles};
use crate::tools::sha256_hex;

/// The model a previewed prompt is assembled for; each field unset falls
/// back to the run's model.
#[derive(Clone, Copy, Debug, Default)]
pub struct PreviewFor<'a> {
    pub model: Option<&'a str>,
    pub tier: Option<&'a str>,
    pub context_window: Option<u32>,
    /// Characters per token as the model's server measured them.
    pub chars_per_token: Option<f32>,
}

impl Runner {
    /// The prompt `step_id` of `recipe_id` would be sent, for inspection
    /// (`control-room prompt`). Its inputs come from `run_id`'s finished
    /// steps when given; otherwise phase A's tools run now (they only read
    /// the index) and earlier agents' outputs are shown as placeholders.
    /// `target` (else the run's model) chooses the tier and the window.
    pub fn preview_prompt(
        &self,
        recipe_id: &str,
        step_id: &str,
        description: &str,
        mut args: Map<String, Value>,
        run_id: Option<&str>,
        target: PreviewFor<'_>,
    ) -> Result<Assembly, RunError> {
        let PreviewFor {
            model,
            tier,
            context_window,
            chars_per_token,
        } = target;
        let recipe = self
            .registry
            .get(recipe_id)
            .ok_or_else(|| RunError::UnknownRecipe(recipe_id.to_owned()))?;
        let agents: Vec<&AgentStep> = recipe.phase_b.iter().collect();
        let Some(step) = agents.iter().find(|step| step.step_id == step_id).copied() else {
            let ids: Vec<&str> = agents.iter().map(|step| step.step_id.as_str()).collect();
            return Err(RunError::NoSuchStep {
                recipe: recipe_id.to_owned(),
                step: step_id.to_owned(),
                steps: ids.into_iter().map(str::to_owned).collect(),
            });
        };
        let mut cache = Cache::new();
        let mut session_id = None;
        let (description, args) = match run_id {
            Some(run_id) => {
                let files = RunFiles::new(self.root(), run_id);
                if !files.manifest().exists() {
                    return Err(RunError::UnknownRun(run_id.to_owned()));
                }
                let manifest = files.read_manifest()?;
                if manifest.recipe_id != recipe.recipe_id {
                    return Err(RunError::OtherRecipe {
                        run_id: run_id.to_owned(),
                        ran: manifest.recipe_id,
                        asked: recipe_id.to_owned(),
                    });
                }
                cache = files.read_cache()?;
                session_id = Some(manifest.session_id);
                (manifest.task.description, manifest.task.initial_args)
            }
            None => {
                router::complete_args(&self.workspace, &mut args);
                (description.to_owned(), args)
            }
        };
        if run_id.is_none() {
            self.preview_tools(recipe, &description, &args, &mut cache)?;
        }
        for earlier in &recipe.phase_b {
            if earlier.step_id == step_id {
                break;
            }
            cache.entry(earlier.output_slot.clone()).or_insert_with(|| {
                let text = format!(
                    "[the {}'s output from step `{}` goes here]",
                    earlier.agent_archetype, earlier.step_id
                );
                CacheSlot::Artifact {
                    agent_id: earlier.agent_archetype.clone(),
                    summary: text.clone(),
                    sha256: sha256_hex(text.as_bytes()),
                    text,
                }
            });
        }
        let (slots, inputs_used) = slot_texts(step, &cache).map_err(|failure| match failure {
            StepFailure::Failed(why) => RunError::Inputs {
                step_id: step_id.to_owned(),
                why,
            },
            _ => RunError::Inputs {
                step_id: step_id.to_owned(),
                why: "its inputs are not available".to_owned(),
            },
        })?;
        let target = self
            .model
            .as_ref()
            .and_then(|model| model.target(&step.agent_archetype));
        let model = model.or(target.as_ref().map(|target| target.model.as_str()));
        let next = recipe
            .phase_b
            .iter()
            .skip_while(|agent| agent.step_id != step_id)
            .nth(1)
            .map(|agent| agent.step_id.clone());
        let packet = self.preview_packet(
            step,
            (&description, &args),
            (session_id.as_deref(), &cache),
            &inputs_used,
            next,
        );
        self.prompts
            .build(
                step.prompt_step(),
                &PromptInputs {
                    task_description: &description,
                    task_args: &args,
                    slots,
                    model,
                    max_tokens: target.as_ref().and_then(|target| target.max_tokens),
                    tier: tier.or(target.as_ref().and_then(|target| target.tier.as_deref())),
                    context_window: context_window
                        .or(target.as_ref().and_then(|target| target.context_window)),
                    chars_per_token: chars_per_token
                        .or(target.as_ref().and_then(|target| target.chars_per_token)),
                    workspace: Some(&self.workspace),
                    history: &[],
                    follow_up: &[],
                    graph: Some(&self.graph),
                    packet: Some(&packet),
                },
            )
            .map_err(RunError::from)
    }

    /// The packet as the run would send it: its sent form has no ids, so
    /// only the files the tools' receipts add to its expected artifacts
    /// differ where the preview ran the tools itself.
    fn preview_packet(
        &self,
        step: &AgentStep,
        (description, args): (&str, &Map<String, Value>),
        (session_id, cache): (Option<&str>, &Cache),
        inputs_used: &[crate::receipts::audit::InputRef],
        next: Option<String>,
    ) -> String {
        let guard =
            PathGuard::new(Agents::of(self).expected_artifacts(step, args, session_id, cache));
        agent_packet(
            step,
            ("(preview)", description, args),
            &self.prompts.contract(&step.prompt_type),
            inputs_used,
            &guard,
            next,
        )
        .sent()
    }

    /// Runs phase A's tools now (they only read the index), their outputs
    /// into `cache` as the run would have them.
    fn preview_tools(
        &self,
        recipe: &crate::runs::recipe::Recipe,
        description: &str,
        args: &Map<String, Value>,
        cache: &mut Cache,
    ) -> Result<(), RunError> {
        let task = json!({
            "description": description,
            "args": args,
            "initial_args": args,
            "session_plan_task_id": null,
        });
        let mut values = HashMap::new();
        for tool in &recipe.phase_a {
            let scope = Slots {
                task: &task,
                values: &values,
            };
            let (_, output, _) =
                tool::call(&self.workspace, tool, &scope).map_err(|error| RunError::Tool {
                    step_id: tool.step_id.clone(),
                    error,
                })?;
            let text = output.data.to_string();
            cache.insert(
                tool.output_slot.clone(),
                CacheSlot::Pointer {
                    receipt_id: "(preview)".into(),
                    sha256: sha256_hex(text.as_bytes()),
                    summary: output.summary,
                },
            );
            values.insert(tool.output_slot.clone(), output.data);
        }
        Ok(())
    }
}
