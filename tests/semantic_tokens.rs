//! Semantic tokens end to end: the real binary over stdio on a copy of the
//! example. Names come coloured by kind (a character, a place), dialogue is
//! marked, Old Tomas is struck through (`deprecated`) after his death in
//! SCN-the-fall and not before; columns are counted in the negotiated
//! encoding (UTF-16 by default, bytes when the client offers UTF-8); a
//! `range` request answers that range; and a card that changes who is dead
//! makes the server ask the editor for its tokens again.

use crate::support::lsp_client;

use std::path::Path;

use lsp_client::{Client, example_copy, position_of, uri};
use serde_json::{Value, json};

/// One decoded token: where, what, and the text it covers.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    line: usize,
    /// In the encoding's units.
    start: usize,
    kind: String,
    modifiers: Vec<String>,
    text: String,
}

impl Token {
    fn dead(&self) -> bool {
        self.modifiers
            .iter()
            .any(|modifier| modifier == "deprecated")
    }
}

/// The tokens of a `semanticTokens` answer, read back against `text` with
/// the server's legend; `utf8` when columns are bytes, else UTF-16 units.
fn decode(answer: &Value, legend: &Value, text: &str, utf8: bool) -> Vec<Token> {
    let data: Vec<usize> = answer["data"]
        .as_array()
        .expect("tokens as numbers")
        .iter()
        .map(|number| number.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(data.len() % 5, 0, "five numbers a token");
    let lines: Vec<&str> = text.split('\n').collect();
    let name = |list: &str, index: usize| legend[list][index].as_str().unwrap().to_owned();
    let (mut line, mut start) = (0, 0);
    let mut tokens = Vec::new();
    for token in data.chunks(5) {
        let [delta_line, delta_start, length, kind, modifiers] = token else {
            unreachable!()
        };
        line += delta_line;
        start = if *delta_line == 0 {
            start + delta_start
        } else {
            *delta_start
        };
        let written = lines[line].trim_end_matches('\r');
        let text = if utf8 {
            written[start..start + length].to_owned()
        } else {
            let units: Vec<u16> = written.encode_utf16().collect();
            String::from_utf16(&units[start..start + length]).unwrap()
        };
        let modifiers = (0..32)
            .filter(|bit| modifiers & (1 << bit) != 0)
            .map(|bit| name("tokenModifiers", bit))
            .collect();
        tokens.push(Token {
            line,
            start,
            kind: name("tokenTypes", *kind),
            modifiers,
            text,
        });
    }
    tokens
}

fn full(client: &mut Client, path: &Path) -> Value {
    client.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri(path)}}),
    )
}

/// The client VS Code and Neovim are, as far as semantic tokens go.
fn capabilities(encodings: &[&str]) -> Value {
    json!({
        "general": {"positionEncodings": encodings},
        "window": {"workDoneProgress": true},
        "workspace": {"semanticTokens": {"refreshSupport": true}},
        "textDocument": {"semanticTokens": {
            "requests": {"full": true, "range": true},
            "tokenTypes": [], "tokenModifiers": [], "formats": ["relative"],
            "multilineTokenSupport": false, "overlappingTokenSupport": false
        }},
    })
}

fn open_with(client: &mut Client, path: &Path, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(path), "languageId": "markdown", "version": 1, "text": text}}),
    );
}

#[test]
fn names_dialogue_and_the_dead_arrive_as_semantic_tokens() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    let init = client.initialize(&root, capabilities(&["utf-16"]));
    let provider = &init["capabilities"]["semanticTokensProvider"];
    let legend = provider["legend"].clone();
    assert_eq!(
        legend["tokenTypes"],
        json!(["character", "place", "dialogue"])
    );
    assert_eq!(legend["tokenModifiers"], json!(["deprecated"]));
    assert_eq!(provider["full"], true);
    assert_eq!(provider["range"], true);
    client.wait_for_index();

    // Before the death (SCN-the-saltmaster, third in the outline): alive.
    let saltmaster = root.join("Story/Scenes/SCN-the-saltmaster.md");
    let text = client.open(&saltmaster, 1);
    let tokens = decode(&full(&mut client, &saltmaster), &legend, &text, false);
    let tomas: Vec<&Token> = tokens.iter().filter(|t| t.text == "Tomas").collect();
    assert!(tomas.len() >= 5, "{tokens:#?}");
    assert!(
        tomas.iter().all(|t| t.kind == "character" && !t.dead()),
        "{tomas:#?}"
    );
    assert!(
        tokens
            .iter()
            .any(|t| t.text == "The Salt Fortress" && t.kind == "place"),
        "the location in the front matter: {tokens:#?}"
    );

    // After it (SCN-the-high-tide): struck through, and only him.
    let high_tide = root.join("Story/Scenes/SCN-the-high-tide.md");
    let text = client.open(&high_tide, 1);
    let tokens = decode(&full(&mut client, &high_tide), &legend, &text, false);
    let tomas = tokens.iter().find(|t| t.text == "Tomas").expect("Tomas");
    assert_eq!(tomas.kind, "character");
    assert!(tomas.dead(), "{tomas:?}");
    assert_eq!(
        json!({"line": tomas.line, "character": tomas.start}),
        position_of(&text, "Tomas said", 0)
    );
    let kael = tokens.iter().find(|t| t.text == "Kael").expect("Kael");
    assert_eq!((kael.kind.as_str(), kael.dead()), ("character", false));
    assert!(
        tokens
            .iter()
            .any(|t| t.text == "the fortress" && t.kind == "place" && !t.dead()),
        "{tokens:#?}"
    );
    assert!(
        tokens.iter().any(|t| t.kind == "dialogue"
            && t.text == "\"Mind the crown, it's rotten on the seaward side,\""),
        "{tokens:#?}"
    );
    let dead: Vec<&str> = tokens
        .iter()
        .filter(|t| t.dead())
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(dead, ["Tomas"]);
    assert!(
        tokens.windows(2).all(|pair| (
            pair[0].line,
            pair[0].start + pair[0].text.encode_utf16().count()
        ) <= (pair[1].line, pair[1].start)),
        "in order, none overlapping"
    );

    // The editor's text, with curly quotes and accents before the names:
    // columns in UTF-16 units; a name in dialogue is the name's, and the
    // dialogue around it is cut in two.
    let vigil = root.join("Story/Scenes/SCN-the-vigil.md");
    let original = std::fs::read_to_string(&vigil).unwrap();
    let text = original.replace(
        "\"I know,\" Iria said.",
        "“Où est-il ?” demanda Iria, à côté de Tomas. “Parti, Kael.”",
    );
    open_with(&mut client, &vigil, &text);
    let tokens = decode(&full(&mut client, &vigil), &legend, &text, false);
    let line: Vec<(&str, usize, &str, bool)> = tokens
        .iter()
        .filter(|t| t.line == position_of(&text, "demanda", 0)["line"])
        .map(|t| (t.text.as_str(), t.start, t.kind.as_str(), t.dead()))
        .collect();
    assert_eq!(
        line,
        [
            ("“Où est-il ?”", 0, "dialogue", false),
            ("Iria", 22, "character", false),
            ("Tomas", 38, "character", true),
            ("“Parti, ", 45, "dialogue", false),
            ("Kael", 53, "character", false),
            (".”", 57, "dialogue", false),
        ]
    );
    let iria = position_of(&text, "Iria, à", 0);
    assert_eq!(iria["character"], 22);

    // A range: that line's tokens only.
    let at = position_of(&text, "“Où", 0);
    let range = client.request(
        "textDocument/semanticTokens/range",
        json!({"textDocument": {"uri": uri(&vigil)},
               "range": {"start": at, "end": {"line": at["line"], "character": 100}}}),
    );
    let in_range = decode(&range, &legend, &text, false);
    assert_eq!(in_range.len(), 6, "{in_range:#?}");
    assert!(in_range.iter().all(|t| t.line == at["line"]));

    // Iria dies in the fall too: the server asks for the tokens again, and
    // she is struck through in the scenes after it.
    let card = root.join("Compendium/Characters/CHAR-iria-vell.md");
    let card_text = client.open(&card, 1);
    let mark = client.seen.len();
    let from = position_of(&card_text, "status: alive", 0);
    let to = json!({"line": from["line"], "character": "status: alive".len()});
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&card), "version": 2},
               "contentChanges": [{"range": {"start": from, "end": to},
                                   "text": "status: dead\ndied_in: SCN-the-fall"}]}),
    );
    if !client.seen[mark..]
        .iter()
        .any(|m| m["method"] == "workspace/semanticTokens/refresh")
    {
        client.wait_for(|m| m["method"] == "workspace/semanticTokens/refresh");
    }
    let tokens = decode(&full(&mut client, &vigil), &legend, &text, false);
    let iria: Vec<bool> = tokens
        .iter()
        .filter(|t| t.text == "Iria")
        .map(Token::dead)
        .collect();
    assert!(
        !iria.is_empty() && iria.iter().all(|dead| *dead),
        "{tokens:#?}"
    );
    client.shutdown();
}

#[test]
fn a_client_that_counts_in_bytes_gets_byte_columns() {
    let (_dir, root) = example_copy();
    let mut client = Client::spawn(&[]);
    let init = client.initialize(&root, capabilities(&["utf-8", "utf-16"]));
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    let legend = init["capabilities"]["semanticTokensProvider"]["legend"].clone();
    client.wait_for_index();
    let high_tide = root.join("Story/Scenes/SCN-the-high-tide.md");
    let text = std::fs::read_to_string(&high_tide)
        .unwrap()
        .replace("\"That's not how he sang it,\"", "“Ce n’est pas ça,”");
    open_with(&mut client, &high_tide, &text);
    let tokens = decode(&full(&mut client, &high_tide), &legend, &text, true);
    let line = position_of(&text, "“Ce n", 0)["line"].as_u64().unwrap() as usize;
    let on_line: Vec<(&str, usize, &str)> = tokens
        .iter()
        .filter(|t| t.line == line)
        .map(|t| (t.text.as_str(), t.start, t.kind.as_str()))
        .collect();
    // “ and ’ are three bytes each, ç two.
    let iria = "“Ce n’est pas ça,” ".len();
    assert_eq!(
        on_line,
        [
            ("“Ce n’est pas ça,”", 0, "dialogue"),
            ("Iria", iria, "character")
        ]
    );
    client.shutdown();
}
