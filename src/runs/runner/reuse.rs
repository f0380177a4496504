//! Reuse of finished agent steps: an agent step whose request (endpoint,
//! decoding, messages exactly as sent) is that of a step finished before
//! takes that step's artifact instead of asking the model again, provided
//! the artifact still keeps this step's contract.

use serde_json::json;

use super::prompted::Prompted;
use super::receipt::ReceiptDraft;
use super::review_loop::{VerdictCheck, check_verdict};
use std::path::Path;

use super::StepOutput;
use super::prompted::Agents;
use crate::llm::model::{Decoding, ModelRequest, ModelTarget};
use crate::receipts::Check;
use crate::receipts::audit::{DecodingPair, ReceiptActor};
use crate::runs::contract;
use crate::runs::recipe::AgentStep;
use crate::storage::Disk;
use crate::tools::sha256_hex;

/// Finished agent steps that later runs may reuse, relative to the root.
pub const REUSE_DIR: &str = ".control-room/cache/steps";

/// A finished agent step, kept for reuse by a later identical request.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct ReuseEntry {
    pub(super) receipt_id: String,
    pub(super) run_id: String,
    pub(super) step_id: String,
    pub(super) sha256: String,
    pub(super) text: String,
}

impl Agents<'_> {
    /// The output of a finished step under `key`, as this step's, when its
    /// artifact keeps this step's contract (and a reviewer's rules). The
    /// receipt says where it came from.
    pub(super) fn reuse_finished(
        &self,
        index: usize,
        step: &AgentStep,
        key: &str,
        prompted: &Prompted,
        review: Option<&VerdictCheck>,
        draft: &mut ReceiptDraft<'_>,
    ) -> Option<StepOutput> {
        let entry = reusable(self.root(), key)?;
        let mut checks = Vec::new();
        let accepted = contract::check_reply(
            &entry.text,
            prompted.assembly.output,
            prompted.assembly.schema.as_ref(),
            &prompted.guard,
            &mut checks,
        )
        .ok()?;
        check_verdict(review, &accepted, &mut checks).ok()?;
        checks.push(Check {
            check: "idempotency".into(),
            passed: true,
            detail: format!(
                "the same request finished in run {} (step `{}`); its artifact is reused",
                entry.run_id, entry.step_id
            ),
        });
        let target = prompted.target.as_ref();
        let actor = ReceiptActor {
            agent: step.agent_archetype.clone(),
            provider: target.map_or(String::new(), |t| t.provider.clone()),
            model: target.map_or(String::new(), |t| t.model.clone()),
            requested_model: None,
            decoding: DecodingPair {
                requested: Decoding::default(),
                effective: Decoding::default(),
            },
        };
        let receipt = draft.finish(
            actor,
            checks,
            1,
            Some(entry.receipt_id.clone()),
            Ok(&accepted),
        );
        Some(self.agent_output(index, step, accepted, receipt, None))
    }
}

/// The entry kept under `key`, if it is there and its text is intact.
fn reusable(root: &Path, key: &str) -> Option<ReuseEntry> {
    let path = root.join(REUSE_DIR).join(format!("{key}.json"));
    let entry: ReuseEntry = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    (sha256_hex(entry.text.as_bytes()) == entry.sha256).then_some(entry)
}

/// Keeps a finished agent step for reuse. Best effort: a failed write
/// only costs a later run a model call.
pub(super) fn keep(root: &Path, disk: &Disk, key: &str, entry: &ReuseEntry) {
    let dir = root.join(REUSE_DIR);
    if let Ok(bytes) = serde_json::to_vec(entry)
        && std::fs::create_dir_all(&dir).is_ok()
    {
        let _ = disk.write_atomic(&dir.join(format!("{key}.json")), &bytes);
    }
}

/// The key under which a finished agent step may be reused: the endpoint,
/// its decoding, and the request exactly as sent.
pub(super) fn reuse_key(target: &ModelTarget, request: &ModelRequest) -> String {
    let canonical = json!({
        "provider": target.provider,
        "model": target.model,
        "temperature": target.temperature,
        "max_tokens": target.max_tokens,
        "prompt_type": request.prompt_type,
        "agent_archetype": request.agent_archetype,
        "messages": request.messages,
        "schema": request.schema,
    });
    sha256_hex(canonical.to_string().as_bytes())
}
