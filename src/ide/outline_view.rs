//! Symbols, folding ranges and word counts: the shape of files and of the book.

use crate::index::{CardKind, FileContent, FilePath, SourceFile, Workspace};
use crate::syntax::BlockKind;
use crate::text::TextRange;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Heading,
    Scene,
    Character,
    Location,
    Canon,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub detail: Option<String>,
    pub kind: SymbolKind,
    pub path: FilePath,
    /// The whole extent (a heading's section, a list item).
    pub range: TextRange,
    /// What to highlight (the title, the id).
    pub selection: TextRange,
    pub children: Vec<Symbol>,
}

/// Headings nested by level; in the outline, scene entries under their headings.
pub fn document_symbols(file: &SourceFile) -> Vec<Symbol> {
    let mut flat: Vec<(u8, Symbol)> = Vec::new();
    let body_start = file
        .front_matter
        .as_ref()
        .map_or(0, |front| front.range.end);
    for block in &file.syntax.blocks {
        if let BlockKind::Heading { level } = block.kind
            && block.range.start >= body_start
        {
            flat.push((
                level,
                Symbol {
                    name: block.inline.slice(&file.text).trim().to_owned(),
                    detail: None,
                    kind: SymbolKind::Heading,
                    path: file.path.clone(),
                    range: block.range,
                    selection: block.inline,
                    children: Vec::new(),
                },
            ));
        }
    }
    if let FileContent::Outline(outline) = &file.content {
        for entry in &outline.entries {
            flat.push((
                u8::MAX,
                Symbol {
                    name: entry.scene_id.clone(),
                    detail: (!entry.beat.is_empty()).then(|| entry.beat.clone()),
                    kind: SymbolKind::Scene,
                    path: file.path.clone(),
                    range: entry.range,
                    selection: entry.id_range,
                    children: Vec::new(),
                },
            ));
        }
        flat.sort_by_key(|(_, symbol)| symbol.range.start);
    }
    nest(flat, file.text.len())
}

/// Turns a flat list of (level, symbol) in document order into a tree, with
/// each heading's range running to the next heading of the same or higher level.
fn nest(flat: Vec<(u8, Symbol)>, end: usize) -> Vec<Symbol> {
    let mut roots: Vec<Symbol> = Vec::new();
    let mut stack: Vec<(u8, Symbol)> = Vec::new();
    let close =
        |stack: &mut Vec<(u8, Symbol)>, roots: &mut Vec<Symbol>, until_level: u8, at: usize| {
            while let Some((level, _)) = stack.last() {
                if *level < until_level {
                    break;
                }
                let (_, mut symbol) = stack
                    .pop()
                    .expect("the loop checked the stack is not empty");
                if symbol.kind == SymbolKind::Heading {
                    symbol.range.end = symbol.range.end.max(at);
                }
                match stack.last_mut() {
                    Some((_, parent)) => parent.children.push(symbol),
                    None => roots.push(symbol),
                }
            }
        };
    for (level, symbol) in flat {
        close(&mut stack, &mut roots, level, symbol.range.start);
        stack.push((level, symbol));
    }
    close(&mut stack, &mut roots, 0, end);
    roots
}

/// Scenes (by id and title) and cards (by name and alias) matching `query`:
/// its characters in order, ignoring case ("kmar" finds "Kael Maren").
pub fn workspace_symbols(workspace: &Workspace, query: &str) -> Vec<Symbol> {
    let query: Vec<char> = query
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let matches = |text: &str| {
        let mut wanted = query.iter().peekable();
        for c in text.chars().flat_map(char::to_lowercase) {
            if wanted.peek() == Some(&&c) {
                wanted.next();
            }
        }
        wanted.peek().is_none()
    };
    let catalog = workspace.catalog();
    let mut symbols = Vec::new();
    for (file, scene) in catalog.scenes() {
        let title = scene.title.as_deref().unwrap_or("");
        if matches(&scene.id) || matches(title) {
            let selection = scene.id_range.unwrap_or_else(|| file.head_range());
            symbols.push(Symbol {
                name: scene.id.clone(),
                detail: (!title.is_empty()).then(|| title.to_owned()),
                kind: SymbolKind::Scene,
                path: file.path.clone(),
                range: selection,
                selection,
                children: Vec::new(),
            });
        }
    }
    for (path, card) in catalog.cards() {
        if card.names().any(|name| matches(&name.text)) || matches(&card.id) {
            let selection = card
                .name
                .as_ref()
                .map_or(TextRange::empty(0), |name| name.range);
            symbols.push(Symbol {
                name: card.display_name().to_owned(),
                detail: card.alias_list(),
                kind: match card.kind {
                    CardKind::Character => SymbolKind::Character,
                    CardKind::Location => SymbolKind::Location,
                    CardKind::Other => SymbolKind::Canon,
                },
                path: path.clone(),
                range: selection,
                selection,
                children: Vec::new(),
            });
        }
    }
    symbols
}

/// Foldable ranges: the front matter and every heading's section.
pub fn folding_ranges(file: &SourceFile) -> Vec<TextRange> {
    let mut ranges: Vec<TextRange> = file.front_matter.iter().map(|front| front.range).collect();
    fn walk(symbols: &[Symbol], ranges: &mut Vec<TextRange>) {
        for symbol in symbols {
            if symbol.kind == SymbolKind::Heading {
                ranges.push(symbol.range);
            }
            walk(&symbol.children, ranges);
        }
    }
    walk(&document_symbols(file), &mut ranges);
    ranges
}

/// What a word count is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountOf {
    Scene,
    Chapter,
    Manuscript,
}

/// Words against a target, shown where a scene, a chapter or the book is
/// named: a scene's head, an outline entry, a chapter heading, the title.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordCount {
    pub range: TextRange,
    pub of: CountOf,
    /// `None` for an outline entry whose scene has no file yet.
    pub words: Option<usize>,
    pub target: Option<u32>,
}

impl WordCount {
    pub fn label(&self) -> String {
        let Some(words) = self.words else {
            return "no scene file yet".to_owned();
        };
        let count = crate::stats::Count {
            words,
            target: self.target,
        }
        .label();
        match self.of {
            CountOf::Scene => count,
            CountOf::Chapter => format!("chapter: {count}"),
            CountOf::Manuscript => format!("manuscript: {count}"),
        }
    }
}

/// Word counts for a scene file (at its head), or for the outline: each
/// entry, each chapter heading, and the book at its title heading (else
/// its first line). A scene without `words:` counts against `[targets] scene`.
pub fn word_counts(workspace: &Workspace, file: &SourceFile) -> Vec<WordCount> {
    match &file.content {
        FileContent::Scene(scene) => vec![WordCount {
            range: file.head_range(),
            of: CountOf::Scene,
            words: Some(scene.word_count),
            target: crate::stats::scene_target(workspace, scene.words_target).0,
        }],
        FileContent::Outline(outline) => {
            let mut counts: Vec<WordCount> = outline
                .entries
                .iter()
                .map(|entry| {
                    let scene = workspace
                        .catalog()
                        .scene(&entry.scene_id)
                        .and_then(|file| file.scene());
                    WordCount {
                        range: entry.id_range,
                        of: CountOf::Scene,
                        words: scene.map(|scene| scene.word_count),
                        target: scene.and_then(|scene| {
                            crate::stats::scene_target(workspace, scene.words_target).0
                        }),
                    }
                })
                .collect();
            // Chapters and the book as the catalog's outline has them: this file.
            let is_the_outline = workspace
                .catalog()
                .outline()
                .is_some_and(|outline| outline.path == file.path);
            if is_the_outline {
                let progress = crate::stats::progress(workspace);
                for chapter in &progress.chapters {
                    if let Some(heading) = outline.headings.get(chapter.heading) {
                        counts.push(WordCount {
                            range: heading.range,
                            of: CountOf::Chapter,
                            words: Some(chapter.count.words),
                            target: chapter.count.target,
                        });
                    }
                }
                let book = crate::index::Book::of(workspace);
                let range = book
                    .title_heading
                    .and_then(|index| outline.headings.get(index))
                    .map_or_else(
                        || {
                            file.line_index
                                .line_range(0, &file.text)
                                .unwrap_or_default()
                        },
                        |heading| heading.range,
                    );
                counts.push(WordCount {
                    range,
                    of: CountOf::Manuscript,
                    words: Some(progress.total.words),
                    target: progress.total.target,
                });
            }
            counts.sort_by_key(|count| count.range.start);
            counts
        }
        _ => Vec::new(),
    }
}
