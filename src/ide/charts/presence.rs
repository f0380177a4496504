//! The presence chart: one row a character (the one
//! who carries the book first, by the story graph's centrality), one column
//! a scene of the outline in order, and each cell what the character is in
//! that scene: its point of view, speaking (as the checks read the
//! speakers), present (in its `characters:`), or only mentioned. As data
//! ([`PresenceChart`]) for tests and tools, and as a self-contained SVG
//! drawn with the `svg` crate, readable without a network, each cell with
//! its tooltip. Colours are told apart by colour-blind readers (Okabe–Ito);
//! the outline's chapters head the columns; a book of more scenes than fit
//! ([`MOST_COLUMNS`]) is drawn a column a chapter (each cell the strongest
//! presence in its scenes), so its width stays bounded.

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
            Presence::Pov => super::BLUE,
            Presence::Speaks => super::ORANGE,
            Presence::Present => super::GREEN,
            Presence::Mentioned => super::SKY,
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
    /// The outline's chapters: each heading's title and the first of its
    /// scenes (a column), in order.
    pub chapters: Vec<(String, usize)>,
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
    let outline = catalog.outline().and_then(|file| file.outline());
    let scenes: Vec<String> = outline
        .map(|outline| outline.entries.iter().map(|e| e.scene_id.clone()).collect())
        .unwrap_or_default();
    // A chapter starts at the first scene under a new heading.
    let mut chapters: Vec<(String, usize)> = Vec::new();
    if let Some(outline) = outline {
        let mut last = None;
        for (column, entry) in outline.entries.iter().enumerate() {
            if let Some(heading) = entry.heading.filter(|_| entry.heading != last) {
                chapters.push((outline.headings[heading].title.clone(), column));
            }
            last = entry.heading;
        }
    }
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
        chapters,
    }
}

/// The most columns the chart draws: past it, a column is a chapter.
pub const MOST_COLUMNS: usize = 160;

/// The chart's columns, each its label and the scenes it stands for; and
/// whether they are chapters (or runs of scenes) rather than scenes.
fn columns(chart: &PresenceChart) -> (Vec<(String, Vec<usize>)>, bool) {
    let scenes = chart.scenes.len();
    if scenes <= MOST_COLUMNS {
        let columns = chart
            .scenes
            .iter()
            .enumerate()
            .map(|(at, id)| (id.trim_start_matches("SCN-").to_owned(), vec![at]))
            .collect();
        return (columns, false);
    }
    // By chapter where the outline has headings enough, else by equal runs.
    let starts: Vec<(String, usize)> =
        if !chart.chapters.is_empty() && chart.chapters.len() <= MOST_COLUMNS {
            chart.chapters.clone()
        } else {
            let run = scenes.div_ceil(MOST_COLUMNS);
            (0..scenes)
                .step_by(run)
                .map(|at| (format!("scenes {}–{}", at + 1, (at + run).min(scenes)), at))
                .collect()
        };
    let mut columns: Vec<(String, Vec<usize>)> = Vec::new();
    if let Some((_, first)) = starts.first().filter(|(_, first)| *first > 0) {
        columns.push(("before".to_owned(), (0..*first).collect()));
    }
    for (at, (label, first)) in starts.iter().enumerate() {
        let end = starts.get(at + 1).map_or(scenes, |(_, next)| *next);
        columns.push((label.clone(), (*first..end).collect()));
    }
    (columns, true)
}

const CELL: usize = 14;
const LEFT: usize = 180;
const TOP: usize = 110;

/// The chart as a self-contained SVG document.
pub fn presence_svg(chart: &PresenceChart, title: &str) -> String {
    let (columns, by_chapter) = columns(chart);
    let items: Vec<(&str, &str)> = [
        Presence::Pov,
        Presence::Speaks,
        Presence::Present,
        Presence::Mentioned,
    ]
    .into_iter()
    .map(|presence| (presence.colour(), presence.as_str()))
    .collect();
    let width = (LEFT + columns.len() * CELL + 20).max(super::legend_width(&items) + 16);
    let height = TOP + chart.characters.len() * CELL + 70;
    let what = if by_chapter {
        "who is in which chapter"
    } else {
        "who is in which scene"
    };
    let mut document = super::canvas(width, height, &format!("{title}: {what}"));
    for (column, (label, _)) in columns.iter().enumerate() {
        let x = LEFT + column * CELL + CELL / 2;
        document = document.add(
            Text::new(label.as_str())
                .set("class", if by_chapter { "chapter" } else { "scene" })
                .set("x", x)
                .set("y", TOP - 6)
                .set("transform", format!("rotate(-60 {x} {})", TOP - 6)),
        );
    }
    // Where each chapter begins, between its scenes and the ones before.
    if !by_chapter {
        for (_, first) in chart.chapters.iter().filter(|(_, first)| *first > 0) {
            let x = LEFT + first * CELL;
            document = document.add(
                svg::node::element::Line::new()
                    .set("class", "chapter")
                    .set("x1", x)
                    .set("y1", TOP - 2)
                    .set("x2", x)
                    .set("y2", TOP + chart.characters.len() * CELL)
                    .set("stroke", "#999999"),
            );
        }
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
        for (column, (label, scenes)) in columns.iter().enumerate() {
            let Some(presence) = scenes
                .iter()
                .filter_map(|&scene| chart.cells[row][scene])
                .min()
            else {
                continue;
            };
            let place = if by_chapter {
                label.clone()
            } else {
                chart.scenes[column].clone()
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
                    "{name} in {place}: {}",
                    presence.as_str()
                )));
            document = document.add(rect);
        }
    }
    let bottom = TOP + chart.characters.len() * CELL;
    let axis = if by_chapter {
        "the outline's chapters, in order (each cell the most a character is in any of its scenes)"
    } else {
        "the outline's scenes, in order (a line where a chapter begins)"
    };
    document = super::axis_label(document, LEFT + columns.len() * CELL / 2, bottom + 18, axis);
    document = super::legend(document, 8, bottom + 34, &items);
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

    #[test]
    fn a_long_book_is_drawn_a_column_a_chapter_with_its_legend_whole() {
        let scenes: Vec<String> = (0..400).map(|at| format!("SCN-{at}")).collect();
        let mut cells = vec![vec![None; 400]];
        cells[0][5] = Some(Presence::Mentioned);
        cells[0][7] = Some(Presence::Pov);
        cells[0][399] = Some(Presence::Speaks);
        let chart = PresenceChart {
            scenes,
            characters: vec!["Ada".into()],
            cells,
            chapters: (0..4)
                .map(|at| (format!("Part {}", at + 1), at * 100))
                .collect(),
        };
        let svg = presence_svg(&chart, "Long");
        assert!(svg.contains("Long: who is in which chapter"), "{svg}");
        assert_eq!(svg.matches("class=\"chapter\"").count(), 4);
        // The strongest presence of a chapter's scenes is its cell.
        assert!(
            svg.contains("<title>Ada in Part 1: point of view</title>"),
            "{svg}"
        );
        assert!(
            svg.contains("<title>Ada in Part 4: speaks</title>"),
            "{svg}"
        );
        for label in ["point of view", "speaks", "present", "only mentioned"] {
            assert!(
                svg.contains(&format!("\n{label}\n</text>")),
                "{label}: {svg}"
            );
        }
        // A short book's legend is never cut off: the canvas holds it.
        let short = PresenceChart {
            scenes: vec!["SCN-a".into()],
            characters: vec!["Ada".into()],
            cells: vec![vec![Some(Presence::Pov)]],
            chapters: Vec::new(),
        };
        let svg = presence_svg(&short, "S");
        let width: usize = svg
            .split("width=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|width| width.parse().ok())
            .unwrap();
        // Four swatches and their labels, from x = 8.
        assert!(width >= 8 + 384, "{width}");
    }
}
