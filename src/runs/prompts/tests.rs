//! Tests of the prompts: the bundled library, tiers and variants from the
//! capability matrix, the writer's and the project's prompts over the
//! bundled ones, broken prompt files reported, trimming to a small context
//! window, and unknown placeholders. That every step of every bundled recipe
//! assembles is tested with the recipes.

use std::path::Path;

use super::*;

fn step(prompt_type: &str) -> PromptStep<'_> {
    PromptStep {
        step_id: "brief",
        agent_archetype: "planner",
        prompt_type,
    }
}

fn inputs<'a>(
    args: &'a Map<String, Value>,
    slots: Vec<SlotText<'a>>,
    model: Option<&'a str>,
    tier: Option<&'a str>,
) -> PromptInputs<'a> {
    PromptInputs {
        task_description: "Draft SCN-the-gate",
        task_args: args,
        slots,
        model,
        max_tokens: None,
        tier,
        context_window: None,
        chars_per_token: None,
        workspace: None,
        history: &[],
        follow_up: &[],
        packet: None,
        graph: None,
    }
}

fn slot(name: &str, text: &str, kind: SlotKind) -> SlotText<'static> {
    SlotText {
        name: Box::leak(name.to_owned().into_boxed_str()),
        text: text.to_owned(),
        kind,
    }
}

/// Builds `refine_brief` from its outline beat and canon, both pointers:
/// for `model`, or at `tier` where no model is named.
fn refine_brief(prompts: &Prompts, model: Option<&str>, tier: Option<&str>) -> Assembly {
    let args = Map::new();
    prompts
        .build(
            step("refine_brief"),
            &inputs(
                &args,
                vec![
                    slot("outline_beat", "BEAT", SlotKind::Pointer),
                    slot("canon_context", "CANON", SlotKind::Pointer),
                ],
                model,
                tier,
            ),
        )
        .unwrap()
}

/// Builds `check_continuity` for the model `tiny`, with `draft` as the
/// agent's text and `canon` as a pointer that may be trimmed.
fn check_continuity(prompts: &Prompts, draft: &str, canon: &str) -> Result<Assembly, PromptError> {
    let args = Map::new();
    prompts.build(
        step("check_continuity"),
        &inputs(
            &args,
            vec![
                slot("edited_draft", draft, SlotKind::Artifact),
                slot("canon_context", canon, SlotKind::Pointer),
            ],
            Some("tiny"),
            None,
        ),
    )
}

/// The names of the parts an assembly is made of, in order.
fn part_names(assembly: &Assembly) -> Vec<&str> {
    assembly.parts.iter().map(|p| p.name.as_str()).collect()
}

/// Whether a part of the assembly was read from `source`.
fn has_part_from(assembly: &Assembly, source: &str) -> bool {
    assembly.parts.iter().any(|p| p.source == source)
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_bundled_library_loads_without_problems() {
    let prompts = Prompts::bundled();
    assert_eq!(prompts.problems, Vec::<String>::new());
    for layer in [
        "identity",
        "process_map",
        "protocols",
        "protocols_json",
        "protocols_receipt",
    ] {
        assert!(prompts.library.layers.contains_key(layer), "{layer}");
    }
    for mode in ["architect", "voice_calibration", "director", "editor"] {
        assert!(prompts.library.modes.contains_key(mode), "{mode}");
    }
    for (name, entry) in &prompts.library.templates {
        assert!(entry.mode.is_some(), "{name} has no mode");
        assert_eq!(
            entry.output.is_json(),
            entry.schema.is_some(),
            "{name}: a JSON or receipt step has a schema and a prose step none"
        );
    }
}

#[test]
fn tiers_come_from_the_capability_matrix() {
    let prompts = Prompts::bundled();
    let build = |model: Option<&str>| refine_brief(&prompts, model, None);
    let full = build(Some("claude-sonnet-4-5"));
    assert_eq!(
        (full.profile.tier.as_str(), full.variant),
        ("full", Variant::T5)
    );
    assert_eq!(
        part_names(&full),
        [
            "identity",
            "process_map",
            "modes/architect",
            "session_state",
            "protocols",
            "role",
            "template"
        ]
    );
    assert!(has_part_from(&full, "prompts/templates/refine_brief.t5.md"));

    let minimal = build(Some("llama3.2:3b"));
    assert_eq!(
        (minimal.profile.tier.as_str(), minimal.variant),
        ("minimal", Variant::T1)
    );
    // No process map at the minimal tier, and the XML reminder of §9.3.
    assert_eq!(
        part_names(&minimal),
        [
            "identity",
            "modes/architect",
            "session_state",
            "protocols",
            "xml_reminder",
            "role",
            "template"
        ]
    );
    assert!(has_part_from(&minimal, "prompts/identity.t1.md"));
    assert!(minimal.tokens < full.tokens);

    // A router's prefix is ignored; an unknown model gets the default.
    let routed = build(Some("openrouter/anthropic/claude-sonnet-4-5"));
    assert_eq!(routed.profile.tier, "full");
    let unknown = build(Some("my-finetune"));
    assert_eq!(
        (
            unknown.profile.tier.as_str(),
            unknown.profile.matched.as_deref()
        ),
        ("medium", None)
    );
}

#[test]
fn variants_fall_back_to_the_closest_and_null_omits() {
    let file = |name: &str| PromptFile {
        source: name.into(),
        text: name.into(),
    };
    let mut variants = Variants::default();
    variants.set(Variant::T1, Some(file("one")));
    variants.set(Variant::T3, Some(file("three")));
    assert_eq!(variants.pick(Variant::T5).unwrap().1.text, "three");
    assert_eq!(variants.pick(Variant::T1).unwrap().1.text, "one");
    let mut only_small = Variants::default();
    only_small.set(Variant::T1, Some(file("one")));
    assert_eq!(only_small.pick(Variant::T5).unwrap().1.text, "one");
    let mut omitted = Variants::default();
    omitted.set(Variant::T1, None);
    omitted.set(Variant::T3, Some(file("three")));
    assert!(omitted.pick(Variant::T1).is_none());
    assert_eq!(omitted.pick(Variant::T5).unwrap().1.text, "three");
}

#[test]
fn user_and_project_prompts_shadow_the_bundled_ones() {
    let root = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    // The writer's directory replaces the identity at every tier…
    write(user.path(), "identity.md", "USER IDENTITY");
    // …and one variant of a template; the project replaces it again.
    write(
        user.path(),
        "templates/refine_brief.t5.md",
        "USER T5 {{outline_beat}}",
    );
    write(
        root.path(),
        ".control-room/prompts/templates/refine_brief.t5.md",
        "PROJECT T5 {{outline_beat}}",
    );
    // A new prompt type with its registry entry and schema.
    write(
        root.path(),
        ".control-room/prompts/prompts.json",
        r#"{"pipeline_templates": {"rate_tension": {"label": "Rate tension", "mode": "editor", "output": "json", "schema": "schemas/rate_tension.json", "variants": {"t3": "templates/rate_tension.md"}}}}"#,
    );
    write(
        root.path(),
        ".control-room/prompts/templates/rate_tension.md",
        "Rate {{edited_draft}}",
    );
    write(
        root.path(),
        ".control-room/prompts/schemas/rate_tension.json",
        r#"{"type": "object", "required": ["score"]}"#,
    );
    // A project capability matrix entry wins over the bundled one.
    write(
        root.path(),
        ".control-room/prompts/models.json",
        r#"{"models": [{"match": "llama3.2:3b", "context_window": 131072, "xml_reliability": "high", "tier": "full"}]}"#,
    );
    let prompts = Prompts::load_with(root.path(), Some(user.path()));
    assert_eq!(prompts.problems, Vec::<String>::new());
    let assembly = refine_brief(&prompts, Some("llama3.2:3b"), None);
    assert_eq!(assembly.profile.tier, "full");
    assert_eq!(assembly.messages[1].content, "PROJECT T5 BEAT");
    assert!(assembly.messages[0].content.starts_with("USER IDENTITY"));
    // At the minimal tier the user's identity serves too; t3 of the
    // template is still the bundled one.
    let small = refine_brief(&prompts, None, Some("medium"));
    assert!(small.messages[0].content.starts_with("USER IDENTITY"));
    assert!(has_part_from(
        &small,
        "prompts/templates/refine_brief.t3.md"
    ));

    let entry = prompts.library.template("rate_tension").unwrap();
    assert_eq!(entry.output, Output::Json);
    assert_eq!(
        entry.schema.as_ref().unwrap().0,
        ".control-room/prompts/schemas/rate_tension.json"
    );
    assert!(entry.variants.pick(Variant::T5).is_some());
}

#[test]
fn broken_prompt_files_are_reported_by_file_and_line() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        ".control-room/prompts/prompts.json",
        "{\n  \"layers\": {,\n}",
    );
    write(root.path(), ".control-room/prompts/models.json", "[1, 2");
    write(
        root.path(),
        ".control-room/kb/decisions.jsonl",
        "{\"category\": \"character\", \"key\": \"k\", \"value\": \"v\"}\nnot json\n",
    );
    let prompts = Prompts::load_with(root.path(), None);
    assert_eq!(prompts.problems.len(), 3, "{:?}", prompts.problems);
    let places = [
        ".control-room/prompts/prompts.json:2:",
        ".control-room/prompts/models.json:1:",
        ".control-room/kb/decisions.jsonl:2:",
    ];
    for (problem, place) in prompts.problems.iter().zip(places) {
        assert!(problem.starts_with(place), "{:?}", prompts.problems);
    }
    // The bundled prompts still serve, and the good decision is kept.
    assert!(prompts.has("draft_scene"));
    assert_eq!(prompts.decisions.len(), 1);
}

#[test]
fn a_small_context_window_trims_layers_then_tool_summaries_never_agent_text() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        ".control-room/prompts/models.json",
        r#"{"models": [{"match": "tiny", "context_window": 6000, "xml_reliability": "high", "tier": "full"}]}"#,
    );
    let prompts = Prompts::load_with(root.path(), None);
    let canon = "Kael Maren has grey eyes.\n".repeat(300);
    let draft = "The gate stood open. ".repeat(90);
    let assembly = check_continuity(&prompts, &draft, &canon).unwrap();
    assert!(
        assembly.tokens <= assembly.budget,
        "{} > {}",
        assembly.tokens,
        assembly.budget
    );
    assert_eq!(assembly.budget, 6000 - 4000);
    let user = &assembly.messages[1].content;
    assert!(user.contains(draft.trim()), "the agent's text was cut");
    assert!(
        user.contains("characters of this context were cut to fit"),
        "{user}"
    );
    assert!(
        assembly.trimmed.iter().any(|t| t == "the process map"),
        "{:?}",
        assembly.trimmed
    );
    assert!(
        assembly
            .trimmed
            .iter()
            .any(|t| t.ends_with("of `canon_context`")),
        "{:?}",
        assembly.trimmed
    );
    assert!(!assembly.parts.iter().any(|p| p.name == "process_map"));

    // An agent's text that cannot fit fails the step with the figures.
    let error = check_continuity(&prompts, &draft.repeat(20), "short").unwrap_err();
    let PromptError::TooLarge { model, window, .. } = &error else {
        panic!("{error}")
    };
    assert_eq!((model.as_str(), *window), ("tiny", 6000));
    assert!(
        error
            .to_string()
            .contains("choose a model with a larger context window")
    );
}

#[test]
fn an_unknown_placeholder_names_the_template() {
    let prompts = Prompts::bundled();
    let args = Map::new();
    let error = prompts
        .build(
            step("refine_brief"),
            &inputs(
                &args,
                vec![slot("outline_beat", "b", SlotKind::Pointer)],
                None,
                Some("medium"),
            ),
        )
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "prompts/templates/refine_brief.t3.md: placeholder `{{canon_context}}` names nothing this step is given (it is given outline_beat, task.description)"
    );
}

/// The Foreman's prompt at `tier` after `turns` exchanges, in a context
/// window of `window` tokens.
fn foreman(turns: usize, tier: &str, window: Option<u32>) -> Assembly {
    let prompts = Prompts::bundled();
    let history: Vec<Message> = (0..turns)
        .flat_map(|n| {
            [
                Message::user(format!("question {n} {}", "word ".repeat(40))),
                Message::assistant(format!("answer {n} {}", "word ".repeat(40))),
            ]
        })
        .collect();
    let args = Map::new();
    let mut inputs = inputs(
        &args,
        vec![
            slot(
                "actions",
                "- save_decision (category, key, value)",
                SlotKind::Artifact,
            ),
            slot(
                "gate",
                "<gate mode=\"ARCHITECT\" open=\"false\" done_pct=\"75\" leads_to=\"VOICE_CALIBRATION\">\n  <needs>no World Rules (Story/Bible/world-rules.md)</needs>\n</gate>",
                SlotKind::Pointer,
            ),
            slot("message", "What next?", SlotKind::Artifact),
        ],
        None,
        Some(tier),
    );
    inputs.history = &history;
    inputs.context_window = window;
    let step = PromptStep {
        step_id: "turn-9",
        agent_archetype: "foreman",
        prompt_type: "foreman",
    };
    let assembly = prompts.build(step, &inputs).unwrap();
    assert!(
        assembly
            .messages
            .last()
            .unwrap()
            .content
            .ends_with("The writer says:\nWhat next?")
    );
    assembly
}

#[test]
fn the_foremans_history_is_a_sliding_window_by_tier_and_its_oldest_turns_go_first_to_fit() {
    let roles = |assembly: &Assembly| -> Vec<crate::llm::model::Role> {
        assembly
            .messages
            .iter()
            .map(|message| message.role)
            .collect()
    };
    use crate::llm::model::Role::{Assistant, System, User};
    let small = foreman(30, "minimal", None);
    assert_eq!(
        roles(&small),
        [System, User, Assistant, User, Assistant, User]
    );
    assert!(small.messages[1].content.starts_with("question 28 "));
    let large = foreman(30, "full", Some(200_000));
    assert_eq!(large.messages.len(), 2 + 24);
    assert!(large.messages[1].content.starts_with("question 18 "));
    // In a small window the oldest turns are left out before anything else.
    let tight = foreman(30, "full", Some(6_000));
    assert!(
        tight.messages.len() < large.messages.len(),
        "{}",
        tight.messages.len()
    );
    assert_eq!(tight.trimmed[0], "the conversation's oldest turn");
    assert!(
        tight.messages[1].content.starts_with("question "),
        "{:?} {} {}",
        tight.trimmed,
        tight.tokens,
        tight.budget
    );
    assert_eq!(tight.messages[1].role, User);
}

#[test]
fn the_foreman_is_given_its_own_identity_process_map_and_protocol_at_every_tier_never_the_agents() {
    for tier in ["minimal", "medium", "full"] {
        let assembly = foreman(2, tier, None);
        let system = &assembly.messages[0].content;
        for wanted in [
            "You are the Foreman",
            "ARCHITECT",
            "VOICE_CALIBRATION",
            "DIRECTOR",
            "EDITOR",
            "advance_mode",
            "<message>",
            "`<content_update>`",
        ] {
            assert!(
                system.contains(wanted),
                "{tier}: no {wanted:?} in\n{system}"
            );
        }
        // What the gate still needs, by name, at every tier.
        let user = &assembly.messages.last().unwrap().content;
        assert!(
            user.contains("<needs>no World Rules (Story/Bible/world-rules.md)</needs>"),
            "{tier}: {user}"
        );
        // How to remind a writer who skips a phase.
        assert!(
            system.contains("skip") && system.contains("risk"),
            "{tier}: {system}"
        );
        for unwanted in [
            "You are one of the agents",
            "an agent of control-room",
            "a recipe",
            "task packet",
            "Other action types are ignored",
            "for this step",
        ] {
            assert!(
                !system.contains(unwanted),
                "{tier}: {unwanted:?} in\n{system}"
            );
        }
        let names: Vec<&str> = assembly
            .parts
            .iter()
            .map(|part| part.name.as_str())
            .collect();
        assert!(
            names.starts_with(&["foreman_identity", "foreman_process_map"]),
            "{tier}: {names:?}"
        );
        assert!(names.contains(&"foreman_protocols"), "{tier}: {names:?}");
        assert!(
            !names.iter().any(|name| name.starts_with("modes/")),
            "{tier}: {names:?}"
        );
    }
}
