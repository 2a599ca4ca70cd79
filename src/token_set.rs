//! The default SEMANTIC scorer natively: `scorers.lexical_token_set`, which is rapidfuzz's
//! `fuzz.token_set_ratio` / 100 on the first `cap` characters of each text, and 1 for two
//! empty texts. The steps and the arithmetic are rapidfuzz's (`fuzz_py.token_set_ratio`,
//! with `score_cutoff` 0), so the score is the same double: the words (split on what Python's
//! `str.isspace` calls white space, with one quirk of rapidfuzz's: [`is_space`]) as sets, their intersection and both differences, each
//! joined by one space in code point order, and the best of three normalized Indel
//! distances. tests/test_similarity.py holds it equal to rapidfuzz on random texts.

use rapidfuzz::distance::indel;

/// rapidfuzz's word separators in a text: what Python's `str.isspace` calls white space
/// (Unicode White_Space plus the information separators U+001C..U+001F, which Rust's
/// `char::is_whitespace` leaves out), except that in a text Python stores one byte per
/// character (none above U+00FF) rapidfuzz's C++ kernel does not split on U+0085 and U+00A0.
/// (Its pure-Python fallback does; the compiled kernel is what `pip install rapidfuzz` runs.)
fn is_space(c: char, one_byte: bool) -> bool {
    match c {
        '\t'..='\r' | '\u{1c}'..='\u{20}' => true,
        '\u{85}' | '\u{a0}' => !one_byte,
        '\u{1680}'
        | '\u{2000}'..='\u{200a}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202f}'
        | '\u{205f}'
        | '\u{3000}' => true,
        _ => false,
    }
}

/// The distinct words of a text in code point order (UTF-8 byte order is code point order).
fn words(text: &str) -> Vec<&str> {
    let one_byte = text.chars().all(|c| c <= '\u{ff}');
    let mut words: Vec<&str> = text
        .split(|c| is_space(c, one_byte))
        .filter(|w| !w.is_empty())
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// Characters of the words joined by single spaces.
fn joined_len(words: &[&str]) -> usize {
    let chars: usize = words.iter().map(|w| w.chars().count()).sum();
    chars + words.len().saturating_sub(1)
}

/// rapidfuzz's `_norm_distance` with no cutoff: 100 − 100·dist / lensum, 100 for lensum 0.
fn norm_distance(dist: usize, lensum: usize) -> f64 {
    if lensum == 0 {
        100.0
    } else {
        100.0 - (100 * dist) as f64 / lensum as f64
    }
}

/// `scorers.lexical_token_set` of one pair of texts.
pub fn similarity(g: &str, a: &str, cap: usize) -> f64 {
    if g.is_empty() && a.is_empty() {
        return 1.0;
    }
    let (g, a) = (
        crate::matching::prefix(g, Some(cap)),
        crate::matching::prefix(a, Some(cap)),
    );
    token_set_ratio(&words(g), &words(a)) / 100.0
}

/// `fuzz.token_set_ratio` (0..=100) of two sorted, distinct word lists.
fn token_set_ratio(wa: &[&str], wb: &[&str]) -> f64 {
    if wa.is_empty() || wb.is_empty() {
        return 0.0; // rapidfuzz keeps FuzzyWuzzy's 0 for a text without words
    }
    let (mut both, mut only_a, mut only_b) = (Vec::new(), Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < wa.len() || j < wb.len() {
        match (wa.get(i), wb.get(j)) {
            (Some(x), Some(y)) if x == y => {
                both.push(*x);
                (i, j) = (i + 1, j + 1);
            }
            (Some(x), Some(y)) if x < y => {
                only_a.push(*x);
                i += 1;
            }
            (Some(_), Some(y)) | (None, Some(y)) => {
                only_b.push(*y);
                j += 1;
            }
            (Some(x), None) => {
                only_a.push(*x);
                i += 1;
            }
            (None, None) => unreachable!(),
        }
    }
    if !both.is_empty() && (only_a.is_empty() || only_b.is_empty()) {
        return 100.0; // one text's words are all in the other
    }
    let (ab, ba) = (only_a.join(" "), only_b.join(" "));
    let (ab_len, ba_len) = (ab.chars().count(), ba.chars().count());
    let sect_len = joined_len(&both);
    let sep = usize::from(sect_len != 0);
    let (sect_ab_len, sect_ba_len) = (sect_len + sep + ab_len, sect_len + sep + ba_len);
    let dist = if ab.is_ascii() && ba.is_ascii() {
        indel::distance(ab.bytes(), ba.bytes())
    } else {
        indel::distance(ab.chars(), ba.chars())
    };
    let result = norm_distance(dist, sect_ab_len + sect_ba_len);
    if sect_len == 0 {
        return result;
    }
    // sect+ab against sect (and sect+ba against sect) differ by the added words only
    let sect_ab = norm_distance(sep + ab_len, sect_len + sect_ab_len);
    let sect_ba = norm_distance(sep + ba_len, sect_len + sect_ba_len);
    result.max(sect_ab).max(sect_ba)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rapidfuzz_documented_values() {
        // fuzz.token_set_ratio's docstring examples, and scorers.lexical_token_set's
        assert_eq!(
            similarity("fuzzy was a bear", "fuzzy fuzzy was a bear", 100),
            1.0
        );
        assert_eq!(
            similarity(
                "fuzzy was a bear but not a dog",
                "fuzzy was a bear but not a cat",
                100
            ),
            0.923076923076923
        );
        assert_eq!(similarity("steel bolts m8", "m8 steel bolts", 100), 1.0);
    }

    #[test]
    fn empty_texts_and_white_space() {
        assert_eq!(similarity("", "", 10), 1.0);
        assert_eq!(similarity(" ", " ", 10), 0.0); // no words on either side
        assert_eq!(similarity("a", "", 10), 0.0);
        assert_eq!(similarity("a\u{1f}b", "b a", 10), 1.0); // U+001F separates words
                                                            // U+0085 separates words in a text with a character above U+00FF only
        assert_eq!(similarity("a\u{85}c", "a c 日", 10), 0.5);
        assert_eq!(similarity("a\u{85}c\u{100}", "a c\u{100}", 10), 1.0);
        // (100 − 100·2/6) / 100, as rapidfuzz rounds it: not 1 − 2/6 (0.6666666666666667)
        assert_eq!(similarity("abc", "abd", 10), 0.6666666666666665);
    }

    #[test]
    fn capped_texts() {
        assert_eq!(similarity("ab cd", "ab xy", 2), 1.0); // "ab" against "ab"
        assert_eq!(similarity("éé x", "éé y", 2), 1.0);
    }
}
