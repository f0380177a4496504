//! The tool step: a phase A tool run on its resolved arguments, and the
//! signed receipt and pointer slot every tool-like step leaves (the review
//! loop's gates included).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::slots::Slots;
use super::{RunScope, StageRun, StepFailure, StepOutput, StepReceipt, new_id, now};
use crate::index::Workspace;
use crate::receipts::{SigningKey, ToolReceipt};
use crate::runs::recipe::ToolStep;
use crate::runs::refs::{self, RefError};
use crate::runs::store::{CacheSlot, RunManifest};
use crate::tools::{self, ToolContext, ToolError, sha256_hex};

/// A tool step's resolved arguments, its output, and the slots the
/// arguments read.
pub(super) type ToolCall = (Map<String, Value>, tools::ToolOutput, Vec<String>);

/// Resolves a tool step's arguments in `scope` and runs the tool:
/// (arguments, output, the slots the arguments read).
pub(super) fn call(
    workspace: &Workspace,
    step: &ToolStep,
    scope: &Slots,
) -> Result<ToolCall, CallError> {
    let mut input_refs = Vec::new();
    let args = refs::resolve(&Value::Object(step.args.clone()), scope, &mut input_refs)
        .map_err(CallError::Args)?;
    let Value::Object(args) = args else {
        unreachable!("an object resolves to an object")
    };
    let output =
        tools::run(&step.tool, &ToolContext { workspace }, &args).map_err(CallError::Tool)?;
    Ok((args, output, input_refs))
}

/// Runs a phase A tool step on the slots so far.
pub(super) fn run(
    workspace: &Workspace,
    scope: &RunScope<'_>,
    run: &StageRun<'_>,
    step: &ToolStep,
    manifest: &RunManifest,
    values: &HashMap<String, Value>,
) -> Result<StepOutput, StepFailure> {
    let task = &scope.task;
    let call = call(workspace, step, &Slots { task, values })
        .map_err(|error| StepFailure::Failed(error.to_string()))?;
    Ok(tool_step_output(scope.key, run, manifest, &step.tool, call))
}

/// A finished tool-like step (`run`'s): its receipt, signed with `key`, and
/// its pointer slot.
pub(super) fn tool_step_output(
    key: &SigningKey,
    run: &StageRun<'_>,
    manifest: &RunManifest,
    tool: &str,
    (args, output, input_refs): ToolCall,
) -> StepOutput {
    let output_text = serde_json::to_string(&output.data).unwrap_or_default();
    let sha256 = sha256_hex(output_text.as_bytes());
    let mut receipt = ToolReceipt {
        version: Some(crate::receipts::TOOL_RECEIPT_VERSION),
        receipt_id: new_id("rcpt_"),
        run_id: manifest.run_id.clone(),
        session_id: manifest.session_id.clone(),
        step_id: run.planned.id().to_owned(),
        tool: tool.to_owned(),
        args: Value::Object(args),
        output: output.data.clone(),
        output_sha256: sha256.clone(),
        output_size: output_text.len(),
        summary: output.summary.clone(),
        file_refs: output.file_refs,
        started_at: run.started_at.clone(),
        finished_at: now(),
        signature: String::new(),
    };
    receipt.sign(key);
    let slot = CacheSlot::Pointer {
        receipt_id: receipt.receipt_id.clone(),
        sha256,
        summary: output.summary,
    };
    StepOutput {
        slot,
        value: output.data,
        receipt: StepReceipt::Tool(Box::new(receipt)),
        input_slot_refs: input_refs,
        text: output_text,
        reusable: None,
        actions: Vec::new(),
        tokens: None,
    }
}

/// Why a tool step could not run: its arguments did not resolve (the
/// message then says how to pass a missing task argument), or the tool
/// failed. Neither is a source of the other, so `{:#}` says each once.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("{}", with_arg_hint(.0.to_string()))]
    Args(RefError),
    #[error("{0}")]
    Tool(ToolError),
}

/// A tool error that names a missing task argument, with how to pass it.
fn with_arg_hint(message: String) -> String {
    match message
        .split("`task.args.")
        .nth(1)
        .and_then(|rest| rest.split(['`', '.', '[']).next())
    {
        Some(arg) if !arg.is_empty() => format!("{message} (pass it with --arg {arg}=…)"),
        _ => message,
    }
}
