//! Mutation fuzzing of everything a problem file feeds: the YAML parser and validation, the
//! mold, the command templates and the constraint expressions — and what a loaded problem
//! then does (render the mold, sample and propose configurations).
//!
//! Each case mutates a problem of the committed corpus (`tests/fuzz/corpus/`), loads it
//! in-process and asserts: no panic, no hang (each case under [`CASE_LIMIT`]), and every
//! configuration error names `file:line:col`. It runs for `MOLDTUNE_FUZZ_SECS` seconds
//! (default 8) from seed `MOLDTUNE_FUZZ_SEED` (default: the clock, printed), so CI runs a
//! bounded campaign and a longer one is one variable away. A failing case is written to
//! `target/fuzz-failures/` with the seed to replay it.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use moldtune::evaluate::outcome::{Measurement, Source};
use moldtune::problem::Problem;
use moldtune::rng::Rng;
use moldtune::search::{Learner, Searcher, Settings};
use moldtune::Error;

const CASE_LIMIT: Duration = Duration::from_secs(3);

/// Fragments a mutation inserts: YAML structure, keys, extreme numbers, template and
/// expression syntax, mold markers.
const DICTIONARY: &[&str] = &[
    "\n",
    ": ",
    "- ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\"",
    "'",
    "#",
    "&a",
    "*a",
    "!!str ",
    "|\n  ",
    "name",
    "type",
    "values",
    "choices",
    "low",
    "high",
    "log",
    "default",
    "when",
    "params",
    "constraints",
    "forbidden",
    "compile",
    "run",
    "env",
    "metric",
    "regex",
    "kind",
    "goal",
    "repeats",
    "reduce",
    "timeouts",
    "compile_s",
    "run_s",
    "check",
    "rtol",
    "atol",
    "search",
    "kappa",
    "pool",
    "initial",
    "max_evals",
    "learner",
    "ordinal",
    "categorical",
    "integer",
    "real",
    "boolean",
    "true",
    "false",
    "null",
    "~",
    ".nan",
    ".inf",
    "-.inf",
    "0",
    "-1",
    "1e30",
    "-1e19",
    "9223372036854775807",
    "18446744073709551616",
    "2.0",
    "1e-320",
    "{{",
    "}}",
    "{%",
    "%}",
    "{% if P0 %}",
    "{% endif %}",
    "{{ P0 }}",
    "{{ nope }}",
    "| upper",
    "((((",
    "))))",
    "not ",
    " and ",
    " or ",
    " * ",
    " / 0",
    " % 0",
    " == ",
    "\"a\" * 2",
    "P0",
    "P1",
    "P2",
    "#P0",
    "#P1",
    "#P10",
    "#P",
    "#pragma",
    "#include",
    "\u{0}",
    "é",
    "\t",
];

fn corpus() -> Vec<(String, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz/corpus");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("corpus").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "yaml") {
            let yaml = std::fs::read_to_string(&p).unwrap();
            let mold_name = yaml
                .lines()
                .find_map(|l| l.strip_prefix("mold: "))
                .expect("corpus files name their mold")
                .trim()
                .to_string();
            let mold = std::fs::read_to_string(dir.join(&mold_name)).unwrap();
            out.push((yaml, mold_name, mold));
        }
    }
    out.sort();
    out
}

/// One random edit of `text` at a character boundary.
fn mutate(text: &str, rng: &mut Rng, other: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = if chars.is_empty() {
        0
    } else {
        rng.below(chars.len() + 1)
    };
    let (head, tail): (String, String) =
        (chars[..at].iter().collect(), chars[at..].iter().collect());
    match rng.below(6) {
        0 => format!("{head}{}{tail}", DICTIONARY[rng.below(DICTIONARY.len())]),
        1 => {
            let n = rng.below(12).min(tail.chars().count());
            format!("{head}{}", tail.chars().skip(n).collect::<String>())
        }
        2 => {
            // Repeat a slice (deep nesting, long lists, duplicate keys).
            let n = rng.below(40).min(tail.chars().count());
            let piece: String = tail.chars().take(n).collect();
            format!("{head}{}{tail}", piece.repeat(1 + rng.below(50)))
        }
        3 => {
            // Splice a line of another corpus file.
            let lines: Vec<&str> = other.lines().collect();
            let line = lines
                .get(rng.below(lines.len().max(1)))
                .copied()
                .unwrap_or("");
            format!("{head}\n{line}\n{tail}")
        }
        4 => {
            let c = char::from_u32(rng.below(0x250) as u32).unwrap_or('x');
            format!("{head}{c}{}", tail.chars().skip(1).collect::<String>())
        }
        _ => {
            let digits = ["0", "7", "-", ".", "e9", "99999999999"];
            format!("{head}{}{tail}", digits[rng.below(digits.len())])
        }
    }
}

/// What a loaded problem does before anything runs: render the default variant, sample and
/// propose a few configurations and learn from made-up measurements.
fn exercise(problem: &Problem) {
    let default = problem.default_config();
    let _ = problem.mold.render(&problem.space, &default);
    let _ = problem.space.describe(&default);
    for learner in [Learner::Random, Learner::Rf] {
        let mut settings = Settings::new(learner, 1, problem.metric.goal);
        settings.initial = 2;
        settings.pool = 50;
        let mut s = Searcher::new(&problem.space, settings);
        for step in 0..5 {
            let Ok((c, src)) = s.ask(step) else { break };
            let _ = problem.mold.render(&problem.space, &c);
            s.tell(&c, &Measurement::single(1.0 + step as f64), src);
        }
        let _ = Source::Model;
    }
}

enum Verdict {
    Ok,
    Refused,
    Bad(String),
}

fn run_case(dir: &Path, yaml: &str, mold_name: &str, mold: &str) -> Verdict {
    let p = dir.join("p.yaml");
    std::fs::write(&p, yaml).unwrap();
    let _ = std::fs::write(dir.join(mold_name), mold);
    let started = Instant::now();
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| match Problem::load(&p) {
        Ok(problem) => {
            exercise(&problem);
            Ok(())
        }
        Err(e) => Err(e),
    }));
    if started.elapsed() > CASE_LIMIT {
        return Verdict::Bad(format!("took {:?}", started.elapsed()));
    }
    match result {
        Err(panic) => Verdict::Bad(format!("panic: {:?}", panic.downcast_ref::<String>())),
        Ok(Ok(())) => Verdict::Ok,
        Ok(Err(Error::Config { .. })) => Verdict::Refused,
        Ok(Err(e)) => Verdict::Bad(format!("an error without file:line:col: {e}")),
    }
}

fn save_failure(seed: u64, case: usize, yaml: &str, mold: &str, why: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("seed{seed}-case{case}.yaml"));
    std::fs::write(
        &p,
        format!(
            "# {why}\n{yaml}\n# --- mold ---\n# {}",
            mold.replace('\n', "\n# ")
        ),
    )
    .unwrap();
    p
}

/// Cases the fuzz test runs whatever the time it takes (`MOLDTUNE_FUZZ_SECS` adds more).
const MIN_CASES: usize = 150;

#[test]
fn mutated_problem_files_and_molds_never_panic_hang_or_lose_the_position() {
    let secs: u64 = std::env::var("MOLDTUNE_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let seed: u64 = std::env::var("MOLDTUNE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    eprintln!("fuzz: seed {seed}, {secs} s (MOLDTUNE_FUZZ_SEED / MOLDTUNE_FUZZ_SECS)");
    let corpus = corpus();
    let tmp = tempfile::tempdir().unwrap();
    // Quiet the default panic message: panics are collected and reported below.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (mut cases, mut loaded, mut refused, mut failures) = (0usize, 0usize, 0usize, Vec::new());
    // At least MIN_CASES, however slow the machine (a loaded runner did 98 in 8 s), then
    // more until the time is up.
    let more = |cases: usize| cases < MIN_CASES || Instant::now() < deadline;
    while more(cases) && failures.len() < 5 {
        let mut rng = Rng::for_step(seed, 7, cases as u64);
        let (yaml, mold_name, mold) = &corpus[rng.below(corpus.len())];
        let other = &corpus[rng.below(corpus.len())].0;
        let (mut y, mut m) = (yaml.clone(), mold.clone());
        for _ in 0..1 + rng.below(3) {
            if rng.below(5) == 0 {
                m = mutate(&m, &mut rng, other);
            } else {
                y = mutate(&y, &mut rng, other);
            }
        }
        match run_case(tmp.path(), &y, mold_name, &m) {
            Verdict::Ok => loaded += 1,
            Verdict::Refused => refused += 1,
            Verdict::Bad(why) => failures.push(
                save_failure(seed, cases, &y, &m, &why)
                    .display()
                    .to_string()
                    + ": "
                    + &why,
            ),
        }
        cases += 1;
    }
    std::panic::set_hook(hook);
    eprintln!("fuzz: {cases} cases, {loaded} loaded, {refused} refused with file:line:col");
    assert!(failures.is_empty(), "seed {seed}: {failures:#?}");
    assert!(
        loaded > 0 && refused > 0,
        "the mutations should both keep and break files"
    );
}

#[test]
fn the_corpus_loads() {
    let tmp = tempfile::tempdir().unwrap();
    for (yaml, mold_name, mold) in corpus() {
        match run_case(tmp.path(), &yaml, &mold_name, &mold) {
            Verdict::Ok => {}
            Verdict::Refused => panic!(
                "corpus file refused:\n{yaml}\n{:?}",
                Problem::load(&tmp.path().join("p.yaml")).err()
            ),
            Verdict::Bad(why) => panic!("{why}"),
        }
    }
}
