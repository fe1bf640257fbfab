//! The output check: an untimed run of the variant with `check.env` added — one per check
//! input: the configured one, then each of `check.variations` the reference's output differs
//! on ([`References`]) — its `check.stream` compared with the reference's output on the same
//! input, first byte for byte, then number by number with a tolerance
//! `|a − b| ≤ atol + rtol · max(|a|, |b|)`. A program whose input is constant is protected
//! by one input only: a wrong variant that agrees on it passes.
//!
//! Same-flag builds usually match exactly; a reference built with other flags differs in the
//! last digits (FMA contraction), which the tolerance absorbs. An illegal loop order or a race
//! changes values far beyond it.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::evaluate::outcome::Step;
use crate::evaluate::outcome::{Measurement, Status};
use crate::evaluate::variant::{run_failure, Build, Ran, Variant};
use crate::problem::Stream;

/// The reference's outputs a variant is checked against: per check input (0: the check run
/// as configured; k ≥ 1: with `check.variations[k - 1]` on top), the file holding it. An
/// input on which the reference prints what it prints on input 0 is left out: it would
/// check nothing more.
pub type References = Vec<(usize, PathBuf)>;

/// The check runs of a built variant (of its check build's program, when it has one), one
/// per input of `references`, each against the reference's output on it → ok,
/// `wrong_output`, `run_error` or `run_timeout` (the first input that fails); ok without an
/// output check. The runs also warm caches for the timed runs.
pub fn check_output(v: &Variant, build: &Build, references: &References) -> Step<()> {
    let problem = v.problem;
    let timeout_s = problem.run_timeout_s;
    for (k, reference) in references {
        let Some(ran) = v.run_check_input(*k, timeout_s) else {
            return Step::Ok(());
        };
        let wall_s = ran.finished.wall_s;
        if !ran.finished.success() {
            return run_failure(&ran, build.compile_s, wall_s, timeout_s);
        }
        let (rtol, atol) = (problem.check.rtol, problem.check.atol);
        if let Err(why) = compare_files(reference, checked_stream(v, &ran), rtol, atol) {
            let on = problem.check.input_name(*k);
            let why = on.map_or(why.clone(), |on| {
                format!("on the check's input {on}: {why}")
            });
            return Step::Fail(Measurement::failed(
                Status::WrongOutput,
                build.compile_s,
                wall_s,
                why,
            ));
        }
    }
    Step::Ok(())
}

/// The file of the check run's stream that is compared (`check.stream`).
pub fn checked_stream<'r>(v: &Variant, ran: &'r Ran) -> &'r Path {
    match v.problem.check.stream {
        Stream::Stdout => &ran.stdout,
        Stream::Stderr => &ran.stderr,
    }
}

/// `Ok(())` when the outputs agree, otherwise a one-line description of the mismatch.
pub fn compare(reference: &[u8], output: &[u8], rtol: f64, atol: f64) -> Result<(), String> {
    compare_streams(reference, output, rtol, atol).map_err(|e| e.to_string())?
}

/// [`compare`] for two files, streamed: memory stays small however large the outputs are.
pub fn compare_files(reference: &Path, output: &Path, rtol: f64, atol: f64) -> Result<(), String> {
    let open = |p: &Path| {
        File::open(p)
            .map(BufReader::new)
            .map_err(|e| format!("cannot read `{}`: {e}", p.display()))
    };
    compare_streams(open(reference)?, open(output)?, rtol, atol).map_err(|e| e.to_string())?
}

/// Mismatches so far: how many, out of how many numbers, and the worst one (value index,
/// relative error, expected, got).
#[derive(Default)]
struct Tally {
    bad: usize,
    numbers: usize,
    worst: Option<(usize, f64, String, String)>,
}

fn compare_streams(
    reference: impl BufRead,
    output: impl BufRead,
    rtol: f64,
    atol: f64,
) -> std::io::Result<Result<(), String>> {
    let (mut rt, mut ot) = (Tokens::new(reference), Tokens::new(output));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut k = 0usize;
    let mut t = Tally::default();
    loop {
        match (rt.next(&mut a)?, ot.next(&mut b)?) {
            (true, true) => {}
            (false, false) => break,
            // One ran out: count the rest of the other for the message.
            (more_r, _) => {
                let (n_r, n_o) = if more_r {
                    (k + 1 + rt.count_rest()?, k)
                } else {
                    (k, k + 1 + ot.count_rest()?)
                };
                let msg = format!("output has {n_o} tokens, the reference {n_r}");
                return Ok(Err(msg));
            }
        }
        t.compare(k, &a, &b, rtol, atol);
        k += 1;
    }
    Ok(match t.worst {
        None => Ok(()),
        Some((k, rel, a, b)) => Err(format!(
            "{} of {} values differ beyond rtol {rtol:e}; worst at value #{k}: expected `{a}`, got `{b}` (relative error {rel:.3e})",
            t.bad,
            t.numbers.max(t.bad)
        )),
    })
}

impl Tally {
    /// Compares token `k` of both outputs: equal numbers within the tolerance, or equal text.
    fn compare(&mut self, k: usize, a: &[u8], b: &[u8], rtol: f64, atol: f64) {
        let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
        match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => {
                self.numbers += 1;
                let diff = (x - y).abs();
                // The same infinity twice is equal (inf − inf is NaN), and so are two NaNs.
                let same = x == y || (x.is_nan() && y.is_nan());
                let finite = x.is_finite() && y.is_finite();
                let ok = same || (finite && diff <= atol + rtol * x.abs().max(y.abs()));
                if !ok {
                    self.bad += 1;
                    let rel = diff / x.abs().max(y.abs()).max(f64::MIN_POSITIVE);
                    if self
                        .worst
                        .as_ref()
                        .is_none_or(|w| rel > w.1 || rel.is_nan())
                    {
                        self.worst = Some((k, rel, a.to_string(), b.to_string()));
                    }
                }
            }
            _ if a == b => {}
            _ => {
                self.bad += 1;
                if self.worst.is_none() {
                    self.worst = Some((k, f64::INFINITY, a.to_string(), b.to_string()));
                }
            }
        }
    }
}

/// Whitespace-separated tokens of a stream, one at a time into a reused buffer.
struct Tokens<R> {
    r: R,
}

impl<R: BufRead> Tokens<R> {
    fn new(r: R) -> Self {
        Tokens { r }
    }

    /// Reads the next token into `tok`; false at the end of the stream.
    fn next(&mut self, tok: &mut Vec<u8>) -> std::io::Result<bool> {
        tok.clear();
        loop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                return Ok(!tok.is_empty());
            }
            let mut used = 0;
            for &c in buf {
                used += 1;
                if c.is_ascii_whitespace() {
                    if !tok.is_empty() {
                        self.r.consume(used);
                        return Ok(true);
                    }
                } else {
                    tok.push(c);
                }
            }
            self.r.consume(used);
        }
    }

    /// How many tokens are left.
    fn count_rest(&mut self) -> std::io::Result<usize> {
        let mut tok = Vec::new();
        let mut n = 0;
        while self.next(&mut tok)? {
            n += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_tolerant_matches() {
        assert!(compare(b"1 2 3", b"1 2 3", 0.0, 0.0).is_ok());
        assert!(compare(b"1.0000000001 2", b"1 2", 1e-6, 0.0).is_ok());
        assert!(compare(b"begin 1\nend", b"begin   1\nend", 0.0, 0.0).is_ok());
    }

    #[test]
    fn mismatches_are_counted_and_described() {
        let e = compare(b"1 2 3 4", b"1 2.5 3 9", 1e-6, 0.0).unwrap_err();
        assert!(e.starts_with("2 of 4 values differ"), "{e}");
        assert!(e.contains("expected `4`, got `9`"), "{e}");
        assert!(compare(b"1 2", b"1 2 3", 1e-6, 0.0)
            .unwrap_err()
            .contains("3 tokens"));
        assert!(compare(b"a 1", b"b 1", 1e-6, 0.0).is_err());
    }

    #[test]
    fn equal_infinities_and_nans_match_and_unequal_ones_do_not() {
        assert!(compare(b"inf -inf 1", b"inf -inf 1", 1e-9, 0.0).is_ok());
        assert!(compare(b"nan -nan", b"-nan nan", 1e-9, 0.0).is_ok());
        assert!(compare(b"inf", b"-inf", 1e-9, 0.0).is_err());
        assert!(compare(b"inf", b"1e308", 1e-9, 0.0).is_err());
        assert!(compare(b"nan", b"1", 1e-9, 0.0).is_err());
    }
}
