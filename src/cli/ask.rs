//! `control-room ask "…"`: a turn at the Foreman's desk from the command
//! line, the same as "Ask the Foreman" in the editor. The message is added to
//! the desk (`Notes/foreman.md`) under `## Writer` (without one, the desk's
//! last unanswered message is asked), the Foreman answers through the
//! model, its actions' changes are written atomically and listed (a file
//! changed meanwhile is left alone), a `write_scene` starts its run, and the
//! reply is appended under `## Foreman`. The writer's text in the desk is
//! never lost: a desk edited while the Foreman thought gets the reply at
//! its end.

use std::path::Path;

use anyhow::{Context, bail};

use super::running::{ModelArgs, model, tokio_runtime};
use super::workspace_root;
use crate::foreman::desk::{self, DESK_FILE};
use crate::foreman::turn::Desk;
use crate::index::Workspace;
use crate::receipts::SigningKey;
use crate::runs::output::changes::apply_on_disk;
use crate::runs::prompts::Prompts;
use crate::runs::runner::now;
use crate::runs::store::Disk;

/// Asks the Foreman `message` (or the desk's pending message).
pub fn ask(dir: &Path, message: Option<&str>, model_args: &ModelArgs) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let desk_path = root.join(DESK_FILE);
    let before = std::fs::read_to_string(&desk_path).unwrap_or_default();
    let asked_desk = match message.map(str::trim) {
        Some("") => bail!("the message is empty"),
        Some(message) => desk::with_message(&before, message),
        None => before.clone(),
    };
    let turns = desk::read(&asked_desk);
    let Some(pending) = desk::pending(&turns) else {
        bail!(
            "{DESK_FILE} has no message waiting for the Foreman: write one under `## Writer`, or give it: control-room ask \"…\""
        );
    };
    let history = desk::history(&turns);
    let turn = desk::turn_number(&turns);
    let disk = Disk::default();
    if asked_desk != before {
        write_desk(&disk, &desk_path, &asked_desk)?;
    }
    let workspace = Workspace::load(&root);
    let prompts = Prompts::load(&root);
    for problem in &prompts.problems {
        eprintln!("warning: {problem}");
    }
    let key = SigningKey::load_or_create(&root, &disk)
        .context("cannot read or create the receipt-signing key")?;
    let model = model(&root, model_args)?;
    let at = now();
    let desk = Desk {
        workspace: &workspace,
        prompts: &prompts,
        model: model.as_ref(),
        key: &key,
        disk: &disk,
        at: &at,
    };
    let runtime = tokio_runtime()?;
    let reply = match runtime.block_on(desk.answer(turn, &history, &pending.text, None)) {
        Ok(reply) => reply,
        Err(error) => {
            eprintln!("error: the Foreman could not answer: {error}");
            return Ok(1);
        }
    };
    let mut done = reply.done.clone();
    for (path, result) in apply_on_disk(&root, &disk, &reply.changes) {
        match result {
            Ok(()) => println!("wrote {path}"),
            Err(why) => {
                println!("not written: {path}: {why}");
                done.push(format!("{path} was not written: {why}"));
            }
        }
    }
    // The reply goes at the end of the desk as it is now.
    let now_desk = std::fs::read_to_string(&desk_path).unwrap_or_default();
    let base = if now_desk.trim().is_empty() {
        asked_desk
    } else {
        now_desk
    };
    let replied = base.trim_end().to_owned()
        + "\n"
        + &desk::reply_text(&reply.message, &done, &reply.refused);
    write_desk(&disk, &desk_path, &replied)?;
    println!("{}", reply.message);
    for line in &reply.refused {
        println!("refused: {line}");
    }
    for proposed in &reply.moves {
        let because = proposed
            .because
            .as_deref()
            .map(|because| format!(" --skip --because {because:?}"))
            .unwrap_or_default();
        println!(
            "{} It moves when you confirm: control-room mode set {}{because}",
            proposed.question(),
            proposed.to.id()
        );
    }
    for (recipe, args) in &reply.runs {
        let pairs: Vec<String> = args
            .iter()
            .map(|(name, value)| {
                format!(
                    "{name}={}",
                    value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_owned)
                )
            })
            .collect();
        println!("starting {recipe} ({})", pairs.join(", "));
        super::run::run(&root, recipe, None, &pairs, model_args)?;
    }
    for tournament in reply.tournaments {
        super::voice::run_tournament(&root, tournament, model_args)?;
    }
    Ok(0)
}

fn write_desk(disk: &Disk, path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    disk.write_atomic(path, text.as_bytes())
        .with_context(|| format!("cannot write {DESK_FILE}"))
}
