//! The bounds of every number and name a user can give, in one place: the problem file's
//! checks ([`super::file`]) and the command line's (`run/settings.rs`, `cli.rs`) both use
//! them, so a value refused in one is refused in the other, with the same words.
//!
//! Each check returns the reason as text; the caller adds where the value came from
//! (`file:line:col` or the flag).

/// The longest compile or run timeout: a week. Longer is a typo, and a timeout must stay a
/// number of seconds a clock can count (`1e30` cannot be slept).
pub const MAX_TIMEOUT_S: f64 = 7.0 * 86_400.0;

/// The most timed runs per variant.
pub const MAX_REPEATS: u32 = 10_000;

/// The default of `max_output_mb`: 1 GiB, room for the array dumps of PolyBench's largest
/// datasets.
pub const DEFAULT_OUTPUT_BYTES: u64 = 1 << 30;

/// The largest `max_output_mb`: a TiB.
pub const MAX_OUTPUT_MB: u64 = 1 << 20;

/// The bytes one child may write to any one file: 1..=[`MAX_OUTPUT_MB`] MiB.
pub fn output_mb(mb: u64) -> Result<u64, String> {
    if (1..=MAX_OUTPUT_MB).contains(&mb) {
        Ok(mb << 20)
    } else {
        Err(format!(
            "must be between 1 and {MAX_OUTPUT_MB} (MiB), got `{mb}`"
        ))
    }
}

/// Integer parameters and bounds must be exactly representable as f64 (2^53), the form the
/// space keeps them in.
pub const MAX_EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// How deeply a constraint expression may nest (parentheses, `not`, unary minus); deeper
/// would overflow the parser's stack.
pub const MAX_EXPR_DEPTH: usize = 200;

/// A timeout: a finite number of seconds in (0, [`MAX_TIMEOUT_S`]].
pub fn timeout(x: f64) -> Result<f64, String> {
    if x.is_finite() && x > 0.0 && x <= MAX_TIMEOUT_S {
        Ok(x)
    } else {
        Err(format!(
            "must be a number of seconds above 0 and at most {MAX_TIMEOUT_S} (a week), got `{x}`"
        ))
    }
}

/// Timed runs per variant: 1..=[`MAX_REPEATS`].
pub fn repeats(n: u64) -> Result<u32, String> {
    match u32::try_from(n) {
        Ok(r) if (1..=MAX_REPEATS).contains(&r) => Ok(r),
        _ => Err(format!("must be between 1 and {MAX_REPEATS}, got `{n}`")),
    }
}

/// A finite number that is at least 0 (κ, tolerances).
pub fn non_negative(x: f64) -> Result<f64, String> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(format!("must be a finite number >= 0, got `{x}`"))
    }
}

/// A count that must be at least `min` (evaluations, pool size, seeds).
pub fn at_least(n: usize, min: usize) -> Result<usize, String> {
    if n >= min {
        Ok(n)
    } else {
        Err(format!("must be at least {min}, got `{n}`"))
    }
}

/// A real bound: finite.
pub fn finite(x: f64) -> Result<f64, String> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("must be a finite number, got `{x}`"))
    }
}

/// An integer bound: a whole number within ±2^53.
pub fn whole(x: f64) -> Result<i64, String> {
    if x.is_finite() && x.fract() == 0.0 && x.abs() <= MAX_EXACT_INT {
        Ok(x as i64)
    } else {
        Err(format!(
            "must be a whole number between -2^53 and 2^53, got `{x}`"
        ))
    }
}

/// A problem name: it names a directory under `results/`, so it is a name, never a path.
pub fn name(s: &str) -> Result<&str, String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+');
    if !s.is_empty() && s != "." && s != ".." && s.len() <= 100 && s.chars().all(ok_char) {
        Ok(s)
    } else {
        Err(format!(
            "`{s}` is not a usable name: use letters, digits, `_`, `-`, `.` and `+` (no `/`), at most 100 characters"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_reject_what_cannot_be_held() {
        assert!(timeout(f64::NAN).is_err());
        assert!(timeout(f64::INFINITY).is_err());
        assert!(timeout(1e30).is_err());
        assert!(timeout(9_223_372_036_854_775_807.0).is_err());
        assert!(timeout(0.0).is_err());
        assert_eq!(timeout(2.5), Ok(2.5));
        assert!(repeats(0).is_err());
        assert!(repeats(u64::MAX).is_err());
        assert!(whole(-1e19).is_err());
        assert!(whole(1.5).is_err());
        assert_eq!(whole(-7.0), Ok(-7));
        assert!(finite(f64::NEG_INFINITY).is_err());
        assert!(non_negative(-1.0).is_err());
        assert!(name("../../escaped").is_err());
        assert!(name("..").is_err());
        assert_eq!(name("syr2k-large_1.0"), Ok("syr2k-large_1.0"));
    }
}
