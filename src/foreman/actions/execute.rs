//! The actions' executors. None writes the manuscript itself: an action
//! that changes it returns the files' new text ([`Change`]), each computed
//! against the text it read, and the front end applies them (the editor as
//! one workspace edit the writer can undo, the command line atomically,
//! refusing a file changed meanwhile). A decision goes to the knowledge
//! base; a question or a check comes back as an answer for the model's
//! next turn.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::effect::{ActionError, Change, Effect, Outcome};
use super::{ActionKind, ValidAction};
use crate::index::Workspace;
use crate::kb::{Decision, append_decisions};
use crate::storage::Disk;
use crate::tools::{self, ToolContext};

/// Where the manuscript's notes are: what `query_notebook` searches.
pub const NOTES_FOLDER: &str = "Notes";

/// What an action needs.
pub struct Context<'a> {
    pub workspace: &'a Workspace,
    pub root: &'a Path,
    pub disk: &'a Disk,
    pub at: &'a str,
    /// Who acts, for the knowledge base (`the Foreman`).
    pub source: &'a str,
}

/// Carries out `action`.
pub fn execute(action: &ValidAction, cx: &Context) -> Result<Outcome, ActionError> {
    let (summary, effect) = match action.kind {
        ActionKind::QueryNotebook => query_notebook(action, cx)?,
        ActionKind::SaveDecision => save_decision(action, cx)?,
        ActionKind::WriteTemplate => super::template::write_template(action, cx.workspace, cx.at)?,
        ActionKind::UpdateStatus => super::template::update_status(action, cx.workspace)?,
        ActionKind::GenerateScaffold => super::scaffold::generate(action, cx.workspace)?,
        ActionKind::WriteScene => write_scene(action, cx)?,
        ActionKind::RunHealthCheck => health_check(action, cx)?,
        ActionKind::ApplyEdit => apply_edit(action, cx)?,
        ActionKind::StartTournament => start_tournament(action, cx)?,
        ActionKind::SelectWinner => select_winner(action, cx)?,
        ActionKind::GenerateBundle => generate_bundle(action, cx)?,
        ActionKind::AdvanceMode => advance_mode(action, cx)?,
    };
    Ok(Outcome {
        kind: action.kind,
        summary,
        effect,
    })
}

/// Proposes a move between modes, once the mode module says the move can
/// be made (back freely; forward through each gate, or past a shut one with
/// the writer's reason). Nothing moves until the writer confirms.
fn advance_mode(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    use crate::kb::mode::{self, Mode, Move};
    let to = action
        .text("to")
        .and_then(Mode::parse)
        .ok_or_else(|| ActionError::Mode("`to` names no mode".to_owned()))?;
    let because = action
        .text("because")
        .map(str::trim)
        .filter(|because| !because.is_empty())
        .map(str::to_owned);
    let state = mode::load(cx.root).map_err(|error| ActionError::Mode(error.to_string()))?;
    if state.mode == to {
        return Err(ActionError::Mode(format!(
            "the project is already in {}",
            to.label()
        )));
    }
    let asked = Move {
        skip: because.is_some(),
        because: because.clone(),
    };
    let next = mode::advance(cx.workspace, &state, Some(to), &asked, cx.at).map_err(|error| {
        ActionError::Mode(format!(
            "{error} (propose it with `because` only when the writer has given their reason)"
        ))
    })?;
    // A reason is kept only where a gate it passes is shut.
    let skips = next.history[state.history.len()..]
        .iter()
        .any(|transition| transition.skipped);
    let proposed = super::effect::ProposedMove {
        from: state.mode,
        to,
        because: because.filter(|_| skips),
    };
    let summary = format!(
        "proposed moving the project to {}; it moves when you confirm (the editor asks; or `control-room mode set {}`{})",
        to.label(),
        to.id(),
        if proposed.because.is_some() {
            " --skip --because \"…\""
        } else {
            ""
        }
    );
    Ok((summary, Effect::Move(proposed)))
}

fn query_notebook(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    let notebook = action.text("notebook_id").unwrap_or("notes").trim();
    let query = action.text("query").unwrap_or_default();
    let folder = match notebook.trim_end_matches('/') {
        "" | "notes" | "all" => NOTES_FOLDER.to_owned(),
        name => {
            crate::storage::check_relative_path(name).map_err(|error| ActionError::Notebook {
                name: name.to_owned(),
                error,
            })?;
            format!("{NOTES_FOLDER}/{name}")
        }
    };
    let mut args = Map::new();
    args.insert("search_criteria".into(), json!(query));
    args.insert("scan_mode".into(), json!("FULL_SCAN"));
    args.insert("max_results".into(), json!(200));
    let found = tools::run(
        "file_locator",
        &ToolContext {
            workspace: cx.workspace,
        },
        &args,
    )
    .map_err(ActionError::Search)?;
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.len() > 3)
        .map(str::to_lowercase)
        .collect();
    let mut passages = Vec::new();
    for path in found.data["matches"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|found| found["path"].as_str())
        .filter(|path| path.starts_with(&format!("{folder}/")))
        .take(3)
    {
        let Some(file) = cx.workspace.file(path) else {
            continue;
        };
        if let Some((line, paragraph)) = best_paragraph(&file.text, &words) {
            passages.push(format!("{path}:{line}: {paragraph}"));
        }
    }
    let answer = if passages.is_empty() {
        format!("Nothing in {folder}/ answers “{query}”.")
    } else {
        format!("From {folder}/ on “{query}”:\n{}", passages.join("\n"))
    };
    Ok((
        format!(
            "searched {folder}/ for “{query}”: {} passages",
            passages.len()
        ),
        Effect::Answer(answer),
    ))
}

/// The paragraph of `text` with most of `words`, with its 1-based line.
fn best_paragraph(text: &str, words: &[String]) -> Option<(usize, String)> {
    let mut best: Option<(usize, usize, String)> = None;
    let mut line = 1;
    for paragraph in text.split("\n\n") {
        let lower = paragraph.to_lowercase();
        let score = words
            .iter()
            .filter(|word| lower.contains(word.as_str()))
            .count();
        if score > 0
            && best
                .as_ref()
                .is_none_or(|(best_score, _, _)| score > *best_score)
        {
            let flat: Vec<&str> = paragraph.split_whitespace().collect();
            best = Some((
                score,
                line + paragraph.len() - paragraph.trim_start_matches('\n').len(),
                crate::text::clip(&flat.join(" "), 600).to_owned(),
            ));
        }
        line += paragraph.matches('\n').count() + 2;
    }
    best.map(|(_, line, text)| (line, text))
}

fn save_decision(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    let field = |name: &str| {
        action
            .text(name)
            .map(str::trim)
            .unwrap_or_default()
            .to_owned()
    };
    let decision = Decision {
        category: field("category"),
        key: field("key"),
        value: field("value"),
        source: Some(
            match action
                .text("source")
                .map(str::trim)
                .filter(|s| !s.is_empty())
            {
                Some(theirs) => format!("{theirs}; saved by {}", cx.source),
                None => cx.source.to_owned(),
            },
        ),
        scene: None,
        created_at: Some(cx.at.to_owned()),
        updated_at: Some(cx.at.to_owned()),
        promoted: false,
    };
    append_decisions(cx.root, cx.disk, std::slice::from_ref(&decision)).map_err(|error| {
        ActionError::Write {
            path: crate::kb::KB_FILE.to_owned(),
            message: error.to_string(),
        }
    })?;
    Ok((
        format!("saved {}/{}", decision.category, decision.key),
        Effect::Saved(decision),
    ))
}

fn write_scene(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    let id = action.text("scene_id").unwrap_or_default();
    if cx.workspace.catalog().outline_position(id).is_none() {
        return Err(ActionError::NotInOutline {
            action: "write_scene",
            id: id.to_owned(),
            what: "draft",
        });
    }
    let mut args = Map::new();
    args.insert("scene_id".into(), json!(id));
    Ok((
        format!("drafting {id}"),
        Effect::Run {
            recipe: "creative_draft_scene".into(),
            args,
        },
    ))
}

fn start_tournament(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    use crate::voice::{Contestant, TestPassage, Tournament, play};
    let passage = TestPassage::from_words(action.text("passage").unwrap_or_default());
    let contestants = action
        .params
        .get("contestants")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(Contestant::parse)
        .collect::<Result<Vec<_>, _>>()?;
    let words = action
        .params
        .get("words")
        .and_then(Value::as_u64)
        .map(|words| words as u32);
    let tournament = Tournament::new(passage, contestants, words)?;
    // The passage must make sense before anyone drafts it.
    play::brief(cx.workspace, &tournament.passage)?;
    Ok((
        format!(
            "started tournament {} ({} contestants: {})",
            tournament.id,
            tournament.contestants.len(),
            tournament
                .contestants
                .iter()
                .map(|c| c.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Effect::Tournament(Box::new(tournament)),
    ))
}

fn select_winner(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    let (said, change) = crate::voice::bundle::select_winner(
        cx.workspace,
        action.text("tournament_id").unwrap_or_default(),
        action.text("contestant").unwrap_or_default(),
        action.text("why"),
    )?;
    Ok((said, Effect::Changes(vec![change])))
}

fn generate_bundle(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    let (said, changes) =
        crate::voice::bundle::generate_bundle(cx.workspace, action.text("voice_summary"))?;
    Ok((said, Effect::Changes(changes)))
}

fn health_check(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    let scope = action
        .text("scope")
        .map(str::trim)
        .filter(|scope| !scope.is_empty() && *scope != "manuscript");
    let wanted: Vec<&str> = action
        .params
        .get("checks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut health = None;
    let diagnostics = match scope {
        Some(scope) => {
            let file = cx
                .workspace
                .catalog()
                .scene(scope)
                .cloned()
                .or_else(|| cx.workspace.file(scope).cloned())
                .ok_or_else(|| ActionError::UnknownScope(scope.to_owned()))?;
            crate::checks::check_file(cx.workspace, &file.path)
        }
        None => {
            let measured = crate::health::Health::check(cx.workspace, &mut Default::default());
            let diagnostics = crate::health::with_checks(cx.workspace, &measured);
            health = Some(measured);
            diagnostics
        }
    };
    let kept: Vec<_> = diagnostics
        .iter()
        .filter(|d| wanted.is_empty() || wanted.contains(&d.code.as_str()))
        .collect();
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for diagnostic in &kept {
        *counts.entry(diagnostic.code.as_str()).or_default() += 1;
    }
    let mut answer = format!(
        "{} findings{}",
        kept.len(),
        if counts.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                counts
                    .iter()
                    .map(|(code, n)| format!("{code} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    if let Some(health) = &health {
        answer.push_str(&format!("\n{}", health_scores(health)));
    }
    for diagnostic in kept.iter().take(12) {
        let line = cx.workspace.file(&diagnostic.path).map_or(0, |file| {
            file.line_index.line_of(diagnostic.range.start) + 1
        });
        answer.push_str(&format!(
            "\n- {}:{line} {}: {}",
            diagnostic.path, diagnostic.code, diagnostic.message
        ));
    }
    Ok((
        format!(
            "checked {}: {} findings",
            scope.unwrap_or("the manuscript"),
            kept.len()
        ),
        Effect::Answer(answer),
    ))
}

fn apply_edit(action: &ValidAction, cx: &Context) -> Result<(String, Effect), ActionError> {
    let path = action.text("file").unwrap_or_default().trim();
    crate::storage::check_relative_path(path).map_err(|error| ActionError::Path {
        path: path.to_owned(),
        error,
    })?;
    let file = cx
        .workspace
        .file(path)
        .or_else(|| cx.workspace.catalog().scene(path))
        .ok_or_else(|| ActionError::NotAFile(path.to_owned()))?;
    if file.scene().is_none() {
        return Err(ActionError::NotAScene(file.path.to_string()));
    }
    let find = action.text("find").unwrap_or_default();
    let replace = action.text("replace").unwrap_or_default();
    let found: Vec<usize> = file.text.match_indices(find).map(|(at, _)| at).collect();
    let at = match found.as_slice() {
        [at] => *at,
        [] => {
            return Err(ActionError::PassageNotFound(file.path.to_string()));
        }
        many => {
            return Err(ActionError::PassageAmbiguous {
                path: file.path.to_string(),
                times: many.len(),
            });
        }
    };
    if file
        .front_matter
        .as_ref()
        .is_some_and(|front| at < front.range.end)
    {
        return Err(ActionError::PassageInFrontMatter(file.path.to_string()));
    }
    let mut after = String::with_capacity(file.text.len() + replace.len());
    after.push_str(&file.text[..at]);
    after.push_str(replace);
    after.push_str(&file.text[at + find.len()..]);
    Ok((
        format!(
            "revised {} ({} characters replaced)",
            file.path,
            find.chars().count()
        ),
        Effect::Changes(vec![Change {
            path: file.path.clone(),
            before: Some(file.text.clone()),
            after,
        }]),
    ))
}

/// The story's health in a line: its score and each check's.
fn health_scores(health: &crate::health::Health) -> String {
    let scores: Vec<String> = health
        .checks
        .iter()
        .map(|check| match check.score {
            Some(score) => format!("{} {score}", check.id),
            None if check.method == crate::health::Method::Model => format!("{} not run", check.id),
            None => format!("{} not judged", check.id),
        })
        .collect();
    format!(
        "the story's health: {} ({})",
        health.headline(),
        scores.join(", ")
    )
}
