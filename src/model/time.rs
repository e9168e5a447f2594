//! UTC timestamps and calendar dates, without a clock.
//!
//! The core never reads the clock: callers pass a [`Timestamp`] in (the CLI
//! takes it from `MEMOIR_NOW` or the system clock). Only the two textual forms
//! memoir writes are supported, so a hand-rolled civil-date conversion is all
//! that is needed.

use std::fmt;

/// Milliseconds in a day: a [`Timestamp`] is in milliseconds, a [`Date`]
/// in days.
pub const DAY_MS: i64 = 86_400_000;

/// A UTC instant, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

/// A UTC calendar date, in days since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(pub i64);

/// Why a timestamp or date did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a UTC time of the form YYYY-MM-DDTHH:MM:SSZ")]
pub struct TimeError(pub String);

/// Why a date did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a date of the form YYYY-MM-DD")]
pub struct DateError(pub String);

// Howard Hinnant's days_from_civil / civil_from_days: exact for the
// proleptic Gregorian calendar, which is what RFC 3339 uses.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_ymd(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if !s.is_ascii() || b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y = i64::from(digits(&s[0..4])?);
    let m = digits(&s[5..7])?;
    let d = digits(&s[8..10])?;
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

impl Date {
    /// Parses `YYYY-MM-DD`.
    pub fn parse(s: &str) -> Result<Date, DateError> {
        parse_ymd(s)
            .map(Date)
            .ok_or_else(|| DateError(s.to_string()))
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = civil_from_days(self.0);
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

impl Timestamp {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
    pub fn parse(s: &str) -> Result<Timestamp, TimeError> {
        let err = || TimeError(s.to_string());
        let rest = s.strip_suffix('Z').ok_or_else(err)?;
        if !rest.is_ascii() || rest.len() < 19 || rest.as_bytes()[10] != b'T' {
            return Err(err());
        }
        let days = parse_ymd(&rest[..10]).ok_or_else(err)?;
        let hms = &rest[11..19];
        let hb = hms.as_bytes();
        if hb[2] != b':' || hb[5] != b':' {
            return Err(err());
        }
        let (h, mi, se) = (
            digits(&hms[0..2]).ok_or_else(err)?,
            digits(&hms[3..5]).ok_or_else(err)?,
            digits(&hms[6..8]).ok_or_else(err)?,
        );
        if h > 23 || mi > 59 || se > 59 {
            return Err(err());
        }
        let mut ms = 0i64;
        let frac = &rest[19..];
        if !frac.is_empty() {
            let f = frac.strip_prefix('.').ok_or_else(err)?;
            if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err());
            }
            let padded = format!("{f:0<3}");
            ms = i64::from(digits(&padded[..3]).ok_or_else(err)?);
        }
        let secs = days * 86400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(se);
        Ok(Timestamp(secs * 1000 + ms))
    }

    /// The UTC date this instant falls on.
    pub fn date(self) -> Date {
        Date(self.0.div_euclid(DAY_MS))
    }

    /// `HH:MM:SSZ`, as in a log heading.
    pub fn clock(self) -> String {
        let s = self.0.div_euclid(1000).rem_euclid(86400);
        format!("{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, as in frontmatter.
    pub fn seconds(self) -> String {
        format!("{}T{}", self.date(), self.clock())
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, as in event metadata.
    pub fn millis(self) -> String {
        let clock = self.clock();
        format!(
            "{}T{}.{:03}Z",
            self.date(),
            &clock[..8],
            self.0.rem_euclid(1000)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let t = Timestamp::parse("2026-11-29T10:41:07Z").unwrap();
        assert_eq!(t.seconds(), "2026-11-29T10:41:07Z");
        assert_eq!(t.millis(), "2026-11-29T10:41:07.000Z");
        let t = Timestamp::parse("1969-12-31T23:59:59.5Z").unwrap();
        assert_eq!(t.millis(), "1969-12-31T23:59:59.500Z");
        assert_eq!(Date::parse("2024-02-29").unwrap().to_string(), "2024-02-29");
    }

    #[test]
    fn rejects_nonsense() {
        for bad in [
            "2026-13-01T00:00:00Z",
            "2025-02-29",
            "2026-11-29T24:00:00Z",
            "2026-11-29 10:41:07Z",
            "2026-11-29T10:41:07",
            "",
            "２０２６-11-29T10:41:07Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
        assert!(Date::parse("2025-02-29").is_err());
        assert!(Date::parse("2026-1-01").is_err());
    }
}
