//! `control-room stats`: words per scene, chapter and the whole manuscript
//! against their targets, the words of each recent day from git, for people
//! or as one JSON object.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use crate::index::Workspace;
use crate::stats::{self, Progress, grouped, signed};

/// How many days of history `stats` shows.
pub const DAYS: usize = 7;

/// How many of the most repeated phrases `stats` shows.
pub const PHRASES: usize = 10;

/// The report, for people (`json` false) or scripts; exit status 0.
pub fn stats(dir: &Path, json_output: bool) -> anyhow::Result<i32> {
    let root = super::workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let progress = stats::progress(&workspace);
    let history = stats::history::words_by_day(&workspace, DAYS, &jiff::Zoned::now());
    let daily = workspace.config().targets.daily;
    let phrases = stats::phrases::most_repeated(&workspace, PHRASES);
    let text = if json_output {
        let value = json!({
            "version": 1,
            "root": root.to_string_lossy(),
            "title": crate::index::Book::of(&workspace).title(&workspace),
            "progress": progress,
            "daily_target": daily,
            "days": history.as_ref().ok(),
            "history_unavailable": history.as_ref().err().map(ToString::to_string),
            "phrases": phrases,
        });
        format!("{value:#}\n")
    } else {
        let mut text = human(&workspace, &progress, &history, daily);
        if phrases.is_empty() {
            text.push_str("\nNo phrase is used three times or more.\n");
        } else {
            text.push_str("\nMost repeated phrases:\n");
            for phrase in &phrases {
                let _ = writeln!(text, "  {:>4}×  {}", phrase.count, phrase.phrase);
            }
        }
        text
    };
    print!("{text}");
    Ok(0)
}

fn human(
    workspace: &Workspace,
    progress: &Progress,
    history: &Result<Vec<stats::history::DayWords>, stats::history::HistoryError>,
    daily: Option<u32>,
) -> String {
    let title = crate::index::Book::of(workspace).title(workspace);
    let mut out = format!("{title}: {}\n", progress.total.label());
    let width = progress
        .scenes
        .iter()
        .map(|scene| scene.id.chars().count())
        .chain(progress.chapters.iter().map(|c| c.title.chars().count()))
        .max()
        .unwrap_or(0);
    let scene_line = |out: &mut String, index: usize, indent: &str| {
        let scene = &progress.scenes[index];
        let count = if scene.path.is_none() {
            "no scene file yet".to_owned()
        } else {
            scene.count.label()
        };
        let _ = writeln!(out, "{indent}{:<width$}  {count}", scene.id);
    };
    let mut shown = vec![false; progress.scenes.len()];
    for chapter in &progress.chapters {
        let _ = writeln!(
            out,
            "\n{:<width$}    {}",
            chapter.title,
            chapter.count.label()
        );
        for index in &chapter.scenes {
            scene_line(&mut out, *index, "  ");
            shown[*index] = true;
        }
    }
    if shown.iter().any(|shown| !shown) {
        out.push('\n');
        for index in (0..progress.scenes.len()).filter(|index| !shown[*index]) {
            scene_line(&mut out, index, "  ");
        }
    }
    if !progress.unlisted.is_empty() {
        let _ = writeln!(
            out,
            "\nNot in the outline (not counted): {}",
            progress.unlisted.join(", ")
        );
    }
    out.push('\n');
    match history {
        Ok(days) => {
            let today = days.first().map_or(0, |day| day.words);
            let _ = write!(out, "Today: {} words", signed(today));
            if let Some(daily) = daily.filter(|daily| *daily > 0) {
                let percent = (today.max(0) as f64 / f64::from(daily) * 100.0).round();
                let _ = write!(out, " of {} ({percent}%)", grouped(daily as usize));
            }
            out.push_str(" (from git, with what is not committed yet)\n");
            let _ = writeln!(out, "Last {} days:", days.len());
            for day in days {
                let _ = writeln!(out, "  {}  {}", day.date, signed(day.words));
            }
        }
        Err(why) => {
            let _ = writeln!(
                out,
                "Words per day: none ({why}; they come from git history)"
            );
        }
    }
    out
}
