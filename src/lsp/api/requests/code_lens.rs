//! `textDocument/codeLens`: word counts, "Draft scene" on an outline entry,
//! the project's mode and its gate on a Story Bible template, a plan
//! checklist's lenses, and voice calibration's: "Pick this voice", "Why
//! does this work?" and "Cross with the picked voice" on each version of a
//! tournament file, "Lock this voice" and "Bring the bundle up to date" on
//! the gold standard.

use serde_json::json;
use tower_lsp_server::jsonrpc::Result as RpcResult;
use tower_lsp_server::ls_types as lsp;

use crate::ide::{self, RunAction};
use crate::lsp::api::SnapshotRequest;
use crate::lsp::convert::range;
use crate::lsp::snapshot::Snapshot;

impl SnapshotRequest for lsp::request::CodeLensRequest {
    fn answer(snapshot: &Snapshot, params: &Self::Params) -> RpcResult<Self::Result> {
        Ok(Some(code_lenses(snapshot, params)))
    }
}

pub fn code_lenses(snapshot: &Snapshot, params: &lsp::CodeLensParams) -> Vec<lsp::CodeLens> {
    let uri = &params.text_document.uri;
    if let Some(path) = crate::lsp::convert::path_for(&snapshot.workspace, uri)
        && let Some((_, text, _)) = snapshot.plans.iter().find(|(open, _, _)| *open == path)
    {
        return crate::lsp::plans::code_lenses(
            &snapshot.workspace,
            &snapshot.registry,
            &path,
            text,
            snapshot.encoding,
        );
    }
    let Some(file) = snapshot.file(uri) else {
        return Vec::new();
    };
    let drafts = ide::draft_lenses(&snapshot.workspace, &snapshot.registry, file)
        .into_iter()
        .map(|action| lsp::CodeLens {
            range: range(file, action.range, snapshot.encoding),
            command: Some(run_command(&action, "Draft scene")),
            data: None,
        });
    let mode = mode_lenses(snapshot, file);
    let scaffolds = scaffold_lenses(snapshot, file);
    let voice = voice_lenses(snapshot, file);
    ide::word_counts(&snapshot.workspace, file)
        .into_iter()
        .map(|count| lsp::CodeLens {
            range: range(file, count.range, snapshot.encoding),
            command: Some(lsp::Command {
                title: count.label(),
                command: String::new(),
                arguments: None,
            }),
            data: None,
        })
        .chain(drafts)
        .chain(mode)
        .chain(scaffolds)
        .chain(voice)
        .collect()
}

/// In DIRECTOR, "Scaffold scene" on each outline entry without a scaffold.
fn scaffold_lenses(snapshot: &Snapshot, file: &crate::index::SourceFile) -> Vec<lsp::CodeLens> {
    let Some(outline) = file.outline() else {
        return Vec::new();
    };
    let directing = crate::kb::mode::load(snapshot.workspace.root())
        .is_ok_and(|state| state.mode == crate::kb::mode::Mode::Director);
    if !directing {
        return Vec::new();
    }
    outline
        .entries
        .iter()
        .filter(|entry| snapshot.workspace.scaffold(&entry.scene_id).is_none())
        .map(|entry| lsp::CodeLens {
            range: range(file, entry.id_range, snapshot.encoding),
            command: Some(lsp::Command {
                title: "Scaffold scene".to_owned(),
                command: crate::lsp::foreman::SCAFFOLD.to_owned(),
                arguments: Some(vec![json!({"scene_id": entry.scene_id})]),
            }),
            data: None,
        })
        .collect()
}

/// A lens at `line` (0-based) running `command` with `argument`.
fn line_lens(
    line: usize,
    title: &str,
    command: &str,
    argument: serde_json::Value,
) -> lsp::CodeLens {
    let at = lsp::Position {
        line: line as u32,
        character: 0,
    };
    lsp::CodeLens {
        range: lsp::Range { start: at, end: at },
        command: Some(lsp::Command {
            title: title.to_owned(),
            command: command.to_owned(),
            arguments: Some(vec![argument]),
        }),
        data: None,
    }
}

/// On a tournament's versions and on the gold standard.
fn voice_lenses(snapshot: &Snapshot, file: &crate::index::SourceFile) -> Vec<lsp::CodeLens> {
    use crate::lsp::voice::{
        VOICE_BUNDLE, VOICE_CROSS, VOICE_LOCK, VOICE_PICK, VOICE_UNLOCK, VOICE_WHY,
    };
    use crate::voice::file::TournamentFile;
    if let Some(gold) = file.voice_gold() {
        let at = range(file, file.head_range(), snapshot.encoding);
        let mut lenses = Vec::new();
        let (title, command) = if gold.locked {
            ("Unlock this voice", VOICE_UNLOCK)
        } else {
            ("Lock this voice", VOICE_LOCK)
        };
        lenses.push(lsp::CodeLens {
            range: at,
            command: Some(lsp::Command {
                title: title.to_owned(),
                command: command.to_owned(),
                arguments: None,
            }),
            data: None,
        });
        lenses.push(lsp::CodeLens {
            range: at,
            command: Some(lsp::Command {
                title: "Bring the bundle up to date".to_owned(),
                command: VOICE_BUNDLE.to_owned(),
                arguments: None,
            }),
            data: None,
        });
        return lenses;
    }
    let Some(tournament) = TournamentFile::read(&file.text) else {
        return Vec::new();
    };
    // The version the gold standard was picked from, when it is this file's.
    let picked = snapshot
        .workspace
        .catalog()
        .voice_gold()
        .filter(|(_, gold)| gold.tournament.as_deref() == Some(tournament.id.as_str()))
        .and_then(|(_, gold)| gold.contestant.clone())
        .and_then(|label| tournament.version(&label).ok().map(|v| v.number));
    let path = file.path.to_string();
    let mut lenses = Vec::new();
    for version in tournament.versions.iter().filter(|v| !v.text.is_empty()) {
        let argument = json!({"tournament": path, "version": version.number});
        lenses.push(line_lens(
            version.line,
            "Pick this voice",
            VOICE_PICK,
            argument.clone(),
        ));
        if !version.has_why {
            lenses.push(line_lens(
                version.line,
                "Why does this work?",
                VOICE_WHY,
                argument,
            ));
        }
        if let Some(winner) = picked.filter(|winner| *winner != version.number) {
            lenses.push(line_lens(
                version.line,
                "Cross with the picked voice",
                VOICE_CROSS,
                json!({"tournament": path, "version": winner, "other": version.number}),
            ));
        }
    }
    lenses
}

/// At the head of a Story Bible template and of the Foreman's desk: the
/// project's mode and its gate, and "Advance to …" when the gate is open;
/// on the desk, "Ask the Foreman" at the writer's unanswered message.
fn mode_lenses(snapshot: &Snapshot, file: &crate::index::SourceFile) -> Vec<lsp::CodeLens> {
    use crate::foreman::desk::{self, DESK_FILE};
    use crate::kb::mode;
    let is_desk = *file.path == *DESK_FILE;
    if file.bible().is_none() && !is_desk {
        return Vec::new();
    }
    let Ok(state) = mode::load(snapshot.workspace.root()) else {
        return Vec::new();
    };
    let view = mode::view(&snapshot.workspace, &state);
    let at = range(file, file.head_range(), snapshot.encoding);
    let towards = view.next.map_or("the end", mode::Mode::label);
    let title = format!(
        "Mode {} · gate to {towards} ({}) {}, {}%",
        view.label,
        view.gate_name,
        if view.gate.met { "open" } else { "shut" },
        view.gate.percent
    );
    let mut lenses = vec![lsp::CodeLens {
        range: at,
        command: Some(lsp::Command {
            title,
            command: crate::lsp::mode::MODE.to_owned(),
            arguments: None,
        }),
        data: None,
    }];
    // On the desk, "Ask the Foreman" at the writer's unanswered message.
    if is_desk && let Some(pending) = desk::pending(&desk::read(&file.text)) {
        lenses.push(lsp::CodeLens {
            range: range(file, pending.heading, snapshot.encoding),
            command: Some(lsp::Command {
                title: "Ask the Foreman".to_owned(),
                command: crate::lsp::foreman::ASK_FOREMAN.to_owned(),
                arguments: None,
            }),
            data: None,
        });
    }
    if view.gate.met
        && let Some(next) = view.next
    {
        lenses.push(lsp::CodeLens {
            range: at,
            command: Some(lsp::Command {
                title: format!("Advance to {}", next.label()),
                command: crate::lsp::mode::ADVANCE_MODE.to_owned(),
                arguments: Some(vec![json!({"to": next.id()})]),
            }),
            data: None,
        });
    }
    lenses
}

/// The kind of the code actions that start a recipe run.
pub(crate) const RUN_ACTION_KIND: &str = "refactor.control-room.run";

/// The `controlRoom.runRecipe` command that starts `action`.
pub(crate) fn run_command(action: &RunAction, title: &str) -> lsp::Command {
    lsp::Command {
        title: title.to_owned(),
        command: crate::lsp::runs::RUN_RECIPE.to_owned(),
        arguments: Some(vec![json!({
            "recipe": action.recipe_id,
            "task": action.task,
            "args": action.args,
        })]),
    }
}
