//! Helpers of the mctree tests: an mctree run's settings built by hand, and a kernel's loop
//! tree read with clang-22.

use std::path::Path;

use moldtune::mctree::looptree::LoopTree;
use moldtune::mctree::setup::Recorded;
use moldtune::mctree::transform::Options;
use moldtune::mctree::{discover, unit};
use moldtune::problem::{CheckMode, MetricKind, Stream};

/// The settings an mctree run on `file` would have with `flags` after `--` (compiled at -O1,
/// one repeat: tests want speed, not figures).
pub fn recorded(file: &Path, kernel: &str, flags: &[&str]) -> Recorded {
    Recorded {
        file: file.to_path_buf(),
        kernel: kernel.into(),
        hosts: vec![],
        strategy: "mcts".into(),
        depth: 4,
        tile_sizes: Options::default().tile_sizes,
        tile_bound: None,
        unroll: vec![2, 4, 8],
        vector_widths: Options::default().vector_widths,
        interleave: Options::default().interleave,
        compiler: "clang-22".into(),
        flags: vec!["-O1".into()],
        args: flags.iter().map(|f| f.to_string()).collect(),
        sources: vec![],
        metric: MetricKind::KernelTime,
        repeats: 1,
        compile_timeout_s: 60.0,
        run_timeout_s: 30.0,
        env: vec![("OMP_NUM_THREADS".into(), "2".into())],
        check_mode: CheckMode::Output,
        check_stream: Stream::Stderr,
        check_env: vec![
            ("PB_DUMP".into(), "1".into()),
            ("OMP_NUM_THREADS".into(), "2".into()),
        ],
        check_variations: vec![],
        check_build_flags: vec![],
        rtol: 1e-6,
        trust_output_check: false,
        records_legality: true,
    }
}

/// The file's text and its kernel's loop tree (the kernel `r.kernel`, or the one mctree
/// would choose when that is empty).
pub fn loop_tree(r: &Recorded) -> (String, LoopTree) {
    let text = std::fs::read_to_string(&r.file).unwrap();
    let wanted = (!r.kernel.is_empty()).then_some(r.kernel.as_str());
    let (flags, timeout) = (r.parse_flags(), r.compile_timeout());
    let unit = unit::read("clang-22", &r.file, &flags, timeout, &text, wanted).unwrap();
    let t = discover::kernel_tree(&unit, &text, &r.file, wanted, &r.sources).unwrap();
    (text, t)
}
