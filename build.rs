//! Compiles the ordinary English words (`data/english-words.txt`) into a
//! perfect-hash table that `prose::dictionary` reads in place: no set is
//! built at start, and none is kept on the heap. The table is numbers and one
//! text (the words in slot order), so the binary holds no pointer per word
//! for the loader to relocate.
//!
//! Also lays out the functions a language server's start runs
//! (`data/hot-code.txt`) together, ahead of the rest of the code: see
//! [`lay_out_hot_code`].

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    lay_out_hot_code();
    println!("cargo::rerun-if-changed=data/english-words.txt");
    let list = std::fs::read_to_string("data/english-words.txt")
        .expect("data/english-words.txt is part of the source");
    // The list may name a word twice; a perfect hash takes each once.
    let words: Vec<&str> = list
        .lines()
        .filter(|line| !line.is_empty())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let state = phf_generator::generate_hash(&words);
    let mut text = String::new();
    let mut offsets = vec![0u32];
    for &index in &state.map {
        text.push_str(words[index]);
        offsets.push(u32::try_from(text.len()).expect("the word list is under 4 GiB"));
    }
    let mut table = String::new();
    let _ = writeln!(table, "const KEY: u64 = {};", state.key);
    let _ = writeln!(
        table,
        "static DISPLACEMENTS: [(u32, u32); {}] = {:?};",
        state.disps.len(),
        state.disps
    );
    let _ = writeln!(
        table,
        "static OFFSETS: [u32; {}] = {:?};",
        offsets.len(),
        offsets
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("english_words.txt"), text).expect("OUT_DIR is writable");
    std::fs::write(out.join("english_words.rs"), table).expect("OUT_DIR is writable");
}

/// Puts the functions named in `data/hot-code.txt` into a section of their
/// own, `.text.hot`, ahead of the rest of the code, through a linker script
/// that only adds that section (`INSERT BEFORE .text`; GNU ld and lld read
/// it alike). The kernel maps a program's code 64 KB around each page it
/// first runs (or a whole large folio); scattered among 24 MB of code that
/// is rarely run, the 3 MB of code a start runs kept 9 MB of it resident
/// with twenty scenes open. Together they keep under 4 MB.
///
/// Each line is a symbol in Rust's v0 mangling (`.cargo/config.toml` asks
/// for it: it names a generic function's instance, where the legacy
/// mangling names all instances alike and tells them apart by a hash) or a
/// C function's name, with each crate's disambiguator written `Cs*_`: it
/// changes with the crate's version and the compiler's. A line that names
/// nothing in the binary is passed over; a stale list costs memory, never
/// correctness. `scripts/hot-code` writes the list from a profiled start.
/// Linux with glibc only (ELF, GNU ld or lld); set `CONTROL_ROOM_HOT_CODE=off`
/// for a linker that reads no scripts (mold).
fn lay_out_hot_code() {
    println!("cargo::rerun-if-changed=data/hot-code.txt");
    println!("cargo::rerun-if-env-changed=CONTROL_ROOM_HOT_CODE");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("CONTROL_ROOM_HOT_CODE") == "off"
    {
        return;
    }
    let list = std::fs::read_to_string("data/hot-code.txt")
        .expect("data/hot-code.txt is part of the source");
    let mut script = String::from("SECTIONS\n{\n  .text.hot :\n  {\n");
    for (number, line) in list.lines().enumerate() {
        let symbol = line.trim();
        if symbol.is_empty() || symbol.starts_with('#') {
            continue;
        }
        // Anything else could end the pattern, or the script, early.
        assert!(
            symbol
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '*')),
            "data/hot-code.txt, line {}: {symbol:?} is not a symbol's name",
            number + 1
        );
        // LLVM puts a function it deems cold (`#[cold]`, `main`) in
        // `.text.unlikely.<symbol>`, and GCC a C library's constructors and
        // destructors in `.text.startup.<symbol>` and `.text.exit.<symbol>`.
        // LTO tells apart the copies of a function it keeps local by a
        // suffix (`<symbol>.1605`) that changes from build to build: the
        // list names them without it.
        let _ = writeln!(
            script,
            "    *(.text.{symbol} .text.{symbol}.* .text.unlikely.{symbol} .text.unlikely.{symbol}.* \
      .text.startup.{symbol} .text.exit.{symbol})"
        );
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let path = out.join("hot-code.ld");
    std::fs::write(&path, script).expect("OUT_DIR is writable");
    println!("cargo::rustc-link-arg-bins=-Wl,-T,{}", path.display());
}
