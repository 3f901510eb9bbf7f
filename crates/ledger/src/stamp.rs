//! UTC timestamps in the one layout the ledger stores: `YYYY-MM-DDTHH:MM:SSZ`.

use std::fmt;
use std::str::FromStr;

use time::format_description::well_known::Rfc3339;
use time::macros::{datetime, format_description};
use time::{Duration, OffsetDateTime, PrimitiveDateTime, UtcOffset};

use crate::error::Error;

/// Seconds in a day: a UTC day, as the ledger counts them (no leap seconds).
const SECONDS_PER_DAY: i64 = 86_400;

/// A UTC instant with whole seconds, written `YYYY-MM-DDTHH:MM:SSZ` (SPEC §7), in the years
/// that layout can write: 0000 to 9999 ([`Timestamp::MIN`] to [`Timestamp::MAX`]). Every
/// constructor refuses an instant outside them, so every `Timestamp` renders to text that
/// reads back to it.
///
/// The crate never reads the clock: callers build `now` from a flag or from their own clock
/// with [`Timestamp::from_datetime`] and pass it in. The `time` crate it takes is re-exported
/// as [`freezegate_ledger::time`](crate::time):
///
/// ```
/// use freezegate_ledger::Timestamp;
/// use freezegate_ledger::time::{OffsetDateTime, UtcOffset};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let paris = OffsetDateTime::from_unix_timestamp(1_789_633_805)?
///     .to_offset(UtcOffset::from_hms(2, 0, 0)?);
/// let now = Timestamp::from_datetime(paris)?;
/// assert_eq!(now.to_string(), "2026-09-17T08:30:05Z");
/// assert_eq!(now.datetime().offset(), UtcOffset::UTC);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp(OffsetDateTime);

impl Timestamp {
    /// The earliest instant the layout can write: `0000-01-01T00:00:00Z`.
    pub const MIN: Timestamp = Timestamp(datetime!(0000-01-01 00:00:00 UTC));
    /// The latest instant the layout can write: `9999-12-31T23:59:59Z`.
    pub const MAX: Timestamp = Timestamp(datetime!(9999-12-31 23:59:59 UTC));

    /// `dt` as a timestamp, if its year (in UTC) is one the layout can write.
    fn checked(dt: OffsetDateTime) -> Option<Timestamp> {
        (0..=9999).contains(&dt.year()).then_some(Timestamp(dt))
    }

    /// The instant `dt`, converted to UTC, sub-second part dropped; an error when it falls
    /// outside the years 0000 to 9999 in UTC.
    pub fn from_datetime(dt: OffsetDateTime) -> Result<Timestamp, Error> {
        // `to_offset` panics when UTC is past the years `time` holds (9999-12-31T23:30-01:00
        // is year 10000 in UTC).
        dt.checked_to_offset(UtcOffset::UTC)
            .and_then(|utc| Timestamp::checked(utc.replace_nanosecond(0).unwrap_or(utc)))
            .ok_or_else(|| {
                Error::Timestamp(format!(
                    "{dt} is outside the years 0000 to 9999 (UTC) that a ledger time can hold"
                ))
            })
    }

    /// Parses any RFC 3339 date-time (`2026-09-17T10:00:00+02:00`, fractions allowed), as
    /// `--now` accepts it; the result is in UTC with whole seconds, in the years 0000 to 9999.
    ///
    /// A leap second (`23:59:60`) is refused, as the stored layout refuses it: a ledger
    /// counts days of 86 400 seconds, and `time` would otherwise read it as `23:59:59`.
    pub fn parse_rfc3339(text: &str) -> Result<Timestamp, Error> {
        if text.get(17..19) == Some("60") {
            return Err(Error::Timestamp(format!(
                "{text:?} is a leap second, which a ledger time cannot hold"
            )));
        }
        let dt = OffsetDateTime::parse(text, &Rfc3339)
            .map_err(|e| Error::Timestamp(format!("{text:?} is not an RFC 3339 date-time: {e}")))?;
        Timestamp::from_datetime(dt).map_err(|_| {
            Error::Timestamp(format!(
                "{text:?} is outside the years 0000 to 9999 (UTC) that a ledger time can hold"
            ))
        })
    }

    /// Seconds since the Unix epoch.
    pub fn unix_seconds(self) -> i64 {
        self.0.unix_timestamp()
    }

    /// The instant `secs` seconds after the Unix epoch, if it falls in the years 0000 to 9999.
    pub fn from_unix_seconds(secs: i64) -> Option<Timestamp> {
        OffsetDateTime::from_unix_timestamp(secs)
            .ok()
            .and_then(Timestamp::checked)
    }

    /// The instant `days` whole days later (earlier, for a negative `days`), if it falls in
    /// the years 0000 to 9999; `None` otherwise, whatever `days` is.
    pub fn plus_days(self, days: i64) -> Option<Timestamp> {
        // `Duration::days` panics past `i64::MAX` seconds; the seconds are counted here.
        let seconds = days.checked_mul(SECONDS_PER_DAY)?;
        self.0
            .checked_add(Duration::seconds(seconds))
            .and_then(Timestamp::checked)
    }

    /// The underlying `time` value (UTC).
    pub fn datetime(self) -> OffsetDateTime {
        self.0
    }
}

impl FromStr for Timestamp {
    type Err = Error;

    /// Parses exactly `YYYY-MM-DDTHH:MM:SSZ`: no fractions, no offsets, no lowercase `t`/`z`.
    fn from_str(s: &str) -> Result<Timestamp, Error> {
        let shape_ok = s.len() == 20
            && s.bytes().enumerate().all(|(i, b)| match i {
                4 | 7 => b == b'-',
                10 => b == b'T',
                13 | 16 => b == b':',
                19 => b == b'Z',
                _ => b.is_ascii_digit(),
            });
        let bad = || Error::Timestamp(format!("{s:?} is not a UTC time as YYYY-MM-DDTHH:MM:SSZ"));
        if !shape_ok {
            return Err(bad());
        }
        let layout = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
        PrimitiveDateTime::parse(s, layout)
            .map(|p| Timestamp(p.assume_utc()))
            .map_err(|_| bad())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        )
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_the_stored_layout() {
        let t: Timestamp = "2026-09-17T08:30:05Z".parse().unwrap();
        assert_eq!(t.to_string(), "2026-09-17T08:30:05Z");
        assert_eq!(t.plus_days(14).unwrap().to_string(), "2026-10-01T08:30:05Z");
    }

    proptest::proptest! {
        /// `plus_days` never panics: any count of days gives the instant that many days
        /// later when `time` can hold it, else `None`.
        #[test]
        fn plus_days_is_total(
            start in -62_167_219_200i64..=253_402_300_799,
            days in proptest::prop_oneof![
                proptest::num::i64::ANY,
                -3_000_000i64..3_000_000,
                proptest::strategy::Just(i64::MAX),
                proptest::strategy::Just(i64::MIN),
            ],
        ) {
            // Years 0000 to 9999: the layout's range.
            let t = Timestamp::from_unix_seconds(start).unwrap();
            let expected = days
                .checked_mul(86_400)
                .and_then(|s| s.checked_add(start))
                .and_then(Timestamp::from_unix_seconds);
            proptest::prop_assert_eq!(t.plus_days(days), expected);
        }

        /// Every timestamp renders to the stored layout and reads back to itself, however it
        /// was built; an instant outside the layout's years is refused, not built.
        #[test]
        fn every_timestamp_reads_back(secs in proptest::prop_oneof![
            proptest::num::i64::ANY,
            -70_000_000_000i64..300_000_000_000,
        ], days in -4_000_000i64..4_000_000, offset_secs in -93_599i32..=93_599) {
            let in_range = (Timestamp::MIN.unix_seconds()..=Timestamp::MAX.unix_seconds()).contains(&secs);
            let built = Timestamp::from_unix_seconds(secs);
            proptest::prop_assert_eq!(built.is_some(), in_range);
            if let Some(t) = built {
                // Seen through any offset `time` can hold, the instant is the same one.
                let offset = UtcOffset::from_whole_seconds(offset_secs).unwrap();
                if let Some(there) = t.datetime().checked_to_offset(offset) {
                    proptest::prop_assert_eq!(Timestamp::from_datetime(there).ok(), Some(t));
                }
                proptest::prop_assert_eq!(t.to_string().parse::<Timestamp>().ok(), Some(t));
                proptest::prop_assert_eq!(Timestamp::from_datetime(t.datetime()).ok(), Some(t));
                if let Some(later) = t.plus_days(days) {
                    proptest::prop_assert_eq!(later.to_string().parse::<Timestamp>().ok(), Some(later));
                }
            }
        }
    }

    #[test]
    fn the_range_ends_are_the_layouts() {
        assert_eq!(Timestamp::MIN.to_string(), "0000-01-01T00:00:00Z");
        assert_eq!(Timestamp::MAX.to_string(), "9999-12-31T23:59:59Z");
        assert_eq!(
            "0000-01-01T00:00:00Z".parse::<Timestamp>().ok(),
            Some(Timestamp::MIN)
        );
        assert_eq!(Timestamp::MIN.plus_days(-1), None);
        assert_eq!(Timestamp::MAX.plus_days(1), None);
        assert_eq!(Timestamp::from_unix_seconds(-70_000_000_000), None);
        // A time in year 0000 with an offset east of UTC is in year -1 in UTC.
        let err = Timestamp::parse_rfc3339("0000-01-01T00:30:00+01:00").unwrap_err();
        assert!(
            err.to_string().contains("outside the years 0000 to 9999"),
            "{err}"
        );
        let early = OffsetDateTime::from_unix_timestamp(-70_000_000_000).unwrap();
        assert!(Timestamp::from_datetime(early).is_err());
    }

    #[test]
    fn rejects_other_layouts() {
        for bad in [
            "2026-09-17T08:30:05+00:00",
            "2026-09-17T08:30:05.1Z",
            "2026-09-17 08:30:05Z",
            "2026-02-30T08:30:05Z",
            "2026-09-17t08:30:05z",
            "+2026-09-17T08:30:05Z",
        ] {
            assert!(bad.parse::<Timestamp>().is_err(), "{bad}");
        }
    }

    #[test]
    fn rfc3339_converts_to_utc_whole_seconds() {
        let t = Timestamp::parse_rfc3339("2026-09-17T10:00:00.75+02:00").unwrap();
        assert_eq!(t.to_string(), "2026-09-17T08:00:00Z");
        assert!(Timestamp::parse_rfc3339("yesterday").is_err());
    }

    /// Year 10000 in UTC, reached through an offset west of it, is an error, not a panic.
    #[test]
    fn an_instant_past_9999_in_utc_is_refused() {
        let err = Timestamp::parse_rfc3339("9999-12-31T23:59:59-01:00").unwrap_err();
        assert!(
            err.to_string().contains("outside the years 0000 to 9999"),
            "{err}"
        );
        let late = datetime!(9999-12-31 23:30:00 -01:00);
        assert!(Timestamp::from_datetime(late).is_err());
        assert_eq!(
            Timestamp::parse_rfc3339("9999-12-31T23:59:59+01:00")
                .map(|t| t.to_string())
                .ok(),
            Some("9999-12-31T22:59:59Z".to_owned())
        );
    }

    /// A leap second is refused by both readers, not read as `:59` by one of them.
    #[test]
    fn a_leap_second_is_refused_by_both_readers() {
        let err = Timestamp::parse_rfc3339("2016-12-31T23:59:60Z").unwrap_err();
        assert!(err.to_string().contains("leap second"), "{err}");
        assert!("2016-12-31T23:59:60Z".parse::<Timestamp>().is_err());
        assert!(Timestamp::parse_rfc3339("2016-12-31T23:59:59Z").is_ok());
    }
}
