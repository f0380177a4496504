//! How much of a prompt a prefix cache can serve: shared by the fake model
//! server (which reports it as cached tokens) and `benches/tokens.rs`.

/// The longest prefix, in bytes, `prompt` shares with any of `earlier`.
pub fn shared_prefix<S: AsRef<str>>(prompt: &str, earlier: &[S]) -> usize {
    earlier
        .iter()
        .map(|before| {
            before
                .as_ref()
                .bytes()
                .zip(prompt.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0)
}
