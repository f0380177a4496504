//! The Chief decomposes a request no recipe takes ("let's do scene 3 and
//! then see"): the model answers with a session plan (tasks worded so that
//! a recipe takes each, with their dependencies and what done means) or
//! with one question and its choices. The reply is held to
//! `schemas/decompose.json`, and every task of a plan must route; what
//! fails is quoted back, at most twice, then the request stays unroutable
//! with the reason. A plan lands through the plan machinery (routed,
//! checked, saved as `plan.json` and `plan.md`).

use serde_json::{Map, Value};

use crate::index::Workspace;
use crate::llm::model::{Message, Model, ModelRequest};
use crate::llm::protocol::schema::schema_errors;
use crate::llm::protocol::strip_reasoning;
use crate::plan::{Plan, Task};
use crate::runs::contract::stored_json;
use crate::runs::prompts::{PromptBuilder, PromptInputs, PromptStep, SlotKind, SlotText};
use crate::runs::recipe::Registry;
use crate::runs::router;

/// Rounds after the first when the reply's problems go back to the model.
const MAX_RETRIES: usize = 2;

/// What the Chief made of a request.
#[derive(Clone, Debug, PartialEq)]
pub enum Decomposition {
    /// Tasks a recipe takes each: (description, the tasks it waits for by
    /// number, what done means).
    Plan(Vec<(String, Vec<u32>, Option<String>)>),
    /// One question for the writer, and the choices (each a task).
    Clarify {
        question: String,
        choices: Vec<String>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum ChiefError {
    #[error("the Chief's prompt: {0}")]
    Prompt(#[from] crate::runs::prompts::PromptError),
    #[error(transparent)]
    Model(#[from] crate::llm::model::ModelError),
    #[error("the Chief could not split the request after {rounds} tries: {reason}")]
    Unusable { rounds: usize, reason: Unsplit },
}

/// The recipes as the prompt lists them: id, label, the words that reach it.
fn recipe_list(registry: &Registry) -> String {
    registry
        .recipes()
        .map(|recipe| {
            let patterns: Vec<&str> = recipe
                .task_patterns
                .iter()
                .map(String::as_str)
                .take(4)
                .collect();
            format!(
                "- {} ({}): {}",
                recipe.recipe_id,
                recipe.label,
                patterns.join("; ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn scene_list(workspace: &Workspace) -> String {
    let Some(outline) = workspace
        .catalog()
        .outline()
        .and_then(|file| file.outline())
    else {
        return "(no outline)".to_owned();
    };
    outline
        .entries
        .iter()
        .enumerate()
        .map(|(n, entry)| format!("{}. {}: {}", n + 1, entry.scene_id, entry.beat))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asks the Chief to decompose `request`.
pub async fn decompose(
    workspace: &Workspace,
    prompts: &dyn PromptBuilder,
    registry: &Registry,
    model: &dyn Model,
    request: &str,
) -> Result<Decomposition, ChiefError> {
    let target = model.target("chief");
    let args = Map::new();
    let assembly = prompts.build(
        PromptStep {
            step_id: "decompose",
            agent_archetype: "chief",
            prompt_type: "decompose",
        },
        &PromptInputs::for_target(
            request,
            &args,
            vec![
                SlotText {
                    name: "request",
                    text: request.to_owned(),
                    kind: SlotKind::Artifact,
                },
                SlotText {
                    name: "recipes",
                    text: recipe_list(registry),
                    kind: SlotKind::Artifact,
                },
                SlotText {
                    name: "scenes",
                    text: scene_list(workspace),
                    kind: SlotKind::Pointer,
                },
            ],
            target.as_ref(),
            Some(workspace),
        ),
    )?;
    let schema = assembly
        .schema
        .clone()
        .map(|(_, schema)| schema)
        .unwrap_or(Value::Null);
    let mut messages = assembly.messages.clone();
    let mut reason = Unsplit::NotJson;
    for round in 0..=MAX_RETRIES {
        let model_request = ModelRequest {
            step_id: if round == 0 {
                "decompose".to_owned()
            } else {
                format!("decompose.retry-{round}")
            },
            agent_archetype: "chief".into(),
            prompt_type: "decompose".into(),
            messages: messages.clone(),
            json_reply: true,
            schema: Some(schema.clone()),
            reply_limit: Some(assembly.reply_limit()),
            context_window: Some(assembly.window()),
            model: None,
        };
        let reply = model.complete(&model_request).await?;
        if let Some(cut) = reply.cut_off_error() {
            return Err(ChiefError::Model(cut));
        }
        match read(&reply.text, &schema, registry, workspace) {
            Ok(decomposition) => return Ok(decomposition),
            Err(problem) => {
                reason = problem;
                messages.push(Message::assistant(reply.text));
                messages.push(Message::user(format!(
                    "That reply cannot be used: {reason}. Reply again with JSON only, as asked."
                )));
            }
        }
    }
    Err(ChiefError::Unusable {
        rounds: MAX_RETRIES + 1,
        reason,
    })
}

/// What is wrong with a reply that should split a request.
#[derive(Debug, thiserror::Error)]
pub enum Unsplit {
    #[error("it is not a JSON object")]
    NotJson,
    #[error("{}", .0.join("; "))]
    Schema(Vec<String>),
    #[error("task {task} (“{description}”) is taken by no recipe: {why}")]
    Unrouted {
        task: usize,
        description: String,
        why: String,
    },
    #[error("task {task} depends on task {on}, which is not another task of the plan")]
    BadDependency { task: usize, on: u32 },
}

/// The reply as a decomposition, or what is wrong with it.
fn read(
    text: &str,
    schema: &Value,
    registry: &Registry,
    workspace: &Workspace,
) -> Result<Decomposition, Unsplit> {
    let value = stored_json(&strip_reasoning(text)).ok_or(Unsplit::NotJson)?;
    let errors = schema_errors(schema, &value);
    if !errors.is_empty() {
        return Err(Unsplit::Schema(errors));
    }
    if value["intent"] == "clarify" {
        let choices = value["choices"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        return Ok(Decomposition::Clarify {
            question: value["question"]
                .as_str()
                .unwrap_or_default()
                .trim()
                .to_owned(),
            choices,
        });
    }
    let tasks = value["tasks"].as_array().cloned().unwrap_or_default();
    let mut plan = Vec::new();
    for (number, task) in tasks.iter().enumerate() {
        let description = task["task"].as_str().unwrap_or_default().trim().to_owned();
        let routed = router::route(registry, Some(workspace), &description);
        if !routed.routable {
            return Err(Unsplit::Unrouted {
                task: number + 1,
                description,
                why: routed.reason,
            });
        }
        let deps: Vec<u32> = task["depends_on"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .map(|dep| dep as u32)
            .collect();
        if let Some(bad) = deps
            .iter()
            .find(|dep| **dep as usize > tasks.len() || **dep as usize == number + 1)
        {
            return Err(Unsplit::BadDependency {
                task: number + 1,
                on: *bad,
            });
        }
        plan.push((description, deps, task["dod"].as_str().map(str::to_owned)));
    }
    Ok(Decomposition::Plan(plan))
}

/// A plan of the Chief's tasks, routed and checked, ready to be saved.
pub fn plan_of(
    tasks: &[(String, Vec<u32>, Option<String>)],
    registry: &Registry,
    workspace: &Workspace,
    session_id: String,
    at: String,
) -> Plan {
    let tasks = tasks
        .iter()
        .zip(1..)
        .map(|((description, deps, dod), id)| {
            let mut task = Task::new(id, description.clone());
            task.deps.clone_from(deps);
            task.dod.clone_from(dod);
            task
        })
        .collect();
    let mut plan = Plan::new(session_id, "chief", at, tasks);
    plan.route(registry, Some(workspace));
    plan.settle();
    plan
}
