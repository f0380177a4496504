//! `control-room conference "<question>"`: a conference round from the
//! command line. Prints the transcript's path; progress goes to stderr.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};

use super::running::{ModelArgs, cancel_on_ctrl_c, model, tokio_runtime};
use super::workspace_root;
use crate::conference::envelope::Policy;
use crate::conference::{self, Conference, Event, Passage, Request};
use crate::index::Workspace;
use crate::receipts::SigningKey;
use crate::runs::prompts::Prompts;
use crate::runs::store::Disk;

/// The round's options, as the command line gives them.
pub struct Options<'a> {
    pub question: &'a str,
    pub agents: &'a [String],
    pub tools: &'a [String],
    pub no_require_tool: bool,
    /// `PATH` or `PATH:START-END` (1-based lines).
    pub passage: Option<&'a str>,
    pub concurrency: Option<usize>,
}

/// Runs a round and closes it. Exit status 0 when the round closed with at
/// least one grounded reply, 1 when none was (or it was cancelled).
pub fn conference(dir: &Path, options: &Options, model_args: &ModelArgs) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Arc::new(Workspace::load(&root));
    let mut request = Request::new(options.question.trim())
        .with_agents(options.agents)
        .map_err(anyhow::Error::msg)?;
    if request.question.is_empty() {
        bail!("the question is empty");
    }
    request.policy = Policy {
        require_tool_first: !options.no_require_tool,
        ..Policy::default()
    }
    .with_allowed(options.tools)
    .map_err(anyhow::Error::msg)?;
    if let Some(concurrency) = options.concurrency {
        request.concurrency = concurrency.max(1);
    }
    if let Some(spec) = options.passage {
        request.passage = Some(passage(&workspace, spec)?);
    }
    let prompts = Prompts::load(&root);
    for problem in &prompts.problems {
        eprintln!("warning: {problem}");
    }
    let disk = Disk::default();
    let key = SigningKey::load_or_create(&root, &disk)
        .context("cannot read or create the receipt-signing key")?;
    let conference = Conference {
        workspace,
        prompts: Arc::new(prompts),
        model: model(&root, model_args)?,
        key,
    };
    let runtime = tokio_runtime()?;
    let round = runtime.block_on(async {
        let (cancel, interrupt) = cancel_on_ctrl_c();
        let report = |event: Event| match event {
            Event::ChiefStep { step, max } => {
                eprintln!("phase 1: the Chief, step {step} of at most {max}")
            }
            Event::ToolCall { step, tool } => {
                eprintln!(
                    "phase 1: step {step}: {}",
                    tool.as_deref().unwrap_or("no tool")
                );
            }
            Event::Opinions { done, total } => eprintln!("phase 2: {done} of {total} replies"),
            // Words as they come are for the editor's progress; a terminal
            // log would repeat each reply many times over.
            Event::Writing { .. } => {}
        };
        let round = conference.convene(request, &report, &cancel).await;
        interrupt.abort();
        round
    });
    let round = match round {
        Ok(round) => round,
        Err(conference::ConferenceError::Cancelled) => {
            eprintln!("the conference was cancelled; nothing was written");
            return Ok(1);
        }
        Err(error) => return Err(error.into()),
    };
    let summary = conference::summary(&round);
    let answered = conference::answered(&round);
    let path = conference::close(&root, &disk, round).context("cannot close the round")?;
    eprintln!("replies: {summary}");
    println!("{path}");
    if answered == 0 {
        eprintln!("no agent gave a grounded reply (accepted or an abstention); see the transcript");
        return Ok(1);
    }
    Ok(0)
}

/// `PATH` or `PATH:START-END`: the passage a question is about.
fn passage(workspace: &Workspace, spec: &str) -> anyhow::Result<Passage> {
    let lines = super::passage_lines(workspace, spec)?;
    let file = workspace
        .file(&lines.path)
        .with_context(|| format!("{} is not a file of this workspace", lines.path))?;
    let text: Vec<&str> = file
        .text
        .lines()
        .skip(lines.start as usize - 1)
        .take((lines.end - lines.start + 1) as usize)
        .collect();
    Ok(Passage {
        text: text.join("\n"),
        path: lines.path,
        start_line: lines.start,
        end_line: lines.end,
    })
}
