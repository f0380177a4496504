//! Closing a round: its receipts written first, then the transcript
//! (`.control-room/issues/CONF-<id>.md`), so that the transcript never cites
//! a receipt that is not on disk; and the round's outcome in a line.

use std::path::Path;

use super::{CallOutcome, ReplyOutcome, Round};
use crate::evidence::{self, Verdict, transcript};
use crate::receipts;
use crate::receipts::audit;
use crate::runs::store::Disk;
use crate::tools;

/// The transcript's path, relative to the root.
pub fn transcript_path(conference_id: &str) -> String {
    let hex = conference_id.strip_prefix("conf_").unwrap_or(conference_id);
    format!("{}/CONF-{hex}.md", evidence::ISSUES_DIR)
}

/// Writes what the round buffered: its tool receipts to the session log,
/// then each agent step's packet and receipt. Called before the transcript
/// is written, so the transcript never cites a receipt that is not on disk.
pub fn write_receipts(root: &Path, disk: &Disk, round: &Round) -> std::io::Result<()> {
    for receipt in &round.receipts {
        receipts::append(root, disk, receipt)?;
    }
    for (packet, receipt) in &round.agent_records {
        audit::write_packet(root, disk, packet)?;
        audit::write_receipt(root, disk, receipt)?;
    }
    Ok(())
}

/// Closes a round from the command line: receipts, then the transcript
/// (atomically). Returns the transcript's path relative to the root.
pub fn close(root: &Path, disk: &Disk, round: Round) -> std::io::Result<String> {
    write_receipts(root, disk, &round)?;
    let path = transcript_path(&round.request.conference_id);
    let full = root.join(&path);
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent)?;
    }
    disk.write_atomic(&full, transcript(&round).as_bytes())?;
    Ok(path)
    // `round`, the in-memory buffer, is dropped here.
}

/// The transcript: question, tool calls with their receipt ids, each reply
/// with its verdict, the receipts linked.
pub fn transcript(round: &Round) -> String {
    let yaml = |text: &str| serde_json::to_string(text).unwrap_or_default();
    let mut out = String::new();
    out.push_str("---\n");
    out.push_str(&format!(
        "{}: {}\n",
        transcript::ID_KEY,
        round.request.conference_id
    ));
    out.push_str("type: conference\n");
    out.push_str(&format!("question: {}\n", yaml(&round.request.question)));
    out.push_str(&format!("agents: [{}]\n", round.request.agents.join(", ")));
    out.push_str(&format!("started_at: {}\n", round.started_at));
    out.push_str(&format!("finished_at: {}\n", round.finished_at));
    out.push_str("---\n\n");
    out.push_str(&format!(
        "# Conference: {}\n\n",
        tools::one_line(&round.request.question)
    ));
    out.push_str("## Question\n\n");
    out.push_str(round.request.question.trim());
    out.push_str("\n\n");
    if let Some(passage) = &round.request.passage {
        let lines = if passage.start_line == passage.end_line {
            format!("line {}", passage.start_line)
        } else {
            format!("lines {}–{}", passage.start_line, passage.end_line)
        };
        out.push_str(&format!(
            "About `{}`, {lines}:\n\n{}\n",
            passage.path,
            transcript::quote(&passage.text)
        ));
    }
    tool_calls(round, &mut out);
    replies(round, &mut out);
    receipt_links(round, &mut out);
    out
}

/// The Chief's turn: the policy it ran under, each call and how it ended.
fn tool_calls(round: &Round, out: &mut String) {
    out.push_str("## Tool calls\n\n");
    let policy = &round.request.policy;
    out.push_str(&format!(
        "The Chief's turn: allowed tools {}; {}at most {} steps, {} bytes per step, {} per turn.\n\n",
        policy.allowed_tools.join(", "),
        if policy.require_tool_first {
            "a tool call required first; "
        } else {
            ""
        },
        policy.max_steps,
        policy.step_bytes,
        policy.turn_bytes
    ));
    if round.calls.is_empty() {
        out.push_str("No tool was called.\n");
    }
    for call in &round.calls {
        let tool = call
            .tool
            .as_deref()
            .map_or_else(|| "(no tool)".to_owned(), |tool| format!("`{tool}`"));
        let args = call
            .args
            .as_ref()
            .map_or(String::new(), |args| format!(" `{args}`"));
        match &call.outcome {
            CallOutcome::Ran {
                receipt_id,
                summary,
                bytes,
                injected,
            } => out.push_str(&format!(
                "{}. {tool}{args} → {receipt_id}: {summary} ({bytes} bytes{})\n",
                call.step,
                if injected < bytes {
                    format!(", {injected} injected")
                } else {
                    String::new()
                }
            )),
            CallOutcome::Rejected { reason } => {
                out.push_str(&format!("{}. {tool}{args} rejected: {reason}\n", call.step))
            }
        }
    }
    if let Some(note) = &round.chief_note {
        out.push_str(&format!("\nThe Chief: {}\n", tools::one_line(note)));
    }
}

/// Each agent's reply with its verdict, or why the model failed.
fn replies(round: &Round, out: &mut String) {
    out.push('\n');
    out.push_str(transcript::REPLIES_HEADING);
    out.push_str("\n\nEach agent saw the same evidence and none of the other replies.\n");
    for reply in &round.replies {
        match &reply.outcome {
            ReplyOutcome::Answered { text, verdict } => {
                let word = match verdict {
                    Verdict::Accepted { .. } => "accepted",
                    Verdict::Abstained => "abstained",
                    Verdict::Rejected { .. } => "rejected",
                };
                out.push_str(&format!("\n### {} — {word}\n\n", reply.agent));
                if !matches!(verdict, Verdict::Abstained)
                    && !matches!(verdict, Verdict::Accepted { warnings } if warnings.is_empty())
                {
                    out.push_str(&format!("Verdict: {}\n\n", verdict.describe()));
                }
                if text.is_empty() {
                    out.push_str(">\n");
                } else {
                    out.push_str(&transcript::quote(text));
                }
            }
            ReplyOutcome::Failed { error } => {
                out.push_str(&format!(
                    "\n### {} — failed\n\nThe model failed: {}\n",
                    reply.agent,
                    tools::one_line(error)
                ));
            }
        }
    }
}

/// Links to the round's tool receipts in the session log and to the agents'
/// packets and receipts.
fn receipt_links(round: &Round, out: &mut String) {
    out.push_str("\n## Receipts\n\n");
    let log = format!(
        "../audit/sessions/{}/tool_receipts.jsonl",
        round.request.conference_id
    );
    if round.receipts.is_empty() {
        out.push_str("No tool receipts.\n");
    }
    for receipt in &round.receipts {
        out.push_str(&format!(
            "- {} `{}` (step {}): [session log]({log})\n",
            receipt.receipt_id, receipt.tool, receipt.step_id
        ));
    }
    out.push_str(&format!(
        "- Agent packets and receipts: [audit/issues/{0}](../audit/issues/{0}/)\n",
        round.request.conference_id
    ));
}

/// How many agents gave a grounded reply: accepted, or an abstention.
pub fn answered(round: &Round) -> usize {
    round
        .replies
        .iter()
        .filter(|reply| {
            matches!(
                &reply.outcome,
                ReplyOutcome::Answered { verdict, .. }
                    if verdict.is_accepted() || matches!(verdict, Verdict::Abstained)
            )
        })
        .count()
}

/// What the round's replies came to, in a line.
pub fn summary(round: &Round) -> String {
    let count = |wanted: fn(&ReplyOutcome) -> bool| {
        round
            .replies
            .iter()
            .filter(|reply| wanted(&reply.outcome))
            .count()
    };
    let accepted =
        count(|o| matches!(o, ReplyOutcome::Answered { verdict, .. } if verdict.is_accepted()));
    let abstained = count(|o| {
        matches!(
            o,
            ReplyOutcome::Answered {
                verdict: Verdict::Abstained,
                ..
            }
        )
    });
    let rejected = count(|o| {
        matches!(
            o,
            ReplyOutcome::Answered {
                verdict: Verdict::Rejected { .. },
                ..
            }
        )
    });
    let failed = count(|o| matches!(o, ReplyOutcome::Failed { .. }));
    let mut parts = vec![format!("{accepted} accepted")];
    if rejected > 0 {
        parts.push(format!("{rejected} rejected"));
    }
    if abstained > 0 {
        parts.push(format!("{abstained} abstained"));
    }
    if failed > 0 {
        parts.push(format!("{failed} failed"));
    }
    parts.join(", ")
}
