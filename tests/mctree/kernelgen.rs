//! A generator of small random C kernels, seeded, to hunt counter-examples to mctree's proofs
//! (issue 38). Each program holds one `kernel_gen` of one to three loop nests (depth 1–4) and
//! a `main` that varies every input with `PB_INPUT=random` and `PB_SEED` (array values, the
//! index array, the trip count `n`) and dumps every array and scalar the kernel writes.
//!
//! What a nest may hold: constant, symbolic, triangular, strided and downward bounds;
//! counters declared in the loop or outside it, read after it; affine, coupled and indirect
//! subscripts, a pointer view and pointer parameters the caller points into the kernel's own
//! arrays; scalars declared inside or outside the loop, global, `static`, `extern`,
//! address-taken or read after the loop, a local array; calls in headers and bodies that count
//! themselves, a bound reading a global that a call in the body changes; `continue`, `while`;
//! a non-canonical increment that does work; `goto`s (one skips a definition); a statement-
//! expression macro holding a loop; and the source's own directives (`omp simd`,
//! `omp parallel for`, `clang loop`, `unroll`). Values are multiples of 1/8 combined by `+`,
//! `-` and halving or doubling, so that only a reordering of a recurrence, not rounding,
//! changes the output. Every subscript stays inside its array for any `n` in `[N/2, N]`; a few
//! of the 2-D ones run past their row into the next.

use std::collections::BTreeSet;

use moldtune::rng::Rng;

/// The largest trip count.
const N: usize = 16;

/// A generated program and the constructs it holds.
pub struct Kernel {
    pub source: String,
    pub features: BTreeSet<&'static str>,
}

struct Gen {
    rng: Rng,
    /// Declarations at the top of the kernel.
    top: Vec<String>,
    /// Counters declared at the top.
    outside: BTreeSet<String>,
    features: BTreeSet<&'static str>,
    /// Next free slot of `outd`/`outi` and label number.
    slot: usize,
    label: usize,
}

/// The program of seed `seed`.
pub fn kernel(seed: u64) -> Kernel {
    let mut g = Gen {
        rng: Rng::new(seed.wrapping_mul(0x9E37_79B9) ^ 0x5eed),
        top: vec![],
        outside: BTreeSet::new(),
        features: BTreeSet::new(),
        slot: 0,
        label: 0,
    };
    let mut body = vec![];
    for _ in 0..1 + g.rng.below(3) {
        let depth = [1, 1, 2, 2, 2, 3, 3, 4][g.rng.below(8)];
        body.extend(g.nest(depth, &[], 1));
    }
    let mut kernel = g.top.clone();
    kernel.extend(body);
    // Half the programs pass a constant trip count (the kernel's bounds are then known, as
    // PolyBench's are), half one the input varies.
    let n = match g.chance(50) {
        true => "N - 3",
        false => "r ? N / 2 + pb_rand_int(0, N / 2) : N",
    };
    Kernel {
        source: program(seed, &kernel.join("\n"), n),
        features: g.features,
    }
}

const IVS: [&str; 4] = ["i", "j", "k", "l"];
const ONE_D: [&str; 3] = ["A", "B", "C"];
const TWO_D: [&str; 2] = ["P", "Q"];

impl Gen {
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.rng.below(v.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.rng.below(100) < percent
    }

    fn feature(&mut self, f: &'static str) {
        self.features.insert(f);
    }

    fn declare(&mut self, line: String) {
        if !self.top.contains(&line) {
            self.top.push(line);
        }
    }

    /// A loop of `depth` levels inside the loops `outer` (their counters), at indentation
    /// `ind`, with what follows it at its level.
    fn nest(&mut self, depth: usize, outer: &[String], ind: usize) -> Vec<String> {
        let pad = "  ".repeat(ind);
        let iv = IVS[outer.len()].to_string();
        let declared_inside = self.chance(60);
        if !declared_inside {
            self.declare(format!("  int {iv};"));
            self.outside.insert(iv.clone());
        }
        let (header, works) = self.header(&iv, outer, declared_inside);
        // OpenMP's directives take canonical loops only.
        let mut lines = match works {
            true => vec![],
            false => self.directive(depth, &pad),
        };
        lines.push(format!("{pad}for ({header}) {{"));
        let mut ivs = outer.to_vec();
        ivs.push(iv.clone());
        if depth > 1 {
            if self.chance(20) {
                lines.extend(self.statement(&ivs, ind + 1));
            }
            lines.extend(self.nest(depth - 1, &ivs, ind + 1));
            if self.chance(20) {
                lines.extend(self.statement(&ivs, ind + 1));
            }
        } else {
            for _ in 0..1 + self.rng.below(3) {
                lines.extend(self.statement(&ivs, ind + 1));
            }
        }
        lines.push(format!("{pad}}}"));
        if works {
            lines.push(format!("{pad}outd[7] += prev;"));
        }
        if !declared_inside && self.chance(35) {
            self.feature("counter read after its loop");
            let s = self.next_slot();
            lines.push(format!("{pad}outi[{s}] = {iv};"));
        }
        lines
    }

    fn next_slot(&mut self) -> usize {
        self.slot = (self.slot + 1) % 8;
        self.slot
    }

    /// The source's own directive above a loop, now and then.
    fn directive(&mut self, depth: usize, pad: &str) -> Vec<String> {
        let (text, f) = match self.rng.below(40) {
            0 => ("#pragma unroll 2", "source directive: unroll"),
            1 => (
                "#pragma clang loop vectorize(enable)",
                "source directive: clang loop",
            ),
            2 if depth == 1 => ("#pragma omp simd", "source directive: omp simd"),
            _ => return vec![],
        };
        self.feature(f);
        vec![format!("{pad}{text}")]
    }

    /// A `for` header: its counter `iv` in `[0, N)` whatever `n` is; whether its increment
    /// does other work (`prev`).
    fn header(&mut self, iv: &str, outer: &[String], inside: bool) -> (String, bool) {
        let decl = if inside { "int " } else { "" };
        let o = outer.last().cloned();
        let form = self.rng.below(21);
        let header = match (form, o) {
            (0..=4, _) => format!("{decl}{iv} = 0; {iv} < N; {iv}++"),
            (5..=8, _) => format!("{decl}{iv} = 0; {iv} < n; {iv}++"),
            (9, _) => format!("{decl}{iv} = 1; {iv} < n; {iv} += 2"),
            (10, _) => format!("{decl}{iv} = 0; {iv} < n; {iv} += 3"),
            (11 | 12, _) => format!("{decl}{iv} = n - 1; {iv} >= 0; {iv}--"),
            (13, Some(o)) => format!("{decl}{iv} = 0; {iv} <= {o}; {iv}++"),
            (14, Some(o)) => format!("{decl}{iv} = {o}; {iv} < n; {iv}++"),
            (15, _) => {
                self.feature("call in a bound");
                format!("{decl}{iv} = 0; {iv} < lim(n); {iv}++")
            }
            (16, _) => {
                self.feature("call in an initial value");
                format!("{decl}{iv} = first(); {iv} < n; {iv}++")
            }
            (17, _) if !inside => {
                self.feature("non-canonical increment with work");
                self.declare("  double prev = 0.0;".into());
                let h = format!("{iv} = 0; {iv} < n; prev = prev * 0.5 + A[{iv}], {iv}++");
                return (h, true);
            }
            (18, Some(o)) => format!("{decl}{iv} = {o}; {iv} >= 0; {iv}--"),
            (19, _) => {
                self.feature("bound reading a global a call may change");
                format!("{decl}{iv} = 0; {iv} < gn; {iv}++")
            }
            _ => format!("{decl}{iv} = 0; {iv} < n; {iv}++"),
        };
        (header, false)
    }

    /// A subscript of a 1-D array (`[0, 2N + 8)`).
    fn sub1(&mut self, ivs: &[String]) -> String {
        let i = ivs[self.rng.below(ivs.len())].clone();
        match self.rng.below(12) {
            0..=3 => i,
            4 => format!("{i} + 1"),
            5 => format!("{i} + 3"),
            6 => format!("N - 1 - {i}"),
            7 => format!("2 * {i}"),
            8 if ivs.len() > 1 => {
                self.feature("coupled subscript");
                let j = ivs[self.rng.below(ivs.len())].clone();
                format!("{i} + {j}")
            }
            9 => {
                self.feature("indirect subscript");
                format!("idx[{i}]")
            }
            _ => format!("{i} + 2"),
        }
    }

    /// Subscripts of a 2-D array (`[0, N + 4)` each, but the second now and then past its row).
    fn sub2(&mut self, ivs: &[String]) -> String {
        let one = |g: &mut Gen| {
            let i = ivs[g.rng.below(ivs.len())].clone();
            match g.rng.below(6) {
                0 => format!("{i} + 1"),
                1 => format!("{i} + 2"),
                _ => i,
            }
        };
        let (a, mut b) = (one(self), one(self));
        if self.chance(10) {
            // Past its row (up to N + 11 in a row of N + 4), still inside the array.
            self.feature("subscript past its row");
            b = format!("{b} + 10");
        }
        format!("[{a}][{b}]")
    }

    /// An element to read or write: a 1-D or 2-D array, a pointer view or parameter.
    fn element(&mut self, ivs: &[String]) -> String {
        match self.rng.below(14) {
            0..=4 => {
                let a = self.pick(&ONE_D);
                format!("{a}[{}]", self.sub1(ivs))
            }
            5..=10 => {
                let a = self.pick(&TWO_D);
                format!("{a}{}", self.sub2(ivs))
            }
            11 => {
                self.feature("pointer view");
                self.declare("  double *pv = &B[2];".into());
                format!("pv[{}]", self.sub1(ivs))
            }
            12 => {
                self.feature("pointer parameter into the kernel's arrays");
                format!("x[{}]", self.sub1(ivs))
            }
            _ => {
                self.feature("pointer parameter");
                format!("y[{}]", self.sub1(ivs))
            }
        }
    }

    /// An expression reading one or two elements.
    fn expr(&mut self, ivs: &[String]) -> String {
        let a = self.element(ivs);
        match self.rng.below(5) {
            0 => format!("{a} * 0.5 + 1.0"),
            1 => format!("{a} + {}", self.element(ivs)),
            2 => format!("{a} * 2.0 - {}", self.element(ivs)),
            3 => format!("{a} - 0.125"),
            _ => a,
        }
    }

    /// One statement (or a few) of a loop body.
    fn statement(&mut self, ivs: &[String], ind: usize) -> Vec<String> {
        let pad = "  ".repeat(ind);
        let target = self.element(ivs);
        let e = self.expr(ivs);
        let lines = match self.rng.below(29) {
            0..=7 => vec![format!("{target} = {e};")],
            8..=9 => vec![format!("{target} += {e};")],
            10 => {
                self.feature("scalar declared in the body");
                self.label += 1;
                let t = format!("t{}", self.label);
                vec![
                    format!("double {t} = {e};"),
                    format!("{target} = {t} * 0.5;"),
                ]
            }
            11 => {
                self.feature("scalar carried across iterations");
                self.declare("  double acc = 0.0;".into());
                let s = self.next_slot();
                vec![
                    format!("acc = acc * 0.5 + {e};"),
                    format!("{target} = acc;"),
                    format!("outd[{s}] = acc;"),
                ]
            }
            12 => {
                self.feature("scalar written before read, declared outside");
                self.declare("  double w = 0.0;".into());
                vec![format!("w = {e};"), format!("{target} = w + 1.0;")]
            }
            13 => self.foreign_scalar(&target, &e),
            14 => {
                self.feature("address-taken scalar");
                self.declare("  double peak = 0.0;".into());
                self.declare("  double *pp = &peak;".into());
                vec![
                    format!("peak = {e};"),
                    format!("{target} = peak;"),
                    "outd[0] += *pp;".into(),
                ]
            }
            15 => {
                self.feature("call in a body");
                vec![format!("{target} = bump({e});")]
            }
            16 => self.skipping_goto(&target, &e),
            17 => {
                self.feature("statement-expression macro with a loop");
                let i = ivs[self.rng.below(ivs.len())].clone();
                vec![format!("{target} = ROWSUM(P, {i});")]
            }
            18 => {
                self.feature("forward goto");
                self.label += 1;
                let l = self.label;
                vec![
                    format!("if ({e} > 100.0) goto skip{l};"),
                    format!("{target} = {e};"),
                    format!("skip{l}:;"),
                ]
            }
            19 => {
                self.feature("conditional write");
                vec![format!("if ({e} > 60.0) {target} = {e};")]
            }
            20 => {
                self.feature("call that changes a bound");
                vec!["shrink();".into(), format!("{target} = {e};")]
            }
            21 => {
                self.feature("continue");
                vec![
                    format!("if ({e} > 90.0) continue;"),
                    format!("{target} = {e};"),
                ]
            }
            22 => {
                self.feature("local array");
                self.declare("  double loc[4];".into());
                vec![
                    format!("loc[0] = {e};"),
                    "loc[1] = loc[0] * 0.5;".into(),
                    format!("{target} = loc[1];"),
                ]
            }
            23 => {
                self.feature("while loop");
                self.label += 1;
                let q = format!("q{}", self.label);
                vec![
                    format!("int {q} = 0;"),
                    format!("while ({q} < 3 && {e} > 10.0) {{"),
                    format!("  {target} += 0.5;"),
                    format!("  {q}++;"),
                    "}".into(),
                ]
            }
            _ => vec![format!("{target} = {e};")],
        };
        lines.into_iter().map(|l| format!("{pad}{l}")).collect()
    }

    /// A scalar that is not the kernel's own: a global, a `static`, an `extern`.
    fn foreign_scalar(&mut self, target: &str, e: &str) -> Vec<String> {
        let name = match self.rng.below(3) {
            0 => {
                self.feature("global scalar");
                "gs"
            }
            1 => {
                self.feature("static scalar");
                self.declare("  static double st;".into());
                "st"
            }
            _ => {
                self.feature("extern scalar declared in the kernel");
                self.declare("  extern double ge;".into());
                "ge"
            }
        };
        vec![
            format!("{name} = {e};"),
            format!("{target} = {name} * 0.5;"),
        ]
    }

    /// `if (…) goto L; t = …; L: … = t;`: a definition the jump skips.
    fn skipping_goto(&mut self, target: &str, e: &str) -> Vec<String> {
        self.feature("goto skipping a definition");
        self.declare("  double sk = 0.0;".into());
        self.label += 1;
        let l = self.label;
        vec![
            format!("if ({e} < 60.0) goto use{l};"),
            format!("sk = {e};"),
            format!("use{l}:"),
            format!("{target} = sk;"),
        ]
    }
}

/// The whole program around the kernel's body `body`.
fn program(seed: u64, body: &str, n: &str) -> String {
    format!(
        r#"/* Generated by tests/mctree/kernelgen.rs, seed {seed}. */
#include "pb.h"
#define N {N}
#define M (2 * N + 8)
#define ROWSUM(X, r) ({{ double s_ = 0.0; for (int q_ = 0; q_ < 4; q_++) s_ += (X)[r][q_]; s_; }})

double A[M], B[M], C[M], P[N + 4][N + 4], Q[N + 4][N + 4], outd[8], gs;
int idx[N], outi[8], calls, gn;
double ge;

__attribute__((noinline)) static int lim(int n) {{
  calls++;
  return n;
}}

__attribute__((noinline)) static int first(void) {{
  calls += 10;
  return 0;
}}

__attribute__((noinline)) static void shrink(void) {{
  calls++;
  if (gn > 4) gn--;
}}

__attribute__((noinline)) static double bump(double v) {{
  calls++;
  return v * 0.5;
}}

__attribute__((noinline)) static void kernel_gen(int n, double *x, double *y) {{
{body}
}}

static double value(int random, double fixed) {{
  return random ? pb_rand_int(0, 999) / 8.0 : fixed;
}}

int main(void) {{
  int r = pb_input_random();
  for (int q = 0; q < M; q++) {{
    A[q] = value(r, q * 0.5);
    B[q] = value(r, 1.0 + q);
    C[q] = value(r, 2.0);
  }}
  for (int q = 0; q < N + 4; q++)
    for (int s = 0; s < N + 4; s++) {{
      P[q][s] = value(r, q + s * 0.25);
      Q[q][s] = value(r, q * 2.0 - s);
    }}
  for (int q = 0; q < N; q++) idx[q] = r ? pb_rand_int(0, N - 1) : (q * 7) % N;
  int n = {n};
  gn = n;
  pb_timer_start();
  kernel_gen(n, A + 1, C);
  pb_timer_stop();
  pb_timer_print();
  double ints[10];
  for (int q = 0; q < 8; q++) ints[q] = outi[q];
  ints[8] = calls;
  ints[9] = gs + ge + gn;
  pb_dump_start();
  pb_dump_array("A", A, M);
  pb_dump_array("B", B, M);
  pb_dump_array("C", C, M);
  pb_dump_array("P", &P[0][0], (N + 4) * (N + 4));
  pb_dump_array("Q", &Q[0][0], (N + 4) * (N + 4));
  pb_dump_array("outd", outd, 8);
  pb_dump_array("ints", ints, 10);
  pb_dump_finish();
  return 0;
}}
"#
    )
}
