//! `moldtune show` and `--set`, and what templates may read and how they become arguments:
//! the variant and its commands without a search, the same commands the evaluator runs,
//! usage errors for configurations the search could not propose, misspelt template names
//! refused at load, and (real clang-22) paths and values with spaces kept as one argument.

use crate::common::fake::write_executable;
use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::Output;

/// `moldtune show p.yaml` in `dir`.
fn show(dir: &Path) -> Moldtune {
    moldtune("show").arg("p.yaml").cwd(dir)
}

/// A problem in `dir` built by a fake compiler: it logs its directory and arguments (one
/// per line) to `cc.log` and "builds" the program by copying `prog.sh`.
fn fake_problem(dir: &Path, compile: &str) -> PathBuf {
    write_executable(
        &dir.join("fakecc.sh"),
        "#!/bin/sh\nlog=\"$(dirname \"$0\")/cc.log\"\npwd > \"$log\"\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$log\"\n\
         while [ \"$1\" != -o ]; do shift; done\ncp \"$(dirname \"$0\")/prog.sh\" \"$2\"\nchmod +x \"$2\"\n",
    );
    write_executable(
        &dir.join("prog.sh"),
        "#!/bin/sh\necho 0.5\necho checked >&2\n",
    );
    std::fs::write(dir.join("m.c"), "int t = #T;\n#P2\nint v = #VEC;\n").unwrap();
    let yaml = format!(
        "name: fake\nmold: m.c\nparams:\n\
         \x20 - {{name: T, type: ordinal, values: [4, 8, 16], default: 8}}\n\
         \x20 - {{name: P2, type: categorical, choices: ['', '#pragma omp interchange']}}\n\
         \x20 - {{name: VEC, type: boolean}}\n\
         \x20 - {{name: U, type: integer, low: 1, high: 4, when: {{VEC: [true]}}}}\n\
         \x20 - {{name: DEF, type: categorical, choices: ['a b', 'c']}}\n\
         constraints: ['T * U <= 32']\n\
         compile: \"{compile}\"\n\
         run: '{{{{ exe }}}}'\nenv: {{MT_MODE: 'u{{{{ U }}}}'}}\n\
         metric: {{kind: kernel_time}}\ncheck: {{mode: output, env: {{MT_CHECK: '1'}}}}\nrepeats: 2\n"
    );
    let p = dir.join("p.yaml");
    std::fs::write(&p, yaml).unwrap();
    p
}

const FAKE_COMPILE: &str =
    "sh {{ problem_dir }}/fakecc.sh -DU={{ U }} -DDEF={{ DEF }} {% if VEC %}-DVEC -O3{% endif %} {{ source }} -o {{ exe }}";

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(o)))
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    let a = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    a.iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

#[test]
fn show_prints_the_variant_and_commands_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fake_problem(d, FAKE_COMPILE);
    let o = show(d)
        .args(["--set", "P2=#pragma omp interchange", "--set", "VEC=true"])
        .args(["--set", "U=3", "--set", "DEF=c"])
        .output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.starts_with("fake: T=8 P2='#pragma omp interchange' VEC=true U=3 DEF=c\n"),
        "{out}"
    );
    assert!(
        // The compile's own temporary folder (clang's TMPDIR) is part of what runs.
        out.contains("\n  env TMPDIR='{work_dir}/tmp' sh ")
            && out.contains(" -DU=3 -DDEF=c -DVEC -O3 variant.c -o '{work_dir}/variant'\n"),
        "{out}"
    );
    assert!(
        out.contains("\n  env MT_MODE=u3 MT_CHECK=1 '{work_dir}/variant'\n"),
        "{out}"
    );
    assert!(
        out.contains("\n  env MT_MODE=u3 '{work_dir}/variant'\n"),
        "{out}"
    );
    assert!(
        out.contains("int t = 8;\n#pragma omp interchange\nint v = 1;\n"),
        "{out}"
    );
    assert!(!d.join("cc.log").exists(), "show compiled something");
    let entries: Vec<_> = std::fs::read_dir(d).unwrap().collect();
    assert_eq!(entries.len(), 4, "show wrote files: {entries:?}");
}

#[test]
fn show_json_and_out_file() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fake_problem(d, FAKE_COMPILE);
    let o = show(d).args(["--set", "T=4"]).out("v.c").json().output();
    assert_code(&o, 0);
    let v = json(&o);
    let keys: Vec<&String> = v["config"].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 5);
    assert_eq!(v["config"]["T"], 4);
    assert_eq!(v["config"]["VEC"], false);
    assert!(v["config"]["U"].is_null(), "inactive is null: {v}");
    let argv = strings(&v["compile"]["argv"]);
    assert!(
        argv.contains(&"-DDEF=a b".to_string()),
        "one argument: {argv:?}"
    );
    assert!(
        argv.contains(&"-DU=".to_string()),
        "inactive renders empty: {argv:?}"
    );
    assert!(
        !argv.iter().any(|a| a.starts_with("-DVEC") || a == "-O3"),
        "{argv:?}"
    );
    assert_eq!(v["check"]["env"]["MT_CHECK"], "1");
    assert_eq!(v["check"]["stream"], "stderr");
    assert_eq!(v["run"]["env"]["MT_MODE"], "u");
    // The space, for scripts that walk it: an ordinal's values in order, a range as null.
    let space = v["space"].as_array().unwrap();
    let names: Vec<&str> = space.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["T", "P2", "VEC", "U", "DEF"]);
    assert_eq!(space[0]["values"], serde_json::json!([4, 8, 16]));
    assert_eq!(space[0]["ordered"], true);
    assert_eq!(
        space[1]["values"],
        serde_json::json!(["", "#pragma omp interchange"])
    );
    assert_eq!(space[1]["ordered"], false);
    assert_eq!(space[2]["values"], serde_json::json!([false, true]));
    assert!(space[3]["values"].is_null(), "{v}");
    assert!(v.get("work").is_none(), "no `work:` declared: {v}");
    let src = std::fs::read_to_string(d.join("v.c")).unwrap();
    assert_eq!(src, "int t = 4;\n\nint v = 0;\n");
    assert_eq!(v["source"], src.as_str());
}

#[test]
fn set_mistakes_are_usage_errors_naming_the_value() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fake_problem(d, FAKE_COMPILE);
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["--set", "VECT=true"],
            &["no parameter `VECT`", "did you mean `VEC`?"],
        ),
        (
            &["--set", "T=5"],
            &["`5` is not a value of `T`", "`4`, `8`, `16`"],
        ),
        (
            &["--set", "DEF=x"],
            &["`x` is not a value of `DEF`", "`'a b'`, `c`"],
        ),
        (&["--set", "U=2"], &["`U` is inactive", "--set VEC=true"]),
        (
            &["--set", "VEC=true", "--set", "U=4", "--set", "T=16"],
            &["`T * U <= 32` is false"],
        ),
        (&["--set", "T"], &["not of the form P=V"]),
    ];
    for (args, wanted) in cases {
        for cmd in ["show", "measure"] {
            let o = moldtune(cmd).arg("p.yaml").args(args).cwd(d).output();
            assert_code(&o, 2);
            let err = text(&o.stderr);
            for w in wanted {
                assert!(err.contains(w), "{cmd} {args:?}: `{w}` not in {err}");
            }
        }
    }
    assert!(!d.join("cc.log").exists());
}

#[test]
fn show_prints_what_the_evaluator_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    fake_problem(d, FAKE_COMPILE);
    let sets = ["--set", "VEC=true", "--set", "U=2", "--set", "DEF=a b"];
    let shown = json(&show(d).json().args(sets).output());
    let measure = moldtune("measure").args(["p.yaml", "--repeats", "1"]);
    let o = measure.json().args(sets).cwd(d).output();
    assert_code(&o, 0);
    assert_eq!(json(&o)["status"], "ok", "{}", describe(&o));
    // The compile of `measure` is the last one (the reference is built first).
    let log = std::fs::read_to_string(d.join("cc.log")).unwrap();
    let mut lines = log.lines();
    let cwd = lines.next().unwrap().to_string();
    let logged: Vec<String> = lines.map(|l| l.replace(&cwd, "{work_dir}")).collect();
    let argv = strings(&shown["compile"]["argv"]);
    assert_eq!(argv[0], "sh");
    assert!(argv[1].ends_with("/fakecc.sh"));
    assert_eq!(logged, argv[2..].to_vec());
    assert!(logged.contains(&"-DDEF=a b".to_string()) && logged.contains(&"-DVEC".to_string()));
}

/// A mock run of the fake problem in `d`/run (6 evaluations, `args` added): its results.csv.
fn mock_run(d: &Path, args: &[&str]) -> Csv {
    fake_problem(d, FAKE_COMPILE);
    let o = moldtune("run")
        .arg("p.yaml")
        .mock()
        .quiet()
        .max_evals(6)
        .args(args)
        .out("run")
        .cwd(d)
        .output();
    assert_code(&o, 0);
    Csv::read(&d.join("run"))
}

#[test]
fn show_from_a_run_takes_its_evaluation_or_best() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let csv = mock_run(d, &[]);
    for (eval, row) in csv.rows.iter().enumerate() {
        let o = show(d)
            .args(["--from", "run", "--eval", &eval.to_string()])
            .json()
            .output();
        assert_code(&o, 0);
        let v = json(&o);
        for name in ["T", "P2", "VEC", "DEF"] {
            let shown = match &v["config"][name] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            assert_eq!(shown, csv.get(row, name), "eval {eval} {name}");
        }
    }
    let best = csv.min_ok().expect("an ok row").0;
    let o = show(d)
        .args(["--from", "run", "--set", "DEF=c"])
        .json()
        .output();
    let v = json(&o);
    assert_eq!(v["config"]["T"].to_string(), csv.get(&csv.rows[best], "T"));
    assert_eq!(v["config"]["DEF"], "c");
    let o = show(d).args(["--from", "run", "--eval", "99"]).output();
    assert_code(&o, 2);
}

#[test]
fn a_misspelt_template_name_is_refused_at_load_with_a_suggestion() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let compile = FAKE_COMPILE.replace("{% if VEC %}", "{% if VECC %}");
    fake_problem(d, &compile);
    // `compile: "` is 10 characters: the template starts at column 11 of line 10.
    let at = format!("p.yaml:10:{}: ", 11 + compile.find("VECC").unwrap());
    let runs = [
        show(d),
        moldtune("run").arg("p.yaml").mock().out("r").cwd(d),
        moldtune("measure").arg("p.yaml").cwd(d),
    ];
    for c in runs {
        let o = c.output();
        assert_code(&o, 2);
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!("{at}the `compile` template reads `VECC`")),
            "{err}"
        );
        assert!(err.contains("did you mean `VEC`?"), "{err}");
    }
    assert!(!d.join("r").exists() && !d.join("cc.log").exists());
}

#[test]
fn a_value_holding_several_flags_needs_words() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let p = fake_problem(
        d,
        "sh {{ problem_dir }}/fakecc.sh {{ DEF }} {{ source }} -o {{ exe }}",
    );
    let yaml = std::fs::read_to_string(&p)
        .unwrap()
        .replace("'a b', 'c'", "'-mllvm -polly', 'c'");
    std::fs::write(&p, yaml).unwrap();
    let o = show(d).output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("passes the value `-mllvm -polly` of `DEF` as one argument"),
        "{err}"
    );
    assert!(err.contains("{{ DEF | words }}"), "{err}");
    let yaml = std::fs::read_to_string(&p)
        .unwrap()
        .replace("{{ DEF }}", "{{ DEF | words }}");
    std::fs::write(&p, yaml).unwrap();
    let o = show(d).json().output();
    let argv = strings(&json(&o)["compile"]["argv"]);
    assert_eq!(argv[2..4], ["-mllvm", "-polly"]);
}

/// A real problem in a directory whose path holds spaces: a header include path, a
/// second source, a define and a parameter value with a space, and a condition spanning two
/// flags.
fn spaced_problem(root: &Path) -> PathBuf {
    let d = root.join("my problems/with space");
    std::fs::create_dir_all(d.join("inc dir")).unwrap();
    std::fs::write(d.join("inc dir/h.h"), "#define SEVEN 7\n").unwrap();
    std::fs::write(d.join("helper one.c"), "int helper(void) { return 35; }\n").unwrap();
    let mold = "#include <stdio.h>\n#include \"h.h\"\nint helper(void);\n\
                _Static_assert(sizeof(LABEL) == sizeof(\"hello world\") || sizeof(LABEL) == sizeof(\"x y\"), \"one argument\");\n\
                int main(void) {\n  int n = #N * SEVEN + helper();\n  fprintf(stderr, \"%d\\n\", n > 0);\n  printf(\"%d\\n0.001\\n\", n);\n  return 0;\n}\n";
    std::fs::write(d.join("k.mold.c"), mold).unwrap();
    let yaml = "name: spaced\nmold: k.mold.c\nsources: ['helper one.c']\nparams:\n\
                \x20 - {name: N, type: ordinal, values: [1, 2], default: 1}\n\
                \x20 - {name: LABEL, type: categorical, choices: ['x y', 'hello world']}\n\
                \x20 - {name: INC, type: categorical, choices: ['inc dir']}\n\
                \x20 - {name: WARN, type: boolean}\n\
                compile: 'clang-22 -O1 -DLABEL=\"{{ LABEL }}\" -I{{ problem_dir }}/{{ INC }} {% if WARN %}-Wall -Wextra{% endif %} {{ source }} {{ sources }} -o {{ exe }}'\n\
                run: '{{ exe }}'\nmetric: {kind: kernel_time}\nrepeats: 1\n";
    std::fs::write(d.join("k.yaml"), yaml).unwrap();
    d
}

#[test]
fn clang_paths_and_values_with_spaces_stay_one_argument() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let d = spaced_problem(tmp.path());
    let sets = ["--set", "LABEL=hello world", "--set", "WARN=true"];
    let o = moldtune("show")
        .arg("k.yaml")
        .json()
        .args(sets)
        .cwd(&d)
        .output();
    assert_code(&o, 0);
    let argv = strings(&json(&o)["compile"]["argv"]);
    let dir = d.canonicalize().unwrap();
    let inc = format!("-I{}/inc dir", dir.display());
    let helper = format!("{}/helper one.c", dir.display());
    let wanted = ["-DLABEL=\"hello world\"", &inc, "-Wall", "-Wextra", &helper];
    for want in wanted {
        assert!(
            argv.iter().any(|a| a == want),
            "`{want}` not one argument of {argv:?}"
        );
    }
    // What show printed builds and runs (measure takes the same path as a run).
    let o = moldtune("measure")
        .args(["k.yaml", "--repeats", "1"])
        .args(sets)
        .cwd(&d)
        .output();
    assert_code(&o, 0);
}

#[test]
fn clang_runs_where_every_path_has_spaces() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let d = spaced_problem(tmp.path());
    // The run directory, so the build directories and `exe`, have spaces too.
    let o = moldtune("run")
        .arg("k.yaml")
        .learner("random")
        .max_evals(4)
        .quiet()
        .seed(2)
        .out("run dir")
        .cwd(&d)
        .output();
    assert_code(&o, 0);
    let csv = Csv::read(&d.join("run dir"));
    let status = csv.column("status");
    assert!(status.iter().all(|s| s == "ok"), "{:?}", csv.rows);
    let labels = csv.column("LABEL");
    assert!(labels.iter().any(|l| l == "hello world"), "{:?}", csv.rows);
}

/// A variant keeps its mold's suffix (`m.mold.sh` → `variant.sh`): `show` says so, the
/// compile sees it as `{{ source }}`, and a run writes it there (issue 30, item 1).
#[test]
fn a_variant_keeps_its_molds_suffix() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("m.mold.sh"),
        "#!/bin/sh\n# its value: #P0\necho 0.#P0\n",
    )
    .unwrap();
    std::fs::write(
        d.join("p.yaml"),
        "name: shell\nmold: m.mold.sh\nparams:\n  - {name: P0, type: ordinal, values: [1, 2, 3]}\n\
         compile: \"cp {{ source }} {{ exe }}\"\nrun: \"sh {{ exe }}\"\n\
         metric: {kind: kernel_time}\ncheck: {mode: none}\n",
    )
    .unwrap();
    let o = show(d).output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("cp variant.sh") && out.contains("/variant.sh"),
        "{out}"
    );
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(3)
        .arg("--keep-builds")
        .out("run")
        .quiet()
        .learner("random")
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let kept = d.join("run/work/eval-0/variant.sh");
    assert!(std::fs::read_to_string(&kept)
        .unwrap()
        .contains("its value: 1"));
}

/// A problem without `compile:` has no build step: the variant is run as rendered
/// (`run: "sh {{ source }}"`); `show` says so, a run and its resume work, and
/// `check.compile_extra` (which adds to a compile) is refused (issue 30, item 1).
#[test]
fn a_script_mold_without_compile_runs_as_rendered() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("m.mold.sh"), "# its value: #P0\necho 0.#P0\n").unwrap();
    let yaml = "name: script\nmold: m.mold.sh\nparams:\n  - {name: P0, type: ordinal, values: [1, 2, 3]}\n\
                run: \"sh {{ source }}\"\nmetric: {kind: kernel_time}\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = show(d).output();
    assert_code(&o, 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("compile: none") && out.contains("sh variant.sh"),
        "{out}"
    );
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(3)
        .out("run")
        .quiet()
        .learner("random")
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let csv = std::fs::read_to_string(d.join("run/results.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.contains(",ok,")).count(),
        3,
        "{csv}"
    );
    assert!(csv.lines().nth(1).unwrap().starts_with("1,0.1,"), "{csv}");
    let o = moldtune("run")
        .args(["--resume", "run"])
        .max_evals(4)
        .quiet()
        .cwd(d)
        .output();
    assert_code(&o, 0);
    // The best variant is kept with its own suffix, and `best` finds it.
    assert!(d.join("run/best.sh").is_file() && !d.join("run/best.c").exists());
    let o = moldtune("best").arg("run").json().cwd(d).output();
    assert_code(&o, 0);
    assert!(text(&o.stdout).contains("best.sh"), "{}", text(&o.stdout));
    let extra = yaml.replace("check: {mode: none}", "check: {compile_extra: -DX}");
    std::fs::write(d.join("q.yaml"), extra).unwrap();
    let o = moldtune("show").arg("q.yaml").cwd(d).output();
    assert_code(&o, 2);
    assert!(
        text(&o.stderr).contains("compile_extra"),
        "{}",
        text(&o.stderr)
    );
}

/// `goal: maximize`: the best is the largest objective (a script printing an accuracy, read
/// by a regex metric) (issue 30, item 4).
#[test]
fn a_maximised_metric_s_best_is_the_largest() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(
        d.join("acc.mold.sh"),
        "echo trained\necho \"accuracy: 0.9#P0\"\n",
    )
    .unwrap();
    let yaml = "name: accuracy\nmold: acc.mold.sh\nparams:\n  - {name: P0, type: ordinal, values: [1, 5, 3, 2]}\n\
                run: \"sh {{ source }}\"\n\
                metric: {kind: regex, regex: 'accuracy: ([0-9.]+)', goal: maximize}\ncheck: {mode: none}\n";
    std::fs::write(d.join("p.yaml"), yaml).unwrap();
    let o = moldtune("run")
        .arg("p.yaml")
        .max_evals(4)
        .out("run")
        .quiet()
        .learner("random")
        .cwd(d)
        .output();
    assert_code(&o, 0);
    let o = moldtune("best").arg("run").json().cwd(d).output();
    assert_code(&o, 0);
    let best: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(best["objective"], 0.95, "{best}");
    assert_eq!(best["config"]["P0"], 5, "{best}");
}

/// `--from DIR` names a configuration from results.csv alone: a run whose run.json is gone
/// still gives its evaluations and its best (by the problem file given now).
#[test]
fn show_from_a_run_without_its_run_json_takes_its_evaluation_or_best() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let csv = mock_run(d, &["--verify", "0"]);
    std::fs::remove_file(d.join("run").join("run.json")).unwrap();
    let o = show(d)
        .args(["--from", "run", "--eval", "3"])
        .json()
        .output();
    assert_code(&o, 0);
    assert_eq!(
        json(&o)["config"]["T"].to_string(),
        csv.get(&csv.rows[3], "T")
    );
    let best = csv.min_ok().expect("an ok row").0;
    let o = show(d).args(["--from", "run"]).json().output();
    assert_code(&o, 0);
    assert_eq!(
        json(&o)["config"]["T"].to_string(),
        csv.get(&csv.rows[best], "T")
    );
}

/// A problem in `dir` whose constraint is `constraint` over `R` (1 to 64) and the machine.
fn machine_problem(dir: &Path, constraint: &str) {
    std::fs::write(dir.join("m.sh"), "echo #R\n").unwrap();
    let yaml = format!(
        "name: m\nmold: m.sh\nparams:\n  - {{name: R, type: integer, low: 1, high: 64, default: 1}}\n\
         constraints:\n  - \"{constraint}\"\nrun: 'sh {{{{ source }}}}'\nmetric: {{kind: wall_time}}\n"
    );
    std::fs::write(dir.join("p.yaml"), yaml).unwrap();
}

#[test]
fn a_constraint_reads_the_machine_it_is_loaded_on() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    machine_problem(d, "R <= machine.cores");
    let cores = moldtune::host::Host::read().cores.min(63);
    let fits = show(d).args(["--set", &format!("R={cores}")]).output();
    assert_code(&fits, 0);
    let beyond = show(d)
        .args(["--set", &format!("R={}", cores + 1)])
        .output();
    assert_code(&beyond, 2);
    assert!(text(&beyond.stderr).contains("`R <= machine.cores` is false"));

    machine_problem(d, "R <= machine.registers");
    let o = show(d).output();
    assert_code(&o, 2);
    let err = text(&o.stderr);
    for w in [
        "p.yaml:6:",
        "unknown machine fact `machine.registers`",
        "machine.vector_registers",
    ] {
        assert!(err.contains(w), "`{w}` not in {err}");
    }
}
