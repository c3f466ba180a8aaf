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

#[cfg(test)]
mod tests {
    use super::group_thousands;

    #[test]
    fn numbers_read_with_thousands_separators() {
        assert_eq!(group_thousands(7), "7");
        assert_eq!(group_thousands(12), "12");
        assert_eq!(group_thousands(1234), "1,234");
        assert_eq!(group_thousands(100_000), "100,000");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
    }
}
