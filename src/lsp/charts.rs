//! `controlRoom.chart`: a chart of the book as SVG, from the manuscript as
//! the editor has it (`{"kind": "presence"}` → `{kind, title, svg, cells}`),
//! for an editor to show (VS Code's webview) or save (Neovim opens the file
//! in the browser).

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;

use super::commands::shared::{invalid, lock};
use super::runs::Context;
use crate::ide::charts;

pub const CHART: &str = "controlRoom.chart";

/// What `controlRoom.chart` takes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartArgs {
    #[serde(default)]
    kind: Option<String>,
}

/// The chart, drawn off the session's lock.
pub async fn chart(context: &Context, args: ChartArgs) -> Result<Value, RpcError> {
    let kind = args.kind.unwrap_or_else(|| "presence".to_owned());
    if kind != "presence" {
        return Err(invalid(format!(
            "{CHART}: `{kind}` is not a chart; the charts are: presence"
        )));
    }
    let workspace = lock(&context.session).workspace.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let chart = charts::presence(&workspace);
        let book = crate::index::Book::of(&workspace);
        let title = crate::export::assemble::book_title(&workspace, &book);
        let cells = chart.cells.iter().flatten().filter(|c| c.is_some()).count();
        json!({
            "kind": "presence",
            "title": title,
            "svg": charts::presence_svg(&chart, &title),
            "cells": cells,
            "characters": chart.characters.len(),
            "scenes": chart.scenes.len(),
        })
    })
    .await
    .map_err(|error| invalid(format!("{CHART}: {error}")))?;
    Ok(answer)
}
