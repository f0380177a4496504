//! The functions a language server's start runs lie together, ahead of the
//! rest of the code (build.rs lays out what `data/hot-code.txt` lists).

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

const LIST: &str = include_str!("../data/hot-code.txt");

/// A symbol's name as the list writes it (as `scripts/hot-code` writes
/// it): each crate's disambiguator as `Cs*_`, without the suffix LTO gives
/// a function's local copies (`.1605`, `.llvm.1605`). The cold part GCC
/// splits off a C function (`.cold`, in `.text.unlikely.<function>`) is
/// laid out with it.
fn listed_form(name: &str) -> String {
    static DISAMBIGUATOR: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new("Cs[0-9A-Za-z]+_").unwrap());
    static LTO_SUFFIX: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\.(cold|(llvm\.)?[0-9]+)$").unwrap());
    let name = LTO_SUFFIX.replace(name, "");
    DISAMBIGUATOR.replace_all(&name, "Cs*_").into_owned()
}

/// Whether build.rs lays out the code here (it says why not).
fn laid_out() -> bool {
    let here = cfg!(all(target_os = "linux", target_env = "gnu"))
        && !std::env::var("CONTROL_ROOM_HOT_CODE").is_ok_and(|value| value == "off");
    if !here {
        eprintln!("skipped: the code is laid out by build.rs on Linux with glibc only");
    }
    here
}

#[test]
fn the_functions_a_start_runs_lie_together_ahead_of_the_rest_of_the_code() {
    if !laid_out() {
        return;
    }
    // Rust's functions (v0: `_R…`) and C's.
    let listed: HashSet<&str> = LIST
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    assert!(listed.len() > 500, "{} functions listed", listed.len());
    let binary = std::fs::read(env!("CARGO_BIN_EXE_control-room")).expect("the server's binary");
    let file = object::File::parse(&*binary).expect("an ELF binary");
    let hot = file
        .section_by_name(".text.hot")
        .expect("a .text.hot section (build.rs)");
    let text = file.section_by_name(".text").expect("a .text section");
    assert!(
        hot.address() + hot.size() <= text.address(),
        "the listed functions are ahead of the rest of the code"
    );
    let within = |address: u64| (hot.address()..hot.address() + hot.size()).contains(&address);
    // Rust's own functions (v0: `_R…`). The C of the -sys crates is
    // compiled by their build scripts, not always a section a function, and
    // GCC moves a function's cold part into `.text.unlikely.<name>` as
    // `<name>.cold`.
    let functions: Vec<(&str, u64)> = file
        .symbols()
        .filter(|symbol| symbol.kind() == SymbolKind::Text && symbol.size() > 0)
        .filter_map(|symbol| Some((symbol.name().ok()?, symbol.address())))
        .collect();
    // Two names of one function (`<u64 as LowerHex>::fmt` and usize's, in
    // the standard library) share one section, named after one of them.
    let mut names_at: HashMap<u64, usize> = HashMap::new();
    for (_, address) in &functions {
        *names_at.entry(*address).or_default() += 1;
    }
    let mut inside = 0;
    let mut strays = Vec::new();
    let mut intruders = Vec::new();
    for (name, address) in functions {
        if names_at[&address] > 1 {
            continue;
        }
        match (listed.contains(listed_form(name).as_str()), within(address)) {
            (true, true) => inside += 1,
            (true, false) => strays.push(name.to_owned()),
            (false, true) => intruders.push(name.to_owned()),
            (false, false) => {}
        }
    }
    assert!(strays.is_empty(), "listed but elsewhere: {strays:#?}");
    assert!(
        intruders.is_empty(),
        "not listed but among them: {intruders:#?}"
    );
    // A debug build inlines less than the release build the list was made
    // from, so it has most, not all, of the listed functions.
    assert!(
        inside * 2 > listed.len(),
        "{inside} of the {} listed functions found",
        listed.len()
    );
}

/// GCC puts a C library's constructors and destructors in
/// `.text.startup.<function>` and `.text.exit.<function>` when it optimises
/// (aws-lc's `do_library_init`, run before `main` at every start); laid out
/// by their names alone, they stayed among the rest of the code in the
/// release build, each fault there mapping 64 KB of it. The development
/// build, whose C is not optimised, cannot show it: the linker script does.
#[test]
fn a_c_librarys_constructor_is_laid_out_from_the_section_gcc_gives_it() {
    if !laid_out() {
        return;
    }
    assert!(
        LIST.lines().any(|line| line.trim() == "do_library_init"),
        "the list names aws-lc's constructor"
    );
    let script = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/hot-code.ld"))
        .expect("build.rs wrote the linker script");
    for section in [
        ".text.startup.do_library_init",
        ".text.exit.do_library_init",
    ] {
        assert!(
            script
                .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')'))
                .any(|pattern| pattern == section),
            "the script lays out {section}"
        );
    }
}
