//! `control-room route`, `run` and `runs …`: the pipeline engine on the
//! command line, with a progress bar on a terminal and plain lines elsewhere.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::workspace_root;
use crate::index::Workspace;
use crate::llm;
use crate::llm::cassette::{Recording, Replay};
use crate::llm::model::{Model, Role, ScriptedModel};
use crate::runs::delivery::{self};
use crate::runs::drafting;
use crate::runs::edits;
use crate::runs::events::{RunEvent, RunSink};
use crate::runs::launch::{self, CancelOutcome, LaunchRequest, RunEnd, SceneLock};
use crate::runs::report::{Delivery, EditLine};
use crate::runs::router;
use crate::runs::runner::{PreviewFor, Runner};
use crate::runs::store::{self, RunFiles, RunManifest, RunStatus};
use crate::text::printable;

/// `control-room route "<task>"`: the routing result as JSON.
pub fn route(dir: &Path, task: &str) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let engine = runner(&root, None);
    let result = router::route(&engine.registry, Some(&engine.workspace), task);
    println!("{}", serde_json::to_string_pretty(&result)?);
    Ok(0)
}

/// Which model agent steps call.
#[derive(clap::Args, Debug, Default)]
pub struct ModelArgs {
    /// Instead of the `[llm]` model: `scripted:FILE` answers from a JSON file
    /// of replies keyed by step id, `replay:FILE` from a recorded cassette.
    #[arg(long, value_name = "scripted:FILE|replay:FILE")]
    pub model: Option<String>,
    /// Append every model exchange to this cassette (JSON lines), for replay.
    #[arg(long, value_name = "FILE.jsonl")]
    pub record: Option<PathBuf>,
    /// Ask the model even where an identical request to the same model
    /// finished before (by default that step's artifact is reused).
    #[arg(long)]
    pub fresh: bool,
}

/// The model of a run: `--model`, else `[llm]` in `control-room.toml` with
/// the `CONTROL_ROOM_LLM_*` variables over it.
pub fn model(root: &Path, args: &ModelArgs) -> anyhow::Result<Arc<dyn Model>> {
    let env = |name: &str| std::env::var(name).ok();
    let model: Arc<dyn Model> = match args.model.as_deref() {
        None => {
            let config = llm::workspace_config(root, None, &env)?;
            return Ok(llm::connect(&config, root, &env, args.record.as_deref())?);
        }
        Some(spec) => match spec.split_once(':') {
            Some(("scripted", file)) if !file.is_empty() => {
                Arc::new(ScriptedModel::load(Path::new(file))?)
            }
            Some(("replay", file)) if !file.is_empty() => Arc::new(Replay::load(Path::new(file))?),
            _ => bail!(
                "unknown model `{spec}`: use scripted:FILE (replies keyed by step id) or replay:FILE (a cassette recorded with --record)"
            ),
        },
    };
    match &args.record {
        Some(path) => Ok(Arc::new(Recording::new(model, path)?)),
        None => Ok(model),
    }
}

/// Parses `--arg k=v`: a value starting with `[` or `{` is JSON, else text.
pub fn parse_args(pairs: &[String]) -> anyhow::Result<Map<String, Value>> {
    let mut args = Map::new();
    for pair in pairs {
        let (key, value) = pair
            .split_once('=')
            .with_context(|| format!("`--arg {pair}` must be NAME=VALUE"))?;
        let value = if value.starts_with('[') || value.starts_with('{') {
            serde_json::from_str(value)
                .with_context(|| format!("`--arg {key}`: the value is not valid JSON"))?
        } else {
            Value::String(value.to_owned())
        };
        args.insert(key.trim().to_owned(), value);
    }
    Ok(args)
}

/// A runner on the workspace as it is on disk now; without a model it can
/// create runs and route, not execute agent steps.
pub(crate) fn runner(root: &Path, model: Option<(Arc<dyn Model>, &ModelArgs)>) -> Runner {
    let opened = launch::open(
        Arc::new(Workspace::load(root)),
        &std::collections::BTreeMap::new(),
    );
    for warning in &opened.warnings {
        eprintln!("warning: {warning}");
    }
    let mut runner = opened.runner;
    // The story's graph as the last command that built it left it: each
    // step's prompt reads only the scenes changed since.
    runner.graph = crate::kb::graph::GraphCache::load(root);
    runner.reuse = model.as_ref().is_some_and(|(_, args)| !args.fresh);
    runner.model = model.map(|(model, _)| model);
    runner.sinks.push(Arc::new(Progress::new()));
    runner
}

/// Progress on stderr: a bar on a terminal, one line per event elsewhere.
struct Progress {
    bar: Option<ProgressBar>,
    lines: Mutex<()>,
}

impl Progress {
    fn new() -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            // Hidden until the run says how many steps it has.
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Progress {
            bar,
            lines: Mutex::new(()),
        }
    }
}

impl RunSink for Progress {
    fn event(&self, event: &RunEvent) {
        let _guard = self.lines.lock();
        match (&self.bar, event) {
            (
                Some(bar),
                RunEvent::Started {
                    manifest,
                    from_step,
                },
            ) => {
                bar.set_length(manifest.total_steps as u64);
                bar.set_position(*from_step as u64);
                bar.set_message(format!("{} {}", manifest.recipe_id, manifest.run_id));
                bar.set_draw_target(ProgressDrawTarget::stderr());
                bar.enable_steady_tick(Duration::from_millis(120));
            }
            (
                Some(bar),
                RunEvent::StepStarted {
                    step_id,
                    phase,
                    actor,
                    ..
                },
            ) => {
                bar.set_message(format!("phase {phase}: {step_id} ({actor})"));
            }
            (
                Some(bar),
                RunEvent::Writing {
                    step_id,
                    words,
                    tail,
                    ..
                },
            ) => bar.set_message(format!("{step_id}: {words} words … {tail}")),
            // Plain lines stay one per step: the words arrive in the report.
            (None, RunEvent::Writing { .. }) => {}
            (Some(bar), RunEvent::StepFinished { index, .. }) => {
                bar.set_position(*index as u64 + 1)
            }
            (Some(bar), RunEvent::Checking { .. }) => {
                bar.set_message("checking the Definition of Done")
            }
            (Some(bar), RunEvent::Finished { .. }) => bar.finish_and_clear(),
            (
                None,
                RunEvent::Started {
                    manifest,
                    from_step,
                },
            ) => eprintln!(
                "run {} ({}): {} steps{}",
                manifest.run_id,
                manifest.recipe_id,
                manifest.total_steps,
                if *from_step > 0 {
                    format!(", resuming at step {}", from_step + 1)
                } else {
                    String::new()
                }
            ),
            (
                None,
                RunEvent::StepStarted {
                    index,
                    total,
                    step_id,
                    phase,
                    actor,
                    ..
                },
            ) => {
                eprintln!("[{}/{total}] phase {phase}: {step_id} ({actor})", index + 1)
            }
            (
                None,
                RunEvent::StepFinished {
                    index,
                    total,
                    step_id,
                    ..
                },
            ) => {
                eprintln!("[{}/{total}] {step_id} done", index + 1)
            }
            (None, RunEvent::Checking { .. }) => eprintln!("checking the Definition of Done"),
            (None, RunEvent::Finished { .. }) => {}
        }
    }
}

pub(crate) fn tokio_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// A token Ctrl-C cancels, and the task that waits for it (abort it when done).
pub(crate) fn cancel_on_ctrl_c() -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let cancel = CancellationToken::new();
    let waiting = cancel.clone();
    let interrupt = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            waiting.cancel();
        }
    });
    (cancel, interrupt)
}

/// The writer's text of a file, as the disk has it.
pub(crate) fn disk_text(root: &Path) -> impl Fn(&str) -> Option<String> + '_ {
    move |path: &str| std::fs::read_to_string(root.join(path)).ok()
}

/// Executes a run to its end (Ctrl-C cancels it), delivers its draft to the
/// manuscript as the editor would, and writes its findings and report.
/// The run's manifest, or why it could not run.
pub(crate) async fn run_to_end(
    runner: Runner,
    run_id: &str,
    lock: Option<SceneLock>,
) -> anyhow::Result<RunManifest> {
    let workspace = runner.workspace.clone();
    let registry = runner.registry.clone();
    let root = workspace.root().to_path_buf();
    let (cancel, interrupt) = cancel_on_ctrl_c();
    let handle = launch::spawn(runner, run_id, cancel, lock);
    let end = handle.finish().await;
    interrupt.abort();
    let manifest = match end {
        RunEnd::Ended(manifest) => manifest,
        RunEnd::NotRun(error) => return Err(error.into()),
        RunEnd::Crashed(reason) => {
            let manifest = RunFiles::new(&root, run_id).read_manifest()?;
            delivery::conclude_failed(&root, registry.get(&manifest.recipe_id), &manifest, &reason);
            bail!("run {run_id}: {reason}");
        }
    };
    let recipe = registry.get(&manifest.recipe_id);
    let cache = RunFiles::new(&root, run_id)
        .read_cache()
        .unwrap_or_default();
    let applied = delivery::deliver_to_disk(&workspace, recipe, &manifest, &cache);
    match &applied.delivery {
        Delivery::Scene(path) => eprintln!("  the draft is in {path}"),
        Delivery::Beside { path, reason } => {
            eprintln!("  the draft is beside the scene, in {path}, because {reason}")
        }
        Delivery::Withheld(reason) if recipe.is_some_and(drafting::drafts) => {
            eprintln!("  no draft was delivered {reason}")
        }
        Delivery::Withheld(reason) if recipe.is_some_and(edits::edits) => {
            eprintln!("  no edit was made {reason}")
        }
        Delivery::Edits { changed, refused } => print_edits(changed, refused, run_id),
        _ => {}
    }
    let concluded = delivery::conclude(
        &root,
        recipe,
        &manifest,
        &cache,
        &applied,
        &disk_text(&root),
    );
    if let Err(error) = &concluded.findings_written {
        eprintln!("warning: run {run_id}: cannot write its findings: {error}");
    }
    Ok(*manifest)
}

/// Prints how a run ended; the exit code (0 when it is done).
pub(crate) fn print_end(manifest: &RunManifest) -> i32 {
    let dir = format!("{}/{}", store::RUNS_DIR, manifest.run_id);
    match manifest.status {
        RunStatus::Done => {
            println!("run {} done: {dir}", manifest.run_id);
            0
        }
        status => {
            println!(
                "run {} {}: {}\n  files: {dir}",
                manifest.run_id,
                status.as_str(),
                crate::text::printable(manifest.error.as_deref().unwrap_or(""))
            );
            1
        }
    }
}

/// Runs (or resumes) `run_id` to its end and delivers it; the exit code.
pub(crate) fn drive_run(
    runner: Runner,
    run_id: &str,
    lock: Option<SceneLock>,
) -> anyhow::Result<i32> {
    let runtime = tokio_runtime()?;
    let manifest = runtime.block_on(run_to_end(runner, run_id, lock))?;
    Ok(print_end(&manifest))
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
            return super::chief::decompose(&root, &runner, target, task, args_given, model_args);
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
    let receipts = crate::runs::audit::load_receipts(&root, run_id);
    document["contracts"] = serde_json::to_value(crate::runs::audit::ContractTally::of(&receipts))?;
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

/// The list of what a run's edits changed, and what they did not.
fn print_edits(changed: &[EditLine], refused: &[EditLine], run_id: &str) {
    let path = |line: &EditLine| line.path.clone().unwrap_or_else(|| "(no file)".into());
    if changed.is_empty() {
        eprintln!("  no edit was made");
    } else {
        eprintln!(
            "  {} edit(s) made (the files before them are in .control-room/runs/{run_id}/before/):",
            changed.len()
        );
        for line in changed {
            eprintln!("    {}: {}", path(line), printable(&line.summary));
        }
    }
    if !refused.is_empty() {
        eprintln!("  {} edit(s) not made:", refused.len());
        for line in refused {
            let reason = line.note.as_deref().unwrap_or_default();
            eprintln!(
                "    {}: {} ({})",
                path(line),
                printable(&line.summary),
                printable(reason)
            );
        }
    }
}
