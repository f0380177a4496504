//! `reader_experience_simulator`: a reader's path through the story, scene
//! by scene, as figures: how long, how fast, who is new, and whether the
//! tension rises. Counts, not judgement.
//!
//! Arguments: `scene_path` or `scene_id` (optional: report only that scene,
//! which must have a file and be in the outline; its figures still depend
//! on the scenes before it).
//!
//! Walks the written scenes the outline lists, in story order (each once;
//! scenes without a file are skipped and listed in `without_file`). For
//! each, over the body's prose (headings left out):
//! - `reading_minutes`: words / 250, one decimal.
//! - `dialogue_ratio` (words between quotation marks / words) and
//!   `mean_sentence_words`, as `prose_analyzer` counts them.
//! - `pace`: `brisk` when sentences average under 12 words and at least
//!   30% of the words are dialogue; else `slow` when they average over 22
//!   words or there is no dialogue at all; else `steady`.
//! - `new_characters`: the character cards the prose mentions (by name or
//!   alias) that no earlier scene's prose mentions, in order of first
//!   mention.
//! - `stakes_per_1000_words`: words of `stakes_mapper`'s lexicon
//!   ([`super::stakes_mapper::STAKES_WORDS`]) per 1,000 words, the
//!   scene's tension.
//! - `tension_change`: against the previous written scene, `up` when the
//!   tension is higher by at least 1.0 per 1,000 words, `down` when lower
//!   by at least 1.0, else `flat`; null for the first.
//!
//! Output: `scenes` ([{id, position (1-based), path, words,
//! reading_minutes, dialogue_ratio, mean_sentence_words, pace,
//! new_characters, stakes_per_1000_words, tension_change}]),
//! `without_file`, and `arc`, always over the whole story: {scenes, words,
//! reading_minutes, pace: {brisk, steady, slow}, peak and low: {id,
//! stakes_per_1000_words} (the first scene with the highest and the lowest
//! tension) or null, rises, falls, flats, shape: `rising`, `falling` or
//! `level` (the last scene's tension against the first's, by the same 1.0
//! margin), or null without scenes}.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::stakes_mapper::stake_counts;
use super::{
    FileRef, ProseFigures, Summary, ToolArgs, ToolContext, ToolError, ToolOutput,
    characters_mentioned, per_thousand, round_to, scene_target, story_scenes,
};
use crate::index::FilePath;

/// Words a minute, for reading time.
const READING_SPEED: f64 = 250.0;
/// The change in stakes per 1,000 words that counts as a rise or a fall.
const TENSION_MARGIN: f64 = 1.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pace {
    Brisk,
    Steady,
    Slow,
}

impl Pace {
    fn of(mean_sentence_words: f64, dialogue_ratio: f64, dialogue_words: usize) -> Pace {
        if mean_sentence_words < 12.0 && dialogue_ratio >= 0.3 {
            Pace::Brisk
        } else if mean_sentence_words > 22.0 || dialogue_words == 0 {
            Pace::Slow
        } else {
            Pace::Steady
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Pace::Brisk => "brisk",
            Pace::Steady => "steady",
            Pace::Slow => "slow",
        }
    }
}

fn change(from: f64, to: f64) -> &'static str {
    if to - from >= TENSION_MARGIN {
        "up"
    } else if from - to >= TENSION_MARGIN {
        "down"
    } else {
        "flat"
    }
}

struct SceneExperience {
    id: String,
    position: usize,
    path: String,
    words: usize,
    figures: ProseFigures,
    pace: Pace,
    new_characters: Vec<String>,
    tension: f64,
    tension_change: Option<&'static str>,
}

impl SceneExperience {
    fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "position": self.position,
            "path": self.path,
            "words": self.words,
            "reading_minutes": reading_minutes(self.words),
            "dialogue_ratio": self.figures.dialogue_ratio(),
            "mean_sentence_words": self.figures.mean_sentence_words(),
            "pace": self.pace.as_str(),
            "new_characters": self.new_characters,
            "stakes_per_1000_words": self.tension,
            "tension_change": self.tension_change,
        })
    }
}

fn reading_minutes(words: usize) -> f64 {
    round_to(words as f64 / READING_SPEED, 1)
}

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    let only = match scene_target(context, args)? {
        Some(target) => {
            target.require_file()?;
            if target.entry.is_none() {
                return Err(ToolError::BadArgument {
                    name: target.argument.into(),
                    message: format!(
                        "{} is not in the outline, so it has no place in the reader's path; add it to the outline first",
                        target.label()
                    ),
                });
            }
            Some(target.id)
        }
        None => None,
    };

    let mut scenes: Vec<SceneExperience> = Vec::new();
    let mut without_file = Vec::new();
    let mut file_refs = Vec::new();
    let mut met: HashSet<FilePath> = HashSet::new();
    for story_scene in story_scenes(workspace) {
        let Some(file) = story_scene.file else {
            without_file.push(story_scene.entry.scene_id.clone());
            continue;
        };
        let prose = file.analyse_prose();
        let figures = ProseFigures::of(&prose);
        let stake_words: usize = stake_counts(&file.text, &prose).values().sum();
        let tension = per_thousand(stake_words, figures.words);
        let new_characters = characters_mentioned(workspace, file)
            .into_iter()
            .filter(|character| met.insert(character.card.clone()))
            .map(|character| character.name)
            .collect();
        let tension_change = scenes
            .last()
            .map(|previous| change(previous.tension, tension));
        if only
            .as_ref()
            .is_none_or(|id| *id == story_scene.entry.scene_id)
        {
            file_refs.push(FileRef::whole(file));
        }
        scenes.push(SceneExperience {
            id: story_scene.entry.scene_id.clone(),
            position: story_scene.position,
            path: file.path.to_string(),
            words: figures.words,
            pace: Pace::of(
                figures.mean_sentence_words(),
                figures.dialogue_ratio(),
                figures.dialogue_words,
            ),
            figures,
            new_characters,
            tension,
            tension_change,
        });
    }

    let arc = arc(&scenes);
    let shown: Vec<&SceneExperience> = scenes
        .iter()
        .filter(|scene| only.as_ref().is_none_or(|id| *id == scene.id))
        .collect();
    let summary = describe(&shown, &without_file, &arc, only.is_some());
    Ok(ToolOutput {
        data: json!({
            "scenes": shown.iter().map(|scene| scene.to_json()).collect::<Vec<_>>(),
            "without_file": without_file,
            "arc": arc,
        }),
        summary,
        file_refs,
    })
}

fn arc(scenes: &[SceneExperience]) -> Value {
    let words: usize = scenes.iter().map(|scene| scene.words).sum();
    let pace_count = |pace: Pace| scenes.iter().filter(|scene| scene.pace == pace).count();
    let changes = |direction: &str| {
        scenes
            .iter()
            .filter(|scene| scene.tension_change == Some(direction))
            .count()
    };
    // The first of equals wins.
    let mut peak: Option<&SceneExperience> = None;
    let mut low: Option<&SceneExperience> = None;
    for scene in scenes {
        if peak.is_none_or(|peak| scene.tension > peak.tension) {
            peak = Some(scene);
        }
        if low.is_none_or(|low| scene.tension < low.tension) {
            low = Some(scene);
        }
    }
    let point = |scene: Option<&SceneExperience>| {
        scene.map(|scene| json!({"id": scene.id, "stakes_per_1000_words": scene.tension}))
    };
    let shape = match (scenes.first(), scenes.last()) {
        (Some(first), Some(last)) => Some(match change(first.tension, last.tension) {
            "up" => "rising",
            "down" => "falling",
            _ => "level",
        }),
        _ => None,
    };
    json!({
        "scenes": scenes.len(),
        "words": words,
        "reading_minutes": reading_minutes(words),
        "pace": {
            "brisk": pace_count(Pace::Brisk),
            "steady": pace_count(Pace::Steady),
            "slow": pace_count(Pace::Slow),
        },
        "peak": point(peak),
        "low": point(low),
        "rises": changes("up"),
        "falls": changes("down"),
        "flats": changes("flat"),
        "shape": shape,
    })
}

fn describe(
    scenes: &[&SceneExperience],
    without_file: &[String],
    arc: &Value,
    one_scene: bool,
) -> String {
    let mut summary = Summary::new();
    if arc["scenes"] == 0 {
        summary.line("No reader's path: the outline lists no written scene.");
        return summary.finish();
    }
    let point = |key: &str| {
        format!(
            "{} ({})",
            arc[key]["id"].as_str().unwrap_or(""),
            arc[key]["stakes_per_1000_words"]
        )
    };
    summary.line(format!(
        "Reader's path through {} written scenes, {} words (about {} minutes of reading). Pace: {} brisk, {} steady, {} slow.",
        arc["scenes"],
        arc["words"],
        arc["reading_minutes"],
        arc["pace"]["brisk"],
        arc["pace"]["steady"],
        arc["pace"]["slow"]
    ));
    summary.line(format!(
        "Tension (stakes words per 1,000) peaks at {} and is lowest at {}; {} rises, {} falls, {} flat; overall {}.",
        point("peak"),
        point("low"),
        arc["rises"],
        arc["falls"],
        arc["flats"],
        arc["shape"].as_str().unwrap_or("level")
    ));
    if !without_file.is_empty() && !one_scene {
        summary.line(format!(
            "Skipped, not written: {}.",
            without_file.join(", ")
        ));
    }
    for scene in scenes {
        let change = scene.tension_change.unwrap_or("start");
        let met = if scene.new_characters.is_empty() {
            String::new()
        } else {
            format!("; meets {}", scene.new_characters.join(", "))
        };
        summary.line(format!(
            "{}. {}: {:.1} min, {} ({:.1} words a sentence, {:.0}% dialogue), tension {:.1} ({change}){met}.",
            scene.position,
            scene.id,
            reading_minutes(scene.words),
            scene.pace.as_str(),
            scene.figures.mean_sentence_words(),
            scene.figures.dialogue_ratio() * 100.0,
            scene.tension,
        ));
    }
    summary.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{
        file_ref, output, rejected, salt_road, salt_road_output, scene, scene_id, workspace,
    };

    #[test]
    fn each_scene_as_a_reader_meets_it() {
        let (dir, out) = salt_road_output("reader_experience_simulator", json!({}));
        let scenes = out.data["scenes"].as_array().expect("scenes");
        let row = |index: usize| {
            let scene = &scenes[index];
            (
                scene["id"].as_str().unwrap_or(""),
                scene["pace"].as_str().unwrap_or(""),
                scene["tension_change"].as_str(),
            )
        };
        assert_eq!(scenes.len(), 5);
        assert_eq!(row(0), ("SCN-the-arrival", "brisk", None));
        assert_eq!(row(1), ("SCN-the-gate", "steady", Some("down")));
        assert_eq!(row(2), ("SCN-the-saltmaster", "brisk", Some("down")));
        assert_eq!(row(3), ("SCN-the-fall", "steady", Some("up")));
        assert_eq!(row(4), ("SCN-the-vigil", "brisk", Some("down")));
        assert_eq!(scenes[0]["reading_minutes"], 0.2);
        assert_eq!(scenes[0]["mean_sentence_words"], 7.6);
        assert_eq!(scenes[0]["dialogue_ratio"], 0.41);
        assert_eq!(
            scenes[0]["new_characters"],
            json!(["Kael Maren", "Iria Vell"])
        );
        assert_eq!(scenes[1]["new_characters"], json!([]));
        assert_eq!(scenes[2]["new_characters"], json!(["Old Tomas"]));
        assert_eq!(scenes[3]["new_characters"], json!(["Ysolde Harrow"]));
        assert_eq!(scenes[3]["stakes_per_1000_words"], 40.0);
        assert_eq!(scenes[2]["stakes_per_1000_words"], 0.0);
        let arc = &out.data["arc"];
        assert_eq!(arc["words"], 255);
        assert_eq!(arc["reading_minutes"], 1.0);
        assert_eq!(arc["pace"], json!({"brisk": 3, "steady": 2, "slow": 0}));
        assert_eq!(
            arc["peak"],
            json!({"id": "SCN-the-arrival", "stakes_per_1000_words": 49.2})
        );
        assert_eq!(
            arc["low"],
            json!({"id": "SCN-the-saltmaster", "stakes_per_1000_words": 0.0})
        );
        assert_eq!(
            (
                arc["rises"].as_u64(),
                arc["falls"].as_u64(),
                arc["flats"].as_u64()
            ),
            (Some(1), Some(3), Some(0))
        );
        assert_eq!(arc["shape"], "falling");
        assert_eq!(out.data["without_file"], json!(["SCN-the-reckoning"]));
        assert!(
            out.summary.contains("1. SCN-the-arrival: 0.2 min, brisk (7.6 words a sentence, 41% dialogue), tension 49.2 (start); meets Kael Maren, Iria Vell."),
            "{}",
            out.summary
        );
        assert!(out.summary.contains("overall falling"));
        assert_eq!(out.file_refs.len(), 5);
        file_ref(&out, dir.path(), "Story/Scenes/SCN-the-fall.md");
    }

    #[test]
    fn one_scene_keeps_what_came_before() {
        let (dir, out) = salt_road_output(
            "reader_experience_simulator",
            scene("Story/Scenes/SCN-the-fall.md"),
        );
        let scenes = out.data["scenes"].as_array().expect("scenes");
        assert_eq!(scenes.len(), 1);
        assert_eq!(scenes[0]["id"], "SCN-the-fall");
        assert_eq!(scenes[0]["position"], 4);
        assert_eq!(scenes[0]["tension_change"], "up");
        assert_eq!(scenes[0]["new_characters"], json!(["Ysolde Harrow"]));
        assert_eq!(out.data["arc"]["scenes"], 5);
        assert_eq!(out.file_refs.len(), 1);
        file_ref(&out, dir.path(), "Story/Scenes/SCN-the-fall.md");
    }

    #[test]
    fn long_sentences_without_dialogue_are_slow_and_equal_tension_is_flat() {
        let long = "The road ran on across the flats and the salt lay white beside it for mile after mile under a sky that did not change at all.";
        let (_dir, ws) = workspace(&[
            ("Story/SCN-outline.md", "- SCN-a: One.\n- SCN-b: Two.\n"),
            ("Story/Scenes/SCN-a.md", &format!("{long}\n")),
            ("Story/Scenes/SCN-b.md", &format!("{long} {long}\n")),
        ]);
        let out = output(&ws, "reader_experience_simulator", json!({}));
        assert_eq!(out.data["scenes"][0]["pace"], "slow");
        assert_eq!(out.data["scenes"][0]["mean_sentence_words"], 27.0);
        assert_eq!(out.data["scenes"][1]["tension_change"], "flat");
        assert_eq!(out.data["arc"]["shape"], "level");
    }

    #[test]
    fn bad_arguments_are_named_and_an_empty_story_has_no_arc() {
        let (_dir, ws) = salt_road();
        let (name, message) = rejected(
            &ws,
            "reader_experience_simulator",
            scene_id("SCN-the-reckoning"),
        );
        assert_eq!(name, "scene_id");
        assert!(message.contains("no scene file yet"), "{message}");

        let (_dir, ws) = workspace(&[
            ("Story/SCN-outline.md", "- SCN-a: One.\n"),
            ("Story/Scenes/SCN-orphan.md", "Prose.\n"),
        ]);
        let (name, message) = rejected(
            &ws,
            "reader_experience_simulator",
            scene("Story/Scenes/SCN-orphan.md"),
        );
        assert_eq!(name, "scene_path");
        assert!(message.contains("not in the outline"), "{message}");
        let (name, _) = rejected(&ws, "reader_experience_simulator", scene_id("SCN-orphan"));
        assert_eq!(name, "scene_id");
        let out = output(&ws, "reader_experience_simulator", json!({}));
        assert_eq!(out.data["scenes"], json!([]));
        assert_eq!(out.data["arc"]["shape"], json!(null));
        assert_eq!(out.data["arc"]["peak"], json!(null));
        assert!(out.summary.contains("No reader's path"));
    }
}
