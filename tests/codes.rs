//! The registry of diagnostic codes (`control_room::codes`) is complete and
//! true: every code the checks, the evidence validator, the recipe
//! validator, the plans, the findings and the knowledge base emit has its
//! entry, the file an entry names does emit it, and the manuscript format's
//! tables list exactly the registry's codes with its severities.

use std::collections::BTreeSet;
use std::path::Path;

use control_room::codes::{CODES, Family};

fn source(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("{}: {error}", full.display()))
}

fn family(family: Family) -> BTreeSet<&'static str> {
    CODES
        .iter()
        .filter(|info| info.family == family)
        .map(|info| info.code)
        .collect()
}

#[test]
fn every_code_the_product_emits_is_in_the_registry() {
    let checks: BTreeSet<&str> = control_room::checks::Code::ALL
        .iter()
        .map(|code| code.as_str())
        .collect();
    assert_eq!(checks, family(Family::Manuscript));
    let evidence: BTreeSet<&str> = control_room::evidence::Code::ALL
        .iter()
        .map(|code| code.as_str())
        .collect();
    assert_eq!(evidence, family(Family::Evidence));
    let recipes: BTreeSet<&str> = control_room::runs::recipe::RecipeRule::ALL
        .iter()
        .map(|rule| rule.code())
        .collect();
    assert_eq!(recipes, family(Family::Recipe));
    let mut plans: BTreeSet<&str> = control_room::plan::checked::PLAN_CODES
        .into_iter()
        .collect();
    plans.insert("plan-file");
    assert_eq!(plans, family(Family::Plan));
    assert_eq!(
        family(Family::Finding),
        BTreeSet::from([control_room::runs::findings::CODE])
    );
    assert_eq!(
        family(Family::KnowledgeBase),
        BTreeSet::from([
            control_room::ide::CONTRADICTS_CARD,
            control_room::ide::CONTRADICTS_BIBLE,
            control_room::ide::CONTRADICTS_FACT,
        ])
    );
    // A family's codes are unique, and every entry says something.
    for info in CODES {
        assert_eq!(
            CODES
                .iter()
                .filter(|other| other.family == info.family && other.code == info.code)
                .count(),
            1,
            "{} twice",
            info.code
        );
        assert!(
            !info.doc.is_empty() && !info.severity.is_empty(),
            "{info:?}"
        );
    }
}

/// `front-matter` as its variant, `FrontMatter`.
fn variant(code: &str) -> String {
    code.split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().collect::<String>() + chars.as_str()
            })
        })
        .collect()
}

#[test]
fn the_file_an_entry_names_emits_its_code() {
    for info in CODES {
        let text = source(info.emitted_by);
        // The checks name their code by its variant.
        let named = info.family == Family::Manuscript
            && text.contains(&format!("Code::{}", variant(info.code)));
        assert!(
            named || text.contains(&format!("\"{}\"", info.code)),
            "src/{} does not emit `{}`",
            info.emitted_by,
            info.code
        );
    }
}

/// The rows of the Markdown table whose header starts with `header`:
/// (code, the last column).
fn table(text: &str, header: &str) -> Vec<(String, String)> {
    let start = text
        .find(header)
        .unwrap_or_else(|| panic!("no table `{header}`"));
    text[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            (
                cells[0].trim().trim_matches('`').to_owned(),
                cells.last().unwrap().trim().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_manuscript_format_lists_the_registry() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/manuscript-format.md"),
    )
    .unwrap();
    let codes = table(&doc, "| code | when | default severity |");
    let expected: Vec<(String, String)> = CODES
        .iter()
        .filter(|info| info.family != Family::Recipe)
        .map(|info| (info.code.to_owned(), info.severity.to_owned()))
        .collect();
    assert_eq!(codes, expected);
    let rules = table(&doc, "| code | the recipe must hold to |");
    let expected: Vec<(String, String)> = CODES
        .iter()
        .filter(|info| info.family == Family::Recipe)
        .map(|info| (info.code.to_owned(), info.doc.to_owned()))
        .collect();
    assert_eq!(rules, expected);
}

#[test]
fn explain_prints_a_codes_line_and_refuses_an_unknown_code() {
    let explain = |code: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
            .args(["explain", code])
            .output()
            .unwrap()
    };
    let output = explain("dead-character");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with("dead-character (manuscript diagnostics, default error (pov, characters) / warning (prose))\n"),
        "{text}"
    );
    assert!(
        text.contains("emitted by src/checks/dead_character.rs"),
        "{text}"
    );
    // `unreadable` is a manuscript file's and a recipe file's.
    let text = String::from_utf8(explain("unreadable").stdout).unwrap();
    assert_eq!(text.matches("unreadable (").count(), 2, "{text}");
    let unknown = explain("no-such-code");
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8(unknown.stderr)
            .unwrap()
            .contains("the codes are front-matter")
    );
}
