//! `control-room voice …`: voice calibration from the command line, the
//! same as the editor's code lenses and commands. `tournament` drafts the
//! test passage with every contestant at once into one file under the voice
//! folder; `pick` makes a version the gold standard and writes the bundle
//! around it; `why` asks the model why a version works and adds its answer
//! under it; `cross` runs round two from a winner and a runner-up; `bundle`
//! and `lock` finish the bundle; `report` measures every scene against the
//! gold standard. Files are written whole and atomically, and listed; a file
//! changed meanwhile is left alone.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Subcommand;
use tokio_util::sync::CancellationToken;

use super::running::{ModelArgs, model, tokio_runtime};
use super::workspace_root;
use crate::index::Workspace;
use crate::prose::voice::VoiceTraits;
use crate::runs::output::changes::{Change, apply_on_disk};
use crate::runs::prompts::Prompts;
use crate::runs::store::Disk;
use crate::voice::file::{self, TournamentFile};
use crate::voice::play;
use crate::voice::tournament::tournament_path;
use crate::voice::{Contestant, TestPassage, Tournament, Voice, bundle};

/// What the tournament's contestants write.
pub struct PassageArgs<'a> {
    pub scene: Option<&'a str>,
    /// `PATH:FIRST-LAST`, lines 1-based.
    pub passage: Option<&'a str>,
    pub text: Option<&'a str>,
}

/// `voice tournament`.
pub fn tournament(
    dir: &Path,
    passage: &PassageArgs,
    contestants: &[String],
    words: Option<u32>,
    model_args: &ModelArgs,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let passage = test_passage(&root, passage)?;
    let contestants = contestants
        .iter()
        .flat_map(|list| list.split(','))
        .map(Contestant::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let tournament = Tournament::new(passage, contestants, words)?;
    run_tournament(&root, tournament, model_args)
}

/// `voice cross`: round two of `id` from versions `lead` and `other`.
pub fn cross(
    dir: &Path,
    id: &str,
    lead: &str,
    other: &str,
    words: Option<u32>,
    model_args: &ModelArgs,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let (_, text) = tournament_text(&workspace, id)?;
    let file = TournamentFile::read(&text).context("not a tournament's file")?;
    let tournament = play::cross(&file, lead, other, words)?;
    run_tournament(&root, tournament, model_args)
}

/// Runs `tournament` and writes its file.
pub(crate) fn run_tournament(
    root: &Path,
    tournament: Tournament,
    model_args: &ModelArgs,
) -> anyhow::Result<i32> {
    let workspace = Arc::new(Workspace::load(root));
    let prompts = Prompts::load(root);
    for problem in &prompts.problems {
        eprintln!("warning: {problem}");
    }
    let voice = Voice {
        workspace: workspace.clone(),
        prompts: Arc::new(prompts),
        model: model(root, model_args)?,
    };
    let brief = play::brief(&workspace, &tournament.passage)?;
    eprintln!(
        "tournament {}: {} contestants drafting at once",
        tournament.id,
        tournament.contestants.len()
    );
    let on_done = |done: usize, of: usize, label: &str| eprintln!("  {done} of {of}: {label}");
    let runtime = tokio_runtime()?;
    let entries = match runtime.block_on(play::run(
        &voice,
        &tournament,
        &on_done,
        &CancellationToken::new(),
    )) {
        Ok(entries) => entries,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(1);
        }
    };
    let change = Change {
        path: tournament.path(&workspace),
        before: None,
        after: file::render(&tournament, &brief, &entries),
    };
    write(root, &[change]);
    for (at, entry) in entries.iter().enumerate() {
        match &entry.outcome {
            Ok(version) => println!(
                "{}. {}: {}",
                at + 1,
                entry.contestant.label,
                file::measured_line(&version.traits)
            ),
            Err(why) => println!("{}. {}: failed: {why}", at + 1, entry.contestant.label),
        }
    }
    println!(
        "pick one: control-room voice pick {} N [--why \"…\"]",
        tournament.id
    );
    Ok(0)
}

fn test_passage(root: &Path, args: &PassageArgs) -> anyhow::Result<TestPassage> {
    match (args.scene, args.passage, args.text) {
        (Some(id), None, None) => Ok(TestPassage::Scene { id: id.to_owned() }),
        (None, None, Some(text)) if !text.trim().is_empty() => {
            Ok(TestPassage::Description(text.trim().to_owned()))
        }
        (None, Some(spec), None) => {
            let (path, lines) = spec
                .rsplit_once(':')
                .context("--passage is PATH:FIRST-LAST (lines, from 1)")?;
            let (first, last) = lines
                .split_once('-')
                .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
                .filter(|(a, b)| *a >= 1 && a <= b)
                .context("--passage is PATH:FIRST-LAST (lines, from 1)")?;
            crate::storage::check_relative_path(path).map_err(anyhow::Error::msg)?;
            let text = std::fs::read_to_string(root.join(path))
                .with_context(|| format!("cannot read {path}"))?;
            let chosen: Vec<&str> = text
                .lines()
                .skip(first - 1)
                .take(last - first + 1)
                .collect();
            if chosen.iter().all(|line| line.trim().is_empty()) {
                bail!("{path} has no text on lines {first}-{last}");
            }
            Ok(TestPassage::Selection {
                path: path.to_owned(),
                start_line: first,
                end_line: last,
                text: chosen.join("\n"),
            })
        }
        _ => bail!(
            "give the passage one way: --scene SCN-…, --passage PATH:FIRST-LAST or --text \"…\""
        ),
    }
}

fn tournament_text(workspace: &Workspace, id: &str) -> anyhow::Result<(String, String)> {
    let path = if id.ends_with(".md") {
        id.to_owned()
    } else {
        tournament_path(workspace, id).to_string()
    };
    let text = std::fs::read_to_string(workspace.root().join(&path))
        .with_context(|| format!("there is no tournament file {path}"))?;
    Ok((path, text))
}

/// Writes `changes`, listing each; whether all were written.
fn write(root: &Path, changes: &[Change]) -> bool {
    let mut all = true;
    for (path, result) in apply_on_disk(root, &Disk::default(), changes) {
        match result {
            Ok(()) => println!("wrote {path}"),
            Err(why) => {
                all = false;
                println!("not written: {path}: {why}");
            }
        }
    }
    all
}

/// `voice pick`: the gold standard from version `which`, and the bundle.
pub fn pick(dir: &Path, id: &str, which: &str, why: Option<&str>) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let mut workspace = Workspace::load(&root);
    let (said, changes) = match bundle::pick(&mut workspace, id, which, why) {
        Ok(picked) => picked,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(1);
        }
    };
    for line in &said {
        println!("{line}");
    }
    Ok(if write(&root, &changes) { 0 } else { 1 })
}

/// `voice bundle`.
pub fn generate(dir: &Path, summary: Option<&str>) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    match bundle::generate_bundle(&workspace, summary) {
        Ok((said, changes)) => {
            println!("{said}");
            Ok(if write(&root, &changes) { 0 } else { 1 })
        }
        Err(error) => {
            eprintln!("error: {error}");
            Ok(1)
        }
    }
}

/// `voice lock`.
pub fn lock(dir: &Path) -> anyhow::Result<i32> {
    lock_or_unlock(dir, bundle::lock)
}

/// `voice unlock`.
pub fn unlock(dir: &Path) -> anyhow::Result<i32> {
    lock_or_unlock(dir, bundle::unlock)
}

fn lock_or_unlock(
    dir: &Path,
    how: fn(
        &Workspace,
    )
        -> Result<(String, crate::runs::output::changes::Change), crate::voice::VoiceError>,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    match how(&workspace) {
        Ok((said, change)) => {
            println!("{said}");
            Ok(if write(&root, &[change]) { 0 } else { 1 })
        }
        Err(error) => {
            eprintln!("error: {error}");
            Ok(1)
        }
    }
}

/// `voice why`: the model's account of a version, added under it.
pub fn why(dir: &Path, id: &str, which: &str, model_args: &ModelArgs) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Arc::new(Workspace::load(&root));
    let (path, text) = tournament_text(&workspace, id)?;
    let voice = Voice {
        workspace: workspace.clone(),
        prompts: Arc::new(Prompts::load(&root)),
        model: model(&root, model_args)?,
    };
    let runtime = tokio_runtime()?;
    let (after_line, section) = match runtime.block_on(play::why(&voice, &text, which)) {
        Ok(answer) => answer,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(1);
        }
    };
    println!("{section}");
    let change = Change {
        path: path.into(),
        before: Some(text.as_str().into()),
        after: file::insert_after_line(&text, after_line, &section),
    };
    Ok(if write(&root, &[change]) { 0 } else { 1 })
}

/// `scaffold`: the scene's scaffold beside it.
pub fn scaffold(
    dir: &Path,
    scene: &str,
    goal: Option<&str>,
    conflict: Option<&str>,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    match crate::foreman::actions::scaffold::scaffold_scene(&workspace, scene, goal, conflict) {
        Ok((said, change)) => {
            println!("{said}");
            Ok(if write(&root, &[change]) { 0 } else { 1 })
        }
        Err(error) => {
            eprintln!("error: {error}");
            Ok(1)
        }
    }
}

/// `voice report`: every scene's traits and drift from the gold standard.
pub fn report(dir: &Path, json: bool) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let catalog = workspace.catalog();
    let gold = catalog
        .voice_gold()
        .map(|(file, gold)| (file.path.clone(), gold.traits.clone()));
    let threshold = workspace.config().voice.drift;
    let mut rows = Vec::new();
    for (file, _) in catalog.scenes() {
        let traits = VoiceTraits::measure(&file.text, &file.analyse_prose(), None);
        if traits.words == 0 {
            continue;
        }
        let drift = gold.as_ref().map(|(_, gold)| traits.drift_from(gold).score);
        rows.push((file.path.to_string(), traits, drift));
    }
    if json {
        let scenes: Vec<serde_json::Value> = rows
            .iter()
            .map(|(path, traits, drift)| {
                serde_json::json!({
                    "path": path,
                    "words": traits.words,
                    "narration_sentence_words": round(traits.narration_mean),
                    "dialogue": round(traits.dialogue),
                    "figures_per_1000": round(traits.figures),
                    "interiority_per_1000": round(traits.interiority),
                    "drift": drift.map(round),
                    "drifts": drift.is_some_and(|d| d > threshold),
                })
            })
            .collect();
        let out = serde_json::json!({
            "gold_standard": gold.as_ref().map(|(path, _)| path.to_string()),
            "threshold": threshold,
            "scenes": scenes,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(0);
    }
    match &gold {
        Some((path, traits)) => println!("gold standard {path}: {}", file::measured_line(traits)),
        None => println!("no gold standard yet: the scenes' traits alone"),
    }
    for (path, traits, drift) in &rows {
        let mark = match drift {
            Some(d) if *d > threshold => format!("  drift {d:.2} (over {threshold})"),
            Some(d) => format!("  drift {d:.2}"),
            None => String::new(),
        };
        println!("{path}: {}{mark}", file::measured_line(traits));
    }
    Ok(0)
}

fn round(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

#[derive(Subcommand)]
pub enum VoiceCommand {
    /// Draft one test passage with every contestant at once, side by side
    /// in one file under the voice folder.
    Tournament {
        /// A scene of the outline: its beat, told in each voice.
        #[arg(long)]
        scene: Option<String>,
        /// A passage of the manuscript to re-voice: PATH:FIRST-LAST (lines).
        #[arg(long)]
        passage: Option<String>,
        /// The passage in words ("Kael tells Iria the ward has failed").
        #[arg(long)]
        text: Option<String>,
        /// Who competes, comma-separated: strategies (sparse, lyrical, close,
        /// distant, action, character, dialogue, balanced), `@model`,
        /// `strategy@model`, or your own words for a voice.
        #[arg(long, required = true, num_args = 1..)]
        contestants: Vec<String>,
        /// About how many words each version runs to (default 400).
        #[arg(long)]
        words: Option<u32>,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Make version WHICH (its number or label) of TOURNAMENT the gold
    /// standard, and write the bundle around it.
    Pick {
        tournament: String,
        which: String,
        /// Why this is the voice, in your words (kept in the gold standard).
        #[arg(long)]
        why: Option<String>,
    },
    /// Ask the model why version WHICH works; its answer goes under it.
    Why {
        tournament: String,
        which: String,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Round two: cross version LEAD with version OTHER in three shares.
    Cross {
        tournament: String,
        lead: String,
        other: String,
        #[arg(long)]
        words: Option<u32>,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Bring the bundle up to date: the gold standard's measured traits,
    /// and the anti-pattern sheet and phase evolution guide where missing.
    Bundle {
        /// The voice in a sentence, for the smallest models' prompts.
        #[arg(long)]
        summary: Option<String>,
    },
    /// Lock the voice (`locked: true` in the gold standard).
    Lock,
    /// Unlock the voice (`locked: false`), so another version may be picked.
    Unlock,
    /// Every scene's voice measured against the gold standard.
    Report {
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `voice` subcommand.
pub fn dispatch(dir: &Path, command: VoiceCommand) -> anyhow::Result<i32> {
    match command {
        VoiceCommand::Tournament {
            scene,
            passage,
            text,
            contestants,
            words,
            model,
        } => tournament(
            dir,
            &PassageArgs {
                scene: scene.as_deref(),
                passage: passage.as_deref(),
                text: text.as_deref(),
            },
            &contestants,
            words,
            &model,
        ),
        VoiceCommand::Pick {
            tournament,
            which,
            why,
        } => pick(dir, &tournament, &which, why.as_deref()),
        VoiceCommand::Why {
            tournament,
            which,
            model,
        } => why(dir, &tournament, &which, &model),
        VoiceCommand::Cross {
            tournament,
            lead,
            other,
            words,
            model,
        } => cross(dir, &tournament, &lead, &other, words, &model),
        VoiceCommand::Bundle { summary } => generate(dir, summary.as_deref()),
        VoiceCommand::Lock => lock(dir),
        VoiceCommand::Unlock => unlock(dir),
        VoiceCommand::Report { json } => report(dir, json),
    }
}
