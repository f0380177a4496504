//! Compiles the ordinary English words (`data/english-words.txt`) into a
//! perfect-hash table that `prose::dictionary` reads in place: no set is
//! built at start, and none is kept on the heap. The table is numbers and one
//! text (the words in slot order), so the binary holds no pointer per word
//! for the loader to relocate.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
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
