//! Recall and precision of the continuity checks on planted errors in real
//! prose: copies of the bundled example and of Pride and Prejudice, each with
//! errors inserted by hand, and the key of what each must raise.
//!
//! A copy is checked before and after planting (`control-room check
//! --format json`); what planting adds is scored against the key, per code:
//! a diagnostic the key does not hold is a false alarm, a key entry nothing
//! matches is a miss. The table (see it with `cargo test --test integration planted:: --
//! --nocapture`) is the one the notes quote; the test fails on any miss or
//! false alarm.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// A change to one file of the copy: `find` replaced by `replace` (once), or
/// `replace` appended when `find` is empty (to a new file when there is none).
struct Plant {
    file: &'static str,
    find: &'static str,
    replace: &'static str,
}

/// A diagnostic the plants must raise: its file, code, and text on its line.
struct Expect {
    file: &'static str,
    code: &'static str,
    line_has: &'static str,
}

/// One diagnostic: path, code, and the text of its first line.
type Found = (String, String, String);

/// The new checks and the one whose owner resolution changed.
const SCORED: &[&str] = &[
    "attribute-mismatch",
    "card-spelling",
    "pov-leak",
    "presence",
    "two-places",
    "unknown-speaker",
    "possession",
    "wound",
    "secret",
    "travel-time",
    "lifespan",
    "story-bible",
    "voice-drift",
];

fn check(root: &Path) -> BTreeSet<Found> {
    let output = Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["check", "--format", "json"])
        .arg(root)
        .output()
        .expect("control-room runs");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "check printed no JSON ({error}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let mut found = BTreeSet::new();
    for diagnostic in report["diagnostics"].as_array().expect("a list") {
        let code = diagnostic["code"].as_str().unwrap_or_default();
        if !SCORED.contains(&code) {
            continue;
        }
        let path = diagnostic["path"].as_str().unwrap_or_default().to_owned();
        let line = diagnostic["range"]["start"]["line"]
            .as_u64()
            .unwrap_or_default() as usize;
        let text = std::fs::read_to_string(root.join(&path)).unwrap_or_default();
        let line_text = text.lines().nth(line).unwrap_or_default().to_owned();
        found.insert((path, code.to_owned(), line_text));
    }
    found
}

fn plant(root: &Path, plants: &[Plant]) {
    for plant in plants {
        let path = root.join(plant.file);
        let text = if plant.find.is_empty() && !path.exists() {
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("a new folder");
            String::new()
        } else {
            std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", plant.file))
        };
        let planted = if plant.find.is_empty() {
            format!("{}\n{}\n", text.trim_end(), plant.replace)
        } else {
            assert!(
                text.contains(plant.find),
                "{} no longer holds {:?}",
                plant.file,
                plant.find
            );
            text.replacen(plant.find, plant.replace, 1)
        };
        std::fs::write(&path, planted).expect("the copy is writable");
    }
}

/// Per code: (expected, found, true positives).
type Score = BTreeMap<String, (usize, usize, usize)>;

fn score(corpus: &str, plants: &[Plant], key: &[Expect], table: &mut Score) -> Vec<String> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(corpus);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("copy");
    support::copy_tree(&source, &root);
    // Grammar is not scored here.
    support::grammar_off(&root);
    let before = check(&root);
    plant(&root, plants);
    let after = check(&root);
    let added: Vec<&Found> = after.difference(&before).collect();
    let mut problems = Vec::new();
    let matches = |expect: &Expect, found: &Found| {
        found.0 == expect.file && found.1 == expect.code && found.2.contains(expect.line_has)
    };
    for expect in key {
        let entry = table.entry(expect.code.to_owned()).or_default();
        entry.0 += 1;
        if added.iter().any(|found| matches(expect, found)) {
            entry.2 += 1;
        } else {
            problems.push(format!(
                "{corpus}: MISS {} {} | {}",
                expect.file, expect.code, expect.line_has
            ));
        }
    }
    for found in &added {
        table.entry(found.1.clone()).or_default().1 += 1;
        if !key.iter().any(|expect| matches(expect, found)) {
            problems.push(format!(
                "{corpus}: FALSE ALARM {} {} | {}",
                found.0, found.1, found.2
            ));
        }
    }
    problems
}

const EXAMPLE_PLANTS: &[Plant] = &[
    // Across sentences: "His" is Kael, the subject before it (grey eyes).
    Plant {
        file: "Story/Scenes/SCN-the-saltmaster.md",
        find: "",
        replace: "\nKael turned back to the stone. His blue eyes stung with the salt.",
    },
    Plant {
        file: "Story/Scenes/SCN-the-vigil.md",
        find: "",
        replace: "\nIria felt a stab of fear as the lamp guttered.\n\n\"The tide is turning,\" the Commander said from the stair.",
    },
    // Two scenes at the same day and time in two places.
    Plant {
        file: "Story/Scenes/SCN-the-saltmaster.md",
        find: "date: 1203-04-13",
        replace: "date: 1203-04-13\ntime: dusk",
    },
    Plant {
        file: "Story/Scenes/SCN-the-vigil.md",
        find: "location: The Salt Fortress\n",
        replace: "location: The Glass Flats\ntime: Dusk\n",
    },
    Plant {
        file: "Story/Scenes/SCN-the-high-tide.md",
        find: "",
        replace: "\n\"Hold fast!\" Rhys shouted from the wall.",
    },
    // The card spells the Commander otherwise than the whole book (and the
    // scenes' lists follow the card).
    Plant {
        file: "Compendium/Characters/CHAR-ysolde-harrow.md",
        find: "name: Ysolde Harrow\naliases: [Ysolde,",
        replace: "name: Ysolda Harrow\naliases: [Ysolda,",
    },
    Plant {
        file: "Story/Scenes/SCN-the-gate.md",
        find: "characters: [Iria, Kael, Ysolde]",
        replace: "characters: [Iria, Kael, Ysolda]",
    },
    Plant {
        file: "Story/Scenes/SCN-the-fall.md",
        find: "characters: [Kael, Tomas, Iria, Ysolde]",
        replace: "characters: [Kael, Tomas, Iria, Ysolda]",
    },
    Plant {
        file: "Story/Scenes/SCN-the-high-tide.md",
        find: "characters: [Kael, Iria, Ysolde]",
        replace: "characters: [Kael, Iria, Ysolda]",
    },
    // Kael carries the ward-lantern; the Commander takes it.
    Plant {
        file: "Compendium/Characters/CHAR-kael-maren.md",
        find: "status: alive",
        replace: "status: alive\ncarries: [the ward-lantern]",
    },
    Plant {
        file: "Story/Scenes/SCN-the-gate.md",
        find: "",
        replace: "\nThe Commander took the ward-lantern from the hook and held it up.",
    },
    // Kael's left hand is hurt in "The Saltmaster" and heals two scenes later.
    Plant {
        file: "Story/Scenes/SCN-the-saltmaster.md",
        find: "date: 1203-04-13",
        replace: "date: 1203-04-13\ntracks:\n  - wound: left hand\n    character: Kael\n    heals: 2",
    },
    Plant {
        file: "Story/Scenes/SCN-the-fall.md",
        find: "",
        replace: "\nKael caught the rope with his left hand and hauled.",
    },
    // Tomas and Kael know the seventh stone is failing; Iria is never told.
    Plant {
        file: "Story/Scenes/SCN-the-saltmaster.md",
        find: "    heals: 2",
        replace: "    heals: 2\n  - secret: the seventh stone is failing\n    words: [failing]\n    known_by: [Tomas, Kael]",
    },
    Plant {
        file: "Story/Scenes/SCN-the-vigil.md",
        find: "",
        replace: "\n\"The seventh stone is failing,\" Iria said.",
    },
];

/// The story clock: the flats are four hours from the fortress; Kael and
/// Iria reach the fortress half an hour after nightfall on the flats, and
/// the Commander, dead by her card's date, keeps the high tide.
const CLOCK_PLANTS: &[Plant] = &[
    Plant {
        file: "Story/Scenes/SCN-the-arrival.md",
        find: "date: 1203-04-12",
        replace: "date: 1203-04-12\ntime: 21:00",
    },
    Plant {
        file: "Story/Scenes/SCN-the-gate.md",
        find: "date: 1203-04-12",
        replace: "date: 1203-04-12\ntime: 21:30",
    },
    Plant {
        file: "Compendium/Characters/CHAR-ysolde-harrow.md",
        find: "status: alive",
        replace: "status: alive\ndied: 1203-04-15",
    },
];

const CLOCK_KEY: &[Expect] = &[
    Expect {
        file: "Story/Scenes/SCN-the-gate.md",
        code: "travel-time",
        line_has: "pov: Iria Vell",
    },
    Expect {
        file: "Story/Scenes/SCN-the-gate.md",
        code: "travel-time",
        line_has: "characters: [Iria, Kael, Ysolde]",
    },
    Expect {
        file: "Story/Scenes/SCN-the-high-tide.md",
        code: "lifespan",
        line_has: "characters: [Kael, Iria, Ysolde]",
    },
];

/// The Story Bible: the theme's statement left to be decided though the
/// theme says it is complete, and a beat pointing at a scene the outline
/// dropped.
const BIBLE_PLANTS: &[Plant] = &[
    Plant {
        file: "Story/Bible/theme.md",
        find: "What we guard alone we lose; what we let others share the weight of can be held.",
        replace: "TBD",
    },
    Plant {
        file: "Story/Bible/beat-sheet.md",
        find: "The lamp gutters on the wall and Kael believes the stone will go: SCN-the-vigil.",
        replace: "The lamp gutters on the wall and Kael believes the stone will go: SCN-the-long-night.",
    },
];

const BIBLE_KEY: &[Expect] = &[
    Expect {
        file: "Story/Bible/theme.md",
        code: "story-bible",
        line_has: "## Theme Statement",
    },
    Expect {
        file: "Story/Bible/beat-sheet.md",
        code: "story-bible",
        line_has: "SCN-the-long-night",
    },
];

/// The voice bundle's gold standard, from the opening of "The Gate", and a
/// page of another voice (long sentences, a figure in each) in "High Tide".
const VOICE_PLANTS: &[Plant] = &[
    Plant {
        file: "Compendium/Voice/gold-standard.md",
        find: "",
        replace: "---\nlocked: true\n---\n\n# Voice gold standard\n\n## Passage\n\n\
The bar on the great gate was older than the fortress, people said, and heavier than sense. \
Iria put her shoulder to it and it did not move. She thought of the Commander asleep in the \
tower with the keys on a cord around her neck, and put her shoulder to it again.\n\n\
It gave with a groan that must have carried to the sea-wall. She hauled the wicket open a \
hand's width.\n\n\"Quickly,\" she said. \"Before I change my mind.\"\n\n\
The Warden turned sideways and came through. He was taller than he had looked from above, \
and thinner, with black hair plastered flat by the wind. Salt had dried in the creases of his \
coat, and he smelled of the road. In the lamplight Kael's blue eyes looked sore and tired, as if \
he had not shut them since the ninth waystone.\n\n\"Thank you,\" Kael said.\n\n\
He told her. The ward-stone split down its face. The lantern on it guttering out. The tide that \
had come in over the flats at midnight and had not gone out again, and the shapes standing in \
the shallows, patient as herons, all of them facing inland.\n",
    },
    Plant {
        file: "Story/Scenes/SCN-the-high-tide.md",
        find: "",
        replace: "The water that night lay like a sheet of hammered pewter across the whole width of the \
flats, and the light upon it moved as if some great slow creature breathed beneath it, turning \
in its sleep like a child in a fever, dreaming of the drowned bells of a town the sea had taken \
long before anyone now living had been born, while the lamps along the wall trembled like the \
last coals of a fire that no one had the heart to tend, and the boats rocked as though in answer \
to a music only they could hear, a slow hymn that rose like smoke from the stones and sank again \
like a stone into the dark, as if the whole fortress were a ship that had slipped its moorings \
and drifted, like a dream, out upon a sea that had no farther shore.",
    },
];

const VOICE_KEY: &[Expect] = &[Expect {
    file: "Story/Scenes/SCN-the-high-tide.md",
    code: "voice-drift",
    line_has: "# High Tide",
}];

const EXAMPLE_KEY: &[Expect] = &[
    Expect {
        file: "Story/Scenes/SCN-the-saltmaster.md",
        code: "attribute-mismatch",
        line_has: "His blue eyes stung",
    },
    Expect {
        file: "Story/Scenes/SCN-the-vigil.md",
        code: "pov-leak",
        line_has: "Iria felt a stab of fear",
    },
    Expect {
        file: "Story/Scenes/SCN-the-vigil.md",
        code: "presence",
        line_has: "the Commander said from the stair",
    },
    Expect {
        file: "Story/Scenes/SCN-the-vigil.md",
        code: "two-places",
        line_has: "pov: Kael Maren",
    },
    Expect {
        file: "Story/Scenes/SCN-the-vigil.md",
        code: "two-places",
        line_has: "characters: [Kael, Iria]",
    },
    Expect {
        file: "Story/Scenes/SCN-the-saltmaster.md",
        code: "two-places",
        line_has: "pov: Kael Maren",
    },
    Expect {
        file: "Story/Scenes/SCN-the-saltmaster.md",
        code: "two-places",
        line_has: "characters: [Kael, Tomas, Iria]",
    },
    Expect {
        file: "Story/Scenes/SCN-the-high-tide.md",
        code: "unknown-speaker",
        line_has: "Rhys shouted",
    },
    Expect {
        file: "Compendium/Characters/CHAR-ysolde-harrow.md",
        code: "card-spelling",
        line_has: "name: Ysolda Harrow",
    },
    Expect {
        file: "Story/Scenes/SCN-the-gate.md",
        code: "possession",
        line_has: "The Commander took the ward-lantern",
    },
    Expect {
        file: "Story/Scenes/SCN-the-fall.md",
        code: "wound",
        line_has: "with his left hand and hauled",
    },
    Expect {
        file: "Story/Scenes/SCN-the-vigil.md",
        code: "secret",
        line_has: "The seventh stone is failing,\" Iria said.",
    },
];

const NOVEL_PLANTS: &[Plant] = &[
    Plant {
        file: "Compendium/Characters/CHAR-charlotte-lucas.md",
        find: "name: Charlotte Lucas\naliases: [Charlotte,",
        replace: "name: Charlotta Lucas\naliases: [Charlotta,",
    },
    // Chapter 1 told from Elizabeth's point of view, listing only her and her mother.
    Plant {
        file: "Story/Scenes/SCN-chapter-01.md",
        find: "chapter: 1\n",
        replace: "chapter: 1\npov: Elizabeth Bennet\ncharacters: [Elizabeth Bennet, Mrs. Bennet]\n",
    },
    Plant {
        file: "Story/Scenes/SCN-chapter-01.md",
        find: "",
        replace: "\nMr.\u{a0}Bennet felt a pang of guilt, and went back to his book.",
    },
    Plant {
        file: "Story/Scenes/SCN-chapter-02.md",
        find: "“But you forget, mama,” said Elizabeth,",
        replace: "“But you forget, mama,” said Lavinia,",
    },
    Plant {
        file: "Story/Scenes/SCN-chapter-06.md",
        find: "",
        replace: "\nElizabeth looked up from her work. Her blue eyes were bright with amusement.",
    },
];

const NOVEL_KEY: &[Expect] = &[
    Expect {
        file: "Compendium/Characters/CHAR-charlotte-lucas.md",
        code: "card-spelling",
        line_has: "name: Charlotta Lucas",
    },
    Expect {
        file: "Story/Scenes/SCN-chapter-01.md",
        code: "pov-leak",
        line_has: "felt a pang of guilt",
    },
    Expect {
        file: "Story/Scenes/SCN-chapter-01.md",
        code: "presence",
        line_has: "Bennet replied",
    },
    // Mrs. Bennet speaks all through chapter 1 as "his lady" and "his wife",
    // never by name: listed, never named.
    Expect {
        file: "Story/Scenes/SCN-chapter-01.md",
        code: "presence",
        line_has: "characters: [Elizabeth Bennet, Mrs. Bennet]",
    },
    Expect {
        file: "Story/Scenes/SCN-chapter-02.md",
        code: "unknown-speaker",
        line_has: "said Lavinia",
    },
    Expect {
        file: "Story/Scenes/SCN-chapter-06.md",
        code: "attribute-mismatch",
        line_has: "Her blue eyes were bright",
    },
];

#[test]
fn planted_errors_in_the_example_and_the_novel_are_found_and_nothing_else() {
    let mut table = Score::new();
    let mut problems = score(
        "examples/salt-road",
        EXAMPLE_PLANTS,
        EXAMPLE_KEY,
        &mut table,
    );
    problems.extend(score(
        "examples/salt-road",
        CLOCK_PLANTS,
        CLOCK_KEY,
        &mut table,
    ));
    problems.extend(score(
        "examples/salt-road",
        BIBLE_PLANTS,
        BIBLE_KEY,
        &mut table,
    ));
    problems.extend(score(
        "examples/salt-road",
        VOICE_PLANTS,
        VOICE_KEY,
        &mut table,
    ));
    problems.extend(score(
        "tests/corpora/pride-and-prejudice",
        NOVEL_PLANTS,
        NOVEL_KEY,
        &mut table,
    ));
    println!("| code | planted | raised | found | recall | precision |");
    println!("|---|---|---|---|---|---|");
    for (code, (expected, found, hits)) in &table {
        let ratio = |part: usize, whole: usize| {
            if whole == 0 {
                "n/a".to_owned()
            } else {
                format!("{:.2}", part as f64 / whole as f64)
            }
        };
        println!(
            "| {code} | {expected} | {found} | {hits} | {} | {} |",
            ratio(*hits, *expected),
            ratio(*hits, *found)
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
