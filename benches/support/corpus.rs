//! Deterministic generator of synthetic fiction-manuscript workspaces for benchmarks.
//!
//! A self-contained, std-only port of `gen_corpus.py` (a Python generator kept with the
//! shared corpora, which clones of this repository do not have), so benchmarks can build
//! large manuscripts anywhere without Python. The output has the same shape and statistics as the Python
//! generator's, but not the same bytes: the random streams differ.
//!
//! Layout written under the output folder:
//!
//! ```text
//! Story/SCN-outline.md                 "## Chapter N" headings, scenes as
//!                                      "- SCN-<slug>: <one-line beat>"
//! Story/Scenes/SCN-<slug>.md           YAML front matter (title, pov, location,
//!                                      characters, chapter, order) + ~W words of prose
//! Compendium/Characters/CHAR-<slug>.md canon cards (type: character, name, aliases,
//!                                      status, eyes, hair, age, role, occupation)
//!                                      + a few paragraphs
//! Compendium/Locations/LOC-<slug>.md   location cards (type: location, name, aliases,
//!                                      kind, region) + a few paragraphs
//! ```
//!
//! Every file draws from its own PRNG seeded from `(seed, file kind, index)`, so the
//! output is byte-identical for the same [`CorpusSpec`], and scene `i` is the same no
//! matter how many scenes are generated (only the chapter split in the outline and
//! front matter depends on earlier scenes).
//!
//! Prose is template-generated: narrative sentences and dialogue paragraphs with curly
//! quotes and speech tags, mentioning characters by first name and places by name.
//! Principal characters (early in the cast) appear far more often than minor ones.
//!
//! Use it from a bench with `#[path = "support/corpus.rs"] mod corpus;`.

#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// What to generate. The presets match `gen_corpus.py --preset small|medium|large`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusSpec {
    pub scenes: usize,
    pub words_per_scene: usize,
    pub characters: usize,
    pub locations: usize,
    pub seed: u64,
}

impl CorpusSpec {
    /// The seed every preset uses (the Python generator's default).
    pub const DEFAULT_SEED: u64 = 1729;

    /// 20 scenes of ~2,000 words (~40k words of scene prose), 20 characters, 10 locations.
    pub fn small() -> Self {
        Self::preset(20, 20, 10)
    }

    /// 200 scenes of ~2,000 words (~400k words), 60 characters, 30 locations.
    pub fn medium() -> Self {
        Self::preset(200, 60, 30)
    }

    /// 500 scenes of ~2,000 words (~1M words, ~5.9 MB of text), 100 characters,
    /// 50 locations.
    pub fn large() -> Self {
        Self::preset(500, 100, 50)
    }

    /// The medium cast with `scenes` scenes and `max(5, scenes / 8)` locations, like
    /// `gen_corpus.py --scenes N` without a preset.
    pub fn with_scenes(scenes: usize) -> Self {
        Self {
            scenes,
            locations: (scenes / 8).max(5),
            ..Self::medium()
        }
    }

    fn preset(scenes: usize, characters: usize, locations: usize) -> Self {
        Self {
            scenes,
            words_per_scene: 2000,
            characters,
            locations,
            seed: Self::DEFAULT_SEED,
        }
    }
}

impl Default for CorpusSpec {
    fn default() -> Self {
        Self::medium()
    }
}

/// What [`generate`] wrote.
#[derive(Debug, Clone)]
pub struct GeneratedCorpus {
    /// Markdown files written: cards, scenes and the outline.
    pub files: usize,
    /// Whitespace-separated words: every word of the cards (front matter included) plus
    /// the prose of the scenes (front matter excluded), as the Python generator counts.
    pub words: usize,
    /// Total bytes written over all files.
    pub bytes: u64,
    /// Scene files in story order (`out` joined with `Story/Scenes/SCN-<slug>.md`).
    pub scene_paths: Vec<PathBuf>,
    /// Full names of the cast, principal characters first (index 0 is the protagonist).
    pub character_names: Vec<String>,
    /// Location names, in card order.
    pub location_names: Vec<String>,
    /// Number of chapters in the outline.
    pub chapters: usize,
    /// A position in the prose for reference/hover benchmarks, if the protagonist is
    /// mentioned at all.
    pub probe: Option<Probe>,
}

/// The first mention of the protagonist's first name as a bare word in the prose of the
/// earliest scene that has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub path: PathBuf,
    /// Zero-based line.
    pub line: usize,
    /// Zero-based column in UTF-16 code units (the LSP default position encoding).
    pub character: usize,
    pub word: String,
}

/// Writes the workspace under `out` (creating folders) and reports what it wrote.
///
/// Files of the same name are overwritten; anything else under `out` is left alone, so
/// point it at a fresh folder. Fails with [`io::ErrorKind::InvalidInput`] when the spec
/// asks for no characters or locations, or for more distinct names than the word lists
/// can make.
pub fn generate(spec: &CorpusSpec, out: &Path) -> io::Result<GeneratedCorpus> {
    let max_characters = (FIRST_F.len() + FIRST_M.len()) * LAST.len();
    let max_locations = LOC_A.len() * LOC_B.len();
    if !(1..=max_characters).contains(&spec.characters) {
        return Err(invalid(format!("characters must be 1..={max_characters}")));
    }
    if !(1..=max_locations).contains(&spec.locations) {
        return Err(invalid(format!("locations must be 1..={max_locations}")));
    }

    let cast = make_characters(spec.seed, spec.characters);
    let locs = make_locations(spec.seed, spec.locations);
    let mut sink = Sink::new(out)?;
    let mut words = 0;

    for (i, character) in cast.iter().enumerate() {
        let text = character_card(spec.seed, i, character, &cast, &locs);
        words += word_count(&text);
        sink.write(
            &format!("Compendium/Characters/CHAR-{}.md", character.slug),
            &text,
        )?;
    }
    for (i, location) in locs.iter().enumerate() {
        let text = location_card(spec.seed, i, location, &cast, &locs);
        words += word_count(&text);
        sink.write(
            &format!("Compendium/Locations/LOC-{}.md", location.slug),
            &text,
        )?;
    }

    // Principal characters appear far more often than minor ones (Zipf-like weights).
    let weights: Vec<f64> = (0..cast.len())
        .scan(0.0, |sum, i| {
            *sum += 1.0 / ((i + 1) as f64).powf(0.9);
            Some(*sum)
        })
        .collect();
    let protagonist = cast[0].first;
    let mut chapters = Rng::for_file(spec.seed, "chapters", 0);
    let mut outline = vec!["# Outline".to_owned(), String::new()];
    let (mut chapter, mut order, mut left_in_chapter) = (0, 0, 0);
    let mut scene_paths = Vec::with_capacity(spec.scenes);
    let mut probe = None;

    for i in 0..spec.scenes {
        if left_in_chapter == 0 {
            chapter += 1;
            order = 0;
            left_in_chapter = chapters.range(3, 6);
            outline.extend([
                String::new(),
                format!("## Chapter {chapter}"),
                String::new(),
            ]);
        }
        order += 1;
        left_in_chapter -= 1;

        let scene = Scene::generate(spec, i, &cast, &weights, &locs);
        outline.push(format!("- SCN-{}: {}", scene.slug, scene.beat));
        let front_matter = scene.front_matter(chapter, order);
        let body = scene.paragraphs.join("\n\n");
        words += word_count(&body);
        let path = sink.write(
            &format!("Story/Scenes/SCN-{}.md", scene.slug),
            &format!("{front_matter}{body}\n"),
        )?;
        if probe.is_none() {
            let first_body_line = front_matter.lines().count();
            probe = find_word(&body, protagonist).map(|(line, character)| Probe {
                path: path.clone(),
                line: first_body_line + line,
                character,
                word: protagonist.to_owned(),
            });
        }
        scene_paths.push(path);
    }

    sink.write("Story/SCN-outline.md", &(outline.join("\n") + "\n"))?;

    Ok(GeneratedCorpus {
        files: sink.files,
        words,
        bytes: sink.bytes,
        scene_paths,
        character_names: cast.iter().map(|c| c.name.clone()).collect(),
        location_names: locs.iter().map(|l| l.name.clone()).collect(),
        chapters: chapter,
        probe,
    })
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Writes files under a root folder, counting files and bytes.
struct Sink {
    root: PathBuf,
    files: usize,
    bytes: u64,
}

impl Sink {
    fn new(root: &Path) -> io::Result<Self> {
        for dir in [
            "Story/Scenes",
            "Compendium/Characters",
            "Compendium/Locations",
        ] {
            fs::create_dir_all(root.join(dir))?;
        }
        Ok(Self {
            root: root.to_owned(),
            files: 0,
            bytes: 0,
        })
    }

    fn write(&mut self, relative: &str, text: &str) -> io::Result<PathBuf> {
        let path = self.root.join(relative);
        fs::write(&path, text)?;
        self.files += 1;
        self.bytes += text.len() as u64;
        Ok(path)
    }
}

/// Finds the first bare-word occurrence of `word` in `text`: returns its zero-based line
/// and UTF-16 column.
fn find_word(text: &str, word: &str) -> Option<(usize, usize)> {
    let is_word_char = |c: char| c.is_alphanumeric() || c == '_';
    text.lines().enumerate().find_map(|(line_no, line)| {
        line.match_indices(word).find_map(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + word.len()..].chars().next();
            let bare = !before.is_some_and(|c| is_word_char(c) || c == '[' || c == '|')
                && !after.is_some_and(is_word_char);
            bare.then(|| (line_no, line[..at].encode_utf16().count()))
        })
    })
}

// ---------------------------------------------------------------------------------------
// Randomness

/// SplitMix64: tiny, fast, and plenty for picking words. One stream per file.
struct Rng(u64);

impl Rng {
    /// A stream keyed by `(seed, kind, index)`: FNV-1a over the key, then SplitMix64's
    /// output function does the mixing.
    fn for_file(seed: u64, kind: &str, index: usize) -> Self {
        let key = seed
            .to_le_bytes()
            .into_iter()
            .chain(kind.bytes())
            .chain([0xff])
            .chain((index as u64).to_le_bytes());
        let hash = key.fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        Self(hash)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `low..=high`.
    fn range(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        &items[self.below(items.len())]
    }

    /// `k` distinct indices from `0..n`, in random order.
    fn sample(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut pool: Vec<usize> = (0..n).collect();
        for i in 0..k.min(n) {
            let j = i + self.below(n - i);
            pool.swap(i, j);
        }
        pool.truncate(k);
        pool
    }

    /// An index drawn with the given cumulative weights.
    fn weighted(&mut self, cumulative: &[f64]) -> usize {
        let total = cumulative.last().copied().unwrap_or(0.0);
        let x = self.unit() * total;
        cumulative
            .partition_point(|&c| c <= x)
            .min(cumulative.len() - 1)
    }
}

// ---------------------------------------------------------------------------------------
// Cast and places

struct Character {
    first: &'static str,
    last: &'static str,
    name: String,
    slug: String,
    female: bool,
}

impl Character {
    fn subject(&self) -> &'static str {
        if self.female { "she" } else { "he" }
    }

    fn subject_capitalised(&self) -> &'static str {
        if self.female { "She" } else { "He" }
    }

    fn object(&self) -> &'static str {
        if self.female { "her" } else { "him" }
    }

    fn possessive(&self) -> &'static str {
        if self.female { "her" } else { "his" }
    }
}

struct Location {
    name: String,
    slug: String,
}

fn make_characters(seed: u64, n: usize) -> Vec<Character> {
    let mut rng = Rng::for_file(seed, "cast", 0);
    let mut used = HashSet::new();
    let mut cast: Vec<Character> = Vec::with_capacity(n);
    while cast.len() < n {
        let female = rng.chance(0.5);
        let first = *rng.pick(if female { FIRST_F } else { FIRST_M });
        let last = *rng.pick(LAST);
        // Keep first names unique among the first 40 (principal) characters.
        let clash = cast.len() < 40 && cast.iter().any(|c| c.first == first);
        if clash || !used.insert((first, last)) {
            continue;
        }
        let name = format!("{first} {last}");
        cast.push(Character {
            first,
            last,
            slug: slugify(&name),
            name,
            female,
        });
    }
    cast
}

fn make_locations(seed: u64, n: usize) -> Vec<Location> {
    let mut rng = Rng::for_file(seed, "places", 0);
    let mut used = HashSet::new();
    let mut locs = Vec::with_capacity(n);
    while locs.len() < n {
        let name = format!("{} {}", rng.pick(LOC_A), rng.pick(LOC_B));
        if used.insert(name.clone()) {
            locs.push(Location {
                slug: slugify(&name),
                name,
            });
        }
    }
    locs
}

// ---------------------------------------------------------------------------------------
// Files

fn character_card(
    seed: u64,
    index: usize,
    c: &Character,
    cast: &[Character],
    locs: &[Location],
) -> String {
    let mut p = Prose::new(Rng::for_file(seed, "char", index), cast, locs);
    let rng = &mut p.rng;
    let role = match index {
        0 => "protagonist",
        1 => "antagonist",
        _ => *rng.pick(&ROLES[2..]),
    };
    let status = if rng.chance(0.15) { "dead" } else { "alive" };
    let mut aliases = vec![c.first.to_owned()];
    if rng.chance(0.5) {
        aliases.push(format!("the {}", rng.pick(NICK)));
    }
    if rng.chance(0.3) {
        aliases.push(format!("Old {}", c.last));
    }
    let occupation = rng.pick(OCCUPATIONS);
    let age = rng.range(16, 78);
    let eyes = rng.pick(EYES);
    let hair = rng.pick(HAIR);
    let home = &rng.pick(locs).name;

    let front_matter = [
        "type: character".to_owned(),
        format!("name: {}", yaml_scalar(&c.name)),
        format!("aliases: {}", yaml_list(&aliases)),
        format!("status: {status}"),
        format!("eyes: {}", yaml_scalar(eyes)),
        format!("hair: {}", yaml_scalar(hair)),
        format!("age: {age}"),
        format!("role: {}", yaml_scalar(role)),
        format!("occupation: {}", yaml_scalar(occupation)),
    ];
    let article = if age == 18 { "an" } else { "a" };
    let intro = format!(
        "{} is {article} {age}-year-old {occupation} who grew up near {home}. {}",
        c.name,
        p.sentences(c, 3)
    );
    let count = p.rng.range(4, 7);
    let background = format!("## Background\n\n{}", p.sentences(c, count));
    let relationships: Vec<String> = p
        .rng
        .sample(cast.len(), cast.len().min(4))
        .into_iter()
        .map(|j| &cast[j])
        .filter(|other| !std::ptr::eq(*other, c))
        .map(|other| format!("- {}: {}", other.name, p.rng.pick(RELATIONS)))
        .collect();
    let relationships = format!("## Relationships\n\n{}", relationships.join("\n"));
    let count = p.rng.range(2, 4);
    let notes = format!("## Notes\n\n{}", p.sentences(c, count));

    let body = [intro, background, relationships, notes].join("\n\n");
    format!(
        "{}# {}\n\n{body}\n",
        front_matter_block(&front_matter),
        c.name
    )
}

fn location_card(
    seed: u64,
    index: usize,
    l: &Location,
    cast: &[Character],
    locs: &[Location],
) -> String {
    let mut p = Prose::new(Rng::for_file(seed, "loc", index), cast, locs);
    let c = p.someone();
    let kind = p.rng.pick(LOC_TYPES);
    let region = p.rng.pick(REGIONS);
    let front_matter = [
        "type: location".to_owned(),
        format!("name: {}", yaml_scalar(&l.name)),
        "aliases: []".to_owned(),
        format!("kind: {}", yaml_scalar(kind)),
        format!("region: {}", yaml_scalar(region)),
    ];
    let weather: Vec<String> = (0..2)
        .map(|_| {
            let template = p.rng.pick(WEATHER);
            p.fill(template)
        })
        .collect();
    let intro = format!("{} {}", weather.join(" "), p.sentences(c, 3));
    let history: Vec<String> = (0..p.rng.range(3, 6))
        .map(|_| {
            let who = p.someone();
            p.narrative(who)
        })
        .collect();
    format!(
        "{}# {}\n\n{intro}\n\n## History\n\n{}\n",
        front_matter_block(&front_matter),
        l.name,
        history.join(" ")
    )
}

struct Scene<'a> {
    title: String,
    slug: String,
    beat: String,
    pov: &'a Character,
    location: &'a Location,
    present: Vec<&'a Character>,
    paragraphs: Vec<String>,
}

impl<'a> Scene<'a> {
    fn generate(
        spec: &CorpusSpec,
        index: usize,
        cast: &'a [Character],
        weights: &[f64],
        locs: &'a [Location],
    ) -> Self {
        let mut rng = Rng::for_file(spec.seed, "scene", index);
        let wanted = cast.len().min(rng.range(2, 5));
        let mut present: Vec<&Character> = Vec::with_capacity(wanted);
        while present.len() < wanted {
            let c = &cast[rng.weighted(weights)];
            if !present.iter().any(|p| std::ptr::eq(*p, c)) {
                present.push(c);
            }
        }
        let pov = present[0];
        let location = rng.pick(locs);

        let article = *rng.pick(TITLE_A);
        let noun = *rng.pick(TITLE_N);
        let article = if article == "A" && noun.starts_with(['A', 'E', 'I', 'O', 'U']) {
            "An"
        } else {
            article
        };
        let title = format!("{article} {noun}");
        let slug = format!("{:04}-{}", index + 1, slugify(&title));

        // Beats name up to three people; a scene with fewer fills in with someone else.
        let extra = rng.pick(cast);
        let template = *rng.pick(BEATS);
        let noun = *rng.pick(NOUN);
        let adj = *rng.pick(ADJ);
        let beat = render(template, |key| match key {
            "a" => pov.first.to_owned(),
            "b" => present.get(1).unwrap_or(&extra).first.to_owned(),
            "c" => present.get(2).unwrap_or(&extra).first.to_owned(),
            "noun" => noun.to_owned(),
            "adj" => adj.to_owned(),
            "loc" => location.name.clone(),
            other => unreachable!("unknown beat placeholder {other}"),
        });

        let target = (spec.words_per_scene as f64 * rng.uniform(0.9, 1.1)) as usize;
        let mut prose = Prose::new(rng, cast, locs);
        let paragraphs = prose.scene_body(target, pov, &present);
        Self {
            title,
            slug,
            beat,
            pov,
            location,
            present,
            paragraphs,
        }
    }

    fn front_matter(&self, chapter: usize, order: usize) -> String {
        let characters: Vec<&str> = self.present.iter().map(|c| c.name.as_str()).collect();
        front_matter_block(&[
            format!("title: {}", yaml_quoted(&self.title)),
            format!("pov: {}", yaml_scalar(&self.pov.name)),
            format!("location: {}", yaml_scalar(&self.location.name)),
            format!("characters: {}", yaml_list(&characters)),
            format!("chapter: {chapter}"),
            format!("order: {order}"),
        ])
    }
}

// ---------------------------------------------------------------------------------------
// Prose

/// Template prose bound to one file's random stream and the cast.
struct Prose<'a> {
    rng: Rng,
    cast: &'a [Character],
    locs: &'a [Location],
}

impl<'a> Prose<'a> {
    fn new(rng: Rng, cast: &'a [Character], locs: &'a [Location]) -> Self {
        Self { rng, cast, locs }
    }

    fn someone(&mut self) -> &'a Character {
        self.rng.pick(self.cast)
    }

    fn somewhere(&mut self) -> &'a str {
        &self.rng.pick(self.locs).name
    }

    /// Fills `{name}`, `{loc}`, `{adj}` and `{noun}`, each occurrence drawn afresh.
    fn fill(&mut self, template: &str) -> String {
        render(template, |key| match key {
            "name" => self.someone().first.to_owned(),
            "loc" => self.somewhere().to_owned(),
            "adj" => self.rng.pick(ADJ).to_string(),
            "noun" => self.rng.pick(NOUN).to_string(),
            other => unreachable!("unknown prose placeholder {other}"),
        })
    }

    /// `count` narrative sentences about `c`, joined by spaces.
    fn sentences(&mut self, c: &Character, count: usize) -> String {
        (0..count)
            .map(|_| self.narrative(c))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn narrative(&mut self, c: &Character) -> String {
        let r = &mut self.rng;
        let n = if r.chance(0.55) {
            c.first
        } else {
            c.subject_capitalised()
        };
        let (subj, obj, poss) = (c.subject(), c.object(), c.possessive());
        let adj = *r.pick(ADJ);
        let noun = *r.pick(NOUN);
        let noun2 = *r.pick(NOUN);
        match r.below(16) {
            0 => {
                let (verb, adv) = (r.pick(VERB_T), r.pick(ADV));
                format!("{n} {verb} the {adj} {noun} {adv}.")
            }
            1 => format!(
                "{n} {}, and for a moment the only sound was the {noun} creaking in the wind.",
                r.pick(VERB_I)
            ),
            2 => {
                let verb = r.pick(VERB_MOVE);
                let place = self.somewhere();
                format!("{n} {verb} across {place}, {poss} {noun} clutched tight against the cold.")
            }
            3 => {
                let other = self.someone().first;
                let feeling = self.rng.pick(NOUN_ABSTRACT);
                format!("{n} thought of {other} and felt something like {feeling}.")
            }
            4 => {
                let template = r.pick(WEATHER);
                self.fill(template)
            }
            5 => format!(
                "There was {} {adj} {noun} on the {noun2}, and {subj} did not remember leaving it there.",
                an(adj)
            ),
            6 => {
                let feeling = r.pick(NOUN_ABSTRACT);
                let place = self.somewhere();
                format!(
                    "{n} had not expected the {feeling}, not here, not after everything that had happened at {place}."
                )
            }
            7 => format!(
                "When {subj} finally {}, the {adj} light had already begun to fade.",
                r.pick(VERB_I)
            ),
            8 => {
                let (verb_i, adv, verb_t) = (r.pick(VERB_I), r.pick(ADV), r.pick(VERB_T));
                format!("{n} {verb_i} {adv}, then {verb_t} the {noun}.")
            }
            9 => format!(
                "The {noun} smelled of {}, and {subj} had to look away.",
                r.pick(SMELLS)
            ),
            10 => {
                let other = self.someone();
                let who = if self.rng.chance(0.3) {
                    other.name.as_str()
                } else {
                    other.first
                };
                let place = self.somewhere();
                format!(
                    "It was {who} who had taught {obj} to read a {noun} like that, years ago, in the back room at {place}."
                )
            }
            11 => format!(
                "{n} counted the steps to the {noun}: seven, then eight, then {}.",
                r.pick(&["nine", "ten", "eleven"])
            ),
            12 => {
                let place = self.somewhere();
                let r = &mut self.rng;
                let (virtue, state) = (r.pick(VIRTUES), r.pick(STATES));
                format!(
                    "Nobody at {place} would have called {obj} {virtue}, but {subj} was {state}, which was nearly the same thing."
                )
            }
            13 => format!(
                "{n} ran a thumb along the edge of the {adj} {noun} and waited for the {} to pass.",
                r.pick(NOUN_ABSTRACT)
            ),
            14 => {
                let (sound, verb) = (
                    r.pick(&["rattled", "groaned", "knocked", "swung"]),
                    r.pick(VERB_I),
                );
                format!("Outside, the {noun2} {sound} against the {noun}, and {subj} {verb}.")
            }
            _ => format!("{n} did not answer at once."),
        }
    }

    fn dialogue(&mut self, speaker: &Character, listener: &Character) -> String {
        let (line, tag) = if self.rng.chance(0.35) {
            let template = self.rng.pick(LINES_QUESTION);
            let line = self.fill(template) + "?";
            let tag = if self.rng.chance(0.7) {
                "asked"
            } else {
                self.rng.pick(SPEECH_TAGS)
            };
            (line, tag)
        } else {
            let template = self.rng.pick(LINES_STATEMENT);
            let line = self.fill(template);
            let tag = match *self.rng.pick(SPEECH_TAGS) {
                "asked" => "said",
                tag => tag,
            };
            (line, tag)
        };
        let question = line.ends_with('?');
        let (comma, stop) = if question { ("", "") } else { (",", ".") };
        let sp = speaker.first;
        match self.rng.below(4) {
            0 => format!("\u{201c}{line}{comma}\u{201d} {sp} {tag}."),
            1 => {
                let manner: Cow<str> = match self.rng.below(5) {
                    0 => "without looking up".into(),
                    1 => format!("glancing at {}", listener.first).into(),
                    2 => format!("half to {}self", speaker.object()).into(),
                    3 => "softly".into(),
                    _ => "after a pause".into(),
                };
                format!("\u{201c}{line}{comma}\u{201d} {tag} {sp}, {manner}.")
            }
            2 => {
                let verb = self.rng.pick(VERB_I);
                format!("{sp} {verb}. \u{201c}{line}{stop}\u{201d}")
            }
            _ => format!("\u{201c}{line}{stop}\u{201d}"),
        }
    }

    /// Paragraphs of narration and dialogue until at least `target_words` words.
    fn scene_body(
        &mut self,
        target_words: usize,
        pov: &Character,
        present: &[&Character],
    ) -> Vec<String> {
        let mut paragraphs = Vec::new();
        let mut words = 0;
        while words < target_words {
            let paragraph = if self.rng.chance(0.42) && present.len() > 1 {
                let pair = self.rng.sample(present.len(), 2);
                let (a, b) = (present[pair[0]], present[pair[1]]);
                let mut lines = self.dialogue(a, b);
                if self.rng.chance(0.5) {
                    lines.push(' ');
                    lines.push_str(&self.narrative(a));
                }
                lines
            } else {
                let who = if self.rng.chance(0.6) {
                    pov
                } else {
                    self.rng.pick(present)
                };
                let count = self.rng.range(3, 7);
                self.sentences(who, count)
            };
            words += word_count(&paragraph);
            paragraphs.push(paragraph);
        }
        paragraphs
    }
}

// ---------------------------------------------------------------------------------------
// Text helpers

/// Replaces each `{key}` in `template` with `value(key)`, left to right.
fn render(template: &str, mut value: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}').expect("unclosed placeholder");
        out.push_str(&rest[..open]);
        out.push_str(&value(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn an(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    }
}

/// Lowercase ASCII words joined by single hyphens.
fn slugify(s: &str) -> String {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}

/// `---`-fenced YAML front matter, one line per entry.
fn front_matter_block(lines: &[String]) -> String {
    let mut out = String::from("---\n");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("---\n");
    out
}

/// `s` as a YAML scalar: plain when that is unambiguous (also inside a flow sequence),
/// double-quoted otherwise.
fn yaml_scalar(s: &str) -> Cow<'_, str> {
    const RESERVED: &[&str] = &[
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
    ];
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic())
        && !s.ends_with(' ')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '\'' | '.'))
        && !RESERVED.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(yaml_quoted(s))
    }
}

fn yaml_quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A YAML flow sequence: `[a, b, c]`.
fn yaml_list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<Cow<str>> = items.iter().map(|s| yaml_scalar(s.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

// ---------------------------------------------------------------------------------------
// Word lists (verbatim from gen_corpus.py)

const FIRST_F: &[&str] = &[
    "Elena", "Mara", "Iris", "Nadia", "Vera", "Lidia", "Rosalind", "Tamsin", "Odette", "Wren",
    "Helena", "Cora", "Signe", "Ilse", "Maren", "Juno", "Beatrix", "Agnes", "Sabine", "Thea",
    "Lucia", "Nell", "Petra", "Ada", "Mirela", "Oona", "Livia", "Rhea", "Greta", "Hester",
    "Imogen", "Esme", "Delphine", "Ines", "Katya", "Leonie", "Margit", "Noor", "Orla", "Yara",
    "Zofia", "Anouk", "Brielle", "Celeste", "Dagny", "Elspeth", "Fenna", "Gwen", "Halle", "Isolde",
];

const FIRST_M: &[&str] = &[
    "Tobias", "Anselm", "Caspar", "Dorian", "Emil", "Felix", "Gideon", "Hugo", "Ivo", "Jasper",
    "Kasimir", "Lorcan", "Matthias", "Niklas", "Osric", "Piet", "Quentin", "Rafe", "Silas",
    "Teodor", "Ulric", "Viktor", "Wendel", "Xander", "Yannick", "Aurel", "Bastian", "Cyprian",
    "Dario", "Edmund", "Florian", "Gregor", "Henrik", "Ignatius", "Julian", "Konrad", "Leopold",
    "Magnus", "Nestor", "Oskar", "Perrin", "Roderick", "Stellan", "Thaddeus", "Valentin",
];

const LAST: &[&str] = &[
    "Marsh",
    "Ashdown",
    "Vell",
    "Corran",
    "Haldane",
    "Quill",
    "Ravensworth",
    "Thorne",
    "Iverson",
    "Blackwood",
    "Strand",
    "Kessler",
    "Mordaunt",
    "Fairweather",
    "Lindqvist",
    "Ostrova",
    "Pell",
    "Drummond",
    "Carver",
    "Halloway",
    "Underhill",
    "Varga",
    "Wexley",
    "Brand",
    "Calloway",
    "Dunmore",
    "Everard",
    "Falk",
    "Gallow",
    "Hartigan",
    "Ingram",
    "Jessop",
    "Kincaid",
    "Lowell",
    "Merriday",
    "Northcote",
    "Orme",
    "Penhallow",
    "Rooke",
    "Sallow",
    "Tregarthen",
    "Umber",
    "Vance",
    "Winterbourne",
    "Yelland",
    "Zeller",
    "Abernethy",
    "Bellamy",
    "Crowther",
    "Daventry",
];

const NICK: &[&str] = &[
    "Lark", "Fox", "Sparrow", "Magpie", "Kit", "Moth", "Bishop", "Sexton", "Tinker", "Wick",
    "Rook", "Finch", "Ash", "Hollow", "Jack", "Pike", "Crane", "Sable", "Bramble", "Flint",
];

const LOC_A: &[&str] = &[
    "Harrow", "Gull", "Salt", "Ember", "Hollow", "Raven", "Iron", "Thistle", "Lantern", "Cinder",
    "Mire", "Copper", "Whisper", "Briar", "Ash", "Glass", "Bell", "Tallow", "Frost", "Amber",
    "Wren", "Stone", "Vesper", "Marrow", "Candle", "Heron", "Dusk", "Linden", "Rook", "Saffron",
    "Pale", "Drowned", "Silver", "Black", "Weeping", "Gilded",
];

const LOC_B: &[&str] = &[
    "Quay",
    "Cross",
    "Market",
    "Abbey",
    "Reach",
    "Mill",
    "Yard",
    "Fen",
    "Spire",
    "Wharf",
    "Gate",
    "Row",
    "Chapel",
    "Causeway",
    "Hall",
    "Lighthouse",
    "Foundry",
    "Orchard",
    "Warren",
    "Bridge",
    "Tower",
    "Cistern",
    "Library",
    "Archive",
    "Hospice",
    "Barracks",
    "Tannery",
    "Observatory",
    "Ferry",
    "Cellars",
];

const LOC_TYPES: &[&str] = &[
    "district",
    "building",
    "landmark",
    "street",
    "estate",
    "waterfront",
    "ruin",
];

const REGIONS: &[&str] = &[
    "the Old City",
    "the Lower Wards",
    "the North Bank",
    "the Salt Marshes",
    "the Hill Country",
    "the Harbour",
    "the Eastern Reach",
];

const EYES: &[&str] = &[
    "grey",
    "green",
    "brown",
    "hazel",
    "blue",
    "amber",
    "dark brown",
    "pale blue",
];

const HAIR: &[&str] = &[
    "black",
    "auburn",
    "chestnut",
    "ash-blond",
    "red",
    "silver",
    "dark brown",
    "copper",
    "white",
    "straw-coloured",
    "shaved",
    "greying",
];

const ROLES: &[&str] = &[
    "protagonist",
    "antagonist",
    "mentor",
    "ally",
    "rival",
    "informant",
    "love interest",
    "foil",
    "witness",
    "suspect",
    "minor",
    "minor",
    "minor",
];

const OCCUPATIONS: &[&str] = &[
    "archivist",
    "ferry captain",
    "apothecary",
    "clockmaker",
    "magistrate",
    "smuggler",
    "chaplain",
    "cartographer",
    "glassblower",
    "night watchman",
    "printer",
    "physician",
    "lamplighter",
    "tax collector",
    "locksmith",
    "innkeeper",
    "courier",
    "surveyor",
    "bookbinder",
    "dockhand",
];

const ADJ: &[&str] = &[
    "cold", "narrow", "crooked", "silent", "damp", "heavy", "broken", "faded", "brass", "iron",
    "wet", "pale", "long", "low", "old", "dark", "quiet", "bright", "empty", "warm", "grey",
    "bitter", "rusted", "hollow", "sharp", "thin", "worn", "smoky", "tangled", "distant",
    "crowded", "sodden", "gilded", "cracked",
];

const NOUN: &[&str] = &[
    "door", "window", "lantern", "stair", "letter", "ledger", "coat", "table", "map", "candle",
    "bell", "key", "gate", "rope", "knife", "cup", "clock", "chair", "wall", "bridge", "boat",
    "shutter", "trunk", "coin", "glove", "book", "mirror", "chain", "kettle", "bottle", "chart",
    "envelope", "railing", "harbour", "alley", "roof",
];

const NOUN_ABSTRACT: &[&str] = &[
    "silence",
    "doubt",
    "fear",
    "hope",
    "anger",
    "grief",
    "patience",
    "memory",
    "regret",
    "suspicion",
    "relief",
    "guilt",
    "curiosity",
    "exhaustion",
    "resolve",
];

const VERB_T: &[&str] = &[
    "opened",
    "closed",
    "lifted",
    "touched",
    "studied",
    "folded",
    "pocketed",
    "unlatched",
    "pushed",
    "watched",
    "traced",
    "set down",
    "picked up",
    "turned over",
    "weighed",
    "ignored",
    "straightened",
    "unwrapped",
    "examined",
    "measured",
];

const VERB_I: &[&str] = &[
    "hesitated",
    "waited",
    "shivered",
    "laughed",
    "sighed",
    "listened",
    "frowned",
    "nodded",
    "paused",
    "smiled",
    "turned away",
    "leaned closer",
    "looked up",
    "stepped back",
    "sat down",
    "stood",
    "swallowed",
];

const VERB_MOVE: &[&str] = &[
    "walked", "hurried", "crossed", "climbed", "slipped", "wandered", "pushed", "limped", "ran",
    "drifted",
];

const ADV: &[&str] = &[
    "slowly",
    "carefully",
    "quietly",
    "at last",
    "without a word",
    "again",
    "for a long moment",
    "almost gently",
    "too quickly",
    "with some effort",
    "as if in a dream",
    "stubbornly",
];

const WEATHER: &[&str] = &[
    "Rain hammered against the {adj} {noun}.",
    "Fog rolled in off the river and swallowed the street lamps.",
    "The wind had teeth tonight, and it found every gap in the {noun}.",
    "Somewhere below, a dog barked twice and fell silent.",
    "The bells of {loc} rang the hour, thin and far away.",
    "Smoke hung low over {loc}, sour with coal and tar.",
    "A cart rattled past, its wheels loud on the cobbles.",
    "The light was going, the sky the colour of old pewter.",
    "Gulls wheeled over the water, screaming at nothing.",
];

const SPEECH_TAGS: &[&str] = &[
    "said",
    "said",
    "said",
    "asked",
    "whispered",
    "muttered",
    "replied",
    "snapped",
    "called",
    "admitted",
    "murmured",
];

const LINES_STATEMENT: &[&str] = &[
    "We don't have much time",
    "I told you this would happen",
    "Nobody goes down to {loc} after dark",
    "You should have burned that {noun} when you had the chance",
    "She was here, I'm certain of it",
    "It isn't what it looks like",
    "I've seen that {noun} before",
    "Keep your voice down",
    "The {adj} {noun} was never meant for us",
    "Whatever you heard, it wasn't from me",
    "There's a boat leaving {loc} at midnight",
    "{name} knows more than anyone is admitting",
    "If {name} finds out, we're finished",
    "I waited at {loc} until the lamps went out",
    "Give me the {noun} and I'll forget I ever saw you",
    "I don't trust {name}, and neither should you",
    "We'll need the key before morning",
    "You look like you haven't slept in days",
    "That was a long time ago",
    "Then we go tonight",
];

const LINES_QUESTION: &[&str] = &[
    "What are you doing here",
    "Did anyone follow you",
    "Where did you find this",
    "How long have you known",
    "Why would {name} lie about that",
    "Is it true what they say about {loc}",
    "Do you still have the {noun}",
    "Who else has seen it",
    "What happened to {name}",
    "Are you going to tell me the truth now",
];

const BEATS: &[&str] = &[
    "{a} confronts {b} about the missing {noun} at {loc}",
    "{a} finds a letter hidden behind the {adj} {noun}",
    "{a} and {b} argue about whether to trust {c}",
    "{a} follows {b} through {loc} after dark",
    "{a} learns the truth about the fire at {loc}",
    "{a} bargains with {b} for the key",
    "A storm traps {a} and {b} inside {loc}",
    "{a} lies to {b} to protect {c}",
    "{a} returns to {loc} and finds it abandoned",
    "{b} reveals the map to {a}",
    "{a} is followed home from {loc}",
    "{a} and {c} break into the archive",
    "{b} disappears; {a} searches {loc}",
    "{a} remembers the night of the wreck",
];

const TITLE_A: &[&str] = &[
    "The",
    "A",
    "Under the",
    "Beyond the",
    "After the",
    "Before the",
    "Into the",
];

const TITLE_N: &[&str] = &[
    "Broken Lantern",
    "Salt Road",
    "Last Ferry",
    "Silent Bell",
    "Long Night",
    "Copper Key",
    "Drowned Chapel",
    "Second Letter",
    "Iron Gate",
    "Cold Harbour",
    "Empty Room",
    "Red Ledger",
    "Glass Stair",
    "False Map",
    "Burning Mill",
    "Low Tide",
    "Grey Hour",
    "Narrow Bridge",
    "Old Debt",
    "Quiet Witness",
];

const RELATIONS: &[&str] = &[
    "old friend",
    "creditor",
    "former lover",
    "sibling",
    "employer",
    "sworn enemy",
    "neighbour",
    "confessor",
];

const SMELLS: &[&str] = &[
    "tar",
    "lamp oil",
    "wet wool",
    "river mud",
    "candle smoke",
    "old paper",
    "salt",
];

const VIRTUES: &[&str] = &["brave", "patient", "honest", "kind", "careful"];

const STATES: &[&str] = &["stubborn", "tired", "desperate", "curious", "afraid"];

// ---------------------------------------------------------------------------------------
// Continuity data for the checks

/// Gives a generated manuscript what the continuity checks read beyond what
/// the Python generator writes, so a benchmark runs every check for real:
/// an anti-pattern sheet, a `died_in` scene (a third of the way through)
/// for every dead character, and a story `date` for every scene, one day
/// apart in story order, with every fiftieth scene a day early (so
/// `timeline-order` has something to report). Returns the files added.
pub fn add_continuity_data(out: &Path, generated: &GeneratedCorpus) -> io::Result<usize> {
    let sheet = "---\ntype: anti-patterns\n---\n\n# Anti-patterns\n\n## Zero tolerance\n\n\
        - a shiver ran down\n- let out a breath she didn't know\n- suddenly\n\
        - in a voice barely above a whisper\n- time seemed to stop\n- for a long moment\n\n\
        ## Deduction\n\n- very\n- began to\n- somehow\n- just\n- really\n- started to\n";
    let voice = out.join("Compendium/Voice");
    fs::create_dir_all(&voice)?;
    fs::write(voice.join("anti-patterns.md"), sheet)?;

    let stem = |path: &Path| {
        path.file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or_default()
            .to_owned()
    };
    let death_scene = stem(&generated.scene_paths[generated.scene_paths.len() / 3]);
    for entry in fs::read_dir(out.join("Compendium/Characters"))? {
        let path = entry?.path();
        let text = fs::read_to_string(&path)?;
        if text.contains("\nstatus: dead\n") {
            let text = text.replacen(
                "\nstatus: dead\n",
                &format!("\nstatus: dead\ndied_in: {death_scene}\n"),
                1,
            );
            fs::write(&path, text)?;
        }
    }
    for (index, path) in generated.scene_paths.iter().enumerate() {
        let text = fs::read_to_string(path)?;
        let day = if index % 50 == 49 {
            index - 1
        } else {
            index + 1
        };
        let (month, day) = (1 + day / 28 % 12, 1 + day % 28);
        let year = 1200 + day / (28 * 12);
        let text = text.replacen(
            "---\n",
            &format!("---\ndate: {year}-{month:02}-{day:02}\n"),
            1,
        );
        fs::write(path, text)?;
    }
    Ok(1)
}
