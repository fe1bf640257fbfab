//! `moldtune mctree`: the loop trees of the PolyBench kernels, every proposed directive
//! stack accepted by clang-22, bad input refused before a run directory exists, the budget in
//! valid evaluations, resume after SIGKILL, a kernel in PolyBench's original layout with an
//! extra source, and `--emit-mold` under `moldtune run`. (floyd-warshall's tiles on random
//! input are in `mctree_check.rs`: that test evaluates in-process, which reaps children.)

use crate::common::fake::write_executable;
use crate::common::mctree::{loop_tree, recorded};
use crate::common::{assert_code, describe, have_clang, moldtune, read_json, Csv, Moldtune};

use std::path::{Path, PathBuf};
use std::process::Command;

use moldtune::mctree::legality::Legality;
use moldtune::mctree::transform::Options;
use moldtune::mctree::tree::Tree;
use moldtune::mctree::{setup, unit};
use moldtune::problem::param::OpenValues;
use moldtune::problem::space::Config;
use moldtune::rng::Rng;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn kernel(k: &str) -> PathBuf {
    root().join(format!("polybench/{k}/{k}.c"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/mctree").join(name)
}

/// `moldtune mctree FILE`.
fn mctree(file: &Path) -> Moldtune {
    moldtune("mctree").arg(file)
}

/// An mctree config file in `dir` whose compiler is `script`, written there as the
/// executable `name` (a compiler that hangs, floods its stderr or leaves a child behind).
fn config_with_compiler(dir: &Path, name: &str, script: &str) -> PathBuf {
    let cc = dir.join(name);
    write_executable(&cc, script);
    let cfg = dir.join("mctree.yaml");
    std::fs::write(&cfg, format!("compiler: {}\n", cc.display())).unwrap();
    cfg
}

fn list(file: &Path, extra: &[&str]) -> serde_json::Value {
    let o = mctree(file)
        .arg("--list")
        .json()
        .arg("--")
        .args(extra)
        .output();
    assert_code(&o, 0);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// (iv, parent, perfect, rectangular, statements) of every loop.
fn shape(t: &serde_json::Value) -> Vec<(String, Option<u64>, u64, u64, u64)> {
    (t["loops"].as_array().unwrap().iter())
        .map(|l| {
            (
                l["iv"].as_str().unwrap().to_string(),
                l["parent"].as_u64(),
                l["perfect"].as_u64().unwrap(),
                l["rectangular"].as_u64().unwrap(),
                l["statements"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn s(
    iv: &str,
    parent: Option<u64>,
    perfect: u64,
    rect: u64,
    stmts: u64,
) -> (String, Option<u64>, u64, u64, u64) {
    (iv.to_string(), parent, perfect, rect, stmts)
}

#[test]
fn lists_the_loop_trees_of_the_polybench_kernels() {
    require_clang!();
    let fw = list(&kernel("floyd-warshall"), &["-DMEDIUM_DATASET"]);
    assert_eq!(fw["kernel"], "kernel_floyd_warshall");
    assert_eq!(
        shape(&fw),
        vec![
            s("k", None, 3, 3, 0),
            s("i", Some(0), 2, 2, 0),
            s("j", Some(1), 1, 1, 1)
        ]
    );
    assert_eq!(fw["loops"][0]["trip"], 500);
    assert_eq!(fw["loops"][0]["line"], 46);

    // syr2k: both j loops are triangular (bounded by i, two levels up for the second).
    let sy = list(&kernel("syr2k"), &["-DMEDIUM_DATASET"]);
    assert_eq!(
        shape(&sy),
        vec![
            s("i", None, 1, 1, 0),
            s("j", Some(0), 1, 1, 1),
            s("k", Some(0), 2, 2, 0),
            s("j", Some(2), 1, 1, 1)
        ]
    );
    for j in [1, 3] {
        assert_eq!(sy["loops"][j]["upper"]["kind"], "depends");
        assert_eq!(sy["loops"][j]["upper"]["loops"], serde_json::json!([0]));
    }
    // covariance: imperfect (statements around the inner loop) and a triangular nest.
    let cov = list(&kernel("covariance"), &["-DMEDIUM_DATASET"]);
    let c = shape(&cov);
    assert_eq!(c[0], s("j", None, 1, 1, 2));
    assert_eq!(c[4], s("i", None, 2, 1, 0));
    assert_eq!(cov["loops"][5]["lower"]["kind"], "depends");
    heat_3d_lu_and_the_text_form();
}

/// heat-3d: a time loop around two perfect rectangular 3-deep nests; lu: every loop carries
/// a dependence; the text form of `--list`.
fn heat_3d_lu_and_the_text_form() {
    // heat-3d: a time loop around two perfect rectangular 3-deep nests.
    let heat = list(&kernel("heat-3d"), &["-DMEDIUM_DATASET"]);
    assert_eq!(heat["roots"], serde_json::json!([0]));
    assert_eq!(heat["loops"][0]["children"], serde_json::json!([1, 4]));
    assert_eq!(heat["loops"][0]["inclusive"], true);
    for n in [1, 4] {
        assert_eq!(
            (
                heat["loops"][n]["perfect"].as_u64(),
                heat["loops"][n]["rectangular"].as_u64()
            ),
            (Some(3), Some(3))
        );
    }
    assert_eq!(heat["loops"][0]["independent"], false);
    assert_eq!(heat["loops"][1]["independent"], true);
    // lu: every loop carries a dependence; the inner bounds follow the outer loops.
    let lu = list(&kernel("lu"), &["-DMEDIUM_DATASET"]);
    assert_eq!(lu["loops"].as_array().unwrap().len(), 5);
    assert_eq!(lu["loops"][2]["upper"]["loops"], serde_json::json!([1]));
    assert!((lu["loops"].as_array().unwrap().iter()).all(|l| l["independent"] == false));
    // The text form names every loop with its position.
    let o = mctree(&kernel("lu")).arg("--list").output();
    assert_code(&o, 0);
    let text = crate::common::text(&o.stdout);
    assert!(
        text.contains("L2 for k in [0, j) (declared outside; bounds depend on L1)"),
        "{text}"
    );
}

/// Random nodes of depth 1 to 3 (seeded): every directive stack mctree can propose.
fn sample_nodes(tree: &mut Tree, n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut at = 0;
        for _ in 0..1 + rng.below(3) {
            let kids = tree.children(at);
            if kids.is_empty() {
                break;
            }
            at = kids[rng.below(kids.len())];
        }
        if at != 0 {
            out.push(at);
        }
    }
    out
}

/// The C files to check proposals on: ours, plus every `*.c` below `$MOLDTUNE_MCTREE_CORPUS`
/// (e.g. a PolyBench/C 4.2 checkout, compiled with its `utilities/` on the include path).
/// Each: the file, its flags, whether it is someone else's (skipped if it is no kernel).
fn corpus() -> Vec<(PathBuf, Vec<String>, bool)> {
    let mut files: Vec<(PathBuf, Vec<String>, bool)> = (crate::common::KERNELS.iter())
        .map(|k| (kernel(k), vec!["-DMINI_DATASET".to_string()], false))
        .collect();
    let Ok(dir) = std::env::var("MOLDTUNE_MCTREE_CORPUS") else {
        return files;
    };
    let out = Command::new("find")
        .args([&dir, "-name", "*.c", "-not", "-path", "*/utilities/*"])
        .output()
        .unwrap();
    let utilities = format!("-I{dir}/utilities");
    for f in crate::common::text(&out.stdout).lines() {
        files.push((
            PathBuf::from(f),
            vec![utilities.clone(), "-DMINI_DATASET".into()],
            true,
        ));
    }
    files
}

#[test]
fn every_proposed_directive_stack_compiles_with_clang_22() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    for (file, flags, external) in corpus() {
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let r = recorded(&file, "", &flags);
        let text = std::fs::read_to_string(&file).unwrap();
        let (pflags, timeout) = (r.parse_flags(), r.compile_timeout());
        let unit = match unit::read("clang-22", &file, &pflags, timeout, &text, None) {
            Ok(u) => u,
            Err(_) if external => continue, // a corpus may hold files that are no program
            Err(e) => panic!("{e}"),
        };
        let fns = unit.functions;
        if external && moldtune::mctree::unit::choose(&fns, None, &text, &file).is_err() {
            continue; // not a kernel file (no kernel_* function, no #pragma scop)
        }
        let (text, loops) = loop_tree(&r);
        let labels = OpenValues::default();
        let problem = setup::problem(&r, &text, &loops, &labels).unwrap();
        let mut tree = Tree::new(loops, Options::default());
        for (i, n) in sample_nodes(&mut tree, 25, 7).into_iter().enumerate() {
            let node = &tree.nodes[n];
            let config = Config(vec![labels.intern(&node.text), 0.0, 0.0]);
            let source = problem.mold.render(&problem.space, &config);
            let path = tmp.path().join(format!("variant-{i}.c"));
            std::fs::write(&path, &source).unwrap();
            let dir = file.parent().unwrap().to_path_buf();
            let o = Command::new("clang-22")
                .args(["-fsyntax-only", "-fopenmp", "-Werror=pass-failed"])
                .args(&flags)
                .arg(format!("-I{}", dir.display()))
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{}: `{}` does not compile:\n{}",
                file.display(),
                node.text,
                describe(&o)
            );
        }
    }
}

#[test]
fn bad_input_is_refused_with_exit_2_and_no_run_directory() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let cases: Vec<(PathBuf, Vec<&str>, &str)> = vec![
        (fixture("noloops.c"), vec![], "has no loops"),
        (
            fixture("untouchable.c"),
            vec![],
            "not in OpenMP's canonical loop form",
        ),
        (fixture("two.c"), vec![], "`kernel_one`, `kernel_two`"),
        (
            fixture("two.c"),
            vec!["--kernel", "kernel_three"],
            "defines no function `kernel_three`",
        ),
        (
            fixture("pblayout/matmul.c"),
            vec![],
            "'minibench.h' file not found",
        ),
        (fixture("silent.c"), vec![], "the output check cannot work"),
        (fixture("missing.c"), vec![], "cannot find"),
    ];
    for (file, flags, expected) in cases {
        let o = mctree(&file).out(&out).args(flags).output();
        assert_code(&o, 2);
        let err = crate::common::text(&o.stderr);
        assert!(
            err.contains(expected),
            "{}: expected `{expected}` in:\n{err}",
            file.display()
        );
        assert!(
            !out.exists(),
            "a run directory was created for {}",
            file.display()
        );
    }
    // The untransformed program must build with the flags (here: without the extra source).
    let m = fixture("pblayout/matmul.c");
    let inc = format!("-I{}", fixture("pblayout").display());
    let o = mctree(&m).out(&out).args(["--", &inc]).output();
    assert_code(&o, 2);
    assert!(
        crate::common::text(&o.stderr).contains("does not build"),
        "{}",
        describe(&o)
    );
    assert!(!out.exists());
}

/// `moldtune mctree gemm.c --mock --quiet --out OUT <extra…> -- -DMINI_DATASET`.
fn mctree_mock(out: &Path, extra: &[&str]) -> std::process::Output {
    mctree(&kernel("gemm"))
        .mock()
        .quiet()
        .out(out)
        .args(extra)
        .args(["--", "-DMINI_DATASET"])
        .output()
}

#[test]
fn mctree_checks_the_flags_it_shares_with_run_as_run_does() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    for (flags, says) in [
        (
            &["--verify-rounds", "1"][..],
            "`--verify-rounds` must be at least 2",
        ),
        (
            &["--max-evals", "0"][..],
            "`--max-evals` must be at least 1",
        ),
    ] {
        let out = tmp.path().join("run");
        let o = mctree_mock(&out, flags);
        assert_code(&o, 2);
        assert!(
            crate::common::text(&o.stderr).contains(says),
            "{}",
            describe(&o)
        );
        assert!(!out.join("results.csv").exists());
    }
}

#[test]
fn the_budget_counts_valid_evaluations_and_resume_continues_the_tree() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = mctree_mock(&out, &["--max-evals", "8", "--verify", "0"]);
    assert_code(&o, 0);
    let first = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let csv = Csv::read(&out);
    let evals = read_json(&out.join("results.json"))["evaluations"].clone();
    let valid = (evals.as_array().unwrap().iter())
        .filter(|e| e["status"] == "ok" && e["reused_from"].is_null())
        .count();
    assert_eq!(valid, 8, "{} rows", csv.rows.len());
    assert_eq!(
        csv.header[..2],
        ["transformations".to_string(), "polly".to_string()]
    );
    let meta = read_json(&out.join("run.json"));
    assert_eq!(meta["learner"], "rf");
    assert!(meta["mctree"]["kernel"] == "kernel_gemm", "{meta}");
    let check_env = meta["mctree"]["check_env"].as_array().unwrap();
    assert!(
        check_env.contains(&serde_json::json!(["PB_INPUT", "random"])),
        "{meta}"
    );
    assert!(out.join("tree.dot").is_file() && out.join("best.c").is_file());

    let o = mctree_mock(&out, &["--resume", "--max-evals", "14", "--verify", "0"]);
    assert_code(&o, 0);
    let after = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(after.starts_with(&first), "resume rewrote earlier rows");
    let csv = Csv::read(&out);
    let ids: Vec<String> = csv.column("eval_id");
    let want: Vec<String> = (0..ids.len()).map(|i| i.to_string()).collect();
    assert_eq!(ids, want);
    let mut nodes: Vec<(String, String)> = (csv.rows.iter())
        .map(|r| {
            (
                csv.get(r, "transformations").to_string(),
                csv.get(r, "polly").to_string(),
            )
        })
        .collect();
    let n = nodes.len();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), n, "a node was evaluated twice");
    // `moldtune best` reads an mctree run directory.
    let o = moldtune("best").arg(&out).json().output();
    assert_code(&o, 0);
}

#[test]
fn the_verification_re_measures_each_polly_knob_alone_whatever_its_rank() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = mctree_mock(&out, &["--max-evals", "12", "--verify", "1"]);
    assert_code(&o, 0);
    let evals = read_json(&out.join("results.json"))["evaluations"].clone();
    let knobs: Vec<u64> = (evals.as_array().unwrap().iter())
        .filter(|e| e["config"]["transformations"] == "" && e["config"]["polly"] != "")
        .filter(|e| e["status"] == "ok" && e["reused_from"].is_null())
        .map(|e| e["eval_id"].as_u64().unwrap())
        .collect();
    assert!(knobs.len() >= 2, "{evals}");
    let v = read_json(&out.join("run.json"))["verification"].clone();
    let ids: Vec<u64> = (v["candidates"].as_array().unwrap().iter())
        .map(|c| c["eval_id"].as_u64().unwrap())
        .collect();
    assert!(
        knobs.iter().all(|k| ids.contains(k)),
        "{knobs:?} not all in {ids:?}"
    );
    assert!(ids.len() <= 2 + knobs.len(), "{ids:?}");
}

/// An interrupted mctree run names the command that resumes it, and that command does (it said
/// `moldtune run --resume DIR`, which fails on the C file; issue 53 item 5).
#[test]
fn an_interrupted_mctree_run_says_how_to_resume_it() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let child = mctree(&kernel("gemm"))
        .mock()
        .quiet()
        .out(&out)
        .args(["--max-evals", "200", "--verify", "0"])
        .args(["--", "-DMINI_DATASET"])
        .env("MOLDTUNE_MOCK_DELAY_MS", "200")
        .spawn();
    // Waits for rows, not for a time: a slow machine only waits longer (the bound is a guard
    // against a hang, ten times anything seen).
    let t0 = std::time::Instant::now();
    while Csv::try_rows(&out) < 2 && t0.elapsed().as_secs() < 1200 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        Csv::try_rows(&out) >= 2,
        "the run wrote no rows to interrupt"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
    let err = crate::common::text(&o.stderr);
    let said = format!("moldtune mctree --resume {}", out.display());
    assert!(err.contains(&said), "{err}");
    let o = moldtune("mctree")
        .args(["--resume"])
        .arg(&out)
        .mock()
        .quiet()
        .args(["--max-evals", "4", "--verify", "0"])
        .output();
    assert_code(&o, 0);
}

#[test]
fn sigkill_then_resume_loses_and_repeats_no_experiment() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let mut child = mctree(&kernel("gemm"))
        .quiet()
        .max_evals(10)
        .args(["--verify", "0", "--repeats", "1"])
        .out(&out)
        .args(["--", "-DMINI_DATASET"])
        .command()
        .spawn()
        .unwrap();
    // Waits for rows, not for a time (a runner at load 23 had none after 120 s); the bound
    // only guards against a hang.
    let t0 = std::time::Instant::now();
    while Csv::try_rows(&out) < 3 && t0.elapsed().as_secs() < 1200 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        Csv::try_rows(&out) >= 3,
        "the run wrote no rows to kill it after"
    );
    let before = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let o = moldtune("mctree")
        .arg("--resume")
        .arg(&out)
        .quiet()
        .output();
    assert_code(&o, 0);
    let after = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(after.starts_with(&before), "earlier rows changed");
    let csv = Csv::read(&out);
    let ids: Vec<String> = csv.column("eval_id");
    assert_eq!(
        ids,
        (0..ids.len()).map(|i| i.to_string()).collect::<Vec<_>>()
    );
    let mut keys: Vec<String> = csv
        .rows
        .iter()
        .map(|r| format!("{}|{}", csv.get(r, "transformations"), csv.get(r, "polly")))
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "an experiment was repeated");
    assert!(
        csv.rows
            .iter()
            .filter(|r| csv.get(r, "status") == "ok")
            .count()
            >= 10
    );
}

#[test]
fn tunes_a_kernel_in_polybench_layout_and_emits_a_mold_that_run_accepts() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let (out, emitted) = (tmp.path().join("run"), tmp.path().join("mold"));
    let m = fixture("pblayout/matmul.c");
    let inc = format!("-I{}", fixture("pblayout").display());
    let extra = fixture("pblayout/minibench.c");
    let o = mctree(&m)
        .max_evals(6)
        .args(["--repeats", "1"])
        .quiet()
        .json()
        .out(&out)
        .arg("--emit-mold")
        .arg(&emitted)
        .args(["--", &inc])
        .arg(&extra)
        .output();
    assert_code(&o, 0);
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["valid"], 6, "{summary}");
    let meta = read_json(&out.join("run.json"));
    assert_eq!(meta["mctree"]["kernel"], "mm", "found by its #pragma scop");
    assert_eq!(meta["metric"], "kernel_time");
    assert_eq!(
        meta["mctree"]["check_build_flags"],
        serde_json::json!(["-DPOLYBENCH_DUMP_ARRAYS"])
    );
    assert!(meta["verification"]["winner_eval_id"].is_u64(), "{meta}");
    let best = summary["best"]["config"]["transformations"]
        .as_str()
        .unwrap()
        .to_string();
    let best_c = std::fs::read_to_string(out.join("best.c")).unwrap();
    for entry in best.split("; ").filter(|e| !e.is_empty()) {
        let directive = entry.split_once(": ").unwrap().1;
        assert!(
            best_c.contains(&format!("#pragma omp {directive}")),
            "{entry} not in best.c"
        );
    }
    // The emitted problem runs; its default is mctree's best and passes the output check.
    let yaml = emitted.join("matmul.yaml");
    let run = tmp.path().join("fine");
    let o = moldtune("run")
        .arg(&yaml)
        .max_evals(2)
        .args(["--verify", "0"])
        .quiet()
        .out(&run)
        .output();
    assert_code(&o, 0);
    let csv = Csv::read(&run);
    assert_eq!(csv.get(&csv.rows[0], "status"), "ok", "{}", describe(&o));
    let default_src = std::fs::read_to_string(emitted.join("matmul.mold.c")).unwrap();
    assert_eq!(
        default_src.matches("#pragma omp").count(),
        best_c.matches("#pragma omp").count()
    );
}

#[test]
fn a_config_file_sets_what_the_flags_do_and_a_bad_key_is_refused_at_its_position() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("mctree.yaml");
    std::fs::write(
        &cfg,
        "strategy: greedy\nmax_evals: 5\ndepth: 2\ntile_sizes: [8, 16]\ncheck:\n  env: {PB_SEED: \"7\"}\n",
    )
    .unwrap();
    let out = tmp.path().join("run");
    let o = mctree_mock(&out, &["--config", cfg.to_str().unwrap(), "--verify", "0"]);
    assert_code(&o, 0);
    let meta = read_json(&out.join("run.json"));
    assert_eq!(meta["learner"], "greedy");
    assert_eq!(meta["max_evals"], 5);
    assert_eq!(meta["mctree"]["depth"], 2);
    assert_eq!(meta["mctree"]["tile_sizes"], serde_json::json!([8, 16]));
    assert!(
        (meta["mctree"]["check_env"].as_array().unwrap().iter())
            .any(|kv| kv == &serde_json::json!(["PB_SEED", "7"])),
        "{meta}"
    );
    let csv = Csv::read(&out);
    assert!(csv
        .column("transformations")
        .iter()
        .all(|t| t.matches("; ").count() < 2));

    std::fs::write(&cfg, "strategy: greedy\ntile_size: [8]\n").unwrap();
    let out = tmp.path().join("bad");
    let o = mctree_mock(&out, &["--config", cfg.to_str().unwrap()]);
    assert_code(&o, 2);
    let err = crate::common::text(&o.stderr);
    assert!(
        err.contains("mctree.yaml:2:1") && err.contains("tile_size"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn reading_an_mctree_run_needs_neither_the_c_file_nor_discovery() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("gemm.c");
    std::fs::copy(kernel("gemm"), &copy).unwrap();
    // gemm.c includes "../harness/pb.h": found through its own directory.
    let out = tmp.path().join("run");
    let include = format!("-I{}", kernel("gemm").parent().unwrap().display());
    let o = mctree(&copy)
        .mock()
        .quiet()
        .max_evals(6)
        .args(["--verify", "0"])
        .out(&out)
        .args(["--", "-DMINI_DATASET", &include])
        .output();
    assert_code(&o, 0);
    let csv = Csv::read(&out);
    assert_eq!(csv.header[2], "legality");
    assert!(csv.column("legality").iter().all(|l| l == "proved"));
    // mctree.json names the file as run.json does, relative to the run directory.
    let kept = read_json(&out.join("mctree.json"));
    assert_eq!(
        kept["loops"]["file"], "../gemm.c",
        "{}",
        kept["loops"]["file"]
    );
    std::fs::remove_file(&copy).unwrap();
    let o = moldtune("best").arg(&out).json().output();
    assert_code(&o, 0);
    let report = tmp.path().join("report");
    let o = moldtune("report").arg(&out).out(&report).output();
    assert_code(&o, 0);
}

/// Every directive a node of depth ≤ 2 below the root may add (each child's own last one),
/// as `L<k>: <directive>`.
fn proposals(file: &Path, flags: &[&str], trust: bool) -> (Tree, Vec<String>) {
    let r = recorded(file, "", flags);
    let (_, loops) = loop_tree(&r);
    let o = Options {
        trust_output_check: trust,
        ..Options::default()
    };
    let mut tree = Tree::new(loops, o);
    let mut seen = Vec::new();
    for c in tree.children(0) {
        seen.push(c);
        seen.extend(tree.children(c));
    }
    let texts = seen.iter().map(|&n| tree.nodes[n].text.clone()).collect();
    (tree, texts)
}

#[test]
fn floyd_warshalls_k_loop_is_never_tiled_interchanged_or_reversed() {
    require_clang!();
    let (tree, texts) = proposals(&kernel("floyd-warshall"), &["-DMEDIUM_DATASET"], false);
    let entries: Vec<&str> = texts.iter().flat_map(|t| t.split("; ")).collect();
    for e in &entries {
        let on_k = e.strip_prefix("L0: ").unwrap_or("");
        assert!(
            !on_k.starts_with("tile")
                && !on_k.starts_with("reverse")
                && !on_k.starts_with("parallel"),
            "{e}"
        );
        // An interchange of the nest below k keeps k outermost.
        assert!(
            !on_k.starts_with("interchange permutation(2")
                && !on_k.starts_with("interchange permutation(3"),
            "{e}"
        );
    }
    // The i/j band inside k is fully permutable: its tiles and interchange are proposed, proved.
    assert!(entries
        .iter()
        .any(|e| e.starts_with("L1: tile sizes(") && e.contains(',')));
    assert!(entries.contains(&"L1: interchange permutation(2,1)"));
    assert!(tree.refused.len() > 100, "{}", tree.refused.len());
    assert!(tree.nodes.iter().all(|n| n.legality == Legality::Proved));
}

#[test]
fn known_legal_tilings_and_interchanges_of_gemm_and_syr2k_are_still_proposed() {
    require_clang!();
    for k in ["gemm", "syr2k"] {
        let (_, texts) = proposals(&kernel(k), &["-DMEDIUM_DATASET"], false);
        let has = |p: &str| {
            texts
                .iter()
                .any(|t| t.split("; ").any(|e| e.starts_with(p)))
        };
        // gemm: L0 i { L1 j; L2 k { L3 j } }; syr2k: L0 i { L1 j; L2 k { L3 j <= i } }.
        assert!(has("L0: parallel for"), "{k}");
        assert!(
            has("L2: tile sizes(")
                && texts
                    .iter()
                    .any(|t| t.starts_with("L2: tile sizes(") && t.contains(',')),
            "{k}"
        );
        assert!(has("L2: interchange permutation(2,1)"), "{k}");
        // k carries the reduction: never reversed, never parallel while outermost (after an
        // interchange, `parallel for` runs the j loop: that one is legal).
        let k_parallel =
            |t: &String| t.contains("L2: parallel for") && !t.contains("L2: interchange");
        assert!(!texts.iter().any(k_parallel) && !has("L2: reverse"), "{k}");
        let swapped = "L2: parallel for private(k,j); L2: interchange permutation(2,1)";
        assert!(texts.iter().any(|t| t == swapped), "{k}");
    }
}

#[test]
fn what_the_analysis_cannot_read_is_proposed_only_under_trust_output_check() {
    require_clang!();
    let file = fixture("indirect.c");
    let (_, texts) = proposals(&file, &[], false);
    let has = |texts: &[String], p: &str| texts.iter().any(|t| t.contains(p));
    assert!(has(&texts, "L0: parallel for"), "{texts:?}");
    assert!(!has(&texts, "L2: parallel for") && !has(&texts, "L2: reverse"));
    let (tree, texts) = proposals(&file, &[], true);
    assert!(has(&texts, "L2: parallel for"));
    let node = (tree.nodes.iter())
        .find(|n| n.text == "L2: parallel for")
        .unwrap();
    assert_eq!(node.legality, Legality::OutputChecked);
    let proved = (tree.nodes.iter())
        .find(|n| n.text.starts_with("L0: parallel for"))
        .unwrap();
    assert_eq!(proved.legality, Legality::Proved);
}

#[test]
fn mctree_counts_instructions_with_code_valgrind_can_decode() {
    // -march=native on an AVX-512 machine gives code valgrind cannot decode (SIGILL): with a
    // simulated metric mctree builds for x86-64-v3 unless told otherwise.
    if !have_clang() || !crate::common::have_valgrind() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("c.yaml");
    std::fs::write(&config, "metric: instructions\n").unwrap();
    let out = tmp.path().join("run");
    let o = mctree(&kernel("gemm"))
        .arg("--config")
        .arg(&config)
        .max_evals(2)
        .args(["--verify", "0"])
        .quiet()
        .out(&out)
        .args(["--", "-DMINI_DATASET"])
        .output();
    assert_code(&o, 0);
    let meta = read_json(&out.join("run.json"));
    assert_eq!(meta["mctree"]["flags"][1], "-march=x86-64-v3", "{meta}");
    let csv = Csv::read(&out);
    assert!(
        csv.column("status").iter().any(|s| s == "ok"),
        "{:?}",
        csv.column("status")
    );
}

/// `moldtune mctree FIXTURE --max-evals 2 --out DIR/NAME` (the fixture's stem as NAME).
fn mctree_fixture(name: &str, dir: &Path) -> std::process::Output {
    let out = dir.join(Path::new(name).file_stem().unwrap());
    mctree(&fixture(name)).max_evals(2).out(out).output()
}

#[test]
fn an_output_that_varies_between_runs_is_named_and_infinities_pass_their_own_check() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let o = mctree_fixture("varies.c", tmp.path());
    assert_code(&o, 2);
    let err = crate::common::text(&o.stderr);
    assert!(err.contains("different output each time it runs"), "{err}");
    assert!(err.contains("line 201: `elapsed"), "{err}");
    assert!(err.contains("the untransformed `"), "{err}");
    assert!(
        !err.contains("the mold at its default configuration"),
        "{err}"
    );
    assert_code(&mctree_fixture("infinite.c", tmp.path()), 0);
}

/// The output check runs each candidate on every input the user names (`--check-env`), and a
/// candidate wrong on one of them only is `wrong_output`, naming it. Without it, the default
/// inputs (`PB_SEED` 2 and 3) print what the first prints for a program that ignores them:
/// they are dropped, the run says the check rests on one input, and the wrong reversal
/// passes — only the proof protects such a program (issue 53 item 4).
#[test]
fn the_output_check_runs_on_the_inputs_the_user_names() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("wall.yaml");
    std::fs::write(&cfg, "metric: wall_time\n").unwrap();
    let run = |out: &str, extra: &[&str]| {
        let out = tmp.path().join(out);
        let o = mctree(&fixture("shifted.c"))
            .arg("--config")
            .arg(&cfg)
            .args(["--trust-output-check", "--depth", "1", "--verify", "0"])
            .args(["--repeats", "1"])
            .args(extra)
            .max_evals(40)
            .out(&out)
            .output();
        assert_code(&o, 0);
        let evals = read_json(&out.join("results.json"))["evaluations"].clone();
        let reversed = (evals.as_array().unwrap().iter())
            .find(|e| e["config"]["transformations"] == "L0: reverse")
            .cloned()
            .unwrap_or_else(|| panic!("no reversal evaluated: {evals}"));
        (o, reversed)
    };
    let (_, reversed) = run("named", &["--check-env", "SHIFT=1"]);
    assert_eq!(reversed["status"], "wrong_output", "{reversed}");
    let cause = reversed["cause"].as_str().unwrap_or("");
    assert!(cause.contains("on the check's input `SHIFT=1`"), "{cause}");
    let (o, reversed) = run("default", &[]);
    assert_eq!(reversed["status"], "ok", "{reversed}");
    let said = crate::common::text(&o.stdout);
    assert!(said.contains("output check: on 1 of 3 inputs"), "{said}");
}

/// The disassembly of `function` in `file` compiled alone with moldtune's default flags plus
/// `knob`, addresses dropped: the test's own reading, independent of moldtune's.
fn kernel_disassembly(file: &Path, function: &str, knob: &[&str], dir: &Path) -> String {
    let obj = dir.join(format!("oracle{}.o", knob.len()));
    let st = Command::new("clang-22")
        .args(["-O3", "-march=native", "-fopenmp", "-DPOLYBENCH_TIME", "-c"])
        .args(knob)
        .arg(file)
        .arg("-o")
        .arg(&obj)
        .status()
        .unwrap();
    assert!(st.success());
    let out = Command::new("llvm-objdump-22")
        .args(["-d", "--no-show-raw-insn", "--no-leading-addr"])
        .arg(&obj)
        .output()
        .unwrap();
    let text = crate::common::text(&out.stdout);
    let body = text.split(&format!("<{function}>:\n")).nth(1).unwrap_or("");
    let body = body.split("\n\n").next().unwrap_or("");
    (body.split_whitespace())
        .filter(|w| !w.contains("0x"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn polly_knobs_that_cannot_change_the_kernel_are_not_built() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    // No SCoP in noscop.c: `-mllvm -polly` is the only candidate, and it is built only if
    // it changes the kernel's code — which the test's own two compiles decide.
    let o = mctree_fixture("noscop.c", tmp.path());
    assert_code(&o, 0);
    let err = crate::common::text(&o.stderr);
    assert!(
        err.contains("Polly finds no SCoP in `kernel_noscop`"),
        "{err}"
    );
    let results = read_json(&tmp.path().join("noscop/results.json"));
    let evals = results["evaluations"].as_array().unwrap();
    let polly: Vec<&str> = (evals.iter())
        .map(|e| e["config"]["polly"].as_str().unwrap_or(""))
        .collect();
    assert!(
        polly.iter().all(|p| p.is_empty() || *p == "-mllvm -polly"),
        "{polly:?}"
    );
    let f = fixture("noscop.c");
    let plain = kernel_disassembly(&f, "kernel_noscop", &[], tmp.path());
    let on = kernel_disassembly(&f, "kernel_noscop", &["-mllvm", "-polly"], tmp.path());
    assert!(!plain.is_empty());
    let dropped = err.contains(
        "`-mllvm -polly` is not tried: the kernel's machine code it builds is the plain build's",
    );
    assert_eq!(dropped, plain == on, "{err}");
    assert_eq!(dropped, !polly.contains(&"-mllvm -polly"), "{polly:?}");
    // Where Polly does find one and changes the kernel (gemm), `-mllvm -polly` is tried.
    let o = mctree_fixture("../../polybench/gemm/gemm.c", tmp.path());
    assert_code(&o, 0);
    let err = crate::common::text(&o.stderr);
    assert!(!err.contains("Polly finds no SCoP"), "{err}");
    assert!(!err.contains("`-mllvm -polly` is not tried"), "{err}");
}

#[test]
fn extra_sources_are_compiled_once_and_linked_into_every_variant() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let (f, fill) = (fixture("extra/scale.c"), fixture("extra/fill.c"));
    let out = tmp.path().join("run");
    let o = mctree(&f)
        .max_evals(3)
        .out(&out)
        .arg("--")
        .arg(&fill)
        .output();
    assert_code(&o, 0);
    let object = out.join("work/objects/0-fill.o");
    assert!(object.is_file(), "{}", describe(&o));
    let results = read_json(&out.join("results.json"));
    let evals = results["evaluations"].as_array().unwrap();
    assert!(evals.len() >= 2);
    for e in evals {
        let words: Vec<&str> = (e["commands"]["compile"].as_array().unwrap().iter())
            .map(|w| w.as_str().unwrap())
            .collect();
        assert!(words.contains(&object.to_str().unwrap()), "{words:?}");
        assert!(!words.iter().any(|w| w.ends_with("fill.c")), "{words:?}");
        assert_eq!(e["status"], "ok", "{e}");
    }
    // Resumed, the run links the same objects (compiled again: the same build keys).
    let o = mctree(&f)
        .max_evals(4)
        .out(&out)
        .args(["--resume", "--"])
        .arg(&fill)
        .output();
    assert_code(&o, 0);
    assert!(object.is_file());
}

/// A kernel as deep as clang accepts but deeper than a JSON parser's default limit: a 60-deep
/// loop nest and a 500-term expression (before: exit 1, "recursion limit exceeded").
#[test]
fn a_deep_nest_and_a_long_expression_are_read() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let depth = 60;
    let mut c = String::from("double a[4], s;\nvoid kernel_deep(void) {\n");
    for d in 0..depth {
        c += &format!("for (int i{d} = 0; i{d} < 2; i{d}++)\n");
    }
    c += "s += 1.0;\n";
    let terms: Vec<String> = (0..500).map(|t| format!("a[{}]", t % 4)).collect();
    c += &format!(
        "for (int k = 0; k < 4; k++) a[k] = {};\n}}\n",
        terms.join(" + ")
    );
    c += "int main(void) { kernel_deep(); return 0; }\n";
    let f = tmp.path().join("deep.c");
    std::fs::write(&f, c).unwrap();
    let t = list(&f, &[]);
    assert_eq!(t["loops"].as_array().unwrap().len(), depth + 1, "{t}");
}

/// A compiler that hangs while the file is parsed is stopped at `--compile-timeout`, and the
/// error says so (exit 2, not "the machine failed" with a `--resume` hint for a `--list`).
#[test]
fn a_compiler_that_hangs_on_the_ast_dump_is_stopped_at_the_compile_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config_with_compiler(tmp.path(), "hang-cc", "#!/bin/sh\nsleep 30\n");
    let t0 = std::time::Instant::now();
    let o = mctree(&fixture("noscop.c"))
        .arg("--list")
        .arg("--config")
        .arg(&cfg)
        .args(["--compile-timeout", "1"])
        .output();
    assert_code(&o, 2);
    assert!(t0.elapsed().as_secs() < 20, "{:?}", t0.elapsed());
    let err = crate::common::text(&o.stderr);
    assert!(err.contains("did not finish parsing"), "{err}");
    assert!(!err.contains("--resume"), "{err}");
}

/// Which functions a file defines is said in a few names, however many there are.
#[test]
fn a_file_with_many_functions_and_no_kernel_names_a_few() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let many = tmp.path().join("many.c");
    let text: String = (0..2000)
        .map(|k| format!("int f{k}(int x) {{ return x + {k}; }}\n"))
        .collect();
    std::fs::write(&many, text).unwrap();
    let o = mctree(&many).arg("--list").output();
    assert_code(&o, 2);
    let err = crate::common::text(&o.stderr);
    assert!(err.len() < 2000, "{} bytes: {err}", err.len());
    assert!(err.contains("2000, the first 10: `f0`"), "{err}");
    let empty = tmp.path().join("empty.c");
    std::fs::write(&empty, "").unwrap();
    let o = mctree(&empty).arg("--list").output();
    assert_code(&o, 2);
    assert!(crate::common::text(&o.stderr).contains("none (the file defines no function)"));
}

/// A run resumed by a relative directory keeps run.json's `problem` relative to the run
/// directory: it resumes again, from there and from anywhere else.
#[test]
fn resuming_by_a_relative_directory_keeps_the_run_resumable() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::copy(fixture("noscop.c"), src.join("k.c")).unwrap();
    let o = mctree(&src.join("k.c"))
        .mock()
        .quiet()
        .args(["--verify", "0"])
        .max_evals(3)
        .out("run")
        .cwd(tmp.path())
        .output();
    assert_code(&o, 0);
    for (cwd, dir, evals) in [
        (tmp.path(), "run", "4"),
        (tmp.path(), "run", "5"),
        (&src, "../run", "6"),
    ] {
        let o = moldtune("mctree")
            .args(["--resume", dir])
            .max_evals(evals)
            .quiet()
            .args(["--verify", "0"])
            .cwd(cwd)
            .output();
        assert_code(&o, 0);
    }
    let meta = read_json(&tmp.path().join("run/run.json"));
    assert_eq!(meta["problem"], "../src/k.c", "{meta}");
    assert!(Csv::read(&tmp.path().join("run")).rows.len() >= 6);
}

/// Builds running ahead that the budget leaves unused are killed when the budget is reached,
/// not waited for: every build after the second evaluation's hangs (for 600 s).
#[test]
fn builds_ahead_that_the_budget_leaves_unused_are_killed() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let script = "#!/bin/sh\ncase \"$*\" in *\"/work/eval-\"[2-9]*) sleep 600.0911 ;; esac\nexec clang-22 \"$@\"\n";
    let cfg = config_with_compiler(tmp.path(), "slow-cc", script);
    let (f, out) = (kernel("gemm"), tmp.path().join("run"));
    let t0 = std::time::Instant::now();
    let o = mctree(&f)
        .quiet()
        .out(&out)
        .arg("--config")
        .arg(&cfg)
        .max_evals(2)
        .args(["--jobs", "3", "--verify", "0", "--compile-timeout", "1200"])
        .args(["--", "-DMINI_DATASET"])
        .output();
    let took = t0.elapsed();
    assert_code(&o, 0);
    // Waited for, the unused builds would have run into the compile timeout (1200 s); the run
    // itself takes seconds (181 s on a runner at load 23): half the timeout tells the two
    // apart on a machine ten times slower still.
    assert!(
        took.as_secs() < 600,
        "the run waited {took:?} for unused builds"
    );
    crate::common::fake::assert_no_leftover("sleep 600.0911");
    for k in 2..6 {
        let dir = out.join("work").join(format!("eval-{k}"));
        assert!(
            !dir.exists(),
            "the unused build `{}` is left",
            dir.display()
        );
    }
}

/// Discovery keeps the bodies of the kernel and of the functions that name it, not of the
/// file's other functions (a 5 MB file dumps 1.4 GB of JSON: see `scripts/bench_big_file.py`);
/// a caller that names the kernel before the file shows which function it is (found by its
/// `#pragma scop`) is read again, so the dependence test sees its call.
#[test]
fn discovery_keeps_only_the_bodies_the_kernel_needs() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("big.c");
    let mut text = String::from(
        "double A[64];\nvoid kernel_k(int n) {\n  for (int i = 0; i < n; i++)\n    A[i] = i;\n}\n",
    );
    for k in 0..300 {
        text.push_str(&format!("int helper_{k}(int x) {{ return x * {k}; }}\n"));
    }
    text.push_str("int main(void) { kernel_k(64); return (int)A[3]; }\n");
    std::fs::write(&big, &text).unwrap();
    let bodies = |file: &Path, text: &str| {
        let r = recorded(file, "", &[]);
        let (flags, timeout) = (r.parse_flags(), r.compile_timeout());
        let u = unit::read("clang-22", file, &flags, timeout, text, None).unwrap();
        let kept: Vec<String> = (u.functions.iter())
            .filter(|f| f.has_body())
            .map(|f| f.name.clone())
            .collect();
        (u.functions.len(), kept)
    };
    assert_eq!(
        bodies(&big, &text),
        (302, vec!["kernel_k".into(), "main".into()])
    );
    let forward = root().join("tests/mctree/adversarial/forward.c");
    let text = std::fs::read_to_string(&forward).unwrap();
    let (_, kept) = bodies(&forward, &text);
    assert_eq!(kept, ["shift_b", "smooth", "main"]);
}

/// A Latin-1 byte in a comment (clang builds the file) is read, tuned and resumed; one in a
/// string literal is refused at its line:col (written back as text it would change the program).
#[test]
fn bytes_that_are_not_utf8_are_accepted_in_comments() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("latin.c");
    let src = b"/* Auteur : Ren\xe9 */\n#include <stdio.h>\ndouble A[64];\nvoid kernel_l(int n) {\n  /* d\xe9but */\n  for (int i = 0; i < n; i++)\n    A[i] = 2.0 * i;\n}\nint main(void) { kernel_l(64); fprintf(stderr, \"%f\\n\", A[7]); return 0; }\n";
    std::fs::write(&f, src).unwrap();
    let o = mctree(&f).arg("--list").output();
    assert_code(&o, 0);
    let out = tmp.path().join("run");
    let o = mctree(&f)
        .out(&out)
        .max_evals(2)
        .args(["--verify", "0"])
        .output();
    assert_code(&o, 0);
    // Seconds said in at most two decimals (was: "run timeout 6.265510770000001 s").
    let said = regex::Regex::new(r"run timeout [0-9]+\.[0-9]{2} s").unwrap();
    assert!(
        said.is_match(&crate::common::text(&o.stderr)),
        "{}",
        crate::common::text(&o.stderr)
    );
    let best = std::fs::read_to_string(out.join("best.c")).unwrap();
    assert!(best.contains("/* d?but */"), "{best}");
    let o = moldtune("mctree")
        .arg("--resume")
        .arg(&out)
        .quiet()
        .max_evals(3)
        .args(["--verify", "0"])
        .output();
    assert_code(&o, 0);
    let lit = tmp.path().join("literal.c");
    let mut text = src.to_vec();
    text.extend_from_slice(b"const char *who = \"Ren\xe9\";\n");
    std::fs::write(&lit, text).unwrap();
    let o = mctree(&lit).arg("--list").output();
    assert_code(&o, 2);
    let err = crate::common::text(&o.stderr);
    assert!(
        err.contains("literal.c:10:23") && err.contains("not UTF-8"),
        "{err}"
    );
}

/// A program that hangs in the pre-flight (before a run directory exists) is stopped at
/// `--run-timeout`, and the wait is announced (was: up to 600 s, silent).
#[test]
fn a_program_that_hangs_before_tuning_is_stopped_at_the_run_timeout() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("hang.c");
    let src = "#include <unistd.h>\ndouble A[64];\nvoid kernel_h(int n) {\n  for (int i = 0; i < n; i++)\n    A[i] = i;\n}\nint main(void) { kernel_h(64); sleep(600); return 0; }\n";
    std::fs::write(&f, src).unwrap();
    let out = tmp.path().join("run");
    let t0 = std::time::Instant::now();
    let o = mctree(&f).args(["--run-timeout", "2"]).out(&out).output();
    assert_code(&o, 2);
    assert!(t0.elapsed().as_secs() < 60, "{:?}", t0.elapsed());
    let err = crate::common::text(&o.stderr);
    assert!(
        err.contains("run timeout 2 s") && err.contains("timed out"),
        "{err}"
    );
    assert!(!out.exists());
}

/// A file that makes clang print thousands of warnings (generated or legacy code) is read:
/// the dump of its tree was killed by the stderr cap (SIGXFSZ) after ~4,000 warnings.
#[test]
fn a_file_with_thousands_of_warnings_is_read() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::from("double a[64];\n");
    for i in 0..6000 {
        // `int x = 1.5;` warns (-Wliteral-conversion, on by default).
        text += &format!("int w{i} = {i}.5;\n");
    }
    text += "void kernel_k(void) {\n  for (int i = 0; i < 64; i++)\n    a[i] = a[i] * 2.0;\n}\n";
    let file = tmp.path().join("warned.c");
    std::fs::write(&file, text).unwrap();
    let t = list(&file, &[]);
    assert_eq!(t["loops"].as_array().unwrap().len(), 1, "{t}");
}

/// The pre-flight's output file vanishing (a sweep, the program) is an error naming it, never
/// a silent switch from the kernel time to wall time (issue 42 item 2).
#[test]
fn a_pre_flight_whose_output_vanished_fails_instead_of_switching_metric() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let o = mctree_fixture("vanish.c", tmp.path());
    let err = crate::common::text(&o.stderr);
    assert!(err.contains("vanished while it ran"), "{err}");
    assert_ne!(o.status.code(), Some(0), "{err}");
}

/// A global lookup table of 400,000 entries is listed within 2.5 GB of address space (1 GB of
/// it the discovery thread's reserved stack): its initialiser is never held. Before issue 42
/// a table of that size took about 3 GB (issue 42 item 1; the figures: results/bench/big-file.md).
#[test]
fn a_huge_global_table_is_read_in_bounded_memory() {
    require_clang!();
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let entries: Vec<String> = (0..400_000).map(|k| (100_000 + k).to_string()).collect();
    let src = format!(
        "int lookup[400000] = {{{}}};\ndouble A[100];\n\
         void kernel_t(int n) {{ for (int i = 0; i < n; i++) A[i] = lookup[i] * 2.0; }}\n\
         int main(void) {{ kernel_t(100); return 0; }}\n",
        entries.join(",")
    );
    let file = tmp.path().join("table.c");
    std::fs::write(&file, src).unwrap();
    let mut cmd = mctree(&file).arg("--list").command();
    // SAFETY: only setrlimit between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 5 << 29,
                rlim_max: 5 << 29,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    assert_code(&o, 0);
    assert!(crate::common::text(&o.stdout).contains("kernel_t"));
}

/// A compiler wrapper that leaves a process holding its output (a daemon it starts) neither
/// keeps `--list` waiting for that process (the stream is read until shortly after the
/// compiler itself ended) nor leaves it running (issue 42 items 5 and 6).
#[test]
fn a_compiler_leaving_a_child_on_its_output_does_not_hold_list() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let wrapper = "#!/bin/sh\nclang-22 \"$@\"\ns=$?\nsetsid sleep 40.0417 &\nexit $s\n";
    let cfg = config_with_compiler(tmp.path(), "cc.sh", wrapper);
    let t0 = std::time::Instant::now();
    let o = mctree(&kernel("gemm"))
        .arg("--list")
        .arg("--config")
        .arg(&cfg)
        .output();
    let took = t0.elapsed().as_secs_f64();
    assert!(took < 30.0, "waited {took:.0} s for the wrapper's child");
    assert_code(&o, 0);
    let left = Command::new("pgrep").args(["-f", "sleep 40.0417"]).output();
    let left = left
        .map(|o| crate::common::text(&o.stdout))
        .unwrap_or_default();
    assert!(left.trim().is_empty(), "left running: {left}");
}

/// `--emit-mold DIR` rewrites the files it wrote itself, but refuses — before anything is
/// measured — to overwrite a file edited since or not its own, unless `--force` (issue 42
/// item 8).
#[test]
fn emit_mold_keeps_hand_edits_unless_forced() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mold");
    let emit = |k: usize, extra: &[&str]| {
        let out = tmp.path().join(format!("run{k}"));
        let dir = dir.to_str().unwrap();
        let args = [
            &["--max-evals", "2", "--verify", "0", "--emit-mold", dir],
            extra,
        ]
        .concat();
        mctree_mock(&out, &args)
    };
    assert_code(&emit(0, &[]), 0);
    let mold = dir.join("gemm.mold.c");
    assert!(mold.is_file());
    assert_code(&emit(1, &[]), 0);
    let edited = std::fs::read_to_string(&mold).unwrap() + "/* my tweak */\n";
    std::fs::write(&mold, &edited).unwrap();
    let o = emit(2, &[]);
    assert_code(&o, 2);
    assert!(
        crate::common::text(&o.stderr).contains("edited since"),
        "{}",
        describe(&o)
    );
    assert!(!tmp.path().join("run2").exists(), "refused before the run");
    assert_eq!(std::fs::read_to_string(&mold).unwrap(), edited);
    assert_code(&emit(3, &["--force"]), 0);
    assert!(!std::fs::read_to_string(&mold).unwrap().contains("my tweak"));
}

/// An mctree run stopped after keeping what it found but before run.json (a SIGKILL in
/// between) is told as such on `--resume`, and starts again without it (it was "not a
/// moldtune run directory"; issue 42 item 7).
#[test]
fn a_run_stopped_before_it_started_is_told_and_starts_again() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    assert_code(
        &mctree_mock(&out, &["--max-evals", "2", "--verify", "0"]),
        0,
    );
    for f in ["run.json", "results.csv", "results.json"] {
        std::fs::remove_file(out.join(f)).unwrap();
    }
    let o = moldtune("mctree").arg("--resume").arg(&out).output();
    assert_code(&o, 2);
    let err = crate::common::text(&o.stderr);
    assert!(err.contains("stopped before its run started"), "{err}");
    assert_code(
        &mctree_mock(&out, &["--max-evals", "2", "--verify", "0"]),
        0,
    );
}

/// A `TMPDIR` that does not exist is named as the cause, not "install clang" nor a resume
/// hint (issue 42 item 8).
#[test]
fn an_unusable_tmpdir_is_named() {
    require_clang!();
    let o = mctree(&kernel("gemm"))
        .arg("--list")
        .env("TMPDIR", "/nonexistent/moldtune-tmp")
        .output();
    let err = crate::common::text(&o.stderr);
    assert!(
        err.contains("`TMPDIR`") && err.contains("/nonexistent/moldtune-tmp"),
        "{err}"
    );
    assert!(
        !err.contains("setup.sh") && !err.contains("--resume"),
        "{err}"
    );
    assert_code(&o, 2);
}

/// SIGTERM while `--list` waits for the compiler ends it as an interrupt (exit 130), with the
/// compiler stopped and the helper's scratch folder removed (it was the default action: the
/// folder stayed behind; issue 42 item 6).
#[test]
fn an_interrupted_list_leaves_nothing_behind() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir(&scratch).unwrap();
    let cfg = config_with_compiler(
        tmp.path(),
        "slowcc.sh",
        "#!/bin/sh\nsleep 30.0419\nexec clang-22 \"$@\"\n",
    );
    let child = mctree(&kernel("gemm"))
        .arg("--list")
        .arg("--config")
        .arg(&cfg)
        .env("TMPDIR", &scratch)
        .spawn();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
    let left: Vec<_> = std::fs::read_dir(&scratch).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let sleeping = Command::new("pgrep").args(["-f", "sleep 30.0419"]).output();
    let sleeping = sleeping
        .map(|o| crate::common::text(&o.stdout))
        .unwrap_or_default();
    assert!(sleeping.trim().is_empty(), "left running: {sleeping}");
}

/// A compiler stopped for the size of its diagnostics says so (it was "does not compile with
/// the given flags"; issue 42 item 4).
#[test]
fn a_compiler_stopped_for_its_output_size_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config_with_compiler(
        tmp.path(),
        "loud.sh",
        "#!/bin/sh\nexec head -c 3000000 /dev/zero >&2\n",
    );
    let o = mctree(&kernel("gemm"))
        .arg("--list")
        .arg("--config")
        .arg(&cfg)
        .output();
    let err = crate::common::text(&o.stderr);
    assert!(
        err.contains("SIGXFSZ") && err.contains("diagnostics"),
        "{err}"
    );
    assert_code(&o, 2);
}

/// The number of one-directive stacks `--list` proves on gemm with the config file `yaml`.
fn proved_with(dir: &Path, yaml: &str) -> u64 {
    let cfg = dir.join("mctree.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let o = mctree(&kernel("gemm"))
        .arg("--list")
        .json()
        .arg("--config")
        .arg(&cfg)
        .output();
    assert_code(&o, 0);
    let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    listed["depth1"]["proved"].as_u64().unwrap()
}

#[test]
fn vector_hints_follow_the_config_and_none_are_offered_without_widths() {
    require_clang!();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // gemm has two innermost loops free of any outer directive (L1 and L3).
    let none = proved_with(d, "vector_widths: []\n");
    let one = proved_with(d, "vector_widths: [4]\ninterleave: [2]\n");
    let six = proved_with(d, "vector_widths: [4, 8, 16]\ninterleave: [1, 4]\n");
    assert_eq!(one, none + 2);
    assert_eq!(six, none + 12);
}
