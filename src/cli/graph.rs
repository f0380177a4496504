//! `control-room graph`: the story's knowledge graph as the manuscript
//! makes it (`kb::graph`): how many entities and relations of each kind,
//! who carries the book (PageRank over appearances), and, with `--between
//! A B`, how far two characters are. Each scene's part of the graph is kept
//! in `.control-room/graph/scenes.json` for the next run.

use std::path::Path;

use anyhow::bail;
use serde_json::json;

use super::workspace_root;
use crate::index::{CardKind, Workspace};
use crate::kb::graph::{EntityKind, GraphCache, MEMO_FILE};
use crate::storage::Disk;

/// Prints the graph's figures and its most central cards.
pub fn graph(dir: &Path, between: Option<(&str, &str)>, json: bool) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    // Each scene's part of the graph from the last run's memo where the
    // scene is unchanged; the memo saved again for the next (a cache: a
    // failure to save it costs the next run a few milliseconds, nothing else).
    let graph = GraphCache::load(&root);
    let story = graph.build(&workspace);
    if let Err(error) = graph.save(&Disk::default(), &root) {
        eprintln!("the graph's memo was not saved ({MEMO_FILE}): {error}");
    }
    let mut entities = std::collections::BTreeMap::new();
    for entity in story.graph.node_weights() {
        *entities.entry(format!("{:?}", entity.kind)).or_insert(0) += 1;
    }
    let mut relations = std::collections::BTreeMap::new();
    for relation in story.graph.edge_weights() {
        *relations.entry(format!("{:?}", relation.kind)).or_insert(0) += 1;
    }
    let central: Vec<(String, String, f64)> = story
        .centrality()
        .into_iter()
        .map(|(node, rank)| (&story.graph[node], rank))
        .filter(|(entity, _)| matches!(entity.kind, EntityKind::Character | EntityKind::Place))
        .take(10)
        .map(|(entity, rank)| (entity.label.clone(), format!("{:?}", entity.kind), rank))
        .collect();
    let distance = match between {
        Some((a, b)) => {
            let card = |name: &str| {
                workspace
                    .catalog()
                    .resolve_card(name, &[CardKind::Character])
                    .map(|file| file.path.to_string())
            };
            let (Some(from), Some(to)) = (card(a), card(b)) else {
                bail!("`{a}` and `{b}` must both name characters of the cards");
            };
            Some((a, b, story.distance(&from, &to)))
        }
        None => None,
    };
    if json {
        let out = json!({
            "entities": entities,
            "relations": relations,
            "central": central.iter().map(|(label, kind, rank)| json!({"label": label, "kind": kind, "rank": rank})).collect::<Vec<_>>(),
            "distance": distance.map(|(a, b, d)| json!({"from": a, "to": b, "steps": d})),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(0);
    }
    let list = |map: &std::collections::BTreeMap<String, i32>| {
        map.iter()
            .map(|(kind, count)| format!("{count} {kind}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("entities: {}", list(&entities));
    println!("relations: {}", list(&relations));
    println!("who carries the book:");
    for (at, (label, kind, rank)) in central.iter().enumerate() {
        println!("{:>3}. {label} ({kind}, {:.3})", at + 1, rank);
    }
    if let Some((a, b, steps)) = distance {
        match steps {
            Some(steps) => println!("{a} to {b}: {steps} step(s) through shared scenes"),
            None => println!("{a} and {b} share no chain of scenes"),
        }
    }
    Ok(0)
}
