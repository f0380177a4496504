//! Which of harper's rules a novelist wants.
//!
//! harper's curated set (over 900 rules) is written for technical prose:
//! it names products, expands "config", wants Oxford commas and shorter
//! sentences. A novel needs the rules that catch what a proofreader
//! catches: a word for its sound-alike ("their" for "they're", "bare in
//! mind"), a doubled word, a wrong article, a broken idiom, a verb that
//! disagrees. Those are [`NOVELIST`], less two whose every finding on
//! fourteen novels read by hand was right English (`ThereToTheir`: "were
//! there worlds", "should there part"; `WereWhere`: "the themes he
//! preferred were the", "were it not for"); `[language] rules` in
//! `control-room.toml` and the editor's `controlRoom.language.rules` turn
//! any of harper's rules on or off by name, the editor's winning.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

/// The rules on by default, by harper's names.
pub const NOVELIST: &[&str] = &[
    "AirToErr",
    "AllReady",
    "AllThough",
    "AltarAlter",
    "AnA",
    "AnAnother",
    "AnotherAn",
    "AtLeasToLeast",
    "AtLestToLeast",
    "BainBane",
    "BareInMind",
    "BareWithMe",
    "BatedBreath",
    "BeckAndCall",
    "BeenThere",
    "BellowBelow",
    "BoarderBorder",
    "ChampAtTheBit",
    "ChockFull",
    "ColdModalTypo",
    "CompulseToCompel",
    "CoursingThroughVeins",
    "CuttingAgeEggcorn",
    "DampSquib",
    "DidPast",
    "DissembleDisassemble",
    "DoToDueTo",
    "DoesOrDose",
    "DontCan",
    "DoubleNegative",
    "EagleEyed",
    "EludedTo",
    "EnMasse",
    "EverEvery",
    "ExitedExcitedContext",
    "FeelFell",
    "FishNorFowl",
    "FlauntForFlout",
    "FleshOutVsFullFledged",
    "FoamAtTheMouth",
    "FootTheBill",
    "FreeRein",
    "GetUsedTo",
    "GoToSleep",
    "GrindToAHalt",
    "HadOf",
    "HavePassed",
    "HeartToHeard",
    "HelpedPast",
    "HitTheNailOnTheHead",
    "HomeInOn",
    "HopHope",
    "HowMach",
    "HungerPang",
    "IAmAgreement",
    "IfWouldve",
    "ItsContraction",
    "ItsPossessive",
    "JustDeserts",
    "LessWorse",
    "LetsConfusion",
    "LikelyHood",
    "LookDownOnesNose",
    "ManagerialReins",
    "ModalOf",
    "Monumentous",
    "MootPoint",
    "MoreBetter",
    "NailOnTheHead",
    "NakedEye",
    "NerveRacking",
    "NervousWreck",
    "NobelNoble",
    "NowWay",
    "OldWivesTale",
    "OnFloor",
    "OneFellSwoop",
    "OnesSelf",
    "PaleByComparison",
    "PassedPast",
    "Payed",
    "PeaceOfMind",
    "PeekBehindTheCurtain",
    "PiqueInterest",
    "PluralWrongWordOfPhrase",
    "PossessiveYour",
    "PrayingMantis",
    "Provocate",
    "QuantifierNumeralConflict",
    "RallyToReally",
    "RealTrouper",
    "RelayOnForRely",
    "RepeatedWords",
    "RiseTheQuestion",
    "RoadMap",
    "RogueRouge",
    "ScapeGoat",
    "SeamToSeem",
    "ShootOneselfInTheFoot",
    "SinceDuration",
    "SneakPeekPreview",
    "SpinalChord",
    "StrikeChord",
    "SufficeItToSay",
    "SummarySummery",
    "SupposedTo",
    "ThatThan",
    "TheMy",
    "TheTheToThatThe",
    "TheWhetherWeather",
    "TheirToThere",
    "TheirToTheyre",
    "Themself",
    "ThenThan",
    "ThesesThese",
    "TheyreConfusions",
    "TheyreToTheir",
    "ThieveNoun",
    "ThingThink",
    "ThoughThought",
    "ThrowBabyWithBathwater",
    "ToLoseTooLoose",
    "ToTheMannerBorn",
    "ToTo",
    "ToTwoToo",
    "TongueInCheek",
    "TooTo",
    "ToteTout",
    "TransposedSpace",
    "TuffEnough",
    "UseToUsedTo",
    "WaistWaste",
    "WasAloud",
    "WhetYourAppetite",
    "WillGonna",
    "WinPrize",
    "WokVerbTypo",
    "WorseOrWorst",
    "WreakHavoc",
    "WroteToRote",
    "WroughtIron",
    "YeaToYeah",
    "YehToYeah",
];

/// The rules in force: the novelist's set, with the writer's choices.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Rules turned on or off by name, over [`NOVELIST`].
    pub overrides: BTreeMap<String, bool>,
}

impl Rules {
    /// The configuration's choices, then the editor's over them.
    pub fn new(configured: &BTreeMap<String, bool>, editor: &BTreeMap<String, bool>) -> Rules {
        let mut overrides = configured.clone();
        overrides.extend(editor.iter().map(|(rule, on)| (rule.clone(), *on)));
        Rules { overrides }
    }

    /// Whether the rule named `rule` is on.
    pub fn is_on(&self, rule: &str) -> bool {
        self.overrides
            .get(rule)
            .copied()
            .unwrap_or_else(|| NOVELIST.binary_search(&rule).is_ok())
    }

    /// A hash of the choices, for the caches of findings.
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = rustc_hash::FxHasher::default();
        self.hash(&mut hasher);
        hasher.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_novelist_s_rules_are_sorted_so_they_can_be_searched() {
        assert!(NOVELIST.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn the_editor_s_choice_wins_over_the_configuration_s() {
        let configured = BTreeMap::from([("RepeatedWords".to_owned(), false)]);
        let editor = BTreeMap::from([
            ("RepeatedWords".to_owned(), true),
            ("OxfordComma".to_owned(), true),
            ("AnA".to_owned(), false),
        ]);
        assert!(!Rules::new(&configured, &BTreeMap::new()).is_on("RepeatedWords"));
        let rules = Rules::new(&configured, &editor);
        assert!(rules.is_on("RepeatedWords"));
        assert!(rules.is_on("OxfordComma"));
        assert!(!rules.is_on("AnA"));
        assert!(rules.is_on("ItsContraction"));
        assert!(!rules.is_on("LongSentences"));
    }
}
