//! How the reports write numbers: objectives to a few significant digits
//! ([`crate::number::sig`]), durations.

/// An objective in a table: four significant digits.
pub fn objective(v: f64) -> String {
    crate::number::sig(v, 4)
}

/// A duration: "0.4 s", "39 s", "6 min 51 s", "2 h 05 min".
pub fn duration(seconds: f64) -> String {
    if seconds < 10.0 {
        return format!("{seconds:.1} s");
    }
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration(0.42), "0.4 s");
        assert_eq!(duration(39.4), "39 s");
        assert_eq!(duration(411.0), "6 min 51 s");
        assert_eq!(duration(7500.0), "2 h 05 min");
    }
}
