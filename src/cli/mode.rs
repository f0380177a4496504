//! `control-room mode`: the project's mode and the gate out of it, and moving
//! on (`mode advance`, `mode set MODE`), through the gates or past them on
//! the writer's say-so (`--skip --because "…"`), which is recorded with the
//! risk.

use std::path::Path;

use anyhow::Context;

use super::workspace_root;
use crate::index::Workspace;
use crate::kb::mode::{self, Mode, ModeState, Move};
use crate::runs::runner::now;
use crate::runs::store::Disk;

/// The mode, its gate and its history, for people or as JSON.
pub fn show(dir: &Path, json: bool) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let state = mode::load(&root)?;
    let gate = mode::gate(&workspace, &state, state.mode);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&mode::view(&workspace, &state))?
        );
        return Ok(0);
    }
    print!("{}", describe(&state, &gate));
    Ok(0)
}

/// The mode and its gate in words.
fn describe(state: &ModeState, gate: &mode::Gate) -> String {
    let mut out = format!("Mode: {}\n", state.mode.label());
    let towards = state
        .mode
        .next()
        .map_or("the end".to_owned(), |next| next.label().to_owned());
    out.push_str(&format!(
        "Gate to {towards} ({}): {}, {}% done\n",
        state.mode.gate_name(),
        if gate.met { "open" } else { "shut" },
        gate.percent
    ));
    for line in &gate.unmet {
        out.push_str(&format!("  - {line}\n"));
    }
    if let Some(when) = &state.completed_at {
        out.push_str(&format!("The manuscript was marked complete on {when}.\n"));
    }
    for skipped in state.history.iter().filter(|moved| moved.skipped) {
        out.push_str(&format!(
            "Skipped on {}: {} → {} because “{}” (risk: {})\n",
            skipped.at,
            skipped.from.label(),
            skipped.to.label(),
            skipped.because.as_deref().unwrap_or(""),
            skipped.risk.as_deref().unwrap_or("")
        ));
    }
    out
}

/// `mode advance` (to the next mode) or `mode set MODE`.
pub fn advance(
    dir: &Path,
    to: Option<&str>,
    skip: bool,
    because: Option<String>,
) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let state = mode::load(&root)?;
    let target = to
        .map(|name| {
            Mode::parse(name).with_context(|| {
                format!("`{name}` is not a mode: architect, voice_calibration, director or editor")
            })
        })
        .transpose()?;
    let asked = Move { skip, because };
    let next = match mode::advance(&workspace, &state, target, &asked, &now()) {
        Ok(next) => next,
        Err(error @ mode::ModeError::GateShut { .. }) => {
            eprintln!("error: {error}");
            return Ok(1);
        }
        Err(error) => return Err(error.into()),
    };
    mode::save(&Disk::default(), &root, &next)?;
    let gate = mode::gate(&workspace, &next, next.mode);
    if next.completed_at != state.completed_at {
        println!("The manuscript is marked complete.");
    } else if next.mode != state.mode {
        println!("{} → {}", state.mode.label(), next.mode.label());
    }
    print!("{}", describe(&next, &gate));
    Ok(0)
}
