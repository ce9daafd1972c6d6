use std::collections::HashMap;

fn word_freq(text: &str) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word).or_insert(@@C0) += 1;
    }
    counts
}
