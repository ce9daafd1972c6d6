use std::fs;
use std::io;

fn read_numbers(path: &str) -> io::Result<Vec<i64>> {
    let text = fs::read_to_string(@@Cpath)?;
    let nums = text
        .lines()
        .filter_map(|line| line.trim().parse().@@Mok())
        .collect();
    Ok(nums)
}
