//! Dates as DATE and EXACT read them (docs/DECISIONS.md 51, 52): the calendar day a canonical
//! string names in a recognized format, or None (an impossible day such as 31/02/2025 too).
//!
//! The formats are the regexes of `values.date_formats` and `values._ISO_DATE`, handed in from
//! Python so that they are written once, and run by the `regex` crate, the engine of Polars'
//! `str.extract_groups`; the steps after the match are those of `values.date_of`, the Polars
//! expression that stays the reference (tests compare the two over generated dates). Polars
//! runs every format's regex over every row and builds its groups as columns; here a string
//! without four digits in a row (every format's year) is no date at once, and a date takes the
//! formats in order up to the first that matches.

use regex::Regex;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

pub struct DateFormats {
    /// the ISO test the first format is gated by
    iso: Regex,
    /// regexes with groups y, m, d (m may be a month name), in `date_formats` order
    formats: Vec<Regex>,
}

impl DateFormats {
    pub fn new(iso: &str, formats: &[String]) -> Result<Self, regex::Error> {
        Ok(DateFormats {
            iso: Regex::new(iso)?,
            formats: formats
                .iter()
                .map(|f| Regex::new(f))
                .collect::<Result<_, _>>()?,
        })
    }

    /// `values.date_of`: days since 1970-01-01 of the date `text` names, or None.
    pub fn day(&self, text: &str) -> Option<i32> {
        let s = text.trim(); // str.strip_chars(): Unicode White_Space
        if !has_year(s) {
            return None;
        }
        // the expression coalesces the formats' groups; every group of a format is required,
        // so that is the first format that matches
        let groups = self.formats.iter().enumerate().find_map(|(i, f)| {
            if i == 0 && !self.iso.is_match(s) {
                return None;
            }
            f.captures(s)
        })?;
        let (y, m, d) = (
            groups.name("y")?.as_str(),
            groups.name("m")?.as_str(),
            groups.name("d")?.as_str(),
        );
        let month = if m.bytes().all(|b| b.is_ascii_digit()) {
            m.parse().ok()?
        } else {
            let name = m.get(..3)?;
            MONTHS.iter().position(|n| *n == name)? as u32 + 1
        };
        civil_day(y.parse().ok()?, month, d.parse().ok()?)
    }

    pub fn days(&self, texts: &[Option<&str>]) -> Vec<Option<i32>> {
        texts.iter().map(|t| t.and_then(|t| self.day(t))).collect()
    }
}

/// Four ASCII digits in a row: the year every recognized date format has.
pub fn has_year(text: &str) -> bool {
    text.as_bytes()
        .windows(4)
        .any(|w| w.iter().all(u8::is_ascii_digit))
}

/// Days since 1970-01-01 of a proleptic Gregorian date of years 1 to 9999 (what Polars'
/// `%Y-%m-%d` reads after the expression drops year 0000), None for a day that does not exist.
fn civil_day(year: i32, month: u32, day: u32) -> Option<i32> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let length = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if !(1..=9999).contains(&year) || !(1..=length).contains(&day) {
        return None;
    }
    // Howard Hinnant's days_from_civil (years from March, in 400-year eras)
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = (y - era * 400) as u32;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some(era * 146_097 + day_of_era as i32 - 719_468)
}

#[cfg(test)]
mod tests {
    use super::*;

    // values.date_formats("DMY") and values._ISO_DATE
    fn dmy() -> DateFormats {
        let (d, m, y) = ("(?P<d>[0-9]{1,2})", "(?P<m>[0-9]{1,2})", "(?P<y>[0-9]{4})");
        let named = "(?P<m>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?\
                     |aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?";
        let formats = [
            format!("^{y}-(?P<m>[0-9]{{2}})-(?P<d>[0-9]{{2}})(?:[t ].*)?$"),
            format!("^{y}/{m}/{d}$"),
            format!("^{d}/{m}/{y}$"),
            format!("^{d}\\.{m}\\.{y}$"),
            format!("^{d}[- ]{named}[- ]{y}$"),
            format!("^{named} {d},? {y}$"),
        ];
        let iso = r"^(?i)[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?$";
        DateFormats::new(iso, &formats).unwrap()
    }

    #[test]
    fn civil_days_match_the_calendar() {
        assert_eq!(civil_day(1970, 1, 1), Some(0));
        assert_eq!(civil_day(2000, 3, 1), Some(11_017));
        assert_eq!(civil_day(1, 1, 1), Some(-719_162));
        assert_eq!(civil_day(9999, 12, 31), Some(2_932_896));
        assert_eq!(civil_day(2024, 2, 29), Some(19_782));
        assert_eq!(civil_day(2025, 2, 29), None);
        assert_eq!(civil_day(1900, 2, 29), None);
        assert_eq!(civil_day(2025, 13, 1), None);
        assert_eq!(civil_day(2025, 4, 31), None);
        assert_eq!(civil_day(0, 1, 1), None);
    }

    #[test]
    fn formats_in_order_and_impossible_days() {
        let f = dmy();
        let day = |t| f.day(t);
        assert_eq!(day("2025-03-04"), civil_day(2025, 3, 4));
        assert_eq!(day("2025-03-04t10:00:00z"), civil_day(2025, 3, 4));
        assert_eq!(day(" 04/03/2025 "), civil_day(2025, 3, 4));
        assert_eq!(day("2025/3/4"), civil_day(2025, 3, 4));
        assert_eq!(day("4.3.2025"), civil_day(2025, 3, 4));
        assert_eq!(day("4-march-2025"), civil_day(2025, 3, 4));
        assert_eq!(day("sept. 4, 2025"), civil_day(2025, 9, 4));
        assert_eq!(day("31/02/2025"), None);
        assert_eq!(day("0000-01-01"), None);
        assert_eq!(day("2025-03-04x"), None);
        assert_eq!(day("invoice 2025"), None);
        assert_eq!(day(""), None);
    }
}
