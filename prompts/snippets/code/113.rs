use std::io::{self, BufRead};

/// Reads lines from stdin and prints them with line numbers,
/// skipping lines that are empty after trimming.
fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut shown = 0;
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line?;@@M
        if line.trim().is_empty() {
            continue;
        }
        shown += 1;
        println!("{:>4}: {}", i + 1, @@Mline);
    }@@O
    eprintln!("{} non-empty lines", @@Mshown);
    Ok(())
}
