//! Simulated metrics: a timed run under `valgrind --tool=cachegrind` counts the
//! instructions the program executes (`metric.kind: instructions`) or, with cachegrind's
//! cache simulation, estimates its cycles (`cycles`) — the same numbers run after run on a
//! busy machine and on a CI runner without hardware counters (the approach of CodSpeed and
//! iai-callgrind). `metric.function` (a regex) counts only the functions whose names match,
//! e.g. the kernel and what OpenMP outlined from it.
//!
//! Estimated cycles weigh where each access was served, with iai-callgrind's weights:
//! `L1 hits + 5 × LL hits + 35 × RAM hits`, over instruction fetches and data reads and
//! writes (cachegrind simulates a first-level cache and a last-level one; its machine
//! model has no prefetcher, so this is a model of the cost, not a prediction of time).

use std::path::Path;

use crate::evaluate::outcome::Measurement;
use crate::problem::MetricKind;

/// The program's argv run under cachegrind, its counts written to `out`.
pub fn wrap(argv: Vec<String>, kind: MetricKind, out: &Path) -> Vec<String> {
    let sim = if kind == MetricKind::Cycles {
        "yes"
    } else {
        "no"
    };
    let mut w = vec![
        "valgrind".to_string(),
        "--tool=cachegrind".into(),
        format!("--cache-sim={sim}"),
        format!("--cachegrind-out-file={}", out.display()),
        "--".into(),
    ];
    w.extend(argv);
    w
}

/// Refuses a simulated metric on a machine where `valgrind` cannot be run.
pub fn available(kind: MetricKind) -> Result<(), crate::error::Error> {
    if !kind.is_simulated() {
        return Ok(());
    }
    let argv = ["valgrind".to_string(), "--version".into()];
    let out = crate::process::helper::output(&argv, std::time::Duration::from_secs(60), 4096);
    if out.finished.success() {
        return Ok(());
    }
    Err(crate::error::Error::usage(
        "`metric.kind: instructions` and `cycles` run the program under valgrind's cachegrind, and `valgrind --version` does not run here",
        Some("install it (`apt-get install valgrind`; `scripts/setup.sh --test` does), or choose a timed metric"),
    ))
}

/// A run that failed under cachegrind: when valgrind could not decode an instruction
/// (AVX-512 from `-march=native`: valgrind 3.19–3.22 have none), the cause says so.
pub fn explain(mut m: Measurement, stderr: &Path) -> Measurement {
    let tail = crate::process::helper::tail(stderr, 40);
    if tail.contains("unhandled instruction bytes") || tail.contains("Valgrind doesn't handle") {
        let cause = m.cause.take().unwrap_or_default();
        m.cause = Some(format!(
            "valgrind cannot decode an instruction of this program (AVX-512 from `-march=native`?): for `metric.kind: {}` build for a CPU valgrind knows, e.g. `-march=x86-64-v3`; {cause}",
            "instructions/cycles"
        ));
    }
    m
}

/// The metric from cachegrind's output file: instructions or estimated cycles, over the
/// functions `function` matches (all without one).
pub fn read(out: &Path, kind: MetricKind, function: Option<&regex::Regex>) -> Result<f64, String> {
    let text = std::fs::read_to_string(out)
        .map_err(|e| format!("no cachegrind output `{}`: {e}", out.display()))?;
    let totals = totals(&text, function)?;
    match kind {
        MetricKind::Cycles => estimated_cycles(&totals),
        _ => totals.get("Ir"),
    }
}

/// Event name → count, summed over the matching functions.
#[derive(Debug, Default)]
struct Totals {
    events: Vec<String>,
    sums: Vec<u64>,
    matched: bool,
}

impl Totals {
    fn get(&self, event: &str) -> Result<f64, String> {
        let at = (self.events.iter().position(|e| e == event))
            .ok_or_else(|| format!("cachegrind counted no `{event}` events"))?;
        Ok(self.sums[at] as f64)
    }
}

fn totals(text: &str, function: Option<&regex::Regex>) -> Result<Totals, String> {
    let mut t = Totals::default();
    let mut counting = function.is_none();
    for line in text.lines() {
        if let Some(ev) = line.strip_prefix("events:") {
            t.events = ev.split_whitespace().map(str::to_string).collect();
            t.sums = vec![0; t.events.len()];
        } else if let Some(name) = line.strip_prefix("fn=") {
            counting = function.is_none_or(|re| re.is_match(name));
            t.matched |= counting;
        } else if counting && line.starts_with(|c: char| c.is_ascii_digit()) {
            // `line count count …`; trailing zero counts may be left out.
            for (sum, n) in t.sums.iter_mut().zip(line.split_whitespace().skip(1)) {
                *sum += n
                    .parse::<u64>()
                    .map_err(|_| format!("bad cachegrind line `{line}`"))?;
            }
        }
    }
    match (t.events.is_empty(), function) {
        (true, _) => Err("cachegrind's output has no `events:` line".into()),
        (_, Some(re)) if !t.matched => Err(format!(
            "no function matching `metric.function: {re}` ran (is the kernel inlined? its code then counts in the function that calls it)"
        )),
        _ => Ok(t),
    }
}

/// `L1 hits + 5 × LL hits + 35 × RAM hits` (iai-callgrind's weights).
fn estimated_cycles(t: &Totals) -> Result<f64, String> {
    let g = |e: &str| t.get(e);
    let accesses = g("Ir")? + g("Dr")? + g("Dw")?;
    let l1_misses = g("I1mr")? + g("D1mr")? + g("D1mw")?;
    let ll_misses = g("ILmr")? + g("DLmr")? + g("DLmw")?;
    let l1_hits = accesses - l1_misses;
    let ll_hits = l1_misses - ll_misses;
    Ok(l1_hits + 5.0 * ll_hits + 35.0 * ll_misses)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "desc: I1 cache: 32768 B\ncmd: ./variant\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n\
fl=k.c\nfn=main\n10 100 1 1 20 2 1 10 1 0\nfn=kernel_gemm\n20 1000 2 1 300 30 10 100 10 5\n\
fl=/usr/include/x.h\nfn=kernel_gemm\n5 500 0 0 100\nfn=kernel_gemm.omp_outlined\n7 50 0 0 0 0 0 0 0 0\n\
summary: 1650 3 2 420 32 11 110 11 5\n";

    #[test]
    fn instructions_are_summed_over_the_functions_that_match() {
        let all = totals(OUT, None).unwrap();
        assert_eq!(all.get("Ir").unwrap(), 1650.0);
        let re = regex::Regex::new("^kernel_gemm").unwrap();
        let k = totals(OUT, Some(&re)).unwrap();
        assert_eq!(
            k.get("Ir").unwrap(),
            1550.0,
            "both files, and the outlined body"
        );
        assert_eq!(k.get("Dw").unwrap(), 100.0, "a left-out count is zero");
        let none = regex::Regex::new("^kernel_2mm$").unwrap();
        assert!(totals(OUT, Some(&none)).unwrap_err().contains("inlined"));
    }

    #[test]
    fn estimated_cycles_weigh_l1_ll_and_ram_hits() {
        let re = regex::Regex::new("^main$").unwrap();
        let t = totals(OUT, Some(&re)).unwrap();
        // accesses 130, L1 misses 4, LL misses 2: 126 + 5 × 2 + 35 × 2.
        assert_eq!(estimated_cycles(&t).unwrap(), 206.0);
        let no_sim = "events: Ir\nfn=main\n1 5\n";
        assert!(estimated_cycles(&totals(no_sim, None).unwrap()).is_err());
    }
}
