//! Resume: what a run finished before, read back from its files. The steps
//! in `steps.jsonl` that follow the recipe's schedule count, each with the
//! slot its line carries (or, in a line written before lines carried one,
//! the slot in `cache.json`); anything else (a torn line, an old line whose
//! slot was never written) is dropped so that the step runs again.

use std::collections::HashMap;

use serde_json::Value;

use super::slots::artifact_value;
use super::{RunError, Runner};
use crate::receipts::{self, SigningKey, ToolReceipt};
use crate::runs::recipe::Recipe;
use crate::runs::review::{FollowLoop, Next, ReviewState, Schedule};
use crate::runs::store::{self, Cache, CacheSlot, RunFiles, RunManifest, StepRecord};

impl Runner {
    /// Reads what a run finished before: the steps in steps.jsonl that
    /// follow the recipe's schedule (its review loop included) and whose
    /// slots are in cache.json, and what comes next. Repairs steps.jsonl if
    /// it holds anything else (a torn line, a step whose slot was never
    /// written).
    #[allow(clippy::type_complexity)]
    pub(super) fn reconcile(
        &self,
        files: &RunFiles,
        recipe: &Recipe,
        manifest: &RunManifest,
        key: &SigningKey,
    ) -> Result<
        (
            Cache,
            HashMap<String, Value>,
            usize,
            Next,
            Option<ReviewState>,
        ),
        RunError,
    > {
        let stored_cache = files.read_cache_file()?;
        let raw = std::fs::read_to_string(files.steps()).unwrap_or_default();
        let records = files.read_steps();
        let schedule = Schedule::new(recipe);
        let mut review_state = schedule.review().map(|_| ReviewState::new());
        let mut next = schedule.first().map_or(Next::End, Next::Stage);
        let mut kept: Vec<StepRecord> = Vec::new();
        let mut cache = Cache::new();
        let mut values = HashMap::new();
        let mut receipts_by_id: Option<HashMap<String, ToolReceipt>> = None;
        for record in records {
            let Next::Stage(stage) = next else {
                break;
            };
            let planned = schedule.planned(stage);
            let slot_name = planned.slot();
            // A line carries its slot; one written before lines did has
            // it in cache.json.
            let slot = match &record.slot {
                Some(slot) => Some(slot.clone().into()),
                None => stored_cache.get(slot_name).cloned(),
            };
            let Some(slot) =
                slot.filter(|_| record.step_index == kept.len() && record.step_id == planned.id())
            else {
                break;
            };
            let value = match &slot {
                CacheSlot::Pointer {
                    receipt_id, sha256, ..
                } => {
                    let receipts = receipts_by_id.get_or_insert_with(|| {
                        receipts::load(self.root(), &manifest.session_id)
                            .into_iter()
                            .map(|receipt| (receipt.receipt_id.clone(), receipt))
                            .collect()
                    });
                    let receipt = receipts
                        .get(receipt_id)
                        .filter(|receipt| receipt.verify(key) && &receipt.output_sha256 == sha256)
                        .ok_or_else(|| RunError::Untrusted {
                            step_id: record.step_id.clone(),
                            receipt_id: receipt_id.clone(),
                        })?;
                    receipt.output.clone()
                }
                CacheSlot::Artifact { text, .. } => {
                    artifact_value(self.prompts.as_ref(), &planned, text)
                }
            };
            if let Some(alias) = schedule.alias(stage) {
                cache.insert(alias.clone(), slot.clone());
                values.insert(alias, value.clone());
            }
            cache.insert(slot_name.to_owned(), slot);
            next = schedule.after(stage, &value);
            values.insert(slot_name.to_owned(), value);
            if let Some(state) = &mut review_state {
                state.note(stage, &next);
            }
            kept.push(record);
        }
        let clean: String = kept
            .iter()
            .map(store::step_line)
            .collect::<Result<_, _>>()?;
        if clean != raw && !(raw.is_empty() && kept.is_empty()) {
            self.disk.write_atomic(&files.steps(), clean.as_bytes())?;
        }
        if cache != stored_cache {
            files.write_cache(&self.disk, &cache)?;
        }
        Ok((cache, values, kept.len(), next, review_state))
    }
}
