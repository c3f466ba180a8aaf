//! Numbers written for people.

/// `1234567` as `1,234,567`.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `102,401 bytes; the limit is 102,400 bytes (100 KB)`: exact, since sizes rounded to
/// KB read "100 KB; the limit is 100 KB" one byte over the limit.
pub fn size_and_limit(size: usize, limit: usize) -> String {
    format!(
        "{} bytes; the limit is {} bytes ({} KB)",
        group_thousands(size as u64),
        group_thousands(limit as u64),
        limit / 1024
    )
}

#[cfg(test)]
mod tests {
    use super::{group_thousands, size_and_limit};

    #[test]
    fn one_byte_over_reads_as_over() {
        assert_eq!(
            size_and_limit(102_401, 102_400),
            "102,401 bytes; the limit is 102,400 bytes (100 KB)"
        );
    }

    #[test]
    fn numbers_read_with_thousands_separators() {
        assert_eq!(group_thousands(7), "7");
        assert_eq!(group_thousands(12), "12");
        assert_eq!(group_thousands(1234), "1,234");
        assert_eq!(group_thousands(100_000), "100,000");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
    }
}
