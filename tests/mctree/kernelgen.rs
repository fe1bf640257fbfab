//! A generator of small random C kernels, seeded, to hunt counter-examples to mctree's proofs
//! (issue 38). Each program holds one `kernel_gen` of one to three loop nests (depth 1–4) and
//! a `main` that varies every input with `PB_INPUT=random` and `PB_SEED` (array values, the
//! index array, the trip count `n`) and dumps every array and scalar the kernel writes, its
//! return code and the trace its callbacks append to.
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
//!
//! The boundary of the grammar mctree proves from (docs/mctree.md, "What is proved: the grammar"; issue 53): for each
//! rule of [`RULES`] a kernel may hold a form inside it, or that form mutated one step outside
//! it so that a transformation applied anyway would change the output (or not build):
//! - `header-type`: `i < n / 2`, `i < (int)(n * 0.5)`, `i > -odd / 2` counting down; outside,
//!   `i < n * 0.5` with `n` odd, `i > -0.5 * odd` (subscripts read `i + 4`, in bounds at -3);
//! - `header-counter`: `k <= n - n / 2`, `k < n - 1 - i`; outside, `k <= n - k`,
//!   `k < n - 1 - k` (clang refuses every directive on them);
//! - `early-exit`: `do { if (!(c)) break; … } while (0)`; outside, `CHECK(c)` returning -1;
//! - `call-resolved`: libm's `fabs`, `fmax`, `floor` and the file's pure `halve`, of a value
//!   plus the innermost counter; outside, a local `fabs`/`exp` or a parameter `log` pointing
//!   to `tracer`, or `halve` appending to the global trace (so the calls' order shows);
//! - `statement-expression`: `TWICE(x)` (`({ double t_ = x; t_ * 2.0; })`), glibc's
//!   `assert`, a recurrence `a[i + 1] = TWICE(a[i] * 0.5 - a[i + 1] * 0.5 + 0.125)`;
//!   outside, that recurrence through `TWICE_LOOP(x)`, the same value computed in a loop, and
//!   `ROWSUM`;
//! - `named-constant`: `P[i][FY]`, `u < NE` (an `enum`), `KC` a `const int`; outside, `KC` an
//!   `int` the loop cycles through 2, 0, 1 (so a reversal changes which element it names);
//! - `vla-rows`: a nest over `double V[n][m]` with `j < m`; outside, `V[i][j + 1]` or
//!   `j <= m`, which run into the next row (`V` has a row to spare).
//!
//! A loop that crosses a rule (its header, or a statement directly in its body) is marked by
//! [`CROSSING`] on its `for` line.

use std::collections::BTreeSet;

use moldtune::rng::Rng;

/// The largest trip count.
const N: usize = 16;

/// The grammar's rules the generator hunts the boundary of: (rule, percent of kernels
/// crossing it, percent staying inside it). The `ROWSUM` macro crosses `statement-expression`
/// in about a sixth of the kernels besides.
pub const RULES: [(&str, usize, usize); 7] = [
    ("header-type", 15, 20),
    ("header-counter", 15, 20),
    ("early-exit", 15, 20),
    ("call-resolved", 15, 20),
    ("statement-expression", 4, 20),
    ("named-constant", 15, 20),
    ("vla-rows", 15, 20),
];

/// The comment that marks a loop crossing rules: `/* outside: RULE, RULE */`.
pub const CROSSING: &str = "/* outside: ";

/// A generated program, the constructs it holds and the rules it exercises.
pub struct Kernel {
    pub source: String,
    pub features: BTreeSet<&'static str>,
    /// (rule, `true` when inside it) for each rule of [`RULES`] the kernel exercises.
    pub rules: BTreeSet<(&'static str, bool)>,
}

/// A rule and the side of it (`true`: inside).
type Side = (&'static str, bool);

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
    rules: BTreeSet<Side>,
    /// The header rule one loop of the nest being generated takes.
    header_rule: Option<Side>,
    /// The statement rules the innermost body of the nest being generated takes.
    body_rules: Vec<Side>,
    /// The rules the loop being generated crosses.
    crossing: Vec<&'static str>,
    /// What the program around the kernel provides: "odd", "log", "vla" (parameters),
    /// "odd n", "traced halve".
    needs: BTreeSet<&'static str>,
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
        rules: BTreeSet::new(),
        header_rule: None,
        body_rules: vec![],
        crossing: vec![],
        needs: BTreeSet::new(),
    };
    let plan = g.plan();
    let mut nests = g.nests(&plan);
    if let Some(&(_, inside)) = plan.iter().find(|(r, _)| *r == "vla-rows") {
        let at = g.rng.below(nests.len() + 1);
        let v = g.vla(inside);
        nests.insert(at, v);
    }
    let mut kernel = g.top.clone();
    kernel.extend(nests.concat());
    kernel.push("  return 0;".into());
    // Half the programs pass a constant trip count (the kernel's bounds are then known, as
    // PolyBench's are), half one the input varies (odd where a bound is `n * 0.5`).
    let n = match (g.chance(50), g.needs.contains("odd n")) {
        (true, _) => "N - 3",
        (false, false) => "r ? N / 2 + pb_rand_int(0, N / 2) : N",
        (false, true) => "r ? 2 * pb_rand_int(N / 4, N / 2 - 1) + 1 : N - 3",
    };
    // So is the row length `m` of the variable-length array.
    let m = match g.chance(50) {
        true => "N - 5",
        false => "r ? pb_rand_int(4, N - 1) : N - 4",
    };
    Kernel {
        source: program(seed, &kernel.join("\n"), [n, m], &g.needs),
        features: g.features,
        rules: g.rules,
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

    /// The rules the kernel exercises, each on one side ([`RULES`]' odds).
    fn plan(&mut self) -> Vec<Side> {
        let mut plan = vec![];
        for (rule, out, inside) in RULES {
            let d = self.rng.below(100);
            if d < out + inside {
                plan.push((rule, d >= out));
            }
        }
        plan
    }

    /// One to three nests (at least one per header rule of `plan`), each header rule taken by
    /// a loop of its own nest, each statement rule by the innermost body of one of them.
    fn nests(&mut self, plan: &[Side]) -> Vec<Vec<String>> {
        let header = |r: &&str| r.starts_with("header-");
        let heads: Vec<Side> = plan.iter().copied().filter(|(r, _)| header(r)).collect();
        let bodies: Vec<Side> = (plan.iter().copied())
            .filter(|(r, _)| !header(r) && *r != "vla-rows")
            .collect();
        let count = (1 + self.rng.below(3)).max(heads.len());
        let at: Vec<usize> = bodies.iter().map(|_| self.rng.below(count)).collect();
        let first = self.rng.below(count);
        let mut nests = vec![];
        for k in 0..count {
            self.header_rule = heads.get((k + first) % count).copied();
            self.body_rules = (bodies.iter().zip(&at))
                .filter(|(_, &a)| a == k)
                .map(|(s, _)| *s)
                .collect();
            let depth = [1, 1, 2, 2, 2, 3, 3, 4][self.rng.below(8)];
            nests.push(self.nest(depth, &[], 1));
        }
        nests
    }

    /// A loop of `depth` levels inside the loops `outer` (their counters as subscripts read
    /// them), at indentation `ind`, with what follows it at its level.
    fn nest(&mut self, depth: usize, outer: &[String], ind: usize) -> Vec<String> {
        let pad = "  ".repeat(ind);
        let iv = IVS[outer.len()].to_string();
        let declared_inside = self.chance(60);
        if !declared_inside {
            self.declare(format!("  int {iv};"));
            self.outside.insert(iv.clone());
        }
        let saved = std::mem::take(&mut self.crossing);
        let (header, works, sub, ruled) = self.any_header(depth, &iv, outer, declared_inside);
        // OpenMP's directives take canonical loops only, and no `return` out of them.
        let mut lines = match works || ruled || (depth == 1 && !self.body_rules.is_empty()) {
            true => vec![],
            false => self.directive(depth, &pad),
        };
        let at = lines.len();
        lines.push(format!("{pad}for ({header}) {{"));
        let mut ivs = outer.to_vec();
        ivs.push(sub);
        lines.extend(self.body(depth, &ivs, ind + 1));
        lines.push(format!("{pad}}}"));
        let crossed = std::mem::replace(&mut self.crossing, saved);
        if !crossed.is_empty() {
            lines[at] += &format!(" {CROSSING}{} */", crossed.join(", "));
        }
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

    /// A loop's body: the nest below it, or one to three statements and the nest's
    /// statement rules.
    fn body(&mut self, depth: usize, ivs: &[String], ind: usize) -> Vec<String> {
        let mut lines = vec![];
        if depth > 1 {
            if self.chance(20) {
                lines.extend(self.statement(ivs, ind));
            }
            lines.extend(self.nest(depth - 1, ivs, ind));
            if self.chance(20) {
                lines.extend(self.statement(ivs, ind));
            }
            return lines;
        }
        for _ in 0..1 + self.rng.below(3) {
            lines.extend(self.statement(ivs, ind));
        }
        for r in std::mem::take(&mut self.body_rules) {
            let s = self.rule_statement(r, ivs, ind);
            match self.chance(50) {
                true => lines.extend(s),
                false => drop(lines.splice(0..0, s)),
            }
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

    /// The header of a loop, whether its increment does work, its counter as subscripts
    /// read it, and whether it is a rule's (the nest's header rule goes to one of its loops).
    fn any_header(
        &mut self,
        depth: usize,
        iv: &str,
        outer: &[String],
        inside: bool,
    ) -> (String, bool, String, bool) {
        let rule = self.header_rule;
        match rule.filter(|_| depth == 1 || self.chance(50)) {
            Some(r) => {
                self.header_rule = None;
                let decl = if inside { "int " } else { "" };
                let (h, sub) = self.rule_header(r, iv, outer, decl);
                (h, false, sub, true)
            }
            None => {
                let (h, works) = self.header(iv, outer, inside);
                (h, works, iv.to_string(), false)
            }
        }
    }

    /// A header on one side of a header rule, and its counter as subscripts read it: `i + 4`
    /// where it counts down to -3 (`n` is at least 8).
    fn rule_header(
        &mut self,
        (rule, inside): Side,
        iv: &str,
        outer: &[String],
        decl: &str,
    ) -> (String, String) {
        self.rules.insert((rule, inside));
        if !inside {
            self.crossing.push(rule);
        }
        let up = |bound: String| (format!("{decl}{iv} = 0; {bound}; {iv}++"), iv.to_string());
        let down = |bound: &str| {
            let h = format!("{decl}{iv} = n - 5; {iv} > {bound}; {iv}--");
            (h, format!("({iv} + 4)"))
        };
        let form = self.rng.below(3);
        match (rule, inside, form) {
            ("header-type", true, 0) => up(format!("{iv} < n / 2")),
            ("header-type", true, 1) => up(format!("{iv} < (int)(n * 0.5)")),
            ("header-type", false, 0 | 1) => {
                self.needs.insert("odd n");
                up(format!("{iv} < n * 0.5"))
            }
            ("header-type", _, _) => {
                self.needs.insert("odd");
                down(if inside { "-odd / 2" } else { "-0.5 * odd" })
            }
            ("header-counter", true, _) => match outer.last() {
                Some(o) if form > 0 => up(format!("{iv} < n - 1 - {o}")),
                _ => up(format!("{iv} <= n - n / 2")),
            },
            (_, _, 0) => up(format!("{iv} <= n - {iv}")),
            _ => up(format!("{iv} < n - 1 - {iv}")),
        }
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
            8..=9 => vec![format!("{target} += {e};")],
            k @ 10..=15 => self.scalars(k, &target, &e),
            k @ 16..=23 => self.control(k, &target, &e, ivs),
            _ => vec![format!("{target} = {e};")],
        };
        lines.into_iter().map(|l| format!("{pad}{l}")).collect()
    }

    /// Statement `k` of those around a scalar or a call.
    fn scalars(&mut self, k: usize, target: &str, e: &str) -> Vec<String> {
        match k {
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
            13 => self.foreign_scalar(target, e),
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
            _ => {
                self.feature("call in a body");
                vec![format!("{target} = bump({e});")]
            }
        }
    }

    /// Statement `k` of those around control flow, a macro or a local array.
    fn control(&mut self, k: usize, target: &str, e: &str, ivs: &[String]) -> Vec<String> {
        self.label += 1;
        let l = self.label;
        let (f, lines) = match k {
            16 => return self.skipping_goto(target, e),
            17 => {
                self.rules.insert(("statement-expression", false));
                self.crossing.push("statement-expression");
                let i = &ivs[self.rng.below(ivs.len())];
                let s = format!("{target} = ROWSUM(P, {i});");
                ("statement-expression macro with a loop", vec![s])
            }
            18 => (
                "forward goto",
                vec![
                    format!("if ({e} > 100.0) goto skip{l};"),
                    format!("{target} = {e};"),
                    format!("skip{l}:;"),
                ],
            ),
            19 => (
                "conditional write",
                vec![format!("if ({e} > 60.0) {target} = {e};")],
            ),
            20 => (
                "call that changes a bound",
                vec!["shrink();".into(), format!("{target} = {e};")],
            ),
            21 => (
                "continue",
                vec![
                    format!("if ({e} > 90.0) continue;"),
                    format!("{target} = {e};"),
                ],
            ),
            22 => {
                self.declare("  double loc[4];".into());
                (
                    "local array",
                    vec![
                        format!("loc[0] = {e};"),
                        "loc[1] = loc[0] * 0.5;".into(),
                        format!("{target} = loc[1];"),
                    ],
                )
            }
            _ => (
                "while loop",
                vec![
                    format!("int q{l} = 0;"),
                    format!("while (q{l} < 3 && {e} > 10.0) {{"),
                    format!("  {target} += 0.5;"),
                    format!("  q{l}++;"),
                    "}".into(),
                ],
            ),
        };
        self.feature(f);
        lines
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

    /// A statement on one side of a statement rule (`early-exit`: the element it checks is
    /// above 120 in about one input of 25).
    fn rule_statement(&mut self, (rule, inside): Side, ivs: &[String], ind: usize) -> Vec<String> {
        self.rules.insert((rule, inside));
        if !inside {
            self.crossing.push(rule);
        }
        let pad = "  ".repeat(ind);
        let target = self.element(ivs);
        let e = self.expr(ivs);
        // With the innermost counter added, every iteration computes a value of its own.
        let own = format!("{e} + {}", ivs.last().map_or("0", String::as_str));
        let lines = match rule {
            "early-exit" if inside => vec![format!(
                "do {{ if (!({target} < 120.0)) break; {target} = {e}; }} while (0);"
            )],
            "early-exit" => vec![
                format!("CHECK({target} < 120.0);"),
                format!("{target} = {e};"),
            ],
            "call-resolved" => vec![format!("{target} = {};", self.resolved(inside, &own))],
            "statement-expression" => self.statement_expression(inside, &target, &e, ivs),
            _ => self.named_constant(inside, &own, ivs),
        };
        lines.into_iter().map(|l| format!("{pad}{l}")).collect()
    }

    /// A statement on one side of `statement-expression`: `TWICE` or `assert`; outside,
    /// `TWICE_LOOP` in a recurrence (`a[i + 1] = a[i] - a[i + 1] + 0.25`), which any
    /// reordering of the loop changes, even repeated by loops around it.
    fn statement_expression(
        &mut self,
        inside: bool,
        target: &str,
        e: &str,
        ivs: &[String],
    ) -> Vec<String> {
        let i = &ivs[self.rng.below(ivs.len())];
        let a = self.pick(&ONE_D);
        let (x, x1) = (format!("{a}[{i}]"), format!("{a}[{i} + 1]"));
        let recurrence = |m: &str| format!("{x1} = {m}({x} * 0.5 - {x1} * 0.5 + 0.125);");
        match (inside, self.rng.below(3)) {
            (true, 0) => vec![format!("{target} = TWICE({e});")],
            (true, 1) => vec![format!("assert({i} < N + 4);"), format!("{target} = {e};")],
            (true, _) => vec![recurrence("TWICE")],
            (false, _) => vec![recurrence("TWICE_LOOP")],
        }
    }

    /// A call of `e` on one side of `call-resolved`: libm's or the file's pure function; a
    /// pointer named like libm's, or `halve` tracing its calls.
    fn resolved(&mut self, inside: bool, e: &str) -> String {
        match (inside, self.rng.below(4)) {
            (true, 0) => format!("fabs({e})"),
            (true, 1) => format!("fmax({e}, 1.0)"),
            (true, 2) => format!("floor({e})"),
            (false, 0) => {
                self.declare("  double (*fabs)(double) = tracer;".into());
                format!("fabs({e})")
            }
            (false, 1) => {
                self.declare("  double (*exp)(double) = tracer;".into());
                format!("exp({e})")
            }
            (false, 2) => {
                self.needs.insert("log");
                format!("log({e})")
            }
            (inside, _) => {
                if !inside {
                    self.needs.insert("traced halve");
                }
                format!("halve({e})")
            }
        }
    }

    /// A statement on one side of `named-constant`: `enum` constants as subscripts and a
    /// bound, the `const int` `KC` as a subscript; outside, `KC` an `int` cycled through 2, 0,
    /// 1.
    fn named_constant(&mut self, inside: bool, e: &str, ivs: &[String]) -> Vec<String> {
        let a = ivs[self.rng.below(ivs.len())].clone();
        let p = self.pick(&TWO_D);
        let form = self.rng.below(4);
        let s = match (inside, form) {
            (true, 0) => return vec![format!("{p}[{a}][FY] = {p}[{a}][FX] * 0.5 + {e};")],
            (true, 1) => {
                let u = format!("{p}[{a}][u]");
                return vec![format!(
                    "for (int u = FX; u < NE; u++) {u} = {u} * 0.5 + {e};"
                )];
            }
            (_, 0 | 2) => format!("{p}[{a}][KC] = {e};"),
            _ => format!("A[{a} + KC] = {e};"),
        };
        match inside {
            true => {
                self.declare("  const int KC = 2;".into());
                vec![s]
            }
            false => {
                self.declare("  int KC = 2;".into());
                vec![s, "KC = (KC + 1) % 3;".into()]
            }
        }
    }

    /// A nest over the variable-length array parameter `double V[n][m]` (one row to spare):
    /// inside `vla-rows`, `j` from 0 below `m` subscripts the row; outside, `j + 1` or
    /// `j <= m` run into the next row, which the next `i` reads.
    fn vla(&mut self, inside: bool) -> Vec<String> {
        self.rules.insert(("vla-rows", inside));
        self.needs.insert("vla");
        let saved = std::mem::take(&mut self.crossing);
        let ivs = ["i".to_string(), "j".to_string()];
        // Only 1-D reads besides `V`: a 2-D one's row subscript `j` is bounded only where `m`
        // is a constant.
        let a = self.pick(&ONE_D);
        let e = format!("{a}[{}] * 0.5", self.sub1(&ivs));
        let (lo, from) = match self.chance(50) {
            true => (0, "i"),
            false => (1, "i - 1"),
        };
        let (bound, sub, mark) = match (inside, self.chance(50)) {
            (true, _) => ("j < m", "j", String::new()),
            (false, true) => ("j <= m", "j", format!(" {CROSSING}vla-rows */")),
            (false, false) => ("j < m", "j + 1", format!(" {CROSSING}vla-rows */")),
        };
        let mut lines = vec![
            format!("  for (int i = {lo}; i < n; i++) {{{mark}"),
            format!("    for (int j = 0; {bound}; j++) {{"),
            format!("      V[i][{sub}] = V[{from}][j] * 0.5 + {e};"),
        ];
        if self.chance(50) {
            lines.extend(self.statement(&ivs, 3));
        }
        lines.extend(["    }".to_string(), "  }".to_string()]);
        self.crossing = saved;
        lines
    }
}

/// The whole program around the kernel's body `body`, with the kernel parameters `needs`
/// asks for and the `main` passing `inputs` (the trip count `n`, the row length `m`).
fn program(seed: u64, body: &str, inputs: [&str; 2], needs: &BTreeSet<&str>) -> String {
    let extra = [
        ("odd", ", int odd", ", odd"),
        ("log", ", double (*log)(double)", ", tracer"),
        ("vla", ", int m, double V[n][m]", ", m, (double(*)[m])VV"),
    ];
    let (mut params, mut args) = (String::new(), String::new());
    for (need, p, a) in extra {
        if needs.contains(need) {
            params.push_str(p);
            args.push_str(a);
        }
    }
    let halve = match needs.contains("traced halve") {
        true => "trace[traced & 63] = v;\n  traced++;\n  return v * 0.5;",
        false => "double h = v * 0.5;\n  return h;",
    };
    let head = "__attribute__((noinline)) static int kernel_gen(int n, double *x, double *y";
    let kernel = format!("{head}{params}) {{\n{body}\n}}");
    format!(
        "{}\n{kernel}\n{}",
        prelude(seed, halve),
        main(inputs, &args)
    )
}

/// The program's head: macros, arrays, the functions the kernel calls.
fn prelude(seed: u64, halve: &str) -> String {
    format!(
        r#"/* Generated by tests/mctree/kernelgen.rs, seed {seed}. */
#include <assert.h>
#include "pb.h"
#define N {N}
#define M (2 * N + 8)
#define ROWSUM(X, r) ({{ double s_ = 0.0; for (int q_ = 0; q_ < 4; q_++) s_ += (X)[r][q_]; s_; }})
#define TWICE(x) ({{ double t_ = (x); t_ * 2.0; }})
#define TWICE_LOOP(x) ({{ double t_ = (x); for (int u_ = 0; u_ < 1; u_++) t_ *= 2.0; t_; }})
#define CHECK(c) do {{ if (!(c)) return -1; }} while (0)
enum {{ FX, FY, FZ, NE = 4 }};

double A[M], B[M], C[M], P[N + 4][N + 4], Q[N + 4][N + 4], outd[8], gs;
double VV[(N + 1) * N], trace[64];
int idx[N], outi[8], calls, gn, traced;
double ge;

__attribute__((noinline)) static double tracer(double v) {{
  trace[traced & 63] = v;
  traced++;
  return v;
}}

__attribute__((noinline)) static double halve(double v) {{
  {halve}
}}

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
"#
    )
}

/// The program's `main`: inputs (the trip count `n`, the row length `m`), the call, the dump.
fn main([n, m]: [&str; 2], args: &str) -> String {
    format!(
        r#"
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
  for (int q = 0; q < (N + 1) * N; q++) VV[q] = value(r, q * 0.25);
  for (int q = 0; q < N; q++) idx[q] = r ? pb_rand_int(0, N - 1) : (q * 7) % N;
  int n = {n};
  int odd = r ? 2 * pb_rand_int(0, 3) + 1 : 3;
  int m = {m};
  (void)odd, (void)m;
  gn = n;
  pb_timer_start();
  int rc = kernel_gen(n, A + 1, C{args});
  pb_timer_stop();
  pb_timer_print();
  double ints[12];
  for (int q = 0; q < 8; q++) ints[q] = outi[q];
  ints[8] = calls;
  ints[9] = gs + ge + gn;
  ints[10] = rc;
  ints[11] = traced;
  pb_dump_start();
  pb_dump_array("A", A, M);
  pb_dump_array("B", B, M);
  pb_dump_array("C", C, M);
  pb_dump_array("P", &P[0][0], (N + 4) * (N + 4));
  pb_dump_array("Q", &Q[0][0], (N + 4) * (N + 4));
  pb_dump_array("V", VV, (N + 1) * N);
  pb_dump_array("outd", outd, 8);
  pb_dump_array("ints", ints, 12);
  pb_dump_array("trace", trace, 64);
  pb_dump_finish();
  return 0;
}}
"#
    )
}
