//! The story's knowledge graph on a real novel: who carries Pride and
//! Prejudice, and how far its people are from each other.

use crate::support::lsp_client;

use std::path::Path;

use control_room::index::Workspace;
use control_room::kb::graph::{EntityKind, StoryGraph};

fn pride_and_prejudice() -> Workspace {
    Workspace::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice"),
    )
}

#[test]
fn pride_and_prejudices_pagerank_puts_elizabeth_and_darcy_first() {
    let workspace = pride_and_prejudice();
    let story = StoryGraph::build(&workspace);
    let ranked: Vec<(String, f64)> = story
        .centrality()
        .into_iter()
        .filter(|(node, _)| story.graph[*node].kind == EntityKind::Character)
        .map(|(node, rank)| (story.graph[node].label.clone(), rank))
        .take(6)
        .collect();
    println!("{ranked:?}");
    let names: Vec<&str> = ranked.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names[..2],
        ["Elizabeth Bennet", "Fitzwilliam Darcy"],
        "{ranked:?}"
    );

    let count = |kind: EntityKind| {
        story
            .graph
            .node_weights()
            .filter(|entity| entity.kind == kind)
            .count()
    };
    assert_eq!(
        (
            count(EntityKind::Scene),
            count(EntityKind::Character),
            count(EntityKind::Place)
        ),
        (61, 28, 13)
    );
    let card = |name: &str| format!("Compendium/Characters/CHAR-{name}.md");
    assert_eq!(
        story.distance(&card("elizabeth-bennet"), &card("darcy")),
        Some(1)
    );
    assert_eq!(story.distance(&card("darcy"), &card("darcy")), Some(0));
    assert_eq!(story.distance(&card("darcy"), &card("nobody")), None);
}

#[test]
fn the_graph_command_prints_who_carries_the_book_and_how_far_two_people_are() {
    // A copy: the command keeps each scene's part of the graph under
    // `.control-room/graph/` for its next run.
    let (_dir, corpus) = lsp_client::copy_of("tests/corpora/pride-and-prejudice");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args([
            "graph",
            "--json",
            "--between",
            "Elizabeth",
            "Darcy",
            "--dir",
        ])
        .arg(&corpus)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["central"][0]["label"], "Elizabeth Bennet",
        "{report}"
    );
    assert_eq!(
        report["central"][1]["label"], "Fitzwilliam Darcy",
        "{report}"
    );
    assert_eq!(report["entities"]["Scene"], 61);
    assert_eq!(report["distance"]["steps"], 1);
    // Who speaks in which chapter is a relation of its own.
    let speaks = report["relations"]["SpeaksIn"].as_u64().unwrap_or(0);
    assert!(speaks > 100, "{report}");
    let memo = std::fs::read_to_string(corpus.join(".control-room/graph/scenes.json")).unwrap();
    let memo: serde_json::Value = serde_json::from_str(&memo).unwrap();
    assert_eq!(memo["version"], 2);
    assert_eq!(memo["scenes"].as_array().unwrap().len(), 61);
}

#[test]
fn pride_and_prejudices_presence_chart_holds_who_speaks_where_and_draws_each_cell() {
    use control_room::ide::charts::{self, Presence};
    let workspace = pride_and_prejudice();
    let chart = charts::presence(&workspace);
    assert_eq!(chart.scenes.len(), 61);
    assert_eq!(chart.characters[0], "Elizabeth Bennet");
    // Both proposals, and the ball where he will not dance.
    for chapter in ["34", "58"] {
        let id = format!("SCN-chapter-{chapter}");
        assert_eq!(chart.cell("Elizabeth Bennet", &id), Some(Presence::Speaks));
        assert_eq!(chart.cell("Fitzwilliam Darcy", &id), Some(Presence::Speaks));
    }
    assert_eq!(
        chart.cell("Fitzwilliam Darcy", "SCN-chapter-03"),
        Some(Presence::Speaks)
    );
    let speaks = |name: &str| {
        chart
            .scenes
            .iter()
            .filter(|id| chart.cell(name, id) == Some(Presence::Speaks))
            .count()
    };
    assert!(
        speaks("Elizabeth Bennet") >= 40,
        "{}",
        speaks("Elizabeth Bennet")
    );

    // The command draws it: one cell a rectangle, each with its tooltip.
    let dir = tempfile::tempdir().unwrap();
    let svg_path = dir.path().join("presence.svg");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["chart", "presence", "-o"])
        .arg(&svg_path)
        .arg("--dir")
        .arg(&corpus)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let cells = chart
        .cells
        .iter()
        .flatten()
        .filter(|cell| cell.is_some())
        .count();
    assert_eq!(svg.matches("<rect class=\"cell ").count(), cells);
    assert!(svg.contains("<title>Fitzwilliam Darcy in SCN-chapter-34: speaks</title>"));
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
}
