//! What the commands that run agents share: the model the flags choose
//! (`ModelArgs`), the runner, the async runtime with Ctrl-C as cancel, a
//! run's progress (a bar on a terminal, plain lines elsewhere), and a run
//! driven to its end and delivered to the disk as the editor would.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::index::Workspace;
use crate::llm;
use crate::llm::cassette::{Recording, Replay};
use crate::llm::model::{Model, ScriptedModel};
use crate::runs::events::{RunEvent, RunSink};
use crate::runs::launch::{self, RunEnd, SceneLock};
use crate::runs::output::delivery::{self, Delivery, EditLine};
use crate::runs::output::draft;
use crate::runs::output::edits;
use crate::runs::report;
use crate::runs::runner::Runner;
use crate::runs::store::{self, RunFiles, RunManifest, RunStatus};
use crate::text::printable;

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
            report::conclude_failed(&root, registry.get(&manifest.recipe_id), &manifest, &reason);
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
        Delivery::Withheld(reason) if recipe.is_some_and(draft::drafts) => {
            eprintln!("  no draft was delivered {reason}")
        }
        Delivery::Withheld(reason) if recipe.is_some_and(edits::edits) => {
            eprintln!("  no edit was made {reason}")
        }
        Delivery::Edits { changed, refused } => print_edits(changed, refused, run_id),
        _ => {}
    }
    let concluded = report::conclude(
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
