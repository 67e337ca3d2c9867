//! Caller-supplied time: milliseconds since the Unix epoch, and its RFC 3339 text.

/// A point in time in milliseconds since the Unix epoch. The engine never reads a clock:
/// every value of this type comes from the caller.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct Millis(pub u64);

/// The last millisecond of year 9999, the latest instant RFC 3339 can write.
pub const MAX_MILLIS: Millis = Millis(253_402_300_799_999);

const MS_PER_DAY: u64 = 86_400_000;

/// Calendar fields of an instant in UTC.
pub(crate) struct Civil {
    pub year: u32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub milli: u32,
}

impl Millis {
    /// `self + ms`, saturating at [`MAX_MILLIS`].
    pub fn plus(self, ms: u64) -> Millis {
        Millis(self.0.saturating_add(ms).min(MAX_MILLIS.0))
    }

    /// RFC 3339 UTC text with milliseconds, e.g. `2026-01-15T09:00:00.000Z`.
    pub fn to_rfc3339(self) -> String {
        let c = self.civil();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            c.year, c.month, c.day, c.hour, c.minute, c.second, c.milli
        )
    }

    /// The calendar fields of this instant in UTC.
    pub(crate) fn civil(self) -> Civil {
        let ms = self.0.min(MAX_MILLIS.0);
        let (days, rem) = (ms / MS_PER_DAY, (ms % MS_PER_DAY) as u32);
        let (year, month, day) = civil_from_days(days);
        let secs = rem / 1000;
        Civil {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs / 60 % 60,
            second: secs % 60,
            milli: rem % 1000,
        }
    }

    /// Parses any RFC 3339 date-time (fractions of any length, `Z` or a numeric offset).
    /// Instants before the epoch or after year 9999 give `None`.
    pub fn parse_rfc3339(text: &str) -> Option<Millis> {
        let b = text.as_bytes();
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = b.get(r)?;
            s.iter().all(u8::is_ascii_digit).then_some(())?;
            std::str::from_utf8(s).ok()?.parse().ok()
        };
        let sep = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
        if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
            return None;
        }
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
            return None;
        }
        let mut i = 19;
        let mut frac_ms = 0i64;
        if sep(i, b".") {
            let start = i + 1;
            i = start;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                return None;
            }
            let digits = &text[start..i.min(start + 3)];
            frac_ms = digits.parse::<i64>().ok()? * 10i64.pow(3 - digits.len() as u32);
        }
        let offset_min = match b.get(i)? {
            b'Z' | b'z' if i + 1 == b.len() => 0,
            sign @ (b'+' | b'-') if i + 6 == b.len() && sep(i + 3, b":") => {
                let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
                if oh > 23 || om > 59 {
                    return None;
                }
                let m = oh * 60 + om;
                if *sign == b'-' {
                    -m
                } else {
                    m
                }
            }
            _ => return None,
        };
        let days = days_from_civil(y, mo, d);
        let secs = days * 86_400 + h * 3600 + mi * 60 + s.min(59) - offset_min * 60;
        let ms = secs.checked_mul(1000)? + frac_ms;
        u64::try_from(ms)
            .ok()
            .filter(|&ms| ms <= MAX_MILLIS.0)
            .map(Millis)
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(days: u64) -> (u32, u32, u32) {
    // Days before the epoch never occur (time is unsigned), so the era arithmetic stays in
    // unsigned 32-bit parts after the first division.
    let z = days + 719_468;
    let era = (z / 146_097) as u32;
    let doe = (z % 146_097) as u32;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u32::from(m <= 2);
    (y, m, d)
}

/// (year, month, day) to days since 1970-01-01.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_with_millis() {
        assert_eq!(Millis(0).to_rfc3339(), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            Millis(1_768_467_600_123).to_rfc3339(),
            "2026-01-15T09:00:00.123Z"
        );
        assert_eq!(MAX_MILLIS.to_rfc3339(), "9999-12-31T23:59:59.999Z");
        assert_eq!(Millis(u64::MAX).to_rfc3339(), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn parses_what_it_formats_and_other_rfc3339_forms() {
        for ms in [0, 951_782_400_000, 1_768_467_600_123, MAX_MILLIS.0] {
            assert_eq!(
                Millis::parse_rfc3339(&Millis(ms).to_rfc3339()),
                Some(Millis(ms))
            );
        }
        let t = Some(Millis(1_768_467_600_000));
        assert_eq!(Millis::parse_rfc3339("2026-01-15T09:00:00Z"), t);
        assert_eq!(Millis::parse_rfc3339("2026-01-15t09:00:00z"), t);
        assert_eq!(Millis::parse_rfc3339("2026-01-15T10:30:00+01:30"), t);
        assert_eq!(Millis::parse_rfc3339("2026-01-15T04:00:00-05:00"), t);
        assert_eq!(
            Millis::parse_rfc3339("2026-01-15T09:00:00.123456789Z"),
            Some(Millis(1_768_467_600_123))
        );
        assert_eq!(
            Millis::parse_rfc3339("2026-01-15T09:00:00.5+00:00"),
            Some(Millis(1_768_467_600_500))
        );
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            "",
            "2026-01-15",
            "2026-01-15T09:00:00",
            "2026-13-15T09:00:00Z",
            "2026-01-15T09:00:00.Z",
            "2026-01-15T09:00:00+0100",
            "1969-12-31T23:59:59Z",
            "２026-01-15T09:00:00Z",
        ] {
            assert_eq!(Millis::parse_rfc3339(bad), None, "{bad}");
        }
    }
}
