//! The story's calendar and its measures of time: which dates exist, how many
//! days lie between two of them, how old someone born on one is on another,
//! the time of day a scene gives (`time: dusk`, `time: 21:40`) as a window of
//! minutes, and a travel time (`3 days`, `6 hours`).
//!
//! The calendar is the Gregorian one (proleptic, with its leap years) unless
//! `[calendar] months` in `control-room.toml` names the world's own months
//! and their lengths; such a calendar has no leap years. Dates are written
//! year-month-day with the month's number either way; the calendar gives the
//! month its name where a date is shown.

use serde::Deserialize;

/// A story date: a year, optionally a month, optionally a day ("1203-04-12",
/// "1203-4", "-45"), the month by its number in the manuscript's calendar.
/// Dates compare field by field; a date that leaves a field out is equal to
/// every date that shares its other fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoryDate {
    pub year: i64,
    pub month: Option<u8>,
    pub day: Option<u8>,
}

impl StoryDate {
    /// Reads `year[-month[-day]]`, with an optional time after the day
    /// (`1203-04-12T08:00`, `1203-04-12 08:00`), which is ignored.
    pub fn parse(text: &str) -> Option<StoryDate> {
        let text = text.trim();
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let date = text.split(['T', ' ']).next()?;
        let mut parts = date.split('-');
        let year_text = parts.next()?;
        if year_text.is_empty() || !year_text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let year: i64 = year_text.parse().ok()?;
        let mut field = |max: u8| -> Result<Option<u8>, ()> {
            match parts.next() {
                None => Ok(None),
                Some(part) if (1..=2).contains(&part.len()) => match part.parse::<u8>() {
                    Ok(value) if (1..=max).contains(&value) => Ok(Some(value)),
                    _ => Err(()),
                },
                Some(_) => Err(()),
            }
        };
        // Whether the month and day exist is the calendar's to say
        // (`Calendar::problem`): a world's months may be more, or longer.
        let month = field(99).ok()?;
        let day = field(99).ok()?;
        if parts.next().is_some() || (month.is_none() && date.ends_with('-')) {
            return None;
        }
        Some(StoryDate {
            year: if negative { -year } else { year },
            month,
            day,
        })
    }

    /// Whether `self` is certainly earlier than `other`.
    pub fn is_before(&self, other: &StoryDate) -> bool {
        if self.year != other.year {
            return self.year < other.year;
        }
        match (self.month, other.month) {
            (Some(a), Some(b)) if a != b => return a < b,
            (Some(_), Some(_)) => {}
            _ => return false,
        }
        matches!((self.day, other.day), (Some(a), Some(b)) if a < b)
    }
}

impl std::fmt::Display for StoryDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.year)?;
        if let Some(month) = self.month {
            write!(f, "-{month:02}")?;
        }
        if let Some(day) = self.day {
            write!(f, "-{day:02}")?;
        }
        Ok(())
    }
}

/// Minutes in a day.
pub const DAY: i64 = 24 * 60;

const GREGORIAN: [(&str, u8); 12] = [
    ("January", 31),
    ("February", 28),
    ("March", 31),
    ("April", 30),
    ("May", 31),
    ("June", 30),
    ("July", 31),
    ("August", 31),
    ("September", 30),
    ("October", 31),
    ("November", 30),
    ("December", 31),
];

/// A month of the world's own calendar (`[calendar] months`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Month {
    pub name: String,
    pub days: u8,
}

/// `[calendar]`: the world's months, or none for the Gregorian calendar.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CalendarConfig {
    pub months: Vec<Month>,
}

impl CalendarConfig {
    /// Why these months cannot make a calendar, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if self.months.len() > 99 {
            return Some(format!(
                "[calendar] has {} months; a year holds at most 99",
                self.months.len()
            ));
        }
        for month in &self.months {
            if month.name.trim().is_empty() {
                return Some("[calendar] a month needs a name".to_owned());
            }
            if !(1..=99).contains(&month.days) {
                return Some(format!(
                    "[calendar] {} has {} days; give it from 1 to 99",
                    month.name, month.days
                ));
            }
        }
        None
    }
}

/// The calendar the manuscript's dates are counted in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Calendar {
    /// The world's months; empty for the Gregorian calendar.
    months: Vec<Month>,
}

impl Calendar {
    /// The calendar `[calendar]` describes (the Gregorian one when it names no months).
    pub fn new(config: &CalendarConfig) -> Calendar {
        Calendar {
            months: config.months.clone(),
        }
    }

    pub fn is_gregorian(&self) -> bool {
        self.months.is_empty()
    }

    fn month_count(&self) -> u8 {
        if self.is_gregorian() {
            12
        } else {
            self.months.len() as u8
        }
    }

    /// The name of month `month` (1-based), if the calendar has it.
    pub fn month_name(&self, month: u8) -> Option<&str> {
        let index = usize::from(month.checked_sub(1)?);
        if self.is_gregorian() {
            GREGORIAN.get(index).map(|(name, _)| *name)
        } else {
            self.months.get(index).map(|month| month.name.as_str())
        }
    }

    /// The days of `month` in `year`, if the calendar has that month.
    fn days_in(&self, year: i64, month: u8) -> Option<u8> {
        let index = usize::from(month.checked_sub(1)?);
        if self.is_gregorian() {
            let (_, days) = GREGORIAN.get(index)?;
            Some(if month == 2 && is_leap(year) {
                29
            } else {
                *days
            })
        } else {
            self.months.get(index).map(|month| month.days)
        }
    }

    /// Why `date` is not a date of this calendar, if it is not.
    pub fn problem(&self, date: &StoryDate) -> Option<String> {
        let month = date.month?;
        let Some(days) = self.days_in(date.year, month) else {
            return Some(format!(
                "the calendar has {} months, so there is no month {month}",
                self.month_count()
            ));
        };
        let day = date.day?;
        (day > days).then(|| {
            let name = self.month_name(month).unwrap_or_default();
            if self.is_gregorian() && month == 2 {
                format!("February {} has {days} days", date.year)
            } else {
                format!("{name} has {days} days")
            }
        })
    }

    /// The day `date` falls on, counted from a fixed day of the calendar;
    /// only for a whole date that the calendar has.
    pub fn day_number(&self, date: &StoryDate) -> Option<i64> {
        let (month, day) = (date.month?, date.day?);
        if self.problem(date).is_some() {
            return None;
        }
        if self.is_gregorian() {
            return Some(gregorian_days(date.year, month, day));
        }
        let year_length: i64 = self.months.iter().map(|month| i64::from(month.days)).sum();
        let before: i64 = self.months[..usize::from(month - 1)]
            .iter()
            .map(|month| i64::from(month.days))
            .sum();
        Some(date.year * year_length + before + i64::from(day) - 1)
    }

    /// A date as a reader would say it: "12 April 1203", "April 1203", "1203".
    pub fn format(&self, date: &StoryDate) -> String {
        let month = date.month.and_then(|month| self.month_name(month));
        match (date.day, month) {
            (Some(day), Some(month)) => format!("{day} {month} {}", date.year),
            (None, Some(month)) => format!("{month} {}", date.year),
            _ => date.to_string(),
        }
    }

    /// How old someone born on `born` is on `on`: the least and the most
    /// whole years, which differ when either date leaves out its month or
    /// day and so cannot tell whether the birthday has passed.
    pub fn age(&self, born: &StoryDate, on: &StoryDate) -> Option<(i64, i64)> {
        let years = on.year - born.year;
        let passed = match (born.month, on.month) {
            (Some(a), Some(b)) if a != b => Some(b > a),
            (Some(_), Some(_)) => match (born.day, on.day) {
                (Some(a), Some(b)) => Some(b >= a),
                _ => None,
            },
            _ => None,
        };
        let (least, most) = match passed {
            Some(true) => (years, years),
            Some(false) => (years - 1, years - 1),
            None => (years - 1, years),
        };
        (most >= 0).then_some((least.max(0), most))
    }
}

fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

/// Days from 1 March of year 0 in the proleptic Gregorian calendar (the
/// civil-from-days algorithm's inverse, valid for every year).
fn gregorian_days(year: i64, month: u8, day: u8) -> i64 {
    let (month, day) = (i64::from(month), i64::from(day));
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era
}

/// When in its day a scene happens, as a window of minutes from the day's
/// start: exact for a clock time, a span for a word ("dusk", "morning"), the
/// whole day when the scene does not say or says what this does not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeWindow {
    pub earliest: i64,
    pub latest: i64,
}

impl TimeWindow {
    pub const WHOLE_DAY: TimeWindow = TimeWindow {
        earliest: 0,
        latest: DAY,
    };

    /// Reads a scene's `time:`; `None` when it is not a time this knows.
    pub fn parse(text: &str) -> Option<TimeWindow> {
        let text = text.trim().to_lowercase();
        let text = text.trim_end_matches('.');
        if let Some(minutes) = clock_time(text) {
            return Some(TimeWindow {
                earliest: minutes,
                latest: minutes,
            });
        }
        let hours = |from: i64, to: i64| TimeWindow {
            earliest: from * 60,
            latest: to * 60,
        };
        Some(match text {
            "dawn" | "daybreak" | "sunrise" | "first light" => hours(4, 7),
            "early morning" => hours(5, 8),
            "morning" => hours(6, 12),
            "late morning" | "midmorning" | "mid-morning" => hours(9, 12),
            "noon" | "midday" | "mid-day" => hours(11, 13),
            "afternoon" => hours(12, 18),
            "late afternoon" => hours(15, 18),
            "dusk" | "sunset" | "sundown" | "twilight" | "nightfall" => hours(17, 21),
            "evening" => hours(17, 22),
            "night" => hours(19, 24),
            "late night" => hours(22, 24),
            "midnight" => hours(23, 24),
            _ => return None,
        })
    }

    /// Whether every moment of `self` is before every moment of `other`.
    pub fn is_before(&self, other: &TimeWindow) -> bool {
        self.latest < other.earliest
    }
}

/// "21:40", "9:05", "9pm", "9 p.m.", "21h".
fn clock_time(text: &str) -> Option<i64> {
    let compact: String = text.chars().filter(|c| !matches!(c, ' ' | '.')).collect();
    let (body, offset) = if let Some(body) = compact.strip_suffix("am") {
        (body, Some(0))
    } else if let Some(body) = compact.strip_suffix("pm") {
        (body, Some(12))
    } else {
        (compact.strip_suffix('h').unwrap_or(&compact), None)
    };
    let (hours, minutes) = match body.split_once(':') {
        Some((hours, minutes)) if minutes.len() == 2 => (hours, minutes.parse::<i64>().ok()?),
        Some(_) => return None,
        None => (body, 0),
    };
    if hours.is_empty() || hours.len() > 2 || !hours.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i64 = hours.parse().ok()?;
    let hours = match offset {
        Some(offset) if (1..=12).contains(&hours) => hours % 12 + offset,
        Some(_) => return None,
        None if hours <= 24 => hours,
        None => return None,
    };
    (minutes < 60 && hours * 60 + minutes <= DAY).then_some(hours * 60 + minutes)
}

/// Reads a travel time in minutes: "3 days", "6 hours", "1.5 days", "2
/// weeks", "45 minutes", or a bare number of days.
pub fn parse_duration(text: &str) -> Option<i64> {
    let text = text.trim().to_lowercase();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let per = match unit.trim() {
        "" | "d" | "day" | "days" => DAY,
        "h" | "hr" | "hrs" | "hour" | "hours" => 60,
        "w" | "week" | "weeks" => 7 * DAY,
        "min" | "mins" | "minute" | "minutes" => 1,
        _ => return None,
    };
    let minutes = number * per as f64;
    (minutes.is_finite() && minutes > 0.0 && minutes < 1e12).then(|| minutes.round() as i64)
}

/// A duration as a reader would say it: "3 days", "1 day 6 hours", "40 minutes".
pub fn format_duration(minutes: i64) -> String {
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    let (days, rest) = (minutes / DAY, minutes % DAY);
    let (hours, rest) = (rest / 60, rest % 60);
    let mut parts = Vec::new();
    if days > 0 {
        parts.push(plural(days, "day"));
    }
    if hours > 0 {
        parts.push(plural(hours, "hour"));
    }
    if rest > 0 && days == 0 {
        parts.push(plural(rest, "minute"));
    }
    if parts.is_empty() {
        return "no time".to_owned();
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(text: &str) -> StoryDate {
        StoryDate::parse(text).unwrap()
    }

    #[test]
    fn story_dates_parse_and_compare_by_their_known_fields() {
        let date = |text| StoryDate::parse(text).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(date("1203-04-12").to_string(), "1203-04-12");
        assert_eq!(date("1203-4-2T08:00").to_string(), "1203-04-02");
        assert_eq!(date("-45").year, -45);
        // Month 13 and day 32 are for the calendar to judge.
        assert_eq!(date("1203-13-32").month, Some(13));
        for bad in [
            "yesterday",
            "1203-100-01",
            "1203-04-0",
            "1203--01",
            "12/04/1203",
            "",
        ] {
            assert_eq!(StoryDate::parse(bad), None, "{bad}");
        }
        assert!(date("1203-04-12").is_before(&date("1203-04-13")));
        assert!(date("1202-12-31").is_before(&date("1203")));
        assert!(!date("1203-04").is_before(&date("1203-04-13")));
        assert!(!date("1203-04-13").is_before(&date("1203-04-13")));
    }

    #[test]
    fn gregorian_days_count_leap_years_and_cross_eras() {
        let calendar = Calendar::default();
        let days = |text| calendar.day_number(&date(text)).unwrap();
        assert_eq!(days("2024-03-01") - days("2024-02-28"), 2);
        assert_eq!(days("2023-03-01") - days("2023-02-28"), 1);
        assert_eq!(days("1900-03-01") - days("1900-02-28"), 1);
        assert_eq!(days("2000-03-01") - days("2000-02-28"), 2);
        assert_eq!(days("2001-01-01") - days("2000-01-01"), 366);
        assert_eq!(days("1-01-01") - days("0-12-31"), 1);
        assert_eq!(days("-1-01-01") + 365, days("0-01-01"));
        assert_eq!(calendar.day_number(&date("1203-04")), None);
        assert_eq!(
            calendar.problem(&date("1203-02-29")).as_deref(),
            Some("February 1203 has 28 days")
        );
        assert_eq!(calendar.problem(&date("1204-02-29")), None);
        assert_eq!(
            calendar.problem(&date("1203-13-01")).as_deref(),
            Some("the calendar has 12 months, so there is no month 13")
        );
        assert_eq!(calendar.format(&date("1203-04-12")), "12 April 1203");
    }

    #[test]
    fn a_world_calendar_names_its_months_and_counts_their_days() {
        let calendar = Calendar::new(&CalendarConfig {
            months: vec![
                Month {
                    name: "Thaw".into(),
                    days: 40,
                },
                Month {
                    name: "Dark".into(),
                    days: 20,
                },
            ],
        });
        let days = |text| calendar.day_number(&date(text)).unwrap();
        assert_eq!(days("12-02-01") - days("12-01-40"), 1);
        assert_eq!(days("13-01-01") - days("12-01-01"), 60);
        assert_eq!(calendar.format(&date("12-01-33")), "33 Thaw 12");
        assert_eq!(
            calendar.problem(&date("12-02-21")).as_deref(),
            Some("Dark has 20 days")
        );
        assert!(calendar.problem(&date("12-03-01")).is_some());
    }

    #[test]
    fn ages_are_whole_years_and_a_range_where_the_birthday_is_unknown() {
        let calendar = Calendar::default();
        assert_eq!(
            calendar.age(&date("1170-04-12"), &date("1203-04-12")),
            Some((33, 33))
        );
        assert_eq!(
            calendar.age(&date("1170-04-13"), &date("1203-04-12")),
            Some((32, 32))
        );
        assert_eq!(
            calendar.age(&date("1170"), &date("1203-04-12")),
            Some((32, 33))
        );
        assert_eq!(calendar.age(&date("1210"), &date("1203-04-12")), None);
    }

    #[test]
    fn times_of_day_are_windows_and_clock_times_are_exact() {
        let at = |text| TimeWindow::parse(text).unwrap();
        assert_eq!(at("21:40").earliest, 21 * 60 + 40);
        assert_eq!(at("9pm").earliest, 21 * 60);
        assert_eq!(at("12 a.m.").earliest, 0);
        assert_eq!(at("12pm").earliest, 12 * 60);
        assert!(at("dawn").is_before(&at("dusk")));
        assert!(!at("evening").is_before(&at("dusk")));
        assert!(at("Morning").is_before(&at("night")));
        assert_eq!(TimeWindow::parse("after the bells"), None);
        assert_eq!(TimeWindow::parse("25:00"), None);
        assert_eq!(TimeWindow::parse("9:5"), None);
    }

    #[test]
    fn durations_read_their_units_and_a_bare_number_is_days() {
        assert_eq!(parse_duration("3"), Some(3 * DAY));
        assert_eq!(parse_duration("1.5 days"), Some(DAY + DAY / 2));
        assert_eq!(parse_duration("6 hours"), Some(360));
        assert_eq!(parse_duration("2 weeks"), Some(14 * DAY));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("0"), None);
        assert_eq!(format_duration(DAY + 360), "1 day 6 hours");
        assert_eq!(format_duration(40), "40 minutes");
    }
}
