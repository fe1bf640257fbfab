//! The check's decision rule on simulated measurements with this machine's noise (the
//! committed baselines' recorded rounds), no compiler: unchanged code raises no more than
//! 1% false alarms and a 15% slowdown is caught at least 95% of the time, pooled over the
//! seven PolyBench guards. Fixed seeds; a small version of `cargo bench --bench
//! decision_rule` (whose figures are in results/check/decision_rule.md).

use std::path::Path;

use moldtune::check::rule::Rule;
use moldtune::check::simulate::{simulate, Source};

#[test]
fn false_alarms_are_rare_and_a_15_percent_slowdown_is_caught() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/baselines");
    let sources = Source::of_folder(&dir).unwrap();
    assert_eq!(sources.len(), 7, "one guard per PolyBench kernel");
    let rule = Rule {
        resamples: 400,
        ..Rule::default()
    };
    let trials = 30;
    let (mut alarms, mut caught) = (0, 0);
    for s in &sources {
        let same = simulate(s, &rule, 1.0, trials, 11);
        let slow = simulate(s, &rule, 1.15, trials, 12);
        eprintln!("{}: unchanged {same:?}\n  ×1.15 {slow:?}", s.name);
        alarms += same.regression;
        caught += slow.regression;
    }
    let n = trials * sources.len();
    assert!(alarms * 100 <= n, "{alarms} false alarms in {n}");
    assert!(caught * 100 >= 95 * n, "{caught} of {n} slowdowns caught");
}
