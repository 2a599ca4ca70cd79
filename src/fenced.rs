//! SPEC §8's `code_block` step for a model's answer text, as `extract.py` reads it: the body
//! of the first closed fenced block (```` ``` ```` or `~~~`) tagged `json` or untagged whose
//! body is a JSON object. The kernel takes the answers where it reads exactly what
//! `extract._fenced_blocks` reads (Python's white space is [`is_python_space`], the
//! canonical text's), and says [`Unsure`] (the Python path) for a one-line block and a tag
//! that is not ASCII, whose reading turns on Python's Unicode rules; the caller declines a body
//! that is not JSON as the kernel reads it.

use crate::canonical::is_python_space;

/// The text holds what the kernel leaves to the Python path.
#[derive(Debug, PartialEq, Eq)]
pub struct Unsure;

/// Whether Python's `text.strip().lstrip("\ufeff").strip()` starts with `{`: then the whole
/// text may be a JSON object (the `json` step), which is the caller's to read.
pub fn may_open_an_object(text: &str) -> bool {
    text.trim_start_matches(is_python_space)
        .trim_start_matches('\u{feff}')
        .trim_start_matches(is_python_space)
        .starts_with('{')
}

/// One closed fenced block: the byte range of its body and the end of its closing fence.
#[derive(Debug, PartialEq, Eq)]
struct Block {
    body: std::ops::Range<usize>,
    end: usize,
    json: bool,
}

/// The leftmost run of 3 or more backticks or tildes at or after `pos` (`_OPENER.search`).
fn opener(b: &[u8], mut pos: usize) -> Option<std::ops::Range<usize>> {
    while pos < b.len() {
        let c = b[pos];
        if c != b'`' && c != b'~' {
            pos += 1;
            continue;
        }
        let run = b[pos..].iter().take_while(|x| **x == c).count();
        if run >= 3 {
            return Some(pos..pos + run);
        }
        pos += run;
    }
    None
}

/// The first line at or after `from` (a line start) that is `[ \t]*` + at least `n` of `c` +
/// `[ \t]*` (the closing regex, MULTILINE): its start and end.
fn closing(b: &[u8], from: usize, c: u8, n: usize) -> Option<(usize, usize)> {
    let mut start = from;
    while start < b.len() {
        let end = b[start..]
            .iter()
            .position(|x| *x == b'\n')
            .map_or(b.len(), |k| start + k);
        let line = &b[start..end];
        let lead = line
            .iter()
            .take_while(|x| matches!(x, b' ' | b'\t'))
            .count();
        let run = line[lead..].iter().take_while(|x| **x == c).count();
        if run >= n && line[lead + run..].iter().all(|x| matches!(x, b' ' | b'\t')) {
            return Some((start, end));
        }
        start = end + 1;
    }
    None
}

/// The next closed block at or after `pos`, as `_fenced_blocks` yields them; None when no
/// further block closes (an unclosed fence ends the scan).
fn next_block(text: &str, pos: usize) -> Result<Option<Block>, Unsure> {
    let b = text.as_bytes();
    let mut pos = pos;
    loop {
        let Some(fence) = opener(b, pos) else {
            return Ok(None);
        };
        let c = b[fence.start];
        let line_end = b[fence.end..]
            .iter()
            .position(|x| *x == b'\n')
            .map_or(b.len(), |k| fence.end + k);
        let rest = &b[fence.end..line_end];
        let n = fence.len();
        if rest.windows(n).any(|w| w.iter().all(|x| *x == c)) {
            return Err(Unsure); // a one-line block: its tag is split by Unicode rules
        }
        if c == b'`' && rest.contains(&b'`') {
            pos = fence.end; // CommonMark: no backtick in a backtick fence's info string
            continue;
        }
        if line_end == b.len() {
            return Ok(None); // no line after the opening one: no closing fence
        }
        let body_start = line_end + 1;
        let Some((close_start, close_end)) = closing(b, body_start, c, n) else {
            return Ok(None);
        };
        // the first word of `rest.strip()`, lower-cased: a word that is not ASCII is left to
        // Python's lower()
        let tag = text[fence.end..line_end]
            .split(is_python_space)
            .find(|word| !word.is_empty())
            .unwrap_or_default();
        if !tag.is_ascii() {
            return Err(Unsure);
        }
        return Ok(Some(Block {
            body: body_start..close_start,
            end: close_end,
            json: tag.is_empty() || tag.eq_ignore_ascii_case("json"),
        }));
    }
}

/// The stripped bodies of the blocks tagged `json` or untagged, in order, for the caller to
/// try as JSON objects (it stops at the first that is one); an `Err` ends the scan unsure.
pub fn json_bodies(text: &str) -> impl Iterator<Item = Result<&str, Unsure>> {
    let mut pos = Some(0);
    std::iter::from_fn(move || loop {
        let block = match next_block(text, pos?) {
            Ok(Some(block)) => block,
            Ok(None) => return None,
            Err(unsure) => {
                pos = None;
                return Some(Err(unsure));
            }
        };
        pos = Some(block.end);
        if block.json {
            return Some(Ok(text[block.body].trim_matches(is_python_space))); // str.strip()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bodies(text: &str) -> Vec<Result<&str, Unsure>> {
        json_bodies(text).collect()
    }

    #[test]
    fn a_tagged_block_gives_its_stripped_body() {
        let text = "Here it is:\n```json\n{\"a\": 1}\n```\nDone.";
        assert_eq!(bodies(text), [Ok("{\"a\": 1}")]);
        assert_eq!(bodies("~~~\n {} \n~~~"), [Ok("{}")]);
        assert_eq!(bodies("```JSON extra words\r\n{}\r\n```"), [Ok("{}")]);
    }

    #[test]
    fn other_tags_are_skipped_and_later_blocks_found() {
        let text = "```python\nx = 1\n```\ntext\n````\n{\"b\": 2}\n`````\n";
        assert_eq!(bodies(text), [Ok("{\"b\": 2}")]);
    }

    #[test]
    fn a_closing_fence_is_a_whole_line_of_at_least_the_opening_run() {
        // a shorter run, text after the run, or a carriage return do not close the block
        assert_eq!(
            bodies("````\n{}\n```\n````x\n```` \t\n"),
            [Ok("{}\n```\n````x")]
        );
        assert_eq!(bodies("```\n{}\n```\r\n"), []);
        assert_eq!(bodies("```\n{}\n  ``` "), [Ok("{}")]);
        assert_eq!(bodies("```json {}"), []); // unclosed: the scan ends
        assert_eq!(bodies("```json"), []);
    }

    #[test]
    fn a_backtick_in_a_backtick_info_string_is_no_fence() {
        assert_eq!(bodies("```a`b\n```\n{}\n```"), [Ok("{}")]);
        // a tilde fence may hold backticks in its info string
        assert_eq!(bodies("~~~json `x`\n{}\n~~~"), [Ok("{}")]);
    }

    #[test]
    fn python_white_space_is_stripped_and_split_on_and_a_tag_not_ascii_left_to_python() {
        assert_eq!(bodies("```json\u{a0}\n{}\n```"), [Ok("{}")]);
        assert_eq!(bodies("```\n\u{3000}{}\u{1f}\n```"), [Ok("{}")]);
        assert_eq!(bodies("```\n{\"é\": 1}\n```"), [Ok("{\"é\": 1}")]);
        assert_eq!(bodies("```jsön\n{}\n```"), [Err(Unsure)]);
        assert_eq!(bodies("one line ```json {}``` here"), [Err(Unsure)]);
    }

    #[test]
    fn the_whole_text_may_be_an_object_when_it_opens_with_a_brace() {
        assert!(may_open_an_object(" \x0c{\"a\": 1}"));
        assert!(!may_open_an_object("Here:\n{}"));
        assert!(may_open_an_object("\u{a0}\u{feff}\u{feff} {}"));
        assert!(may_open_an_object("\u{3000}{}"));
        assert!(!may_open_an_object("\u{feff}```\n{}\n```"));
        assert!(!may_open_an_object("  "));
    }
}
