//! `controlRoom.chart`: a chart of the book as SVG, from the manuscript as
//! the editor has it (`{"kind": "presence"}` → `{kind, title, svg, cells}`;
//! `timeline`, `beats`, or `run` with `{"run": RUN}`),
//! for an editor to show (VS Code's webview) or save (Neovim opens the file
//! in the browser).

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;

use super::runs::Context;
use super::shared::{invalid, lock};
use crate::ide::charts::{self, ChartKind};

pub const CHART: &str = "controlRoom.chart";

/// What `controlRoom.chart` takes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartArgs {
    #[serde(default)]
    kind: Option<String>,
    /// The run, for the `run` chart.
    #[serde(default)]
    run: Option<String>,
}

/// The chart, drawn off the session's lock: `{kind, title, svg}` and its
/// figures (`cells` of the presence chart, `flashbacks` of the timeline…).
pub async fn chart(context: &Context, args: ChartArgs) -> Result<Value, RpcError> {
    let name = args.kind.unwrap_or_else(|| "presence".to_owned());
    let kind = ChartKind::parse(&name, args.run.as_deref())
        .map_err(|error| invalid(format!("{CHART}: {error}")))?;
    let (workspace, root, graph) = {
        let session = lock(&context.session);
        (
            session.workspace.clone(),
            session.workspace.root().to_path_buf(),
            session.graph.clone(),
        )
    };
    let drawn = tokio::task::spawn_blocking(move || charts::draw(&workspace, &root, &kind, &graph))
        .await
        .map_err(|error| invalid(format!("{CHART}: {error}")))?
        .map_err(|error| invalid(format!("{CHART}: {error}")))?;
    let mut answer = json!({"kind": name, "title": drawn.title, "svg": drawn.svg});
    if let (Some(answer), Value::Object(figures)) = (answer.as_object_mut(), drawn.figures) {
        answer.extend(figures);
    }
    Ok(answer)
}
