//! `file_locator`: finds the manuscript files a task is about.
//!
//! Arguments: `search_criteria` (text, usually the task description),
//! `scene_path` (optional, always matched first), `scan_mode` (`FAST_SCAN`
//! compares ids, titles, names and file names; `FULL_SCAN` also the text),
//! `max_results` (default 12).
//!
//! A scene named in the task (or `scene_path`) that has no file yet but is in
//! the outline matches the outline, and its outline beat's cards join
//! `canon_paths`.
//!
//! A scene id (`SCN-…`) or a path written in the criteria matches exactly;
//! otherwise each file scores one point per distinct query word (three letters
//! or more, common words left out) found in its id, title, names or file name
//! (and, with `FULL_SCAN`, its text). Output: `matches` (path, kind, id,
//! title, score), `scenes` (matched scene paths in outline order),
//! `outline_path`, `canon_paths` (matched cards and the cards the matched
//! scenes involve), and `counts`.

use serde_json::json;

use super::{FileRef, ToolArgs, ToolContext, ToolError, ToolOutput, canon_for_scene};
use crate::index::{FileContent, SourceFile};

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "from", "into", "that", "this", "scene", "scenes", "draft",
    "write", "check", "review", "chapter", "about", "make", "please", "outline", "canon",
];

const EXACT: u32 = 100;

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let criteria = args.string("search_criteria")?.unwrap_or("");
    let scene_path = args.path("scene_path")?;
    let full = match args.string("scan_mode")? {
        None | Some("FAST_SCAN") => false,
        Some("FULL_SCAN") => true,
        Some(other) => {
            return Err(ToolError::BadArgument {
                name: "scan_mode".into(),
                message: format!("`{other}` is not FAST_SCAN or FULL_SCAN"),
            });
        }
    };
    let max_results = args.usize("max_results")?.unwrap_or(12).max(1);
    let workspace = context.workspace;
    let catalog = workspace.catalog();

    let lowered = criteria.to_lowercase();
    let words: Vec<&str> = {
        let mut words: Vec<&str> = lowered
            .split(|c: char| !c.is_alphanumeric() && c != '-')
            .map(|word| word.trim_matches('-'))
            .filter(|word| word.chars().count() >= 3 && !STOP_WORDS.contains(word))
            .collect();
        words.sort_unstable();
        words.dedup();
        words
    };

    let mut scored: Vec<(u32, &SourceFile)> = Vec::new();
    for file in workspace.files() {
        let mut score = 0;
        let exact_path =
            scene_path == Some(&*file.path) || lowered.contains(&file.path.to_lowercase());
        let (id, title, names) = identity(file);
        let exact_id = id.as_deref().is_some_and(|id| {
            id.starts_with("SCN-") && contains_token(&lowered, &id.to_lowercase())
        });
        if exact_path || exact_id {
            score += EXACT;
        }
        let haystack = format!(
            "{} {} {} {}",
            id.as_deref().unwrap_or(""),
            title.as_deref().unwrap_or(""),
            names.join(" "),
            file.path
        )
        .to_lowercase();
        let body = full.then(|| file.text.to_lowercase());
        for word in &words {
            if contains_token(&haystack, word) {
                score += 2;
            } else if body
                .as_deref()
                .is_some_and(|body| contains_token(body, word))
            {
                score += 1;
            }
        }
        if score > 0 {
            scored.push((score, file));
        }
    }
    // A scene named in the task that has no file yet: the outline that
    // lists it is what there is to read, and its beat names the canon.
    let mut unwritten: Vec<String> = lowered
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|word| word.starts_with("scn-"))
        .filter_map(|word| outline_id(catalog, word))
        .collect();
    if let Some(path) = scene_path
        && workspace.file(path).is_none()
        && let Some(id) = outline_id(catalog, &crate::index::file::file_stem(path).to_lowercase())
    {
        unwritten.push(id);
    }
    unwritten.retain(|id| catalog.scene(id).is_none());
    if !unwritten.is_empty()
        && let Some(outline) = catalog.outline()
    {
        match scored
            .iter_mut()
            .find(|(_, file)| file.path == outline.path)
        {
            Some((score, _)) => *score += EXACT,
            None => scored.push((EXACT, outline)),
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    scored.truncate(max_results);

    let mut matches = Vec::new();
    let mut scenes: Vec<(usize, String)> = Vec::new();
    let mut canon_paths: Vec<String> = Vec::new();
    let mut file_refs = Vec::new();
    for (score, file) in &scored {
        let (id, title, _) = identity(file);
        matches.push(json!({
            "path": file.path.to_string(),
            "kind": kind_name(file),
            "id": id,
            "title": title,
            "score": score,
        }));
        file_refs.push(FileRef::span(file, file.head_range()));
        match &file.content {
            FileContent::Scene(scene) => {
                let order = catalog.outline_position(&scene.id).unwrap_or(usize::MAX);
                scenes.push((order, file.path.to_string()));
                canon_paths.extend(canon_for_scene(workspace, &scene.id));
            }
            FileContent::Card(_) => canon_paths.push(file.path.to_string()),
            _ => {}
        }
    }
    scenes.sort();
    for id in &unwritten {
        canon_paths.extend(canon_for_scene(workspace, id));
    }
    canon_paths.sort();
    canon_paths.dedup();
    let outline_path = catalog.outline().map(|file| file.path.to_string());
    let count = |kind: &str| matches.iter().filter(|m| m["kind"] == kind).count();
    let counts = json!({
        "scenes": count("scene"),
        "outline": count("outline"),
        "cards": count("card"),
        "other": count("other"),
    });
    let summary = format!(
        "{} files found: {} scenes, {} outline, {} canon cards, {} other{}",
        matches.len(),
        counts["scenes"],
        counts["outline"],
        counts["cards"],
        counts["other"],
        matches
            .iter()
            .map(|m| format!("\n- {}", m["path"].as_str().unwrap_or("")))
            .collect::<String>()
    );
    Ok(ToolOutput {
        data: json!({
            "query": criteria,
            "matches": matches,
            "scenes": scenes.into_iter().map(|(_, path)| path).collect::<Vec<_>>(),
            "outline_path": outline_path,
            "canon_paths": canon_paths,
            "counts": counts,
        }),
        summary,
        file_refs,
    })
}

/// The outline's spelling of a scene id written in lower case.
fn outline_id(catalog: &crate::index::Catalog, lowered: &str) -> Option<String> {
    let outline = catalog.outline()?.outline()?;
    outline
        .entries
        .iter()
        .find(|entry| entry.scene_id.to_lowercase() == lowered)
        .map(|entry| entry.scene_id.clone())
}

/// A file's id, title and names, as far as it has them.
fn identity(file: &SourceFile) -> (Option<String>, Option<String>, Vec<String>) {
    match &file.content {
        FileContent::Scene(scene) => (Some(scene.id.clone()), scene.title.clone(), Vec::new()),
        FileContent::Card(card) => (
            Some(card.id.clone()),
            Some(card.display_name().to_owned()),
            card.names().map(|name| name.text.clone()).collect(),
        ),
        _ => (None, None, Vec::new()),
    }
}

fn kind_name(file: &SourceFile) -> &'static str {
    match &file.content {
        FileContent::Scene(_) => "scene",
        FileContent::Outline(_) => "outline",
        FileContent::Card(_) => "card",
        FileContent::AntiPatterns(_) | FileContent::Other => "other",
    }
}

/// Whether `needle` occurs in `haystack` with no letter, digit or hyphen on
/// either side.
fn contains_token(haystack: &str, needle: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '-';
    haystack.match_indices(needle).any(|(start, _)| {
        let before = haystack[..start].chars().next_back();
        let after = haystack[start + needle.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::contains_token;

    #[test]
    fn tokens_match_whole_words_only() {
        assert!(contains_token("draft scn-the-gate now", "scn-the-gate"));
        assert!(!contains_token("draft scn-the-gate-2 now", "scn-the-gate"));
        assert!(!contains_token("gatehouse", "gate"));
    }
}
