//! The presence chart: one row a character (the one
//! who carries the book first, by the story graph's centrality), one column
//! a scene of the outline in order, and each cell what the character is in
//! that scene: its point of view, speaking (as the checks read the
//! speakers), present (in its `characters:`), or only mentioned. As data
//! ([`PresenceChart`]) for tests and tools, and as a self-contained SVG
//! drawn with the `svg` crate, readable without a network, each cell with
//! its tooltip.

use std::collections::HashMap;

use svg::node::element::{Rectangle, Text, Title};

use crate::index::Workspace;
use crate::kb::graph::{EntityKind, GraphCache};

/// What a character is in a scene, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Presence {
    Pov,
    Speaks,
    Present,
    Mentioned,
}

impl Presence {
    pub fn as_str(self) -> &'static str {
        match self {
            Presence::Pov => "point of view",
            Presence::Speaks => "speaks",
            Presence::Present => "present",
            Presence::Mentioned => "only mentioned",
        }
    }

    fn colour(self) -> &'static str {
        match self {
            Presence::Pov => "#1f3a5f",
            Presence::Speaks => "#3f6fa8",
            Presence::Present => "#8fb3dc",
            Presence::Mentioned => "#dde8f4",
        }
    }
}

/// Who is in which scene.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresenceChart {
    /// The outline's scene ids, in order.
    pub scenes: Vec<String>,
    /// The characters' names, the most central first.
    pub characters: Vec<String>,
    /// `cells[character][scene]`.
    pub cells: Vec<Vec<Option<Presence>>>,
}

impl PresenceChart {
    /// What `character` (a name as the chart gives it) is in scene `id`.
    pub fn cell(&self, character: &str, id: &str) -> Option<Presence> {
        let row = self.characters.iter().position(|c| c == character)?;
        let column = self.scenes.iter().position(|s| s == id)?;
        self.cells[row][column]
    }
}

/// The presence chart of the manuscript as `workspace` holds it; only the
/// characters who are somewhere have a row.
pub fn presence(workspace: &Workspace) -> PresenceChart {
    presence_with(workspace, &GraphCache::default())
}

/// [`presence`], the graph built through `graph` (the owner's memo).
pub fn presence_with(workspace: &Workspace, graph: &GraphCache) -> PresenceChart {
    let catalog = workspace.catalog();
    let scenes: Vec<String> = catalog
        .outline()
        .and_then(|file| file.outline())
        .map(|outline| outline.entries.iter().map(|e| e.scene_id.clone()).collect())
        .unwrap_or_default();
    let story = graph.build(workspace);
    let characters: Vec<(String, String)> = story
        .centrality()
        .into_iter()
        .map(|(node, _)| &story.graph[node])
        .filter(|entity| entity.kind == EntityKind::Character)
        .map(|entity| (entity.key.clone(), entity.label.clone()))
        .collect();
    let row_of: HashMap<&str, usize> = characters
        .iter()
        .enumerate()
        .map(|(row, (key, _))| (key.as_str(), row))
        .collect();
    let mut cells = vec![vec![None; scenes.len()]; characters.len()];
    let mut mark = |key: &str, column: usize, presence: Presence| {
        if let Some(&row) = row_of.get(key) {
            let cell: &mut Option<Presence> = &mut cells[row][column];
            *cell = Some(cell.map_or(presence, |known| known.min(presence)));
        }
    };
    for (column, id) in scenes.iter().enumerate() {
        let Some(file) = catalog.scene(id) else {
            continue;
        };
        // Who is in the scene, read as the story's health reads it.
        let cast = crate::health::SceneCast::of(workspace, file);
        for card in cast.mentioned.keys() {
            mark(card, column, Presence::Mentioned);
        }
        for card in &cast.present {
            mark(card, column, Presence::Present);
        }
        for card in &cast.speaks {
            mark(card, column, Presence::Speaks);
        }
        if let Some(card) = &cast.pov {
            mark(card, column, Presence::Pov);
        }
    }
    let (characters, cells): (Vec<String>, Vec<Vec<Option<Presence>>>) = characters
        .into_iter()
        .zip(cells)
        .filter(|(_, row)| row.iter().any(Option::is_some))
        .map(|((_, label), row)| (label, row))
        .unzip();
    PresenceChart {
        scenes,
        characters,
        cells,
    }
}

const CELL: usize = 14;
const LEFT: usize = 180;
const TOP: usize = 110;

/// The chart as a self-contained SVG document.
pub fn presence_svg(chart: &PresenceChart, title: &str) -> String {
    let width = LEFT + chart.scenes.len() * CELL + 20;
    let height = TOP + chart.characters.len() * CELL + 60;
    let mut document = super::canvas(width, height, &format!("{title}: who is in which scene"));
    for (column, id) in chart.scenes.iter().enumerate() {
        let x = LEFT + column * CELL + CELL / 2;
        document = document.add(
            Text::new(id.trim_start_matches("SCN-"))
                .set("class", "scene")
                .set("x", x)
                .set("y", TOP - 6)
                .set("transform", format!("rotate(-60 {x} {})", TOP - 6)),
        );
    }
    for (row, name) in chart.characters.iter().enumerate() {
        let y = TOP + row * CELL;
        document = document.add(
            Text::new(name.as_str())
                .set("class", "character")
                .set("x", LEFT - 6)
                .set("y", y + CELL - 3)
                .set("text-anchor", "end"),
        );
        for (column, cell) in chart.cells[row].iter().enumerate() {
            let Some(presence) = cell else {
                continue;
            };
            let rect = Rectangle::new()
                .set(
                    "class",
                    format!("cell {}", presence.as_str().replace(' ', "-")),
                )
                .set("x", LEFT + column * CELL)
                .set("y", y)
                .set("width", CELL - 1)
                .set("height", CELL - 1)
                .set("fill", presence.colour())
                .add(Title::new(format!(
                    "{name} in {}: {}",
                    chart.scenes[column],
                    presence.as_str()
                )));
            document = document.add(rect);
        }
    }
    let legend_y = TOP + chart.characters.len() * CELL + 24;
    for (at, presence) in [
        Presence::Pov,
        Presence::Speaks,
        Presence::Present,
        Presence::Mentioned,
    ]
    .into_iter()
    .enumerate()
    {
        let x = 8 + at * 130;
        document = document
            .add(
                Rectangle::new()
                    .set("x", x)
                    .set("y", legend_y)
                    .set("width", CELL - 1)
                    .set("height", CELL - 1)
                    .set("fill", presence.colour()),
            )
            .add(
                Text::new(presence.as_str())
                    .set("x", x + CELL + 4)
                    .set("y", legend_y + CELL - 3),
            );
    }
    document.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_examples_presence_has_each_point_of_view_and_each_speaker() {
        let workspace = Workspace::load(&crate::index::test_support::example_root());
        let chart = presence(&workspace);
        assert_eq!(
            chart.scenes.first().map(String::as_str),
            Some("SCN-the-arrival")
        );
        assert_eq!(chart.cell("Iria Vell", "SCN-the-gate"), Some(Presence::Pov));
        assert_eq!(
            chart.cell("Kael Maren", "SCN-the-gate"),
            Some(Presence::Speaks)
        );
        let svg = presence_svg(&chart, "The Salt Road");
        let cells = chart.cells.iter().flatten().filter(|c| c.is_some()).count();
        assert_eq!(svg.matches("<rect class=\"cell ").count(), cells);
        assert!(
            svg.contains("<title>Iria Vell in SCN-the-gate: point of view</title>"),
            "{svg}"
        );
    }
}
