//! The translation unit as discovery needs it, read from clang-22's JSON AST while the
//! compiler prints it (`clang-22 -fsyntax-only FLAGS -Xclang -ast-dump=json FILE`).
//!
//! The dump is never held whole: a 5 MB file of 59,000 small functions dumps 1.4 GB of JSON.
//! It is [cut](crate::mctree::cutter) into top-level declarations without its whitespace; a
//! global's initialiser is never held, nor a declaration over 16 MB (its head and the
//! functions it names are kept; should discovery need its body, it is refused as too large).
//! Each declaration is parsed alone and dropped unless discovery needs it. Kept:
//! the global variables, the names of the allocators (functions declared
//! `__attribute__((malloc))`), a summary of every function the file defines (name, place,
//! the functions it calls and names), and the bodies of the functions that may be the kernel
//! or name one. Should the kernel chosen be named by a function whose body was dropped (it
//! names the kernel before the file shows which function is the kernel), the dump is read
//! once more keeping exactly the bodies needed.
//!
//! Locations are delta-encoded (`line`, `col` and `file` appear only when they change), so
//! positions are taken from the always-present byte `offset` (the expansion location for a
//! macro) and turned into line:col with the file's own text. A function is the file's when
//! its name is found at its location's offset in the file.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::error::Error;
use crate::mctree::cutter::{Cut, Cutter, Decl, MAX_DECL_BYTES};
use crate::mctree::node::{bare, inner, kind, offset};
use crate::process::helper::{self, Output};
use crate::process::Exit;

/// A function defined in the file: its name, byte range and what it calls; its body when
/// discovery may need it.
#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub begin: usize,
    pub end: usize,
    /// The byte offset of its name.
    pub at: usize,
    /// The body (`CompoundStmt`); `Null` when dropped: it neither may be the kernel nor names
    /// the kernel (see the module's doc).
    pub(crate) body: Value,
    /// The parameters (`ParmVarDecl`s); empty when the body was dropped.
    pub(crate) params: Vec<Value>,
    /// Declared `static`: no other source can call it.
    pub(crate) is_static: bool,
    /// The functions it calls by name.
    pub calls: BTreeSet<String>,
    /// The functions it names other than to call them (whose address it takes).
    pub names: BTreeSet<String>,
}

impl Function {
    /// Whether it calls or names `f`.
    pub fn mentions(&self, f: &str) -> bool {
        self.calls.contains(f) || self.names.contains(f)
    }

    pub fn has_body(&self) -> bool {
        !self.body.is_null()
    }

    /// Whether one of the byte offsets `at` lies inside it.
    fn holds_any(&self, at: &[usize]) -> bool {
        at.iter().any(|&s| s > self.begin && s < self.end)
    }
}

/// Where the file's `#pragma scop`s are (byte offsets): [`choose`]'s last rule.
fn scops(text: &str) -> Vec<usize> {
    text.match_indices("#pragma scop").map(|(i, _)| i).collect()
}

/// What discovery reads of a translation unit.
#[derive(Debug, Default)]
pub struct Unit {
    /// The functions the file defines, in order.
    pub functions: Vec<Function>,
    /// The top-level variable declarations (the headers' too).
    pub(crate) globals: Vec<Value>,
    /// Functions declared to return fresh memory (`__attribute__((malloc))`).
    pub(crate) allocators: HashSet<String>,
    /// Functions a global's initialiser names (their address escapes).
    pub(crate) named_by_globals: HashSet<String>,
    /// The top-level `enum` declarations (their constants are numbers: [`crate::mctree::constants`]).
    pub(crate) enums: Vec<Value>,
    /// The declarations (ids) of the functions declared in a system header ([`system_header`]).
    pub(crate) library: HashSet<String>,
}

/// Whether `file` is a system header: under the C library's or the compiler's include folders.
fn system_header(file: &str) -> bool {
    ["/usr/include/", "/usr/local/include/", "/usr/lib/"]
        .iter()
        .any(|dir| file.starts_with(dir))
}

/// The translation unit of `file` (its text `text`), parsed with `flags` (the user's -I/-D
/// flags) within `timeout`, keeping the bodies the kernel (`wanted`, or the one [`choose`]
/// finds) needs.
pub fn read(
    clang: &str,
    file: &Path,
    flags: &[String],
    timeout: Duration,
    text: &str,
    wanted: Option<&str>,
) -> Result<Unit, Error> {
    let clang = Clang {
        clang,
        file,
        flags,
        timeout,
    };
    let first = clang.dump(text, &mut Keep::likely(wanted, text))?;
    let Ok(k) = choose(&first.functions, wanted, text, file) else {
        return Ok(first); // the caller says why no kernel
    };
    let needed: HashSet<String> = (first.functions.iter())
        .filter(|f| f.name == k.name || f.mentions(&k.name))
        .map(|f| f.name.clone())
        .collect();
    let called = callees(&first.functions, k);
    let wanted = |f: &Function| needed.contains(&f.name) || called.contains(&f.name);
    let missing = (first.functions.iter()).any(|f| wanted(f) && !f.has_body());
    if !missing {
        return Ok(first);
    }
    clang.dump(text, &mut Keep::Only { needed, called })
}

/// The functions of the file `kernel` calls, directly or through one another: whether a call
/// has an effect is read from the callee's body ([`crate::mctree::calls`]).
fn callees(fns: &[Function], kernel: &Function) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut frontier: Vec<&Function> = vec![kernel];
    while let Some(f) = frontier.pop() {
        for g in fns.iter().filter(|g| f.calls.contains(&g.name)) {
            if found.insert(g.name.clone()) {
                frontier.push(g);
            }
        }
    }
    found
}

/// Which function bodies to keep while the dump streams by.
enum Keep {
    /// Those that may be the kernel ([`choose`]'s rule) or name one seen so far.
    Likely {
        wanted: Option<String>,
        scops: Vec<usize>,
        kernels: HashSet<String>,
    },
    /// Exactly these: the ones discovery needs (too large to hold is an error), and the
    /// kernel's callees (too large to hold: their calls are not proved pure).
    Only {
        needed: HashSet<String>,
        called: HashSet<String>,
    },
}

impl Keep {
    fn likely(wanted: Option<&str>, text: &str) -> Keep {
        Keep::Likely {
            wanted: wanted.map(String::from),
            scops: scops(text),
            kernels: HashSet::new(),
        }
    }

    fn keep(&mut self, f: &Function) -> bool {
        match self {
            Keep::Only { needed, called } => needed.contains(&f.name) || called.contains(&f.name),
            Keep::Likely {
                wanted: Some(w), ..
            } => f.name == *w || f.mentions(w),
            Keep::Likely {
                wanted: None,
                scops,
                kernels,
            } => {
                if f.holds_any(scops) || f.name.starts_with("kernel_") {
                    kernels.insert(f.name.clone());
                    return true;
                }
                let kernel = |n: &String| n.starts_with("kernel_") || kernels.contains(n);
                f.calls.iter().chain(&f.names).any(kernel)
            }
        }
    }
}

/// The most bytes of the AST dump's stderr kept (past it the compiler is stopped).
const MAX_STDERR: u64 = 1 << 20;

/// The compiler and how to parse the file with it.
struct Clang<'a> {
    clang: &'a str,
    file: &'a Path,
    flags: &'a [String],
    timeout: Duration,
}

impl Clang<'_> {
    /// One streamed read of the dump, keeping the bodies `keep` says.
    fn dump(&self, text: &str, keep: &mut Keep) -> Result<Unit, Error> {
        let dump = [
            self.clang,
            "-fsyntax-only",
            "-fopenmp",
            "-Xclang",
            "-ast-dump=json",
        ];
        let mut argv: Vec<String> = dump.map(String::from).to_vec();
        argv.extend(self.flags.iter().cloned());
        // No warnings: they do not change the tree, and thousands of them (generated or
        // legacy code) would fill the capped stderr and get clang killed (SIGXFSZ).
        argv.push("-w".into());
        argv.push(self.file.display().to_string());
        let mut unit = Unit::default();
        let mut cutter = Cutter::default();
        let mut bad: Option<Error> = None;
        let out = helper::stream(&argv, self.timeout, MAX_STDERR, &mut |chunk| {
            cutter.feed(chunk, &mut |decl| {
                if bad.is_none() {
                    bad = unit.take_cut(decl, text, keep).err();
                }
            })
        });
        self.finished(&out)?;
        match bad {
            Some(Error::Internal(e)) => Err(self.not_an_ast(&e)),
            Some(e) => Err(e),
            None if cutter.depth != 0 => {
                Err(self.not_an_ast("it ends before the translation unit does"))
            }
            None => Ok(unit),
        }
    }

    /// The error of a dump that is not clang's JSON AST (another compiler's output, or one
    /// cut short).
    fn not_an_ast(&self, why: &str) -> Error {
        Error::usage(
            format!("`{}`'s output is not a whole JSON AST of `{}`: {why}", self.clang, self.file.display()),
            Some("mctree reads clang-22's `-ast-dump=json`: give it clang-22 (`--compiler clang-22`), or a wrapper that prints clang's output unchanged"),
        )
    }

    /// The error of a dump that did not finish well.
    fn finished(&self, out: &Output) -> Result<(), Error> {
        let (clang, file) = (self.clang, self.file.display());
        match &out.finished.exit {
            Exit::Code(0) => Ok(()),
            Exit::SpawnError(e) if e.starts_with("cannot run") => Err(Error::Environment(format!(
                "cannot start `{clang}` to read the loops of `{file}`: {e} (install it with `bash scripts/setup.sh`)"
            ))),
            // Not the compiler: the machine (a temporary folder that cannot be used, limits),
            // with its own cause; nothing was run, so nothing to resume.
            Exit::SpawnError(e) => Err(Error::usage(
                format!("cannot start `{clang}` to read the loops of `{file}`: {e}"),
                None,
            )),
            Exit::Interrupted => Err(Error::Cancelled(
                "while the loops were read; nothing was run".into(),
            )),
            Exit::Signal(libc::SIGXFSZ) => Err(Error::usage(
                format!(
                    "`{clang}` was stopped while it read `{file}`: it wrote over {} KiB of diagnostics (SIGXFSZ)",
                    MAX_STDERR >> 10
                ),
                Some("mctree reads the file with warnings off (`-w`); a compiler or wrapper that still prints that much must be quieter"),
            )),
            Exit::Timeout => Err(Error::usage(
                format!(
                    "`{clang}` did not finish parsing `{file}` within {} s (killed)",
                    self.timeout.as_secs_f64()
                ),
                Some("the compile timeout bounds it: raise it with `--compile-timeout SECONDS` if the file is that slow to parse"),
            )),
            _ => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let tail: Vec<&str> = stderr.lines().take(20).collect();
                Err(Error::usage(
                    format!("`{file}` does not compile with the given flags:\n{}", tail.join("\n")),
                    Some("pass the include paths and macros it needs after `--`, e.g. `-- -Iutilities -DMEDIUM_DATASET`"),
                ))
            }
        }
    }
}

/// One top-level declaration's JSON, as deep as the code is (each nested loop or operand
/// adds levels): no depth limit; discovery runs on a stack to match ([`crate::mctree`]'s
/// `discover`).
fn parse(decl: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(decl);
    de.disable_recursion_limit();
    serde::Deserialize::deserialize(&mut de)
}

impl Unit {
    /// Takes in one declaration as the dump was cut (see [`cutter`](crate::mctree::cutter));
    /// a function whose body is needed but too large to hold is refused.
    fn take_cut(&mut self, cut: Cut, text: &str, keep: &mut Keep) -> Result<(), Error> {
        let internal = |e: serde_json::Error| Error::Internal(e.to_string());
        let (json, head) = match cut.decl {
            Decl::Whole(d) => (d, None),
            Decl::Head {
                head,
                named,
                restrict,
            } => (head, Some((named, restrict))),
        };
        let d = parse(json).map_err(internal)?;
        if kind(&d) == "FunctionDecl" && system_header(cut.file) {
            self.library
                .extend(d.get("id").and_then(Value::as_str).map(String::from));
        }
        match head {
            None => self.take(d, text, keep),
            Some((named, restrict)) => return self.take_head(d, named, restrict, (text, keep)),
        }
        Ok(())
    }

    /// A declaration given up for its size, or a global: its head and the functions it names.
    fn take_head(
        &mut self,
        head: Value,
        named: &BTreeSet<String>,
        restrict: bool,
        (text, keep): (&str, &mut Keep),
    ) -> Result<(), Error> {
        match kind(&head) {
            "VarDecl" => {
                self.named_by_globals.extend(named.iter().cloned());
                self.globals.push(head);
            }
            "FunctionDecl" => {
                let name = head.get("name").and_then(Value::as_str);
                if let Some(n) = name.filter(|_| restrict) {
                    self.allocators.insert(n.to_string());
                }
                let Some(f) = function_head(&head, text, named) else {
                    return Ok(());
                };
                if matches!(keep, Keep::Only { needed, .. } if needed.contains(&f.name)) {
                    return Err(too_large(&f.name));
                }
                self.functions.push(f);
            }
            _ => {}
        }
        Ok(())
    }

    /// Takes in one top-level declaration.
    fn take(&mut self, d: Value, text: &str, keep: &mut Keep) {
        match kind(&d) {
            "EnumDecl" => self.enums.push(d),
            "VarDecl" => {
                let mut named = BTreeSet::new();
                uses(&d, &mut named, &mut BTreeSet::new());
                self.named_by_globals.extend(named);
                self.globals.push(d);
            }
            "FunctionDecl" => {
                let name = d.get("name").and_then(Value::as_str);
                if let Some(n) =
                    name.filter(|_| inner(&d).iter().any(|a| kind(a) == "RestrictAttr"))
                {
                    self.allocators.insert(n.to_string());
                }
                if let Some(mut f) = function(d, text) {
                    if !keep.keep(&f) {
                        f.body = Value::Null;
                        f.params = vec![];
                    }
                    self.functions.push(f);
                }
            }
            _ => {}
        }
    }
}

/// The function `d` defines in `text` (none: a declaration, or a definition in a header).
fn function(mut d: Value, text: &str) -> Option<Function> {
    let mut f = function_head(&d, text, &BTreeSet::new())?;
    let kids = d.get_mut("inner")?.as_array_mut()?;
    f.body = std::mem::take(kids.iter_mut().find(|c| kind(c) == "CompoundStmt")?);
    f.params = (kids.iter())
        .filter(|p| kind(p) == "ParmVarDecl")
        .cloned()
        .collect();
    uses(&f.body, &mut f.names, &mut f.calls);
    Some(f)
}

/// The function of a declaration without its body (given up for its size, or before
/// [`function`] reads the body): it calls and names, as far as anyone can tell without its
/// tree, each function in `named`.
fn function_head(d: &Value, text: &str, named: &BTreeSet<String>) -> Option<Function> {
    let name = d.get("name")?.as_str()?.to_string();
    let at = d.get("loc").and_then(offset)?;
    let range = d.get("range");
    let begin = range.and_then(|r| r.get("begin")).and_then(offset)?;
    let end = range.and_then(|r| r.get("end")).and_then(offset)?;
    if !text.get(at..).is_some_and(|t| t.starts_with(&name)) {
        return None;
    }
    Some(Function {
        name,
        begin,
        end,
        at,
        body: Value::Null,
        params: vec![],
        is_static: d.get("storageClass").and_then(Value::as_str) == Some("static"),
        calls: named.clone(),
        names: named.clone(),
    })
}

/// The refusal of a function mctree needs whole (the kernel, or one that names it) whose
/// AST is too large to hold.
fn too_large(name: &str) -> Error {
    Error::usage(
        format!(
            "`{name}` is too large to analyse: its AST is over {} MB of JSON",
            MAX_DECL_BYTES >> 20
        ),
        Some("mctree reads the kernel and the functions that name it up to that size: put the loops to tune in a smaller function, or tune them with a mold (`moldtune run`)"),
    )
}

/// The functions `v` calls (into `calls`) and names otherwise (into `named`).
fn uses(v: &Value, named: &mut BTreeSet<String>, calls: &mut BTreeSet<String>) {
    let kids = inner(v);
    let callee = (kind(v) == "CallExpr")
        .then(|| kids.first().and_then(function_named))
        .flatten();
    if let Some(name) = callee {
        calls.insert(name.to_string());
    } else if let Some(name) = function_named(v) {
        named.insert(name.to_string());
    }
    let args = &kids[callee.is_some() as usize..];
    args.iter().for_each(|c| uses(c, named, calls));
}

/// The function a `DeclRefExpr` names (through casts and parentheses).
fn function_named(v: &Value) -> Option<&str> {
    let d = bare(v).get("referencedDecl")?;
    let is_function = kind(bare(v)) == "DeclRefExpr" && kind(d) == "FunctionDecl";
    is_function.then(|| d.get("name")?.as_str()).flatten()
}

/// The kernel: `--kernel NAME`, else the one function named `kernel_*`, else the one that
/// holds `#pragma scop`.
pub fn choose<'f>(
    fns: &'f [Function],
    wanted: Option<&str>,
    text: &str,
    file: &Path,
) -> Result<&'f Function, Error> {
    let names = || {
        const SHOWN: usize = 10;
        let n: Vec<String> = fns
            .iter()
            .take(SHOWN)
            .map(|f| format!("`{}`", f.name))
            .collect();
        match fns.len() {
            0 => "none (the file defines no function)".to_string(),
            k if k <= SHOWN => n.join(", "),
            k => format!("{k}, the first {SHOWN}: {}", n.join(", ")),
        }
    };
    if let Some(w) = wanted {
        return fns.iter().find(|f| f.name == w).ok_or_else(|| {
            Error::usage(
                format!("`{}` defines no function `{w}`", file.display()),
                Some(&format!("the functions it defines: {}", names())),
            )
        });
    }
    let kernels: Vec<&Function> = fns
        .iter()
        .filter(|f| f.name.starts_with("kernel_"))
        .collect();
    if let [k] = kernels.as_slice() {
        return Ok(k);
    }
    let scops = scops(text);
    let with_scop: Vec<&Function> = (fns.iter()).filter(|f| f.holds_any(&scops)).collect();
    if let [k] = with_scop.as_slice() {
        return Ok(k);
    }
    Err(Error::usage(
        format!(
            "cannot tell which function of `{}` is the kernel",
            file.display()
        ),
        Some(&format!(
            "name it with `--kernel NAME`; the functions it defines: {}",
            names()
        )),
    ))
}
