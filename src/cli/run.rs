//! `control-room route`, `run` and `runs …`: the run machinery on the
//! command line.

use std::path::Path;
use std::time::Duration;

use anyhow::bail;
use serde_json::{Map, Value, json};

use crate::llm;
use crate::llm::model::Role;
use crate::runs::launch::{self, CancelOutcome, LaunchRequest};
use crate::runs::router;
use crate::runs::runner::PreviewFor;
use crate::runs::store::{self, RunFiles, RunManifest};

use super::chief::Decided;
use super::running::{ModelArgs, disk_text, drive_run, model, parse_args, runner, tokio_runtime};
use super::workspace_root;

/// `control-room route "<task>"`: the routing result as JSON.
pub fn route(dir: &Path, task: &str) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let engine = runner(&root, None);
    let result = router::route(&engine.registry, Some(&engine.workspace), task);
    println!("{}", serde_json::to_string_pretty(&result)?);
    Ok(0)
}

/// `control-room run <recipe-or-task> [--arg k=v]… [--task TEXT] [--model scripted:FILE]`.
pub fn run(
    dir: &Path,
    target: &str,
    task: Option<&str>,
    args: &[String],
    model_args: &ModelArgs,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let model = model(&root, model_args)?;
    let runner = runner(&root, Some((model, model_args)));
    let args_given = args;
    let args = parse_args(args)?;
    let request = if runner.registry.get(target).is_some() {
        LaunchRequest {
            recipe: Some(target.to_owned()),
            task: task.map(str::to_owned),
            args,
            ..LaunchRequest::default()
        }
    } else {
        // A request in words no recipe takes goes to the Chief; a bare
        // name (a recipe that did not load, a typo) is reported as it is.
        if target.trim().contains(char::is_whitespace)
            && !crate::runs::router::route(&runner.registry, Some(&runner.workspace), target)
                .routable
        {
            return match super::chief::decompose(&root, &runner, target)? {
                Decided::Ended(code) => Ok(code),
                Decided::Run(choice) => run(dir, &choice, task, args_given, model_args),
            };
        }
        LaunchRequest {
            task: Some(target.to_owned()),
            description: task.map(str::to_owned),
            args,
            ..LaunchRequest::default()
        }
    };
    let resolved = launch::resolve(&runner.registry, &runner.workspace, request)?;
    let created = launch::create(&runner, &resolved, None, disk_text(&root))?;
    drive_run(runner, &created.manifest.run_id, created.lock)
}

/// `control-room runs list`.
pub fn list(dir: &Path) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let runs = store::list_runs(&root);
    if runs.is_empty() {
        println!("no runs yet");
    }
    for run in runs {
        println!(
            "{}  {:<9}  {:<26}  step {}/{}  {}",
            run.run_id,
            store::shown_status(&root, &run),
            run.recipe_id,
            run.current_step_index.min(run.total_steps),
            run.total_steps,
            run.created_at
        );
    }
    Ok(0)
}

/// The run.json of `run_id`: "no run" where there is none, else why it
/// cannot be read (damaged, or of a format version this build does not read).
fn read_run(files: &RunFiles, run_id: &str) -> anyhow::Result<RunManifest> {
    files.read_manifest().map_err(|error| {
        if error.is_missing() {
            anyhow::Error::new(error).context(format!("no run `{run_id}`"))
        } else {
            error.into()
        }
    })
}

/// `control-room runs show <id>`: run.json, its steps and slot summaries, as
/// one JSON document.
pub fn show(dir: &Path, run_id: &str) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let files = RunFiles::new(&root, run_id);
    let manifest = read_run(&files, run_id)?;
    let steps = files.read_steps();
    let cache = files.read_cache()?;
    let mut document = serde_json::to_value(store::wire::RunJson::from(&manifest))?;
    document["steps"] = serde_json::to_value(&steps)?;
    document["cache_summary"] = cache
        .iter()
        .map(|(slot, value)| {
            let kind = match value {
                store::CacheSlot::Pointer { .. } => "pointer",
                store::CacheSlot::Artifact { .. } => "artifact",
            };
            (
                slot.clone(),
                json!({"type": kind, "preview": value.summary()}),
            )
        })
        .collect::<Map<String, Value>>()
        .into();
    // How often the model's replies kept their contract, the figure a
    // tier is judged by.
    let receipts = crate::receipts::audit::load_receipts(&root, run_id);
    document["contracts"] =
        serde_json::to_value(crate::receipts::audit::ContractTally::of(&receipts))?;
    // What the model calls cost, summed over the steps that asked.
    let tokens = steps
        .iter()
        .filter_map(|step| step.tokens)
        .reduce(crate::llm::model::Usage::plus);
    document["tokens"] = serde_json::to_value(tokens)?;
    println!("{}", serde_json::to_string_pretty(&document)?);
    Ok(0)
}

/// `control-room runs cancel <id>`: asks the process running it to stop, or
/// marks a run that no process holds as cancelled.
pub fn cancel(dir: &Path, run_id: &str) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let files = RunFiles::new(&root, run_id);
    match launch::cancel_elsewhere(&root, run_id)? {
        CancelOutcome::AlreadyFinished(status) => {
            println!("run {run_id} is already {}", status.as_str());
            return Ok(1);
        }
        CancelOutcome::Cancelled => {
            println!("run {run_id} cancelled");
            return Ok(0);
        }
        CancelOutcome::Requested => {}
    }
    for _ in 0..200 {
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(manifest) = files.read_manifest()
            && manifest.status.is_finished()
        {
            println!("run {run_id} {}", manifest.status.as_str());
            return Ok(0);
        }
    }
    bail!("asked run {run_id} to stop, but it has not stopped after 10 s")
}

/// `control-room runs resume <id>`.
pub fn resume(dir: &Path, run_id: &str, model_args: &ModelArgs) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let model = model(&root, model_args)?;
    let runner = runner(&root, Some((model, model_args)));
    let manifest = read_run(&RunFiles::new(&root, run_id), run_id)?;
    let lock = match runner.registry.get(&manifest.recipe_id) {
        Some(recipe) => {
            let scene = manifest
                .task
                .initial_args
                .get("scene_path")
                .and_then(Value::as_str);
            launch::lock_for(&root, recipe, scene)?
        }
        None => None,
    };
    drive_run(runner, run_id, lock)
}

/// What `control-room prompt` is asked.
pub struct PromptArgs<'a> {
    pub recipe: &'a str,
    pub step: &'a str,
    pub task: Option<&'a str>,
    pub args: &'a [String],
    pub run: Option<&'a str>,
    pub model: Option<&'a str>,
    pub tier: Option<&'a str>,
    pub json: bool,
}

/// The model `[llm]` (with the environment over it) gives `archetype`, if
/// the configuration can say.
fn configured_endpoint(root: &Path, archetype: &str) -> Option<llm::EndpointConfig> {
    let env = |name: &str| std::env::var(name).ok();
    let config = llm::workspace_config(root, None, &env).ok()?;
    let endpoint = config.for_archetype(archetype);
    match endpoint.provider {
        llm::config::Provider::Replay => None,
        _ => Some(endpoint.clone()),
    }
}

/// Characters per token of `endpoint`'s model, as its server's tokenizer
/// counts them, when it has one (the prompt is then counted as a run
/// counts it).
fn measured_chars_per_token(endpoint: llm::EndpointConfig) -> Option<f32> {
    let env = |name: &str| std::env::var(name).ok();
    let endpoint = llm::Endpoint::new(endpoint, &env).ok()?;
    tokio_runtime().ok()?.block_on(endpoint.calibrate())
}

/// `control-room prompt <recipe> <step>`: the assembled prompt, for people
/// or (with `--json`) for scripts.
pub fn prompt(dir: &Path, request: &PromptArgs) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let runner = runner(&root, None);
    let registry = runner.registry.clone();
    let Some(recipe) = registry.get(request.recipe) else {
        let known: Vec<&str> = registry.recipes().map(|r| r.recipe_id.as_str()).collect();
        bail!(
            "no recipe `{}`; the recipes are {}",
            request.recipe,
            known.join(", ")
        );
    };
    let args = parse_args(request.args)?;
    let description = request.task.map_or_else(
        || match args
            .get("scene_id")
            .or(args.get("scene_path"))
            .and_then(Value::as_str)
        {
            Some(scene) => format!("{}: {scene}", recipe.label),
            None => recipe.label.clone(),
        },
        str::to_owned,
    );
    let configured = recipe
        .phase_b
        .iter()
        .find(|step| step.step_id == request.step)
        .and_then(|step| configured_endpoint(&root, &step.agent_archetype));
    let model = request
        .model
        .map(str::to_owned)
        .or(configured.as_ref().map(|endpoint| endpoint.model.clone()));
    let assembly = runner.preview_prompt(
        request.recipe,
        request.step,
        &description,
        args,
        request.run,
        PreviewFor {
            model: model.as_deref(),
            tier: request.tier.or(configured
                .as_ref()
                .and_then(|endpoint| endpoint.tier.as_deref())),
            context_window: configured
                .as_ref()
                .and_then(|endpoint| endpoint.context_window),
            chars_per_token: configured.clone().and_then(measured_chars_per_token),
        },
    )?;
    if request.json {
        let value = json!({
            "recipe": request.recipe,
            "step": request.step,
            "model": model,
            "tier": assembly.profile.tier,
            "variant": assembly.variant.as_str(),
            "context_window": assembly.profile.caps.context_window,
            "budget": assembly.budget,
            "tokens": assembly.tokens,
            "chars_per_token": assembly.chars_per_token,
            "output": assembly.output.as_str(),
            "schema": assembly.schema.as_ref().map(|(source, _)| source),
            "parts": assembly.parts.iter().map(|part| json!({
                "name": part.name, "source": part.source, "tokens": part.tokens,
            })).collect::<Vec<_>>(),
            "trimmed": assembly.trimmed,
            "messages": assembly.messages,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(0);
    }
    let model_shown = model.as_deref().unwrap_or("no model configured");
    println!(
        "# {} / {}: {} messages for {model_shown}",
        request.recipe,
        request.step,
        assembly.messages.len()
    );
    println!(
        "# tier {} (variant {}), context window {}, prompt budget {} tokens, about {} used ({})",
        assembly.profile.tier,
        assembly.variant.as_str(),
        assembly.profile.caps.context_window,
        assembly.budget,
        assembly.tokens,
        match assembly.chars_per_token {
            Some(cpt) => format!("{cpt:.2} characters a token, as the model's server counts"),
            None => "at about 4 characters a token".to_owned(),
        }
    );
    for part in &assembly.parts {
        println!(
            "#   {:<16} {:>6} tokens  {}",
            part.name, part.tokens, part.source
        );
    }
    if let Some((source, _)) = &assembly.schema {
        println!("# reply: JSON following {source}");
    }
    if !assembly.trimmed.is_empty() {
        println!("# trimmed to fit: {}", assembly.trimmed.join("; "));
    }
    for message in &assembly.messages {
        let role = match message.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        println!("\n──── {role} ────\n{}", message.content);
    }
    Ok(0)
}
