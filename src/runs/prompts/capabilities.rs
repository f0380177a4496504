//! The model capability matrix (§9.1 of the agent-instruction spec) as data:
//! `prompts/models.json`, shadowed by a `models.json` in the writer's or the
//! project's prompt directory. It maps a model name to its context window,
//! how reliably it follows the XML protocol, and its prompt tier; each tier
//! names its template variant, its token budgets (appendix B) and how many
//! knowledge entries it gets.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::registry::Variant;

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierSpec {
    pub variant: String,
    pub knowledge_entries: usize,
    pub response_reserve: usize,
    #[serde(default)]
    pub budgets: BTreeMap<String, usize>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelCaps {
    pub context_window: usize,
    pub xml_reliability: String,
    #[serde(default)]
    pub instruction_following: Option<String>,
    pub tier: String,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
struct ModelEntry {
    #[serde(rename = "match")]
    pattern: String,
    #[serde(flatten)]
    caps: ModelCaps,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatrixFile {
    #[serde(default)]
    tiers: BTreeMap<String, TierSpec>,
    #[serde(default)]
    default: Option<ModelCaps>,
    #[serde(default)]
    models: Vec<ModelEntry>,
}

/// The merged matrix.
#[derive(Clone, Debug)]
pub struct Capabilities {
    tiers: BTreeMap<String, TierSpec>,
    default: ModelCaps,
    /// Highest layer first, each file's entries in order: first match wins.
    models: Vec<ModelEntry>,
}

/// What the prompt assembler needs to know about one model.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The model asked for, when one is known.
    pub model: Option<String>,
    /// The matrix entry that matched (`None`: the default).
    pub matched: Option<String>,
    pub caps: ModelCaps,
    pub tier: String,
    pub spec: TierSpec,
    pub variant: Variant,
}

impl Profile {
    /// Whether the model needs the XML format restated (§9.3).
    pub fn needs_xml_reminder(&self) -> bool {
        matches!(self.caps.xml_reliability.as_str(), "low" | "medium")
    }

    /// The layer's token budget at this tier (`usize::MAX` when unset).
    pub fn budget(&self, layer: &str) -> usize {
        self.spec.budgets.get(layer).copied().unwrap_or(usize::MAX)
    }

    /// Tokens the prompt may use: the context window less the reply's reserve.
    pub fn prompt_budget(&self, max_tokens: Option<u32>) -> usize {
        let reserve = max_tokens.map_or(self.spec.response_reserve, |max| max as usize);
        self.caps.context_window.saturating_sub(reserve)
    }
}

fn fallback_tier(variant: &str) -> TierSpec {
    TierSpec {
        variant: variant.to_owned(),
        knowledge_entries: 5,
        response_reserve: 2000,
        budgets: BTreeMap::new(),
    }
}

impl Capabilities {
    /// Merges `files` (source, text), lowest layer first. A file that does
    /// not parse is reported and skipped.
    pub fn from_files(files: &[(String, String)], problems: &mut Vec<String>) -> Capabilities {
        let mut tiers = BTreeMap::new();
        let mut default = None;
        let mut models: Vec<ModelEntry> = Vec::new();
        for (source, text) in files {
            let file: MatrixFile = match serde_json::from_str(text) {
                Ok(file) => file,
                Err(error) => {
                    problems.push(format!(
                        "{source}:{}:{}: {error}",
                        error.line(),
                        error.column()
                    ));
                    continue;
                }
            };
            for (name, spec) in file.tiers {
                if Variant::parse(&spec.variant).is_none() {
                    problems.push(format!(
                        "{source}: tiers.{name}.variant is `{}`; expected t1, t3 or t5",
                        spec.variant
                    ));
                    continue;
                }
                tiers.insert(name, spec);
            }
            if file.default.is_some() {
                default = file.default;
            }
            let mut layer = file.models;
            layer.append(&mut models);
            models = layer;
        }
        let default = default.unwrap_or(ModelCaps {
            context_window: 8192,
            xml_reliability: "medium".into(),
            instruction_following: None,
            tier: "medium".into(),
        });
        for entry in models.iter().map(|entry| &entry.caps).chain([&default]) {
            if !tiers.contains_key(&entry.tier) {
                problems.push(format!(
                    "models.json: tier `{}` is not defined under `tiers`",
                    entry.tier
                ));
            }
        }
        Capabilities {
            tiers,
            default,
            models,
        }
    }

    /// The profile of `model` (`None` when the model is not known, as for a
    /// scripted run): the first entry whose `match` is the name or, ending
    /// in `*`, a prefix of it; else the same for the name without a router's
    /// prefix (`openai/gpt-4o` → `gpt-4o`); else the default.
    pub fn profile(&self, model: Option<&str>) -> Profile {
        let find = |name: &str| {
            self.models
                .iter()
                .find(|entry| match entry.pattern.strip_suffix('*') {
                    Some(prefix) => name.starts_with(prefix),
                    None => name == entry.pattern,
                })
        };
        let entry = model.and_then(|model| {
            find(model).or_else(|| model.rsplit_once('/').and_then(|(_, bare)| find(bare)))
        });
        let caps = entry.map_or_else(|| self.default.clone(), |entry| entry.caps.clone());
        self.profile_for_tier(model, entry.map(|e| e.pattern.clone()), caps)
    }

    /// The profile of `model` forced to `tier` (for `control-room prompt --tier`).
    pub fn with_tier(&self, model: Option<&str>, tier: &str) -> Option<Profile> {
        self.tiers.get(tier)?;
        let mut profile = self.profile(model);
        profile.caps.tier = tier.to_owned();
        Some(self.profile_for_tier(model, profile.matched, profile.caps))
    }

    pub fn tier_names(&self) -> impl Iterator<Item = &str> {
        self.tiers.keys().map(String::as_str)
    }

    fn profile_for_tier(
        &self,
        model: Option<&str>,
        matched: Option<String>,
        caps: ModelCaps,
    ) -> Profile {
        let spec = self
            .tiers
            .get(&caps.tier)
            .cloned()
            .unwrap_or_else(|| fallback_tier("t3"));
        let variant = Variant::parse(&spec.variant).unwrap_or(Variant::T3);
        Profile {
            model: model.map(str::to_owned),
            matched,
            tier: caps.tier.clone(),
            caps,
            spec,
            variant,
        }
    }
}
