//! Tuning an application's own parameters (issue 30): molds that are scripts, run as rendered
//! (no compile step); quantities recorded beside the objective (`record:`); the tie rule
//! (`prefer:`) and the front, in the summary, results.json, `best` and the report; `measure`
//! and `check` on a script mold; the mlp-digits example's problem file, and a short run of it
//! when scikit-learn is here.

use crate::common::*;

use std::path::Path;

/// A "training" script: accuracy 0.95 when A ≥ 2 (else 0.90), training seconds A × B —
/// so (A, B) = (2, 1) is the cheapest of the equally accurate ones, and (1, 1) the cheapest
/// of all.
fn write_trainer(dir: &Path, prefer: &str) {
    let mold = "a=#A\nb=#B\n\
                if [ $a -ge 2 ]; then echo \"accuracy: 0.95\"; else echo \"accuracy: 0.90\"; fi\n\
                echo \"train_s: $((a * b))\"\n";
    std::fs::write(dir.join("train.mold.sh"), mold).unwrap();
    let yaml = format!(
        "name: trainer\nmold: train.mold.sh\nparams:\n\
         \x20 - {{name: A, type: ordinal, values: [3, 2, 1], default: 3}}\n\
         \x20 - {{name: B, type: ordinal, values: [2, 1], default: 2}}\n\
         run: \"sh {{{{ source }}}}\"\n\
         metric: {{kind: regex, regex: 'accuracy: ([0-9.]+)', goal: maximize}}\n\
         record:\n  - {{name: train_s, regex: 'train_s: ([0-9]+)'}}\n\
         {prefer}\nrepeats: 1\ncheck: {{mode: none}}\n"
    );
    std::fs::write(dir.join("p.yaml"), yaml).unwrap();
}

/// All six configurations evaluated (random search over the whole space), in `dir/run`.
fn tune_all(dir: &Path) -> serde_json::Value {
    let o = moldtune("run")
        .arg("p.yaml")
        .learner("random")
        .max_evals(6)
        .out("run")
        .quiet()
        .json()
        .cwd(dir)
        .output();
    assert_code(&o, 0);
    serde_json::from_str(&text(&o.stdout)).unwrap()
}

fn eval_of(results: &serde_json::Value, a: &str, b: &str) -> u64 {
    let evals = results["evaluations"].as_array().unwrap();
    let is = |v: &serde_json::Value, x: &str| v.to_string().trim_matches('"') == x;
    let hit = evals
        .iter()
        .find(|e| is(&e["config"]["A"], a) && is(&e["config"]["B"], b));
    hit.unwrap()["eval_id"].as_u64().unwrap()
}

#[test]
fn the_tie_rule_prefers_the_cheaper_of_equal_objectives_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_trainer(d, "prefer: {within: 0.0, min: train_s}");
    let summary = tune_all(d);
    // results.csv: the recorded quantity is a column of its own, after moldtune's.
    let csv = Csv::read(&d.join("run"));
    assert!(
        csv.header.ends_with(&["learner".into(), "train_s".into()]),
        "{:?}",
        csv.header
    );
    let results = read_json(&d.join("run/results.json"));
    let (cheap, cheapest) = (eval_of(&results, "2", "1"), eval_of(&results, "1", "1"));
    assert_eq!(
        results["preferred"]["eval_id"], cheap,
        "{}",
        results["preferred"]
    );
    assert_eq!(results["preferred"]["value"], 2.0);
    assert_eq!(results["preferred"]["quantity"], "train_s");
    assert_eq!(
        results["evaluations"][cheap as usize]["recorded"]["train_s"],
        2.0
    );
    // The front: no other evaluation is better on both (best accuracy first).
    assert_eq!(results["front"], serde_json::json!([cheap, cheapest]));
    assert_eq!(summary["preferred"]["eval_id"], cheap, "{summary}");
    best_and_report_show_the_preferred(d, cheap);
    // A wider tie takes in the less accurate, cheapest configuration.
    write_trainer(d, "prefer: {within: 0.06, min: train_s}");
    std::fs::remove_dir_all(d.join("run")).unwrap();
    tune_all(d);
    let results = read_json(&d.join("run/results.json"));
    assert_eq!(results["preferred"]["eval_id"], eval_of(&results, "1", "1"));
}

/// `moldtune best` and the report name the preferred evaluation; the report draws the front
/// with its points labelled, names the variant's own file and does not call the run a mock
/// one.
fn best_and_report_show_the_preferred(d: &Path, cheap: u64) {
    let o = moldtune("best").arg("run").cwd(d).output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("preferred (within 0 of the best, the least train_s)")
            && out.contains("A=2 B=1"),
        "{out}"
    );
    let o = moldtune("report").arg("run").out("rep").cwd(d).output();
    assert_code(&o, 0);
    let md = std::fs::read_to_string(d.join("rep/report.md")).unwrap();
    assert!(
        md.contains("### Trade-off") && md.contains(&format!("Preferred: eval {cheap}:")),
        "{md}"
    );
    let front = std::fs::read_dir(d.join("rep")).unwrap().flatten();
    let svg = front
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-front.svg"));
    let svg = std::fs::read_to_string(svg.expect("the front's figure")).unwrap();
    assert!(svg.contains("<svg"), "{svg}");
    // The front's points are labelled with their eval ids.
    assert!(
        svg.contains(&format!("fill=\"#0072B2\">\n{cheap}\n</text>")),
        "{svg}"
    );
    // The report names the variant's own file and does not call a real run a mock one.
    assert!(
        md.contains("### best.sh against the default variant"),
        "{md}"
    );
    assert!(!md.contains("mock run"), "{md}");
}

#[test]
fn a_bad_record_or_tie_rule_is_refused_at_its_position() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (prefer, says) in [
        (
            "prefer: {within: 0.1, min: epochs}",
            "`prefer` names `epochs`, which is not recorded",
        ),
        (
            "prefer: {within: -1, min: train_s}",
            "`prefer.within` must be a finite number >= 0",
        ),
        (
            "prefer: {within: 0.1}",
            "`prefer` needs one of `min:` or `max:`",
        ),
        (
            "prefer: {within: 0.1, min: train_s, max: run_s}",
            "`prefer` needs one of",
        ),
    ] {
        write_trainer(d, prefer);
        let o = moldtune("show").arg("p.yaml").cwd(d).output();
        assert_code(&o, 2);
        let err = text(&o.stderr);
        assert!(
            err.contains(says) && err.contains("p.yaml:"),
            "{prefer}: {err}"
        );
    }
    write_trainer(d, "prefer: {within: 0.1, max: run_s}");
    let yaml = std::fs::read_to_string(d.join("p.yaml")).unwrap();
    std::fs::write(
        d.join("p.yaml"),
        yaml.replace("name: train_s", "name: status"),
    )
    .unwrap();
    let o = moldtune("show").arg("p.yaml").cwd(d).output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("`record` name `status` is already a column"),
        "{}",
        describe(&o)
    );
}

/// `measure`, `report`, `baseline` and `check` on a script mold without a compile step.
#[test]
fn measure_report_and_check_work_on_a_script_mold() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("m.mold.sh"), "echo 0.#P0\n").unwrap();
    let yaml = "name: script\nmold: m.mold.sh\nparams:\n  - {name: P0, type: ordinal, values: [3, 1, 2], default: 3}\n\
                run: \"sh {{ source }}\"\nmetric: {kind: kernel_time}\nrepeats: 1\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .learner("random")
        .max_evals(3)
        .out("run")
        .quiet()
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let o = moldtune("measure")
        .args(["p.yaml", "--from", "run", "--repeats", "2"])
        .json()
        .cwd(d)
        .output();
    assert_code(&o, 0);
    assert!(text(&o.stdout).contains("0.1"), "{}", describe(&o));
    assert_code(&moldtune("report").arg("run").out("rep").cwd(d).output(), 0);
    let o = moldtune("baseline")
        .arg("run")
        .out("b")
        .rounds(5)
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let o = moldtune("check")
        .args(["b", "--min-rounds", "5", "--max-rounds", "10"])
        .cwd(d)
        .output();
    assert_code(&o, 0);
    assert!(text(&o.stdout).contains("script"), "{}", describe(&o));
}

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mlp-digits/mlp.yaml")
}

#[test]
fn the_mlp_example_loads() {
    let o = moldtune("show")
        .arg(example())
        .args(["--set", "SOLVER=lbfgs"])
        .cwd(".")
        .output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("compile: none") && out.contains("/usr/bin/python3 variant.py"),
        "{out}"
    );
    assert!(
        out.contains("solver=\"lbfgs\"") && out.contains("int(\"\" or 200)"),
        "{out}"
    );
}

fn have_sklearn() -> bool {
    let ok = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import sklearn"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        use std::io::Write;
        let why = "SKIPPED: /usr/bin/python3 cannot import sklearn (bash scripts/setup.sh installs python3-sklearn)\n";
        let _ = std::io::stderr().write_all(why.as_bytes());
    }
    ok
}

/// Ten real evaluations of the example: accuracies read, training seconds recorded, the
/// preferred configuration chosen.
#[test]
fn ten_evaluations_of_the_mlp_example() {
    if !have_sklearn() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let o = moldtune("run")
        .arg(example())
        .max_evals(10)
        .out("run")
        .quiet()
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);
    let results = read_json(&tmp.path().join("run/results.json"));
    let evals = results["evaluations"].as_array().unwrap();
    assert_eq!(evals.len(), 10);
    let ok: Vec<_> = evals.iter().filter(|e| e["status"] == "ok").collect();
    assert!(ok.len() >= 8, "{results}");
    for e in &ok {
        let acc = e["objective"].as_f64().unwrap();
        assert!(
            (0.0..=1.0).contains(&acc) && e["recorded"]["train_s"].as_f64().unwrap() > 0.0,
            "{e}"
        );
    }
    let best = ok
        .iter()
        .map(|e| e["objective"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        best > 0.9,
        "the best of 10 configurations reaches 90% on digits: {best}"
    );
    let p = &results["preferred"];
    assert!(p["objective"].as_f64().unwrap() >= best - 0.002, "{p}");
}

/// A script that sleeps `T` seconds and prints `T` as its score (or as nothing, for a time).
fn write_sleeper(dir: &Path, metric: &str, timeouts: &str) {
    std::fs::write(dir.join("s.mold.sh"), "sleep #T\necho \"score: #T\"\n").unwrap();
    let yaml = format!(
        "name: sleeper\nmold: s.mold.sh\nparams:\n\
         \x20 - {{name: T, type: ordinal, values: [0.01, 1.6], default: 0.01}}\n\
         run: \"sh {{{{ source }}}}\"\nmetric: {metric}\n{timeouts}repeats: 1\ncheck: {{mode: none}}\n"
    );
    std::fs::write(dir.join("p.yaml"), yaml).unwrap();
}

/// Both configurations evaluated; their statuses by T.
fn statuses(dir: &Path) -> Vec<(String, String)> {
    let _ = std::fs::remove_dir_all(dir.join("run"));
    let o = moldtune("run")
        .arg("p.yaml")
        .learner("random")
        .max_evals(2)
        .args(["--verify", "0"])
        .out("run")
        .cwd(dir)
        .output();
    assert_code(&o, 0);
    let j = read_json(&dir.join("run/results.json"));
    let evals = j["evaluations"].as_array().unwrap();
    let t = |e: &serde_json::Value| e["config"]["T"].to_string().trim_matches('"').to_string();
    let s = |e: &serde_json::Value| e["status"].as_str().unwrap().to_string();
    evals.iter().map(|e| (t(e), s(e))).collect()
}

/// The adaptive run timeout (10× the fastest run, at least 1 s) is for times only: an
/// accuracy that rises with training time is not cut at 1.6 s by a 0.01 s default.
#[test]
fn a_score_that_rises_with_run_time_is_not_cut_by_the_adaptive_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let score = "{kind: regex, regex: 'score: ([0-9.]+)', goal: maximize}";
    write_sleeper(tmp.path(), score, "");
    let s = statuses(tmp.path());
    assert!(s.iter().all(|(_, st)| st == "ok"), "{s:?}");
}

/// A run timeout the user set is the timeout: it does not adapt below it.
#[test]
fn a_run_timeout_the_user_set_does_not_adapt_below_it() {
    let tmp = tempfile::tempdir().unwrap();
    write_sleeper(tmp.path(), "{kind: wall_time}", "timeouts: {run_s: 30}\n");
    let s = statuses(tmp.path());
    assert!(s.iter().all(|(_, st)| st == "ok"), "{s:?}");
    // Not set: the slow one is cut at the adaptive timeout, as before.
    write_sleeper(tmp.path(), "{kind: wall_time}", "");
    let s = statuses(tmp.path());
    assert!(s.contains(&("1.6".into(), "run_timeout".into())), "{s:?}");
}

/// Every evaluation fails for one cause (a missing tool): the progress line shows the cause's
/// last stderr line, and the run stops after the default and four more (exit 3, the cause
/// printed) instead of spending its budget.
#[test]
fn a_run_whose_evaluations_all_fail_alike_stops_early_with_the_cause() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mold = "echo \"starting #T\" >&2\necho \"frobnicate: command not found\" >&2\nexit 1\n";
    std::fs::write(d.join("s.mold.sh"), mold).unwrap();
    let yaml = "name: broken\nmold: s.mold.sh\nparams:\n\
                \x20 - {name: T, type: integer, low: 1, high: 1000, default: 1}\n\
                run: \"sh {{ source }}\"\nmetric: {kind: regex, regex: 'score: (\\S+)', goal: maximize}\n\
                repeats: 1\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(40)
        .out("run")
        .args(["--jobs", "1"])
        .cwd(d)
        .output();
    assert_code(&o, 3);
    let err = text(&o.stderr);
    let lines = err
        .lines()
        .filter(|l| l.contains("frobnicate: command not found"));
    assert!(
        lines.count() >= 5,
        "the progress lines show the cause: {err}"
    );
    assert!(err.contains("stopped early"), "{err}");
    let run_json = read_json(&d.join("run/run.json"));
    assert_eq!(run_json["termination"], "all_failed", "{run_json}");
    let n = run_json["evaluations"].as_u64().unwrap();
    assert!((5..=8).contains(&n), "{n} evaluations of 40");
}

/// A `record:` or metric regex reads one number: exactly one capture group, refused at its
/// position otherwise (without a group the whole match was taken and the column stayed
/// empty); `within` also takes a percentage, and a malformed one is refused.
#[test]
fn regexes_need_one_capture_group_and_within_takes_a_percentage() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let refused = |from: &str, to: &str, says: &str| {
        write_trainer(d, "prefer: {within: 0.1, min: train_s}");
        let yaml = std::fs::read_to_string(d.join("p.yaml")).unwrap();
        assert!(yaml.contains(from), "{yaml}");
        std::fs::write(d.join("p.yaml"), yaml.replace(from, to)).unwrap();
        let o = moldtune("show").arg("p.yaml").cwd(d).output();
        assert_code(&o, 2);
        let err = text(&o.stderr);
        assert!(err.contains(says) && err.contains("p.yaml:"), "{to}: {err}");
    };
    refused(
        "'train_s: ([0-9]+)'",
        "'train_s: [0-9]+'",
        "has 0 capture groups",
    );
    refused(
        "'accuracy: ([0-9.]+)'",
        "'(accuracy): ([0-9.]+)'",
        "has 2 capture groups",
    );
    refused(
        "within: 0.1",
        "within: 5 percent",
        "`prefer.within` is `5 percent`",
    );
    write_trainer(d, "prefer: {within: 5%, min: train_s}");
    let o = moldtune("run")
        .arg("p.yaml")
        .learner("random")
        .max_evals(6)
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    // 5% of 0.95: 0.90 is not within it, so (2, 1) is preferred as with 0.0.
    assert!(out.contains("preferred (within 5% of the best"), "{out}");
}

/// A `record:` regex that never matches: warned at the first success without it, and the
/// summary says the tie rule had no data.
#[test]
fn a_recorded_quantity_missing_from_the_output_is_warned() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_trainer(d, "prefer: {within: 0.1, min: train_s}");
    let yaml = std::fs::read_to_string(d.join("p.yaml")).unwrap();
    std::fs::write(
        d.join("p.yaml"),
        yaml.replace("'train_s: ", "'train seconds: "),
    )
    .unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .learner("random")
        .max_evals(3)
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let err = text(&o.stderr);
    assert_eq!(
        err.matches("has no match for the recorded `train_s`")
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains("the tie rule has no value of it"), "{err}");
    assert!(text(&o.stdout).contains("tie rule: no successful evaluation reported `train_s`"));
}

/// Without `compile:` the variant is run as rendered: a C mold is refused (it would be run
/// by `sh`), and so is `run: "{{ exe }}"` on a mold without `#!`.
#[test]
fn a_mold_that_cannot_run_as_rendered_is_refused_without_a_compile_step() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let attempt = |mold: &str, text: &str, run: &str| {
        std::fs::write(d.join(mold), text).unwrap();
        let yaml = format!(
            "name: s\nmold: {mold}\nparams:\n  - {{name: A, type: ordinal, values: [1, 2]}}\nrun: \"{run}\"\nmetric: {{regex: 'v: ([0-9]+)', goal: maximize}}\ncheck: {{mode: none}}\n"
        );
        std::fs::write(d.join("p.yaml"), yaml).unwrap();
        moldtune("show").arg("p.yaml").cwd(d).output()
    };
    let o = attempt("k.c", "int a = #A;\n", "{{ exe }}");
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("has no `compile:`"),
        "{}",
        describe(&o)
    );
    assert!(text(&o.stderr).contains("p.yaml:2:7"), "{}", describe(&o));
    let o = attempt("t.mold.py", "print('v: #A')\n", "{{ exe }}");
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("does not start with `#!`"),
        "{}",
        describe(&o)
    );
    let o = attempt(
        "t.mold.py",
        "#!/usr/bin/env python3\nprint('v: #A')\n",
        "{{ exe }}",
    );
    assert_code(&o, 0);
    let o = attempt("t.mold.py", "print('v: #A')\n", "python3 {{ source }}");
    assert_code(&o, 0);
}

/// A token that looks like a marker (`#XX`) but names no parameter is warned with its
/// position (it stays in the variant as written); `#pragma` and `#include` are not.
#[test]
fn a_marker_like_token_without_a_parameter_is_warned() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mold = "#include <stdio.h>\n#pragma once\nint a = #A;\nint b = #XX;\n";
    std::fs::write(d.join("k.c"), mold).unwrap();
    let yaml = "name: k\nmold: k.c\nparams:\n  - {name: A, type: ordinal, values: [1, 2]}\ncompile: \"cc {{ source }} -o {{ exe }}\"\nrun: \"{{ exe }}\"\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("show").arg("p.yaml").cwd(d).output();
    assert_code(&o, 0);
    let err = text(&o.stderr);
    assert!(err.contains("k.c:4:9: `#XX` looks like a marker"), "{err}");
    assert_eq!(err.matches("looks like a marker").count(), 1, "{err}");
}

/// `--parallel 2` runs two evaluations at once (each variant counts the variants running
/// beside it: some see two), records every evaluation once and in id order, and is refused
/// for a time metric.
#[test]
fn parallel_trials_run_at_once_for_a_score_and_are_refused_for_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mold = "touch \"$1/running.$$\"\nsleep 0.4\necho \"v: $(ls \"$1\" | grep -c running) #A\"\nrm \"$1/running.$$\"\n";
    std::fs::write(d.join("s.mold.sh"), mold).unwrap();
    std::fs::create_dir(d.join("live")).unwrap();
    let yaml = "name: par\nmold: s.mold.sh\nparams:\n  - {name: A, type: integer, low: 1, high: 1000}\n\
                run: \"sh {{ source }} {{ problem_dir }}/live\"\nmetric: {regex: 'v: ([0-9]+)', goal: maximize}\n\
                repeats: 1\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .learner("random")
        .max_evals(8)
        .args(["--verify", "0"])
        .args(["--parallel", "2"])
        .out("run")
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let j = read_json(&d.join("run/results.json"));
    let evals = j["evaluations"].as_array().unwrap();
    let ids: Vec<u64> = evals
        .iter()
        .map(|e| e["eval_id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, (0..8).collect::<Vec<u64>>());
    let seen: Vec<f64> = evals
        .iter()
        .filter_map(|e| e["objective"].as_f64())
        .collect();
    assert_eq!(seen.len(), 8, "{j}");
    assert!(seen.iter().any(|&n| n >= 2.0), "two at once: {seen:?}");
    assert_eq!(read_json(&d.join("run/run.json"))["parallel"], 2);
    let csv = std::fs::read_to_string(d.join("run/results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9, "{csv}");
    // A time: refused with the reason.
    let timed = std::fs::read_to_string(d.join("p.yaml")).unwrap();
    let timed = timed.replace(
        "metric: {regex: 'v: ([0-9]+)', goal: maximize}",
        "metric: {kind: wall_time}",
    );
    std::fs::write(d.join("p.yaml"), timed).unwrap();
    let o = moldtune("run")
        .args(["p.yaml", "--parallel", "2"])
        .out("run2")
        .cwd(d)
        .output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("the metric is a time"),
        "{}",
        describe(&o)
    );
}

/// `--parallel 2` with a model: the same seed proposes the same configurations although the
/// evaluations end in an order that changes from run to run (each sleeps a random time): the
/// proposal of evaluation k sees the outcomes up to k − 2 only (11 of 20 proposals were
/// equal across two runs before).
#[test]
fn parallel_trials_with_a_model_repeat_their_proposals_from_the_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mold = "n=$(od -An -N1 -tu1 /dev/urandom)\nsleep 0.$(printf %02d $((n % 25)))\n\
                awk \"BEGIN{x=#X; y=#Y; print \\\"v: \\\" (1 - (x-0.3)^2 - (y-0.7)^2)}\"\n";
    std::fs::write(d.join("s.mold.sh"), mold).unwrap();
    let yaml = "name: par\nmold: s.mold.sh\nparams:\n  - {name: X, type: real, low: 0, high: 1}\n\
                \x20 - {name: Y, type: real, low: 0, high: 1}\nrun: \"sh {{ source }}\"\n\
                metric: {regex: 'v: (\\S+)', goal: maximize}\nrepeats: 1\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let proposals = |out: &str| {
        let o = moldtune("run")
            .arg("p.yaml")
            .learner("gp")
            .max_evals(14)
            .args(["--initial", "3", "--verify", "0", "--parallel", "2"])
            .out(out)
            .quiet()
            .cwd(d)
            .output();
        assert_code(&o, 0);
        let j = read_json(&d.join(out).join("results.json"));
        let evals = j["evaluations"].as_array().unwrap().clone();
        evals
            .iter()
            .map(|e| e["config"].clone())
            .collect::<Vec<_>>()
    };
    let runs = [proposals("a"), proposals("b"), proposals("c")];
    assert_eq!(runs[0].len(), 14);
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
}

/// An interrupted `--parallel 2` run leaves whole rows with ids 0..n in order and no
/// variant running; `--resume` completes it with every evaluation once.
#[test]
fn an_interrupted_parallel_run_resumes_with_nothing_lost_or_repeated() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("s.mold.sh"), "sleep 0.3107\necho \"v: #A\"\n").unwrap();
    let yaml =
        "name: par\nmold: s.mold.sh\nparams:\n  - {name: A, type: integer, low: 1, high: 1000}\n\
                run: \"sh {{ source }}\"\nmetric: {regex: 'v: ([0-9]+)', goal: maximize}\n\
                repeats: 1\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let child = moldtune("run")
        .arg("p.yaml")
        .learner("random")
        .max_evals(12)
        .args(["--verify", "0", "--parallel", "2"])
        .out("run")
        .quiet()
        .cwd(d)
        .spawn();
    let rows =
        || std::fs::read_to_string(d.join("run/results.csv")).map_or(0, |t| t.lines().count());
    let t0 = std::time::Instant::now();
    while rows() < 4 && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 130);
    crate::common::fake::assert_no_leftover("sleep 0.3107");
    let ids = |j: &serde_json::Value| -> Vec<u64> {
        let e = j["evaluations"].as_array().unwrap();
        e.iter().map(|e| e["eval_id"].as_u64().unwrap()).collect()
    };
    let n = ids(&read_json(&d.join("run/results.json"))).len() as u64;
    assert!((3..12).contains(&n), "{n} rows before the interrupt");
    let o = moldtune("run")
        .args(["--resume", "run"])
        .quiet()
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let j = read_json(&d.join("run/results.json"));
    assert_eq!(ids(&j), (0..12).collect::<Vec<u64>>());
    let csv = std::fs::read_to_string(d.join("run/results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 13, "{csv}");
}

/// `measure` prints the recorded quantities, and `measure` and `show` take the tie rule's
/// preferred configuration (`--preferred`).
#[test]
fn measure_and_show_take_the_preferred_configuration_and_print_recorded_quantities() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_trainer(d, "prefer: {within: 0.0, min: train_s}");
    tune_all(d);
    let o = moldtune("measure")
        .args(["p.yaml", "--from", "run", "--preferred"])
        .args(["--repeats", "1"])
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    // (A, B) = (2, 1): accuracy 0.95, train_s 2.
    assert!(out.contains("A=2 B=1"), "{out}");
    assert!(out.contains("train_s 2"), "{out}");
    let show = moldtune("show").args(["p.yaml", "--from", "run", "--preferred"]);
    let o = show.cwd(d).output();
    assert_code(&o, 0);
    assert!(text(&o.stdout).contains("a=2\nb=1"), "{}", describe(&o));
    let o = moldtune("show")
        .args(["p.yaml", "--preferred"])
        .cwd(d)
        .output();
    assert_code(&o, 2);
}

/// A "training" of quality Q: its validation value after epoch E is Q×E (printed and flushed
/// as it goes, 0.1 s an epoch), its final score Q.
fn write_epochs(dir: &Path, progress: &str) {
    let mold = "q=#Q\nfor e in 1 2 3 4 5; do echo \"epoch $e val $((q * e))\"; sleep 0.1; done\n\
                echo \"score: $q\"\n";
    std::fs::write(dir.join("t.mold.sh"), mold).unwrap();
    let yaml = format!(
        "name: epochs\nmold: t.mold.sh\nparams:\n\
         \x20 - {{name: Q, type: ordinal, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], default: 10}}\n\
         run: \"sh {{{{ source }}}}\"\n\
         metric: {{kind: regex, regex: 'score: ([0-9]+)', goal: maximize}}\n\
         {progress}\nrepeats: 1\ncheck: {{mode: none}}\n"
    );
    std::fs::write(dir.join("p.yaml"), yaml).unwrap();
}

/// The curves of progress.jsonl by eval_id.
fn curves(dir: &Path) -> std::collections::BTreeMap<u64, Vec<(f64, f64)>> {
    let text = std::fs::read_to_string(dir.join("progress.jsonl")).unwrap();
    let line = |l: &str| {
        let j: serde_json::Value = serde_json::from_str(l).unwrap();
        let pts = j["curve"].as_array().unwrap().iter();
        let pt = |p: &serde_json::Value| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
        (j["eval_id"].as_u64().unwrap(), pts.map(pt).collect())
    };
    text.lines().map(line).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (v[(n - 1) / 2] + v[n / 2]) / 2.0
}

/// `progress:` pruning: a run whose value at a step is below the median of the completed
/// runs' values there is stopped and recorded `pruned` (its last step and value in
/// results.csv), never before `startup` runs completed; a completed run never fell below
/// that median; a resumed run goes on comparing with the curves recorded before it.
#[test]
fn a_run_worse_than_the_median_at_a_step_is_pruned_and_resume_keeps_the_curves() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_epochs(
        d,
        "progress: {regex: 'epoch (\\d+) val (\\d+)', startup: 3}",
    );
    let run = || {
        moldtune("run")
            .arg("p.yaml")
            .learner("random")
            .seed(3)
            .args(["--verify", "0"])
            .cwd(d)
    };
    let o = run().max_evals(6).out("run").output();
    assert_code(&o, 0);
    let o = run().max_evals(10).args(["--resume", "run"]).output();
    assert_code(&o, 0);
    let csv = Csv::read(&d.join("run"));
    let (status, step) = (csv.column("status"), csv.column("progress_step"));
    let curves = curves(&d.join("run"));
    assert_pruned_only_below_the_median(&status, &step, &curves);
    assert!(
        status.iter().filter(|s| *s == "pruned").count() >= 2,
        "{status:?}"
    );
    assert!(
        status[6..].contains(&"pruned".to_string()),
        "resumed: {status:?}"
    );
}

/// Every `pruned` evaluation stopped below the median of at least `startup` (3) completed
/// values at its last step (recorded in results.csv); no completed one ever fell below it.
fn assert_pruned_only_below_the_median(
    status: &[String],
    step: &[String],
    curves: &std::collections::BTreeMap<u64, Vec<(f64, f64)>>,
) {
    let mut done: Vec<&Vec<(f64, f64)>> = Vec::new();
    for (id, st) in status.iter().enumerate() {
        let curve = &curves[&(id as u64)];
        // Below the median of at least `startup` (3) completed values at its step.
        let below = |&&(s, v): &&(f64, f64)| {
            let at: Vec<f64> = (done.iter())
                .filter_map(|c| c.iter().find(|p| p.0 == s).map(|p| p.1))
                .collect();
            at.len() >= 3 && v < median(at)
        };
        match st.as_str() {
            "pruned" => {
                let last = curve.last().unwrap();
                assert!(
                    below(&last),
                    "eval {id}: {curve:?} pruned, not below the median"
                );
                assert!(
                    last.0 < 5.0 && step[id] == format!("{}", last.0),
                    "eval {id}"
                );
            }
            "ok" => {
                assert_eq!(
                    curve.iter().find(below),
                    None,
                    "eval {id} should have been pruned"
                );
                done.push(curve);
            }
            other => panic!("eval {id}: {other}"),
        }
    }
}

/// `progress.regex` needs two groups (step, value), refused at its position otherwise; one
/// that no output matches is told in the summary (nothing could be pruned), not silent.
#[test]
fn a_progress_regex_is_checked_at_load_and_a_silent_one_told() {
    let tmp = tempfile::tempdir().unwrap();
    write_epochs(tmp.path(), "progress: {regex: 'val (\\d+)'}");
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(2)
        .cwd(tmp.path())
        .output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("p.yaml:7:") && err.contains("exactly two"),
        "{err}"
    );
    write_epochs(tmp.path(), "progress: {regex: 'round (\\d+) loss (\\d+)'}");
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(2)
        .args(["--verify", "0"])
        .out("r")
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    assert!(out.contains("nothing could be pruned"), "{out}");
    assert!(!text(&o.stderr).contains("no match for the recorded"));
}

/// A `run:` program that does not exist is refused at load, at its position, before a run
/// directory is made (it was "the machine failed", exit 5, with a resume hint); a metric
/// missing from the last 64 KiB of a long output is told with that window (issue 42 item 8).
#[test]
fn a_missing_run_program_is_refused_at_load_and_the_metric_window_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_epochs(d, "");
    let yaml = std::fs::read_to_string(d.join("p.yaml")).unwrap();
    std::fs::write(d.join("p.yaml"), yaml.replace("run: \"sh ", "run: \"shh ")).unwrap();
    let o = moldtune("run").arg("p.yaml").out("r").cwd(d).output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(err.contains("p.yaml:5:") && err.contains("`shh`"), "{err}");
    assert!(!d.join("r").exists());
    // The metric printed first, then 100 KiB of chatter: outside the window read.
    let mold = "echo \"score: #Q\"\nhead -c 102400 /dev/zero | tr '\\0' 'x'\necho\n";
    std::fs::write(d.join("t.mold.sh"), mold).unwrap();
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(1)
        .out("w")
        .cwd(d)
        .output();
    assert_code(&o, 3);
    let j = read_json(&d.join("w/results.json"));
    let cause = j["evaluations"][0]["cause"].as_str().unwrap();
    assert!(cause.contains("last 64 KiB"), "{cause}");
}

/// A byte that is not UTF-8, even in a comment, is refused at its `file:line:col`.
#[test]
fn a_problem_file_with_a_non_utf8_byte_is_refused_at_its_position() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_epochs(d, "# caf\u{e9} au lait");
    let yaml = std::fs::read_to_string(d.join("p.yaml")).unwrap();
    let bytes = yaml.replace('\u{e9}', "\u{1}").into_bytes();
    let bytes: Vec<u8> = bytes
        .into_iter()
        .map(|b| if b == 1 { 0xe9 } else { b })
        .collect();
    std::fs::write(d.join("p.yaml"), bytes).unwrap();
    let o = moldtune("run").arg("p.yaml").cwd(d).output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(err.contains("p.yaml:7:6") && err.contains("0xe9"), "{err}");
}

/// A variant that deletes the run directory (`rm -rf` of `../..`) ends the run saying so, not as
/// "the machine failed" with a resume hint for a directory that is gone (issue 42 item 8).
#[test]
fn a_variant_deleting_the_run_directory_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_epochs(d, "");
    std::fs::write(
        d.join("t.mold.sh"),
        "q=#Q\nrm -rf \"$(cd ../.. && pwd)\"\necho \"score: $q\"\n",
    )
    .unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(4)
        .out("gone")
        .cwd(d)
        .output();
    let err = text(&o.stderr);
    assert!(err.contains("was deleted"), "{}", describe(&o));
    assert!(!err.contains("--resume"), "{err}");
    assert_code(&o, 2);
}

/// A run whose output the metric's regex does not match says which regex it looked for.
#[test]
fn a_metric_not_found_names_the_regex_it_looked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("t.mold.sh"), "echo \"acc=0.#Q\"\n").unwrap();
    let yaml = "name: s\nmold: t.mold.sh\nparams:\n  - {name: Q, type: ordinal, values: [1, 2]}\n\
                run: \"sh {{ source }}\"\nmetric: {regex: 'accuracy: ([0-9.]+)', goal: maximize}\n\
                repeats: 1\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(1)
        .out("r")
        .cwd(d)
        .output();
    assert_code(&o, 3);
    let cause = &fake::causes(&d.join("r"))["0"];
    assert!(
        cause.starts_with("no match for the metric's regex `accuracy: ([0-9.]+)`"),
        "{cause}"
    );
}

/// The shipped example prunes only after a warm-up (it stopped trials after their first
/// epoch), and what a default run of it writes from the repository's root is ignored by git.
#[test]
fn the_example_warms_up_before_pruning_and_its_default_runs_are_ignored_by_git() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = moldtune::problem::Problem::load(&root.join("examples/mlp-digits/mlp.yaml")).unwrap();
    assert!(
        p.progress.as_ref().unwrap().warmup >= 1.0,
        "{:?}",
        p.progress
    );
    let out = moldtune::run::driver::default_out(&p);
    let git = std::process::Command::new("git")
        .args(["check-ignore", "-q"])
        .arg(out.join("results.csv"))
        .current_dir(root)
        .status();
    match git {
        Ok(s) if root.join(".git").exists() => {
            assert!(s.success(), "{} is not ignored", out.display())
        }
        _ => eprintln!("skipped: no git checkout to ask"),
    }
}

/// `--parallel` is bounded by the machine (it panicked at 30000, and exited 101 at 2000 under
/// a memory limit, leaving run.json `running`): refused before anything runs, with the bound.
#[test]
fn parallel_beyond_the_machine_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_toy(d);
    let yaml = format!(
        "{}metric: {{regex: 'v: (\\S+)', goal: maximize}}\n",
        crate::common::TOY_YAML
    );
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .mock()
        .out("r")
        .args(["--parallel", "30000"])
        .cwd(d)
        .output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("`--parallel 30000` is more than"),
        "{}",
        describe(&o)
    );
    assert!(!d.join("r/run.json").exists(), "nothing was started");
}

/// With `--parallel 2`, one worker's build goes on while the other worker's program runs:
/// only builds running ahead (`--jobs`) are held stopped during a timed run. The build of
/// X=1 ticks into a file every 0.1 s; the program of X=0 notes when it starts and ends.
#[test]
fn parallel_workers_build_while_another_worker_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (ticks, runs) = (d.join("ticks"), d.join("runs"));
    let mold = format!(
        "if [ \"$1\" = build ]; then\n  if [ #X = 1 ]; then\n    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do\n      date +%s%N >> {t}; sleep 0.1\n    done\n  fi\n  cp \"$0\" \"$2\"; exit 0\nfi\n\
         if [ #X = 0 ]; then date +%s%N >> {r}; sleep 3; date +%s%N >> {r}; fi\necho \"v: #X\"\n",
        t = ticks.display(),
        r = runs.display()
    );
    std::fs::write(d.join("s.mold.sh"), mold).unwrap();
    let yaml = "name: par\nmold: s.mold.sh\nparams:\n  - {name: X, type: integer, low: 0, high: 1, default: 0}\n\
                compile: \"sh {{ source }} build {{ exe }}\"\nrun: \"sh {{ source }} run\"\n\
                metric: {regex: 'v: (\\S+)', goal: maximize}\nrepeats: 1\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(2)
        .args(["--initial", "1", "--verify", "0", "--parallel", "2"])
        .out("run")
        .quiet()
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let read = |p: &Path| -> Vec<u128> {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        text.lines().filter_map(|l| l.trim().parse().ok()).collect()
    };
    let (ticks, runs) = (read(&ticks), read(&runs));
    assert_eq!(runs.len(), 2, "the program of X=0 ran once: {runs:?}");
    let during = ticks
        .iter()
        .filter(|&&t| t > runs[0] && t < runs[1])
        .count();
    assert!(
        during > 0,
        "no tick of the build during the other worker's run: {ticks:?} {runs:?}"
    );
}
