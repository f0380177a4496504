//! Who pronouns mean, read as a reader does: cases, and the memo of a scene typed in held to a fresh reading.

use std::path::Path;

use super::*;
use crate::index::SourceFile;

const KAEL: &str = "---\ntype: character\nname: Kael Maren\naliases: [Kael]\ngender: male\n---\n";
const TOMAS: &str = "---\ntype: character\nname: Tomas\n---\n\nThe old saltmaster. He keeps the lamps; his hands shake.\n";
const IRIA: &str = "---\ntype: character\nname: Iria Vell\naliases: [Iria, Miss Vell]\n---\n";

/// Each narration pronoun of `scene` and the name of the card it means.
fn resolved(scene: &str) -> Vec<(String, Option<String>)> {
    let mut workspace = Workspace::new(Path::new("/nowhere"));
    let paths = workspace.config().paths.clone();
    let files = [
        ("Compendium/Characters/CHAR-kael-maren.md", KAEL),
        ("Compendium/Characters/CHAR-tomas.md", TOMAS),
        ("Compendium/Characters/CHAR-iria-vell.md", IRIA),
        ("Story/Scenes/SCN-one.md", scene),
    ];
    workspace.insert_files(
        files
            .iter()
            .map(|(path, text)| SourceFile::parse((*path).into(), (*text).into(), &paths))
            .collect(),
    );
    let file = workspace.file("Story/Scenes/SCN-one.md").unwrap().clone();
    let prose = file.analyse_prose();
    let referents = Referents::resolve(&workspace, &file, &prose);
    let mut found: Vec<(usize, String, Option<String>)> = referents
        .pronouns
        .iter()
        .map(|(&index, card)| {
            let word = prose.tokens[index].text(&file.text).to_owned();
            let name = card.as_ref().map(|card| {
                let card = workspace.catalog().card(card).unwrap().card().unwrap();
                card.display_name().to_owned()
            });
            (index, word, name)
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|(_, word, name)| (word, name))
        .collect()
}

fn one(word: &str, name: Option<&str>) -> (String, Option<String>) {
    (word.to_owned(), name.map(str::to_owned))
}

#[test]
fn a_pronoun_before_the_one_name_of_its_sentence_means_the_previous_subject() {
    let found = resolved(
        "---\ncharacters: [Kael, Tomas]\n---\n\nTomas stood by the fire. His eyes were grey as he watched Kael.\n",
    );
    assert_eq!(
        found,
        vec![one("His", Some("Tomas")), one("he", Some("Tomas"))]
    );
}

#[test]
fn genders_come_from_the_card_its_titles_or_its_summary() {
    // Tomas is "he" by his summary, Iria "she" by her title "Miss Vell".
    let found = resolved("---\n---\n\nTomas looked at Iria, and her lamp went out. He swore.\n");
    assert_eq!(
        found,
        vec![one("her", Some("Iria Vell")), one("He", Some("Tomas"))]
    );
}

#[test]
fn two_agreeing_names_an_unnamed_person_or_dialogue_resolve_nothing() {
    let found = resolved(
        "---\n---\n\nKael handed Tomas his knife. A man came in. He sat. \"He is late,\" Iria said.\n",
    );
    assert_eq!(found, vec![one("his", None), one("He", None)]);
}

#[test]
fn him_is_never_the_subject_of_its_own_clause_and_a_leading_clause_looks_ahead() {
    let found = resolved(
        "---\n---\n\nKael came in. Tomas greeted him. When she saw the lamp, Iria laughed.\n",
    );
    assert_eq!(
        found,
        vec![
            one("him", Some("Kael Maren")),
            one("she", Some("Iria Vell"))
        ]
    );
}

#[test]
fn the_point_of_view_character_is_the_focus_at_the_start_and_in_first_person() {
    let found =
        resolved("---\npov: Iria\n---\n\n# One\n\nShe climbed the wall. My lamp, I thought.\n");
    assert_eq!(
        found,
        vec![
            one("She", Some("Iria Vell")),
            one("My", Some("Iria Vell")),
            one("I", Some("Iria Vell"))
        ]
    );
}

/// The scene being typed in reads each sentence from the memo when its
/// text, names, genders, point of view and focus are as they were: after
/// every edit (a name, a pronoun's gender, a sentence or heading added
/// or cut, the point of view, a card's gender) it resolves as a fresh
/// reading does.
#[test]
fn a_scene_typed_in_resolves_its_pronouns_from_the_memo_as_afresh() {
    let mut closed = Workspace::new(Path::new("/nowhere"));
    let paths = closed.config().paths.clone();
    let scene_path = "Story/Scenes/SCN-typed.md";
    let card = |path: &str, text: &str| SourceFile::parse(path.into(), text.into(), &paths);
    closed.insert_files(vec![
        card("Compendium/Characters/CHAR-kael-maren.md", KAEL),
        card("Compendium/Characters/CHAR-tomas.md", TOMAS),
        card("Compendium/Characters/CHAR-iria-vell.md", IRIA),
    ]);
    let mut open = closed.clone();
    open.set_typing(Some(scene_path.into()));
    let sentences = [
        "Kael stood by the fire.",
        "His eyes were grey as he watched Tomas.",
        "When Iria came, her hands shook.",
        "She said nothing.",
        "He looked at her and she looked away.",
        "The man at the door coughed; he was cold.",
        "Tomas and Kael walked on.",
        "I saw him there.",
        "“He knows,” said Iria, and she turned.",
        "Then he laughed.",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |below: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % below as u64) as usize
    };
    let mut body: Vec<String> = (0..12)
        .map(|at| sentences[at % sentences.len()].to_owned())
        .collect();
    let mut pov = "Kael";
    for step in 0..150 {
        match next(7) {
            0 => body.insert(
                next(body.len() + 1),
                sentences[next(sentences.len())].to_owned(),
            ),
            1 if body.len() > 1 => {
                body.remove(next(body.len()));
            }
            2 => {
                let at = next(body.len());
                body[at] = body[at].replace("He ", "She ").replace(" he ", " she ");
            }
            3 => {
                let at = next(body.len());
                body[at] = body[at].replace("Kael", "Tomas").replace("Iria", "Kael");
            }
            4 => body.insert(next(body.len() + 1), "\n## Later\n".to_owned()),
            5 => pov = ["Kael", "Iria", "Tomas", "Nobody"][next(4)],
            _ => {
                let gender = ["male", "female", "unknown"][next(3)];
                let tomas =
                    TOMAS.replace("name: Tomas\n", &format!("name: Tomas\ngender: {gender}\n"));
                for workspace in [&mut closed, &mut open] {
                    workspace.insert_file(card("Compendium/Characters/CHAR-tomas.md", &tomas));
                }
            }
        }
        let mut text = format!("---\npov: {pov}\n---\n\n");
        for (at, sentence) in body.iter().enumerate() {
            text.push_str(sentence);
            text.push_str(if at % 3 == 2 { "\n\n" } else { " " });
        }
        for workspace in [&mut closed, &mut open] {
            workspace.insert_file(card(scene_path, &text));
        }
        let resolve = |workspace: &Workspace| {
            let file = workspace.file(scene_path).unwrap().clone();
            Referents::resolve(workspace, &file, &file.analyse_prose())
        };
        let fresh = resolve(&closed);
        assert!(
            fresh.pronouns.values().any(Option::is_some),
            "step {step}: {text}"
        );
        assert_eq!(resolve(&open), fresh, "step {step}: {text}");
    }
}
