//! Tests of the output protocol: the reader case by case, prose and paths,
//! reasoning stripped from JSON replies, joins, and random tag soup.

use super::*;

fn action(kind: &str, params: &[(&str, &str)], raw: &str) -> Action {
    Action {
        kind: kind.to_owned(),
        params: params
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect(),
        raw: raw.to_owned(),
    }
}

fn update(target: &str, content: &str) -> ContentUpdate {
    ContentUpdate {
        target: target.to_owned(),
        content: content.to_owned(),
    }
}

/// A reply with only a message.
fn message(text: &str, has_message_tag: bool) -> ParsedReply {
    ParsedReply {
        message: text.to_owned(),
        has_message_tag,
        ..ParsedReply::default()
    }
}

fn warned(mut reply: ParsedReply, warnings: &[&str]) -> ParsedReply {
    reply.warnings = warnings.iter().map(|&warning| warning.to_owned()).collect();
    reply
}

const SPEC_MULTIPLE_TAGS: &str = r#"<thinking>
Writer provided good detail on the midpoint. This resolves the beat_sheet gap.
Should update status and save the decision.
</thinking>

<message>
That's a strong false victory—Elena thinks she's won Marcus's trust, but it's actually a setup. This creates excellent tension for the "Bad Guys Close In" beats.

I'm updating the Beat Sheet with this midpoint.
</message>

<action type="update_status">
  <template>beat_sheet</template>
  <status>in_progress</status>
  <missing>["beat_11", "beat_12", "beat_13"]</missing>
</action>

<action type="save_decision">
  <category>structure</category>
  <key>midpoint_type</key>
  <value>false_victory</value>
</action>
"#;

/// Every case of [`parse`]: a name, the reply, what it must read as.
fn parse_cases() -> Vec<(&'static str, &'static str, ParsedReply)> {
    let mut cases = thinking_cases();
    cases.extend(message_and_action_cases());
    cases.extend(content_update_cases());
    cases.extend(repair_cases());
    cases
}

/// The spec's example and thinking blocks, closed or not.
fn thinking_cases() -> Vec<(&'static str, &'static str, ParsedReply)> {
    vec![
        (
            "spec §5.5 multiple tags per response",
            SPEC_MULTIPLE_TAGS,
            ParsedReply {
                thinking: Some(
                    "Writer provided good detail on the midpoint. This resolves the beat_sheet gap.\nShould update status and save the decision."
                        .into(),
                ),
                message: "That's a strong false victory—Elena thinks she's won Marcus's trust, but it's actually a setup. This creates excellent tension for the \"Bad Guys Close In\" beats.\n\nI'm updating the Beat Sheet with this midpoint.".into(),
                has_message_tag: true,
                actions: vec![
                    action(
                        "update_status",
                        &[
                            ("template", "beat_sheet"),
                            ("status", "in_progress"),
                            ("missing", r#"["beat_11", "beat_12", "beat_13"]"#),
                        ],
                        "<template>beat_sheet</template>\n  <status>in_progress</status>\n  <missing>[\"beat_11\", \"beat_12\", \"beat_13\"]</missing>",
                    ),
                    action(
                        "save_decision",
                        &[("category", "structure"), ("key", "midpoint_type"), ("value", "false_victory")],
                        "<category>structure</category>\n  <key>midpoint_type</key>\n  <value>false_victory</value>",
                    ),
                ],
                content_updates: vec![],
                warnings: vec![],
            },
        ),
        (
            "spec anti-pattern: a tag inside thinking is not parsed",
            "<thinking>I should use <action>...</thinking>\n<message>Noted.</message>",
            ParsedReply {
                thinking: Some("I should use <action>...".into()),
                ..message("Noted.", true)
            },
        ),
        (
            "a whole action inside thinking is not parsed",
            "<thinking>Maybe <action type=\"save_decision\"><key>k</key></action> later</thinking>Fine.",
            ParsedReply {
                thinking: Some("Maybe <action type=\"save_decision\"><key>k</key></action> later".into()),
                ..message("Fine.", false)
            },
        ),
        (
            "unclosed thinking before a message",
            "<thinking>Plan the reply.\n<message>Elena waits.</message>",
            ParsedReply {
                thinking: Some("Plan the reply.".into()),
                ..warned(message("Elena waits.", true), &["unclosed <thinking> was dropped up to <message>"])
            },
        ),
        (
            "unclosed thinking to the end",
            "Hello.\n<THINKING>and then",
            ParsedReply {
                thinking: Some("and then".into()),
                ..warned(message("Hello.", false), &["unclosed <thinking> was dropped to the end of the reply"])
            },
        ),
        (
            "several thinking blocks are joined",
            "<thinking>one</thinking><message>Hi</message><think>two</think>",
            ParsedReply {
                thinking: Some("one\n\ntwo".into()),
                ..message("Hi", true)
            },
        ),
    ]
}

/// Messages and actions, well formed or not.
fn message_and_action_cases() -> Vec<(&'static str, &'static str, ParsedReply)> {
    vec![
        (
            "bare prose",
            "  Elena opened the door.\n\nMarcus was waiting.  \n",
            message("Elena opened the door.\n\nMarcus was waiting.", false),
        ),
        (
            "prose with non-protocol tags",
            "She <em>knew</em>.<br>Then < message nothing.",
            message("She <em>knew</em>.<br>Then < message nothing.", false),
        ),
        (
            "two messages",
            "<message>One.</message>\n<message>\nTwo.\n</message>",
            message("One.\n\nTwo.", true),
        ),
        (
            "case and whitespace in tags",
            "<Message >Hi</MESSAGE >",
            message("Hi", true),
        ),
        (
            "malformed action goes to the end of the message",
            "<message>Saved.</message>\n<action>\n<key>x</key>\n</action>",
            warned(
                message("Saved.\n\n<action>\n<key>x</key>\n</action>", true),
                &["an <action> without a type was skipped"],
            ),
        ),
        (
            "malformed action stays in place without message tags",
            "Before.\n<action kind=\"x\">oops</action>\nAfter.",
            warned(
                message("Before.\n<action kind=\"x\">oops</action>\nAfter.", false),
                &["an <action> without a type was skipped"],
            ),
        ),
        (
            "action with an invalid type",
            "<action type=\"save decision\"><key>k</key></action>",
            warned(
                message(
                    "<action type=\"save decision\"><key>k</key></action>",
                    false,
                ),
                &["an <action> with an invalid type \"save decision\" was skipped"],
            ),
        ),
        (
            "unclosed action before a message",
            "<action type=\"save_decision\"><key>k</key>\n<message>Hi</message>",
            warned(
                message("Hi\n\n<action type=\"save_decision\"><key>k</key>", true),
                &["an unclosed <action type=\"save_decision\"> was skipped"],
            ),
        ),
        (
            "unclosed action before another action",
            "<action type=\"a\"><k>1</k>\n<action type=\"b\"><k>2</k></action>",
            ParsedReply {
                actions: vec![action("b", &[("k", "2")], "<k>2</k>")],
                ..warned(
                    message("<action type=\"a\"><k>1</k>", false),
                    &["an unclosed <action type=\"a\"> was skipped"],
                )
            },
        ),
        (
            "action attributes, single quotes, hyphen, self-closing, case",
            "<message>Ok</message><ACTION Type='save-decision' path=\"a.md\"><Key> k </Key><note><em>x</em></note></Action><action type=advance/>",
            ParsedReply {
                actions: vec![
                    action(
                        "save-decision",
                        &[("path", "a.md"), ("Key", "k"), ("note", "<em>x</em>")],
                        "<Key> k </Key><note><em>x</em></note>",
                    ),
                    action("advance", &[], ""),
                ],
                ..message("Ok", true)
            },
        ),
        (
            "unclosed parameter element",
            "<action type=\"a\"><key>k</key><value>v</action>",
            ParsedReply {
                actions: vec![action("a", &[("key", "k")], "<key>k</key><value>v")],
                ..warned(
                    message("", false),
                    &["an unclosed <value> in <action type=\"a\"> was ignored"],
                )
            },
        ),
        (
            "action inside a closed message",
            "<message>I'll save it. <action type=\"save_decision\"><key>k</key></action> Done.</message>",
            ParsedReply {
                actions: vec![action("save_decision", &[("key", "k")], "<key>k</key>")],
                ..message("I'll save it. Done.", true)
            },
        ),
        (
            "unclosed message up to an action",
            "<message>Hi there\n<action type=\"x\"><k>v</k></action>",
            ParsedReply {
                actions: vec![action("x", &[("k", "v")], "<k>v</k>")],
                ..warned(
                    message("Hi there", true),
                    &["unclosed <message> was taken up to <action>"],
                )
            },
        ),
        (
            "unclosed message to the end",
            "<message>Hi there",
            warned(
                message("Hi there", true),
                &["unclosed <message> was taken to the end of the reply"],
            ),
        ),
    ]
}

/// Content updates, with a target or not, closed or not.
fn content_update_cases() -> Vec<(&'static str, &'static str, ParsedReply)> {
    vec![
        (
            "content update with single quotes",
            "<content_update target='Story/Scenes/SCN-1.md'>\nElena's hand trembled.\n\nShe pushed through.\n</content_update>",
            ParsedReply {
                content_updates: vec![update(
                    "Story/Scenes/SCN-1.md",
                    "Elena's hand trembled.\n\nShe pushed through.",
                )],
                ..message("", false)
            },
        ),
        (
            "content update without a target",
            "Here it is.\n<content_update>\nText.\n</content_update>",
            ParsedReply {
                content_updates: vec![update("", "Text.")],
                ..warned(
                    message("Here it is.", false),
                    &["a <content_update> without a target was kept with an empty target"],
                )
            },
        ),
        (
            "unclosed content update",
            "<message>Draft below.</message>\n<content_update target=\"a.md\">Elena ran.",
            ParsedReply {
                content_updates: vec![update("a.md", "Elena ran.")],
                ..warned(
                    message("Draft below.", true),
                    &[
                        "an unclosed <content_update target=\"a.md\"> was taken to the end of the reply",
                    ],
                )
            },
        ),
    ]
}

/// Reasoning models' tags, stray tags, fences and the joins left where
/// blocks were removed.
fn repair_cases() -> Vec<(&'static str, &'static str, ParsedReply)> {
    vec![
        (
            "think block from a reasoning model",
            "<think>\nThe user wants a scene.\n</think>\n\nElena waited.",
            ParsedReply {
                thinking: Some("The user wants a scene.".into()),
                ..message("Elena waited.", false)
            },
        ),
        (
            "reasoning before a stray </think>",
            "The user wants a scene.\n</think>\n\nElena waited.",
            ParsedReply {
                thinking: Some("The user wants a scene.".into()),
                ..warned(
                    message("Elena waited.", false),
                    &["text before a stray </think> was taken as thinking"],
                )
            },
        ),
        (
            "stray closing tags",
            "Hi</message> there</action>",
            warned(
                message("Hi there", false),
                &[
                    "a stray </message> was dropped",
                    "a stray </action> was dropped",
                ],
            ),
        ),
        (
            "text outside message",
            "Sure!\n<message>Hi</message>",
            warned(message("Hi", true), &["text outside <message> was dropped"]),
        ),
        (
            "fenced reply",
            "```xml\n<message>Hi</message>\n<action type=\"advance\"/>\n```",
            ParsedReply {
                actions: vec![action("advance", &[], "")],
                ..message("Hi", true)
            },
        ),
        (
            "fenced reply after thinking",
            "<think>x</think>\n```\nElena waited.\n```",
            ParsedReply {
                thinking: Some("x".into()),
                ..message("Elena waited.", false)
            },
        ),
        (
            "a python fence is prose",
            "```python\nprint(1)\n```",
            message("```python\nprint(1)\n```", false),
        ),
        (
            "a removed block on its own line leaves no hole",
            "Intro.\n<action type=\"a\"/>\nOutro.\n\n<content_update target=\"x\">y</content_update>\n\nEnd.",
            ParsedReply {
                actions: vec![action("a", &[], "")],
                content_updates: vec![update("x", "y")],
                ..message("Intro.\nOutro.\n\nEnd.", false)
            },
        ),
        (
            "a <message> element inside an action is a parameter",
            "<action type=\"notify\"><message>hello</message></action>",
            ParsedReply {
                actions: vec![action(
                    "notify",
                    &[("message", "hello")],
                    "<message>hello</message>",
                )],
                ..message("", false)
            },
        ),
        (
            "a thinking tag formed by removing a block is scrubbed",
            "<thi<action type=\"a\"/>nk>secret",
            ParsedReply {
                thinking: Some("secret".into()),
                actions: vec![action("a", &[], "")],
                ..warned(
                    message("", false),
                    &["unclosed <think> was dropped to the end of the reply"],
                )
            },
        ),
        ("empty reply", "", ParsedReply::default()),
    ]
}

#[test]
fn parse_reads_each_case_exactly() {
    for (name, input, expected) in parse_cases() {
        assert_eq!(parse(input), expected, "case: {name}");
    }
}

#[test]
fn prose_prefers_content_updates_and_never_thinking() {
    let cases: [(&str, &str); 5] = [
        ("<thinking>t</thinking><message>m</message>", "m"),
        (
            "<message>m</message><content_update target=\"a\">A</content_update><content_update target=\"b\">B</content_update>",
            "A\n\nB",
        ),
        (
            "<content_update target=\"a\"> </content_update>Said.",
            "Said.",
        ),
        ("<think>t</think>Scene.", "Scene."),
        (
            "<content_update target=\"a\"><thinking>t</thinking>A</content_update>",
            "A",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(parse(input).prose(), expected, "input: {input}");
    }
}

#[test]
fn paths_names_targets_and_path_params() {
    let reply = parse(concat!(
        "<content_update target=\"Story/Scenes/SCN-1.md\">x</content_update>",
        "<action type=\"read\" file=\"Story/Canon/elena.md\"><canon>Story/Canon/marcus.md</canon><key>k</key></action>",
        "<action type=\"write\"><PATH>Story/Scenes/SCN-1.md</PATH><target> </target></action>",
        "<content_update>y</content_update>",
    ));
    assert_eq!(
        reply.paths(),
        [
            "Story/Scenes/SCN-1.md",
            "Story/Canon/elena.md",
            "Story/Canon/marcus.md"
        ]
    );
}

#[test]
fn strip_reasoning_cases() {
    let cases: [(&str, &str); 10] = [
        (
            "<think>The scene is fine.</think>{\"pass\":true}",
            "{\"pass\":true}",
        ),
        ("<message>{\"pass\": true}</message>", "{\"pass\": true}"),
        (
            "<think>a</think>\n<message>\n{\"a\":1}\n</message>",
            "{\"a\":1}",
        ),
        (
            "<thinking>hmm [maybe] {not json\n{\"pass\": false, \"findings\": []}",
            "{\"pass\": false, \"findings\": []}",
        ),
        ("Reasoning.\n</think>\n{\"a\":1}", "{\"a\":1}"),
        ("{\"a\":1}", "{\"a\":1}"),
        ("<think>unclosed with no json", ""),
        ("<think>x</think>\n```json\n{}\n```", "```json\n{}\n```"),
        (
            "<think>so [x]\n```json\n{\"a\": [1]}\n```",
            "```json\n{\"a\": [1]}\n```",
        ),
        ("  Just text.  ", "Just text."),
    ];
    for (input, expected) in cases {
        assert_eq!(strip_reasoning(input), expected, "input: {input}");
    }
}

#[test]
fn join_pieces_collapses_only_at_joins() {
    let cases: [(&[&str], &str); 5] = [
        (&["a\n", "\nb"], "a\nb"),
        (&["a\n\n", "\n\n\nb"], "a\n\nb"),
        (&["a ", " b"], "a b"),
        (&["a", " b"], "a b"),
        (&["a\n", "\n    code"], "a\n    code"),
    ];
    for (pieces, expected) in cases {
        assert_eq!(
            join_pieces(pieces.iter().copied()),
            expected,
            "pieces: {pieces:?}"
        );
    }
}

/// A small deterministic generator (xorshift64*), so no new crates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }
}

#[test]
fn random_tag_soup_never_panics_or_leaks_thinking() {
    const FRAGMENTS: &[&str] = &[
        "<thinking>",
        "</thinking>",
        "<think>",
        "</think>",
        "<THINKING >",
        "<thi",
        "nking>",
        "nk>",
        "<thinking",
        "<message>",
        "</message>",
        "<message >",
        "<message/>",
        "<action type=\"a\">",
        "<action type='b-c'/>",
        "<action>",
        "</action>",
        "<action type=\"x y\">",
        "<content_update target='x'>",
        "<content_update>",
        "</content_update>",
        "<k>",
        "</k>",
        "<missing>[1]</missing>",
        "<",
        ">",
        "/",
        "=",
        "\"",
        "'",
        "text",
        " ",
        "\n",
        "\n\n",
        "é",
        "漢字",
        "```",
        "```xml\n",
        "\n```",
        "{",
        "[",
        "<em>",
        "</",
        "<br/>",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let count = rng.below(16);
        let input: String = (0..count)
            .map(|_| FRAGMENTS[rng.below(FRAGMENTS.len())])
            .collect();
        let reply = parse(&input);
        for shown in [reply.prose().to_lowercase(), reply.message.to_lowercase()] {
            assert!(
                !shown.contains("<thinking") && !shown.contains("<think>"),
                "input {input:?} gave {shown:?}"
            );
        }
        let _ = reply.paths();
        let stripped = strip_reasoning(&input).to_lowercase();
        assert!(
            !stripped.contains("<thinking") && !stripped.contains("<think>"),
            "input {input:?} stripped to {stripped:?}"
        );
    }
}
