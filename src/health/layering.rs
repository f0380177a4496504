//! C1, symbolic layering (`motif-gap`): each motif the theme lists
//! (`motifs`) should recur. A motif in fewer than two scenes, or missing
//! for more than `[health] motif_gap` (40%) of the book's words (before
//! its first scene, between two, or after its last), is information at its
//! line in the theme.

use super::{CheckResult, Finding, Placed, Shape};
use crate::checks::{Code, Severity};
use crate::index::config::HealthConfig;

pub(super) fn check(shape: &Shape, settings: &HealthConfig) -> CheckResult {
    let mut result = CheckResult::new("C1", "Symbolic layering", Code::MotifGap);
    let motifs = &shape.motifs.list;
    if motifs.is_empty() {
        result.summary = format!(
            "not judged: the theme lists no motifs (a “Motifs” heading in Story/Bible/theme.md, one item a motif){}",
            skipped(shape)
        );
        return result;
    }
    if shape.scenes.is_empty() {
        result.summary = "not judged: no scenes written yet".into();
        return result;
    }
    let mut good = 0;
    for (at, motif) in motifs.iter().enumerate() {
        let scenes: Vec<&Placed> = shape
            .scenes
            .iter()
            .filter(|scene| scene.measures.motifs.get(at).is_some_and(|&n| n > 0))
            .collect();
        let times: usize = shape
            .scenes
            .iter()
            .filter_map(|scene| scene.measures.motifs.get(at))
            .sum();
        let name = &motif.name;
        let finding = if scenes.len() < 2 {
            Some(Finding {
                message: match scenes.first() {
                    Some(scene) => format!(
                        "the motif “{name}” is in one scene only ({}): a motif means by recurring",
                        scene.label()
                    ),
                    None => format!(
                        "the motif “{name}” is in no scene: none of its words ({}) is written",
                        motif.words.join(", ")
                    ),
                },
                recommendation: format!(
                    "Plant “{name}” early and let it return where the story turns, or take it off the list."
                ),
                severity: Severity::Information,
                at: Some((motif.path.clone(), motif.range)),
                related: scenes
                    .iter()
                    .map(|scene| scene.related(format!("“{name}” is here")))
                    .collect(),
            })
        } else {
            gap(shape, &scenes, settings.motif_gap).map(|(stretch, where_)| Finding {
                message: format!(
                    "the motif “{name}” ({times} times in {} scenes) is missing {where_}: {stretch:.0}% of the book",
                    scenes.len()
                ),
                recommendation: format!(
                    "Let “{name}” return in the stretch without it, so the reader carries it across."
                ),
                severity: Severity::Information,
                at: Some((motif.path.clone(), motif.range)),
                related: scenes
                    .iter()
                    .take(4)
                    .map(|scene| scene.related(format!("“{name}” is here")))
                    .collect(),
            })
        };
        match finding {
            Some(finding) => result.findings.push(finding),
            None => good += 1,
        }
    }
    result.score = CheckResult::score_of(good, motifs.len());
    result.summary = format!(
        "{good} of {} motifs recur across the book without a gap over {}%{}{}",
        motifs.len(),
        settings.motif_gap,
        shape.written_so_far(),
        skipped(shape)
    );
    result
}

/// What the summary says of the list's items not read as motifs.
fn skipped(shape: &Shape) -> String {
    match shape.motifs.skipped.len() {
        0 => String::new(),
        n => format!(
            "; {n} item{} of the list not read as a motif (a motif's name, before its colon, is one to four words)",
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// The longest stretch without the motif, and where, when over `limit`.
fn gap(shape: &Shape, scenes: &[&Placed], limit: f64) -> Option<(f64, String)> {
    let first = scenes[0];
    let last = scenes[scenes.len() - 1];
    let end = shape.scenes.last().map_or(last.to, |scene| scene.to);
    let mut longest = (
        first.from,
        format!("before {}, where it first appears", first.label()),
    );
    for pair in scenes.windows(2) {
        let stretch = pair[1].from - pair[0].to;
        if stretch > longest.0 {
            longest = (
                stretch,
                format!("from {} to {}", pair[0].label(), pair[1].label()),
            );
        }
    }
    if end - last.to > longest.0 {
        longest = (end - last.to, format!("after {}", last.label()));
    }
    (longest.0 > limit).then_some(longest)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_summary_says_which_items_of_the_list_are_not_read_as_motifs() {
        let (_dir, workspace) = crate::index::test_support::example_with_motifs(
            "- **Salt**: brine\n- the long road home to the sea and back: dust\n",
        );
        let health = crate::health::Health::check(&workspace, &mut Default::default());
        let layering = health.checks.iter().find(|check| check.id == "C1").unwrap();
        assert!(
            layering
                .summary
                .contains("1 item of the list not read as a motif"),
            "{}",
            layering.summary
        );
    }
}
