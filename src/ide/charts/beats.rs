//! The beat sheet against the manuscript: one row a beat, across the page
//! the book from its first word to its last; each row holds the share where
//! the sheet expects the beat (a pale band) and where the scenes it names
//! stand (a bar), so a beat that comes late or early shows at once. A beat
//! is marked off by the rule the health report's A2 judges by
//! ([`BeatPlace::is_off`], `[health] beat_tolerance`), over the same places
//! (a partial draft's over its estimate of the whole book), so the two
//! always agree. A legend says what each mark is.

use svg::node::element::{Rectangle, Text, Title};

use super::{BLUE, GREY, VERMILION};
use crate::stats::beats::BeatPlace;

const LEFT: usize = 190;
const WIDTH: usize = 600;
const ROW: usize = 20;
const TOP: usize = 50;

/// The beats as a self-contained SVG document: `tolerance` is A2's, and
/// `partial` says the places are a partial draft's estimate.
pub fn svg(beats: &[BeatPlace], title: &str, tolerance: f64, partial: bool) -> String {
    let title = format!("{title}: the beats against the manuscript");
    let rows = beats.len() * ROW;
    let height = TOP + rows + 80;
    let x_of = |percent: f64| LEFT + (percent.clamp(0.0, 100.0) / 100.0 * WIDTH as f64) as usize;
    let off_label = format!("more than {tolerance:.0} points from where the sheet expects it");
    let items = [
        ("#dde8f4", "where the 15-beat sheet expects the beat"),
        (BLUE, "where the scenes it names stand"),
        (VERMILION, off_label.as_str()),
    ];
    let mut document = super::canvas(
        (LEFT + WIDTH + 30).max(super::legend_width(&items) + 16),
        height,
        &title,
    );
    for percent in [0.0, 25.0, 50.0, 75.0, 100.0] {
        document = super::tick(
            document,
            x_of(percent),
            TOP,
            TOP + rows,
            &format!("{percent:.0}%"),
        );
    }
    let axis = if partial {
        "share of the book's words (an estimate: the scenes not written yet counted at the written ones' mean length)"
    } else {
        "share of the book's words, in the outline's order"
    };
    document = super::axis_label(document, LEFT + WIDTH / 2, TOP + rows + 18, axis);
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
            let why = if beat.scenes.is_empty() {
                "names no scene yet"
            } else {
                "not placed yet: a scene it names is not written, or comes after one that is not"
            };
            document = document.add(
                Text::new(why)
                    .set("class", "unplaced")
                    .set("x", LEFT + WIDTH + 4)
                    .set("y", y + ROW - 7)
                    .set("fill", GREY)
                    .set("font-size", 8),
            );
            continue;
        };
        let off = beat.is_off(tolerance);
        let tooltip = format!(
            "{}: lands at {start:.0}–{end:.0}% ({}){}",
            beat.title,
            beat.scenes.join(", "),
            match beat.off_by() {
                Some(by) if off => format!(", {by:.0} points outside its share"),
                Some(by) if by > 0.0 =>
                    format!(", {by:.0} points outside its share: within ±{tolerance:.0}"),
                _ => String::new(),
            }
        );
        document = document.add(
            Rectangle::new()
                .set("class", if off { "actual off" } else { "actual" })
                .set("x", x_of(start))
                .set("y", y + 7)
                .set("width", x_of(end).saturating_sub(x_of(start)).max(3))
                .set("height", ROW - 14)
                .set("fill", if off { VERMILION } else { BLUE })
                .add(Title::new(tooltip)),
        );
    }
    document = super::legend(document, 8, TOP + rows + 36, &items);
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
        let svg = svg(&beats, "The Salt Road", 5.0, false);
        assert_eq!(svg.matches("<rect class=\"expected\"").count(), 15);
        let placed = beats.iter().filter(|b| b.actual.is_some()).count();
        assert_eq!(svg.matches("<rect class=\"actual").count(), placed);
        assert!(svg.contains("Catalyst: lands at"), "{svg}");
        // A legend says what each mark is.
        assert!(
            svg.contains("where the 15-beat sheet expects the beat"),
            "{svg}"
        );
        assert!(
            svg.contains("more than 5 points from where the sheet expects it"),
            "{svg}"
        );
        // Off by the health report's rule: as many marked as it flags.
        let off = beats.iter().filter(|beat| beat.is_off(5.0)).count();
        assert_eq!(svg.matches("class=\"actual off\"").count(), off);
    }
}
