//! The beat sheet against the manuscript: one row a beat, across the page
//! the book from its first word to its last; each row holds the share where
//! the sheet expects the beat (a pale band) and where the scenes it names
//! stand (a dark bar), so a beat that comes late or early shows at once.

use svg::node::element::{Line, Rectangle, Text, Title};

use crate::stats::beats::BeatPlace;

const LEFT: usize = 190;
const WIDTH: usize = 600;
const ROW: usize = 20;
const TOP: usize = 50;

/// The beats as a self-contained SVG document.
pub fn svg(beats: &[BeatPlace], title: &str) -> String {
    let title = format!("{title}: the beats against the manuscript");
    let height = TOP + beats.len() * ROW + 50;
    let x_of = |percent: f64| LEFT + (percent.clamp(0.0, 100.0) / 100.0 * WIDTH as f64) as usize;
    let mut document = super::canvas(LEFT + WIDTH + 30, height, &title);
    for percent in [0.0, 25.0, 50.0, 75.0, 100.0] {
        let x = x_of(percent);
        document = document
            .add(
                Line::new()
                    .set("x1", x)
                    .set("y1", TOP - 6)
                    .set("x2", x)
                    .set("y2", TOP + beats.len() * ROW)
                    .set("stroke", "#dddddd"),
            )
            .add(
                Text::new(format!("{percent:.0}%"))
                    .set("x", x)
                    .set("y", TOP - 10)
                    .set("text-anchor", "middle"),
            );
    }
    for (row, beat) in beats.iter().enumerate() {
        let y = TOP + row * ROW;
        let (from, to) = (f64::from(beat.expected.0), f64::from(beat.expected.1));
        document = document
            .add(
                Text::new(format!("{}. {}", beat.number, beat.title))
                    .set("class", "beat")
                    .set("x", LEFT - 8)
                    .set("y", y + ROW - 7)
                    .set("text-anchor", "end"),
            )
            .add(
                Rectangle::new()
                    .set("class", "expected")
                    .set("x", x_of(from))
                    .set("y", y + 3)
                    .set("width", x_of(to).saturating_sub(x_of(from)).max(2))
                    .set("height", ROW - 6)
                    .set("fill", "#dde8f4")
                    .add(Title::new(format!(
                        "{}: expected at {from:.0}–{to:.0}% of the book",
                        beat.title
                    ))),
            );
        let Some((start, end)) = beat.actual else {
            continue;
        };
        let off = beat.off_by().unwrap_or(0.0);
        let tooltip = format!(
            "{}: lands at {start:.0}–{end:.0}% ({}){}",
            beat.title,
            beat.scenes.join(", "),
            if off > 0.0 {
                format!(", {off:.0} points outside its share")
            } else {
                String::new()
            }
        );
        document = document.add(
            Rectangle::new()
                .set("class", if off > 0.0 { "actual off" } else { "actual" })
                .set("x", x_of(start))
                .set("y", y + 7)
                .set("width", x_of(end).saturating_sub(x_of(start)).max(3))
                .set("height", ROW - 14)
                .set("fill", if off > 0.0 { "#b3261e" } else { "#1f3a5f" })
                .add(Title::new(tooltip)),
        );
    }
    document.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Workspace;

    #[test]
    fn the_examples_beats_each_have_a_band_and_the_linked_ones_a_bar() {
        let workspace = Workspace::load(&crate::index::test_support::example_root());
        let beats = crate::stats::beats::beat_places(&workspace).expect("the example's sheet");
        assert_eq!(beats.len(), 15);
        let catalyst = beats.iter().find(|b| b.title == "Catalyst").unwrap();
        assert_eq!(catalyst.scenes, ["SCN-the-gate"]);
        assert!(catalyst.actual.is_some());
        let svg = svg(&beats, "The Salt Road");
        assert_eq!(svg.matches("<rect class=\"expected\"").count(), 15);
        let placed = beats.iter().filter(|b| b.actual.is_some()).count();
        assert_eq!(svg.matches("<rect class=\"actual").count(), placed);
        assert!(svg.contains("Catalyst: lands at"), "{svg}");
    }
}
