//! `controlRoom.stats`: the manuscript's words against its target, the words
//! written in this session (since the initial index) and today (from git),
//! and, given a scene's `uri`, that scene's words against its target: what
//! the editors' status lines show. `controlRoom.outline`: the book's
//! chapters and scenes, and `controlRoom.cast`: the cards and how many scenes
//! each is in, what the side bar shows ([`crate::ide::book_view`]).

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;
use tower_lsp_server::ls_types::Uri;

use super::convert::path_for;
use super::runs::Context;
use super::shared::{invalid, lock};
use crate::stats;

pub const STATS: &str = "controlRoom.stats";
pub const OUTLINE: &str = "controlRoom.outline";
pub const CAST: &str = "controlRoom.cast";

/// What `controlRoom.stats` takes: optionally the scene the writer is in.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatsArgs {
    #[serde(default)]
    uri: Option<Uri>,
}

/// The counts; `today` is `null` (with `history_unavailable` saying why)
/// outside a git repository.
pub async fn stats(context: &Context, args: StatsArgs) -> Result<Value, RpcError> {
    let (workspace, at_start) = {
        let session = lock(&context.session);
        (session.workspace.clone(), session.words_at_start)
    };
    let answer = tokio::task::spawn_blocking(move || {
        let progress = stats::progress(&workspace);
        let now_words = stats::scene_words(&workspace);
        let history = stats::history::words_by_day(&workspace, 1, &jiff::Zoned::now());
        let scene = args
            .uri
            .as_ref()
            .and_then(|uri| path_for(&workspace, uri))
            .and_then(|path| workspace.file(&path).cloned())
            .and_then(|file| {
                let scene = file.scene()?;
                let count = stats::Count {
                    words: scene.word_count,
                    target: stats::scene_target(&workspace, scene.words_target).0,
                };
                Some(json!({"id": scene.id, "words": count.words, "target": count.target, "label": count.label()}))
            });
        json!({
            "total": {"words": progress.total.words, "target": progress.total.target, "label": progress.total.label()},
            "session": at_start.map(|start| now_words as i64 - start as i64),
            "today": history.as_ref().ok().and_then(|days| days.first()).map(|day| day.words),
            "history_unavailable": history.as_ref().err().map(ToString::to_string),
            "daily_target": workspace.config().targets.daily,
            "scene": scene,
        })
    })
    .await
    .map_err(|error| invalid(format!("{STATS}: {error}")))?;
    Ok(answer)
}

/// The book's outline: chapters in story order, each with its scenes, and
/// the scene files the outline does not list.
pub async fn outline(context: &Context) -> Result<Value, RpcError> {
    let workspace = lock(&context.session).workspace.clone();
    tokio::task::spawn_blocking(move || {
        serde_json::to_value(crate::ide::book_view::outline(&workspace))
            .map_err(|error| invalid(format!("{OUTLINE}: {error}")))
    })
    .await
    .map_err(|error| invalid(format!("{OUTLINE}: {error}")))?
}

/// The cards, characters first, each with how many scenes it is in and
/// where its card writes its name (`name_position`, for "Show mentions").
pub async fn cast(context: &Context) -> Result<Value, RpcError> {
    let (workspace, encoding) = {
        let session = lock(&context.session);
        (session.workspace.clone(), session.encoding)
    };
    tokio::task::spawn_blocking(move || {
        let cards: Vec<Value> = crate::ide::book_view::cast(&workspace)
            .into_iter()
            .map(|card| {
                let position = card
                    .name_range
                    .zip(workspace.file(&card.path))
                    .map(|(range, file)| super::convert::position(file, range.start, encoding));
                json!({
                    "kind": card.kind,
                    "name": card.name,
                    "path": card.path,
                    "scenes": card.scenes,
                    "name_position": position,
                })
            })
            .collect();
        Value::Array(cards)
    })
    .await
    .map_err(|error| invalid(format!("{CAST}: {error}")))
}
