//! What a finished step leaves on disk: its receipt, then its line in
//! `steps.jsonl` with its slot (the commit: see [`crate::storage::Committer`]),
//! the decisions it saved and its reuse entry, and `run.json` when the
//! phase, the review loop's state or the count of steps changed.

use std::collections::HashMap;

use serde_json::Value;

use super::reuse;
use super::slots::preview;
use super::{Runner, StageRun, StepFailure, StepOutput, StepReceipt, phase_of};
use crate::receipts;
use crate::receipts::audit;
use crate::runs::events::RunEvent;
use crate::runs::review::{FollowLoop, Next, Planned};
use crate::runs::store::{Cache, CacheSlot, RunFiles, RunManifest, StepRecord};
use crate::storage::now;
use crate::tools::sha256_hex;

impl Runner {
    /// Persists a finished step in the order resume relies on: its receipt,
    /// then its `steps.jsonl` line carrying its slot (then the decisions it
    /// saved and its reuse entry, and `run.json` if the phase, the review
    /// loop's state or the count of steps changed). Returns what comes next.
    pub(super) fn record_step(
        &self,
        run: StageRun<'_>,
        files: &RunFiles,
        manifest: &mut RunManifest,
        cache: &mut Cache,
        values: &mut HashMap<String, Value>,
        output: StepOutput,
    ) -> Result<Next, StepFailure> {
        let StageRun {
            schedule,
            stage,
            planned,
            index,
            started_at,
        } = run;
        let StepOutput {
            slot,
            value,
            receipt,
            input_slot_refs,
            text: output_text,
            reusable,
            actions,
            tokens,
        } = output;
        match &receipt {
            StepReceipt::Tool(receipt) => {
                receipts::append(self.root(), &self.disk, receipt).map_err(StepFailure::Io)?;
                self.cited.wrote(receipt);
            }
            StepReceipt::Agent(receipt) => {
                audit::write_receipt(self.root(), &self.disk, receipt).map_err(StepFailure::Io)?;
            }
        }
        let alias = schedule.alias(stage);
        if let Some(alias) = &alias {
            cache.insert(alias.clone(), slot.clone());
        }
        cache.insert(planned.slot().to_owned(), slot.clone());
        let record = StepRecord {
            step_index: index,
            step_id: planned.id().to_owned(),
            phase: planned.phase().to_owned(),
            tool: match planned {
                Planned::Agent(_) => None,
                other => Some(other.actor().to_owned()),
            },
            agent_archetype: match planned {
                Planned::Agent(agent) => Some(agent.agent_archetype.clone()),
                _ => None,
            },
            agent_id: match &slot {
                CacheSlot::Artifact { agent_id, .. } => Some(agent_id.clone()),
                CacheSlot::Pointer { .. } => None,
            },
            status: "done".into(),
            output_slot: planned.slot().to_owned(),
            receipt_id: Some(receipt.id().to_owned()),
            input_slot_refs,
            output_hash: format!("sha256:{}", sha256_hex(output_text.as_bytes())),
            output_preview: preview(&output_text),
            started_at,
            completed_at: now(),
            error: None,
            tokens,
            slot: Some((&slot).into()),
            slot_alias: alias.clone(),
        };
        files
            .append_step(&self.disk, &record)
            .map_err(StepFailure::Io)?;
        self.save_decisions(manifest, &record, &actions)
            .map_err(StepFailure::Io)?;
        if let Some((key, entry)) = reusable {
            reuse::keep(self.root(), &self.disk, &key, &entry);
        }
        let next = schedule.after(stage, &value);
        if let Some(alias) = alias {
            values.insert(alias, value.clone());
        }
        values.insert(planned.slot().to_owned(), value);
        let before = (
            manifest.review.clone(),
            manifest.total_steps,
            manifest.phase.clone(),
        );
        if let Some(state) = &mut manifest.review {
            state.note(stage, &next);
        }
        manifest.current_step_index = index + 1;
        manifest.total_steps = schedule.total(manifest.review.as_ref().map_or(1, |r| r.iterations));
        manifest.phase = phase_of(schedule, &next);
        manifest.updated_at = now();
        // The step's line says how far the run has got; run.json is
        // rewritten only when something the journal does not say changed
        // (the phase, the review loop's state, the steps to come), and not
        // after the last step, which the run's end writes.
        let ends = !matches!(next, Next::Stage(_));
        if !ends
            && before
                != (
                    manifest.review.clone(),
                    manifest.total_steps,
                    manifest.phase.clone(),
                )
        {
            files
                .write_manifest(&self.disk, manifest)
                .map_err(StepFailure::Io)?;
        }
        self.emit(RunEvent::StepFinished {
            run_id: manifest.run_id.clone(),
            index,
            total: manifest.total_steps,
            step_id: planned.id().to_owned(),
            preview: record.output_preview.clone(),
        });
        Ok(next)
    }

    /// Appends the decisions a step's reply saved to the knowledge base.
    /// This runs after the step is recorded; saved twice (a resumed step), a
    /// decision still counts once, as the later line supersedes.
    fn save_decisions(
        &self,
        manifest: &RunManifest,
        record: &StepRecord,
        actions: &[crate::llm::protocol::Action],
    ) -> std::io::Result<()> {
        let decisions = crate::runs::prompts::state::decisions_from_actions(
            actions,
            &format!(
                "{} ({}, step {})",
                record.agent_archetype.as_deref().unwrap_or("agent"),
                manifest.run_id,
                record.step_id
            ),
            manifest
                .task
                .initial_args
                .get("scene_id")
                .and_then(Value::as_str),
            &record.completed_at,
        );
        crate::runs::prompts::state::append_decisions(self.root(), &self.disk, &decisions)
    }
}
