//! Every diagnostic code control-room emits, in one registry: what it says,
//! its default severity, where it appears, and the file that emits it.
//! `control-room explain CODE` prints an entry; `tests/codes.rs` holds the
//! registry to the code (every code the checks, the evidence validator, the
//! recipe validator, the plans, the findings and the knowledge base can
//! emit is here, named in the file given) and to the manuscript format's
//! tables, so a new code cannot be added without its line.

/// Where a code's diagnostics appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// On manuscript files (scenes, the outline, cards, the anti-pattern sheet).
    Manuscript,
    /// On documents with `Evidence:` lines (conference transcripts, notes).
    Evidence,
    /// On agents' findings, anchored in the manuscript.
    Finding,
    /// On a plan's checklist (`plan.md`) open in the editor.
    Plan,
    /// On the knowledge base (`decisions.jsonl`) open in the editor.
    KnowledgeBase,
    /// On project recipe files (`.control-room/recipes/*.json`).
    Recipe,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Manuscript => "manuscript",
            Family::Evidence => "evidence",
            Family::Finding => "finding",
            Family::Plan => "plan",
            Family::KnowledgeBase => "knowledge base",
            Family::Recipe => "recipe",
        }
    }
}

/// One code of the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    pub code: &'static str,
    pub family: Family,
    /// The default severity, as the manuscript format states it.
    pub severity: &'static str,
    /// When it is emitted, in one line.
    pub doc: &'static str,
    /// The file (under `src/`) that emits it.
    pub emitted_by: &'static str,
}

const fn code(
    code: &'static str,
    family: Family,
    severity: &'static str,
    doc: &'static str,
    emitted_by: &'static str,
) -> CodeInfo {
    CodeInfo {
        code,
        family,
        severity,
        doc,
        emitted_by,
    }
}

use Family::*;

/// The registry, in the order the manuscript format lists the codes.
pub const CODES: &[CodeInfo] = &[
    code(
        "front-matter",
        Manuscript,
        "error",
        "front matter is not valid YAML, or a known key has a value of the wrong kind, or it holds more than 10,000 values with its YAML aliases expanded, or a `date`, `born` or `died` is not a day of the calendar",
        "checks/front_matter.rs",
    ),
    code(
        "unknown-reference",
        Manuscript,
        "error",
        "`pov`, `location`, `characters`, `died_in`, who `learns:` a secret or a place in `travel:` names no known character, location or scene",
        "checks/unknown_reference.rs",
    ),
    code(
        "duplicate-id",
        Manuscript,
        "error",
        "two files claim the same scene or card id, or two cards the same name/alias",
        "checks/duplicate_id.rs",
    ),
    code(
        "dead-character",
        Manuscript,
        "error (pov, characters) / warning (prose)",
        "a character whose `status` is dead appears alive in a scene after their `died_in` scene in outline order (not a flashback)",
        "checks/dead_character.rs",
    ),
    code(
        "attribute-mismatch",
        Manuscript,
        "warning",
        "the prose gives a character an `eyes` or `hair` value that contradicts the card",
        "checks/attribute_mismatch.rs",
    ),
    code(
        "name-typo",
        Manuscript,
        "warning",
        "a capitalised word one or two edits from a character or location name or alias, and not an ordinary word",
        "checks/name_typo.rs",
    ),
    code(
        "missing-scene",
        Manuscript,
        "information",
        "the outline lists a scene id that has no file",
        "checks/missing_scene.rs",
    ),
    code(
        "orphan-scene",
        Manuscript,
        "warning",
        "a scene file that the outline does not list",
        "checks/orphan_scene.rs",
    ),
    code(
        "timeline-order",
        Manuscript,
        "warning",
        "a scene's `date` is earlier than the date of a scene before it in outline order, or on the same day its `time` is wholly before that scene's (flashbacks exempt)",
        "checks/timeline_order.rs",
    ),
    code(
        "anti-pattern",
        Manuscript,
        "warning (zero tolerance) / information (deduction)",
        "prose contains a phrase from the anti-pattern sheet",
        "checks/anti_pattern.rs",
    ),
    code(
        "echo",
        Manuscript,
        "hint",
        "the same uncommon word again within `[echo] span` words (default 50) of its use in an earlier sentence of a scene's narration, or the same three-word phrase within four times that; common words, names, dialogue, dialogue tags and `[echo] ignore` never echo",
        "checks/echo.rs",
    ),
    code(
        "unreadable",
        Manuscript,
        "error",
        "a file that cannot be read as text (binary, not UTF-8, over 8 MB), or a `control-room.toml` that does not parse",
        "checks/unreadable.rs",
    ),
    code(
        "too-large",
        Manuscript,
        "information",
        "a file over 1 MiB: kept and editable, its front matter read, but its text (names, prose, headings) not checked",
        "checks/too_large.rs",
    ),
    code(
        "card-spelling",
        Manuscript,
        "information (on published novels it is right about one time in three)",
        "the prose spells a name word one way at least 3 times, more often than the card's spelling, which differs by one or two edits; said once, on the card",
        "checks/card_spelling.rs",
    ),
    code(
        "pov-leak",
        Manuscript,
        "information",
        "in a scene with a `pov`, the narration gives another character's thoughts or feelings directly (\"he felt a stab of fear\" in her point of view); what the point-of-view character perceives or infers is not a leak",
        "checks/pov_leak.rs",
    ),
    code(
        "presence",
        Manuscript,
        "warning (acts unlisted) / information (listed, never named)",
        "a character speaks or acts in a scene's narration (not in dialogue, memory, a dream, a letter or a hypothesis) without being in its `characters` list or its `pov`, and without having arrived (\"came in\", \"arrived\"); or a listed character the scene never names (the point of view aside)",
        "checks/presence.rs",
    ),
    code(
        "two-places",
        Manuscript,
        "warning",
        "a character is present (in `characters` or as `pov`) in two scenes with the same `date` and `time` at different locations (flashbacks exempt)",
        "checks/two_places.rs",
    ),
    code(
        "unknown-speaker",
        Manuscript,
        "information",
        "a line of dialogue attributed to a capitalised name that is on no card, no known word and no near miss of a name (\"…,\" Wren said); \"Create card\" makes its card",
        "checks/unknown_speaker.rs",
    ),
    code(
        "possession",
        Manuscript,
        "warning",
        "an object tracked by scenes' `tracks:` (or a card's `carries:`) is had in the prose (\"Tomas's brass key\", \"Tomas drew the brass key\") after it was lost, destroyed or left somewhere, or by someone other than its holder, in a scene that does not track its change of hands",
        "checks/possession.rs",
    ),
    code(
        "wound",
        Manuscript,
        "warning",
        "a wound tracked with `heals:` (scenes in outline order) is used as if whole before it heals: the character's wounded part put to hard use (\"swung the axe with his left arm\") with no sign of the wound in the sentence",
        "checks/wound.rs",
    ),
    code(
        "secret",
        Manuscript,
        "information",
        "a character speaks (in a line of dialogue they are given by attribution, action beat or turn-taking) a word of a secret tracked by `tracks:` (`secret:`, `words:`, `known_by:`) before the scene where they learn it (`known_by`, or `learns:`), in story time where both scenes are dated; or a `learns:` names a secret no `tracks:` introduces",
        "checks/secret.rs",
    ),
    code(
        "spelling",
        Manuscript,
        "information",
        "a word of a scene's or a card's prose in no dictionary: not in harper's, not ordinary English nor a regular derivation of a known word (\"gaieties\", \"unsubdued\", \"good-natured\"), not one of the manuscript's own words (the cards' names and terms, the writer's dictionary file, `[language] words`); a capitalised word only at a sentence's start and when it is no name the manuscript uses; dialogue's clipped words (\"goin'\") and accented borrowings are the writer's; \"Add to dictionary\" is a fix",
        "checks/spelling.rs",
    ),
    code(
        "grammar",
        Manuscript,
        "information",
        "harper's rules for a novelist find a sound-alike (\"their\" for \"they're\"), a doubled word, a wrong article, a broken idiom or a verb that disagrees in a scene's paragraph; in dialogue only a wrong word; when `[language] grammar` asks for it (`\"open\"`: the scenes open in the editor; `\"all\"`: everywhere), or with `check --grammar`",
        "checks/grammar.rs",
    ),
    code(
        "travel-time",
        Manuscript,
        "warning",
        "a character present in a dated scene (as `pov` or in `characters`) was last, in story time, at another place whose fastest known way here (location cards' `travel:`, through the places between) takes longer than the dates and times of day of the two scenes allow",
        "checks/travel_time.rs",
    ),
    code(
        "lifespan",
        Manuscript,
        "warning",
        "a character is in a scene (as `pov`, in `characters`, speaking or acting in the narration) dated before their card's `born:` or after their death by date (`died:`, or the date of the `died_in` scene); flashbacks are not exempt, and a death `dead-character` reports by outline order is left to it",
        "checks/lifespan.rs",
    ),
    code(
        "story-bible",
        Manuscript,
        "information / warning (once the template's `status:` says complete)",
        "a Story Bible template (`Story/Bible/`: `protagonist.md`, `beat-sheet.md`, `theme.md`, `world-rules.md`) misses a required part (no heading for it, only a placeholder under it, fewer than three world rules), a beat names a scene the outline does not list, the protagonist's `character:` is on no card, or a second file claims a template",
        "checks/story_bible.rs",
    ),
    code(
        "voice-drift",
        Manuscript,
        "information",
        "a scene of at least `[voice] min_words` (300) words whose voice, measured as the gold standard's is (words per sentence of narration, the share of dialogue, figures and verbs of thought per 1,000 words), is further from the voice bundle's gold standard (`Compendium/Voice/gold-standard.md`) than `[voice] drift` (1.0) allows; the message gives the figures",
        "checks/voice_drift.rs",
    ),
    code(
        "pacing-plateau",
        Manuscript,
        "information",
        "health check A1: `[health] plateau_scenes` (4) scenes or more in a row (an outline scene not yet written breaks the row), each of 150 words or more, at one pace and tension (words per sentence of narration within a fifth, dialogue within 10 points, questions and exclamations within 4 a thousand words), at the first scene of the run",
        "health/pacing.rs",
    ),
    code(
        "beat-progress",
        Manuscript,
        "information / warning (once the beat sheet's `status:` says complete)",
        "health check A2: a beat of the beat sheet lands further than `[health] beat_tolerance` (5) points outside the share of the book the 15-beat sheet expects it at, by the words before the scenes it names; judged once every outline scene is written, at the beat's heading",
        "health/beats.rs",
    ),
    code(
        "cast-function",
        Manuscript,
        "information",
        "health check B2, on a character card: no scene names, lists or is told from the character; or a character in a fifth of the scenes (three at least) is not seen, heard or spoken of for more than `[health] cast_gap` (40%) of the book and three scenes (a character whose card says they died: only before their `died_in` scene, never when it does not say where)",
        "health/cast.rs",
    ),
    code(
        "motif-gap",
        Manuscript,
        "information",
        "health check C1, on a motif of the theme's Motifs list (`Story/Bible/theme.md`): its words (in the prose: not in comments, links or code) are in fewer than two scenes, or missing for more than `[health] motif_gap` (40%) of the book (before its first scene, between two, or after its last)",
        "health/layering.rs",
    ),
    code(
        "evidence-missing",
        Evidence,
        "error",
        "a conference reply without an Evidence line (and not `ABSTAIN`)",
        "evidence/mod.rs",
    ),
    code(
        "evidence-multiple",
        Evidence,
        "error",
        "a conference reply with more than one Evidence line",
        "evidence/mod.rs",
    ),
    code(
        "evidence-quote",
        Evidence,
        "error",
        "a quote not found in the file it cites",
        "evidence/mod.rs",
    ),
    code(
        "evidence-receipt",
        Evidence,
        "error",
        "a receipt id that is unknown, of another round, or whose signature does not verify",
        "evidence/mod.rs",
    ),
    code(
        "evidence-stale",
        Evidence,
        "warning",
        "the cited file changed since the receipt's sha256",
        "evidence/mod.rs",
    ),
    code(
        "evidence-source",
        Evidence,
        "error",
        "a transcript reply cites outside its role's sources",
        "evidence/mod.rs",
    ),
    code(
        "evidence-claim",
        Evidence,
        "error",
        "a claim without its quote, location or scope (`missing-quote`, `missing-location`, `missing-scope`)",
        "evidence/mod.rs",
    ),
    code(
        "agent-finding",
        Finding,
        "as the report says",
        "a finding from an agent's report, anchored at the text it quotes; it disappears when that text is gone",
        "runs/findings.rs",
    ),
    code(
        "plan-file",
        Plan,
        "error",
        "the checklist's `plan.json` cannot be read",
        "lsp/plans.rs",
    ),
    code(
        "plan-syntax",
        Plan,
        "error",
        "a line of `plan.md` that cannot be read: a task line, a field or a status the checklist does not know",
        "plan/checked.rs",
    ),
    code(
        "plan-dependency",
        Plan,
        "error",
        "a task waits on itself or on a task the plan does not have, or tasks wait on each other in a circle",
        "plan/checked.rs",
    ),
    code(
        "plan-recipe",
        Plan,
        "error",
        "a task names a recipe no recipe file defines",
        "plan/checked.rs",
    ),
    code(
        "plan-task",
        Plan,
        "error",
        "two tasks share a number",
        "plan/checked.rs",
    ),
    code(
        "plan-needs-scoping",
        Plan,
        "information",
        "no recipe takes the task as worded: the question says what to make clearer",
        "plan/checked.rs",
    ),
    code(
        "decision-contradicts-card",
        KnowledgeBase,
        "warning",
        "a decision about a character gives other eyes or hair, a death or a life, another age, or another value of any other field of the card said plainly (\"his rank is sergeant\" against `rank: captain`) than the card; \"Promote to card\" makes it canon, \"Keep the card\" withdraws it",
        "ide/decisions/mod.rs",
    ),
    code(
        "decision-contradicts-bible",
        KnowledgeBase,
        "warning",
        "a decision makes another character the protagonist than the Story Bible, puts a beat in scenes the beat sheet does not, or counts another number of a thing than the world rule it names; \"Write it into the Story Bible\" makes it canon, \"Keep the Story Bible\" withdraws it",
        "ide/decisions/mod.rs",
    ),
    code(
        "decision-contradicts-fact",
        KnowledgeBase,
        "warning",
        "a decision says otherwise than a promoted decision (a character's eyes, hair, life or age, the protagonist, a beat's scenes, a rule's count), or replaces a promoted decision of its category and key with another value; adopt it in the fact's place, or \"Keep the promoted fact\" withdraws it",
        "ide/decisions/mod.rs",
    ),
    code(
        "unreadable",
        Recipe,
        "error",
        "the file can be read",
        "runs/recipe/rules.rs",
    ),
    code(
        "invalid-json",
        Recipe,
        "error",
        "the file is valid JSON",
        "runs/recipe/rules.rs",
    ),
    code(
        "wrong-type",
        Recipe,
        "error",
        "every value has the type and range its field takes",
        "runs/recipe/rules.rs",
    ),
    code(
        "unknown-field",
        Recipe,
        "error",
        "every field is one the format knows",
        "runs/recipe/rules.rs",
    ),
    code(
        "missing-field",
        Recipe,
        "error",
        "every required field is given",
        "runs/recipe/rules.rs",
    ),
    code(
        "bad-id",
        Recipe,
        "error",
        "recipe ids are lowercase letters, digits and `_`; step ids have no `#` and are not `gates`",
        "runs/recipe/rules.rs",
    ),
    code(
        "bad-pattern",
        Recipe,
        "error",
        "every task pattern is usable",
        "runs/recipe/rules.rs",
    ),
    code(
        "unknown-tool",
        Recipe,
        "error",
        "every phase A step names a known tool",
        "runs/recipe/rules.rs",
    ),
    code(
        "unknown-archetype",
        Recipe,
        "error",
        "every agent step names a known archetype",
        "runs/recipe/rules.rs",
    ),
    code(
        "unknown-slot",
        Recipe,
        "error",
        "every slot read is produced by an earlier step",
        "runs/recipe/rules.rs",
    ),
    code(
        "unknown-prompt-type",
        Recipe,
        "error",
        "every prompt type names a prompt template",
        "runs/recipe/rules.rs",
    ),
    code(
        "unknown-dod-check",
        Recipe,
        "error",
        "every DoD check is a known check",
        "runs/recipe/rules.rs",
    ),
    code(
        "bad-ref",
        Recipe,
        "error",
        "every `$ref` is well formed and names a slot or a task field",
        "runs/recipe/rules.rs",
    ),
    code(
        "unfed-placeholder",
        Recipe,
        "error",
        "every placeholder of a step's template is fed by its input slots or the task",
        "runs/recipe/rules.rs",
    ),
    code(
        "duplicate-step-id",
        Recipe,
        "error",
        "no two steps share an id",
        "runs/recipe/rules.rs",
    ),
    code(
        "duplicate-output-slot",
        Recipe,
        "error",
        "no two steps produce the same slot",
        "runs/recipe/rules.rs",
    ),
    code(
        "bad-slot",
        Recipe,
        "error",
        "output slots are not `task` and have no `#` or `.`",
        "runs/recipe/rules.rs",
    ),
    code(
        "unknown-step",
        Recipe,
        "error",
        "the review block's `after` names a phase B step",
        "runs/recipe/rules.rs",
    ),
    code(
        "review-not-json",
        Recipe,
        "error",
        "the reviewer's template answers JSON",
        "runs/recipe/rules.rs",
    ),
    code(
        "duplicate-rule",
        Recipe,
        "error",
        "no two review rules share an id",
        "runs/recipe/rules.rs",
    ),
    code(
        "duplicate-recipe-id",
        Recipe,
        "error",
        "no two project files define the same recipe id",
        "runs/recipe/rules.rs",
    ),
];

/// Every entry for `code` (`unreadable` is both a manuscript file's and a
/// recipe file's).
pub fn lookup(code: &str) -> impl Iterator<Item = &'static CodeInfo> + '_ {
    CODES.iter().filter(move |info| info.code == code)
}

/// The entry for `code` among `family`'s.
pub fn find(family: Family, code: &str) -> Option<&'static CodeInfo> {
    CODES
        .iter()
        .find(|info| info.family == family && info.code == code)
}
