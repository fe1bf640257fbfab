//! Constraint expressions over parameters, e.g. `P3 * P4 <= 8192` or `P1 != "" or P2 == 0`.
//!
//! Parsed once when the problem is loaded (names resolved to parameter indices, so an unknown
//! name is a load-time error with a column) and evaluated for every sampled configuration,
//! which makes it cheap enough for candidate pools of tens of thousands.
//!
//! Grammar: `or` / `||`, `and` / `&&`, `not` / `!`, comparisons `== != < <= > >=`,
//! `+ - * / %`, unary `-`, parentheses, numbers, `"strings"` or `'strings'`, `true`/`false`,
//! parameter names, and the machine's facts (`machine.vector_registers`, [`crate::host`]: a
//! number read from the machine that loads the problem).

use crate::host::Host;
use crate::problem::limits::MAX_EXPR_DEPTH;

#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Num(f64),
    Str(String),
    Bool(bool),
}

#[derive(Debug, Clone)]
pub enum Expr {
    Lit(Val),
    Param(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// A parse error: 0-based character column within the expression text.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub col: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Ident(String),
    Op(&'static str),
    LParen,
    RParen,
}

/// Splits `src` into tokens, each with the character column it starts at.
fn lex(src: &str) -> Result<Vec<(usize, Tok)>, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let (tok, end) = lex_token(&chars, i)?;
        out.push((i, tok));
        i = end;
    }
    Ok(out)
}

/// The token starting at `start` (not whitespace), and the index just after it.
fn lex_token(chars: &[char], start: usize) -> Result<(Tok, usize), ParseError> {
    let c = chars[start];
    let digit_at = |i: usize| chars.get(i).is_some_and(|d| d.is_ascii_digit());
    if digit_at(start) || (c == '.' && digit_at(start + 1)) {
        lex_number(chars, start)
    } else if c.is_alphabetic() || c == '_' {
        Ok(lex_ident(chars, start))
    } else if c == '"' || c == '\'' {
        lex_string(chars, start)
    } else if c == '(' {
        Ok((Tok::LParen, start + 1))
    } else if c == ')' {
        Ok((Tok::RParen, start + 1))
    } else {
        lex_op(chars, start)
    }
}

/// A number. It takes letters and dots too, and a sign right after an exponent's `e`, so
/// that `1.2.3` or `0x10` is one bad number rather than several tokens.
fn lex_number(chars: &[char], start: usize) -> Result<(Tok, usize), ParseError> {
    let mut i = start;
    while i < chars.len()
        && (chars[i].is_ascii_alphanumeric()
            || chars[i] == '.'
            || ((chars[i] == '+' || chars[i] == '-') && matches!(chars[i - 1], 'e' | 'E')))
    {
        i += 1;
    }
    let text: String = chars[start..i].iter().collect();
    let v = text.parse::<f64>().map_err(|_| ParseError {
        col: start,
        message: format!("`{text}` is not a number"),
    })?;
    Ok((Tok::Num(v), i))
}

/// A name: a parameter, a keyword (`and`, `or`, `not`, `true`, `false`) or a fact of the
/// machine (`machine.vector_registers`: a dot between two letters continues a name).
fn lex_ident(chars: &[char], start: usize) -> (Tok, usize) {
    let mut i = start;
    let letter = |k: usize| chars.get(k).is_some_and(|c| c.is_alphabetic() || *c == '_');
    while i < chars.len()
        && (chars[i].is_alphanumeric() || chars[i] == '_' || (chars[i] == '.' && letter(i + 1)))
    {
        i += 1;
    }
    (Tok::Ident(chars[start..i].iter().collect()), i)
}

/// A string in the quote it starts with; a backslash takes the next character literally.
fn lex_string(chars: &[char], start: usize) -> Result<(Tok, usize), ParseError> {
    let quote = chars[start];
    let mut i = start + 1;
    let mut s = String::new();
    while i < chars.len() && chars[i] != quote {
        if chars[i] == '\\' && i + 1 < chars.len() {
            i += 1;
        }
        s.push(chars[i]);
        i += 1;
    }
    if i >= chars.len() {
        return Err(ParseError {
            col: start,
            message: "unterminated string".into(),
        });
    }
    Ok((Tok::Str(s), i + 1))
}

/// An operator, the two-character ones first (`<=` is not `<` then `=`).
fn lex_op(chars: &[char], start: usize) -> Result<(Tok, usize), ParseError> {
    let c = chars[start];
    let two: String = chars[start..(start + 2).min(chars.len())].iter().collect();
    let op = ["==", "!=", "<=", ">=", "&&", "||"]
        .into_iter()
        .find(|o| *o == two)
        .or_else(|| {
            ["<", ">", "+", "-", "*", "/", "%", "!"]
                .into_iter()
                .find(|o| o.starts_with(c))
        });
    match op {
        Some(o) => Ok((Tok::Op(o), start + o.len())),
        None => Err(ParseError {
            col: start,
            message: format!("unexpected character `{c}`"),
        }),
    }
}

struct Parser<'a, F: Fn(&str) -> Option<usize>> {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
    lookup: &'a F,
    /// Current nesting (parentheses, `not`, unary minus), bounded by
    /// [`MAX_EXPR_DEPTH`] so that no input can overflow the stack.
    depth: usize,
}

impl<F: Fn(&str) -> Option<usize>> Parser<'_, F> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.1)
    }
    fn col(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |t| t.0)
    }
    fn err<T>(&self, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            col: self.col(),
            message: message.into(),
        })
    }
    fn eat_op(&mut self, names: &[&str]) -> Option<&'static str> {
        let found = match self.peek() {
            Some(Tok::Op(o)) if names.contains(o) => Some(*o),
            Some(Tok::Ident(w)) if names.contains(&w.as_str()) => {
                ["or", "and", "not"].into_iter().find(|k| k == w)
            }
            _ => None,
        };
        if found.is_some() {
            self.pos += 1;
        }
        found
    }
    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.and()?;
        while self.eat_op(&["||", "or"]).is_some() {
            let r = self.and()?;
            l = Expr::Bin(Op::Or, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.not()?;
        while self.eat_op(&["&&", "and"]).is_some() {
            let r = self.not()?;
            l = Expr::Bin(Op::And, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.eat_op(&["!", "not"]).is_some() {
            let e = self.nested(|p| p.not())?;
            return Ok(Expr::Not(Box::new(e)));
        }
        self.cmp()
    }
    /// Parses one level deeper, refusing to go past [`MAX_EXPR_DEPTH`].
    fn nested(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<Expr, ParseError>,
    ) -> Result<Expr, ParseError> {
        if self.depth >= MAX_EXPR_DEPTH {
            return self.err(format!(
                "the expression nests more than {MAX_EXPR_DEPTH} levels deep"
            ));
        }
        self.depth += 1;
        let e = f(self);
        self.depth -= 1;
        e
    }
    fn cmp(&mut self) -> Result<Expr, ParseError> {
        let l = self.sum()?;
        let op = match self.eat_op(&["==", "!=", "<", "<=", ">", ">="]) {
            Some("==") => Op::Eq,
            Some("!=") => Op::Ne,
            Some("<") => Op::Lt,
            Some("<=") => Op::Le,
            Some(">") => Op::Gt,
            Some(">=") => Op::Ge,
            _ => return Ok(l),
        };
        let r = self.sum()?;
        Ok(Expr::Bin(op, Box::new(l), Box::new(r)))
    }
    fn sum(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.prod()?;
        while let Some(o) = self.eat_op(&["+", "-"]) {
            let r = self.prod()?;
            let op = if o == "+" { Op::Add } else { Op::Sub };
            l = Expr::Bin(op, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn prod(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.unary()?;
        while let Some(o) = self.eat_op(&["*", "/", "%"]) {
            let r = self.unary()?;
            let op = match o {
                "*" => Op::Mul,
                "/" => Op::Div,
                _ => Op::Rem,
            };
            l = Expr::Bin(op, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat_op(&["-"]).is_some() {
            let e = self.nested(|p| p.unary())?;
            return Ok(Expr::Neg(Box::new(e)));
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<Expr, ParseError> {
        let col = self.col();
        let tok = match self.toks.get(self.pos) {
            Some((_, t)) => t.clone(),
            None => return self.err("expected a value, found the end of the expression"),
        };
        self.pos += 1;
        match tok {
            Tok::Num(v) => Ok(Expr::Lit(Val::Num(v))),
            Tok::Str(s) => Ok(Expr::Lit(Val::Str(s))),
            Tok::Ident(w) if w == "true" => Ok(Expr::Lit(Val::Bool(true))),
            Tok::Ident(w) if w == "false" => Ok(Expr::Lit(Val::Bool(false))),
            Tok::Ident(w) if w.starts_with(MACHINE) => match Host::read().fact(&w[MACHINE.len()..])
            {
                Ok(v) => Ok(Expr::Lit(Val::Num(v as f64))),
                Err(message) => Err(ParseError { col, message }),
            },
            Tok::Ident(w) => match (self.lookup)(&w) {
                Some(i) => Ok(Expr::Param(i)),
                None => Err(ParseError {
                    col,
                    message: format!("unknown parameter `{w}`"),
                }),
            },
            Tok::LParen => {
                let e = self.nested(|p| p.or())?;
                if self.peek() != Some(&Tok::RParen) {
                    return self.err("expected `)`");
                }
                self.pos += 1;
                Ok(e)
            }
            Tok::RParen => Err(ParseError {
                col,
                message: "unexpected `)`".into(),
            }),
            Tok::Op(o) => Err(ParseError {
                col,
                message: format!("unexpected `{o}`"),
            }),
        }
    }
}

/// The prefix of a fact of the machine ([`crate::host`]), read when the expression is parsed.
const MACHINE: &str = "machine.";

/// The most tokens in one expression: with this bound and [`MAX_EXPR_DEPTH`], neither the
/// parser nor the evaluator can recurse deeply enough to overflow a stack.
const MAX_EXPR_TOKENS: usize = 1000;

/// Parses `src`, resolving parameter names with `lookup`.
pub fn parse(src: &str, lookup: &impl Fn(&str) -> Option<usize>) -> Result<Expr, ParseError> {
    let toks = lex(src)?;
    if let Some((col, _)) = toks.get(MAX_EXPR_TOKENS) {
        return Err(ParseError {
            col: *col,
            message: format!("the expression is longer than {MAX_EXPR_TOKENS} tokens"),
        });
    }
    let mut p = Parser {
        toks,
        pos: 0,
        end: src.chars().count(),
        lookup,
        depth: 0,
    };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return p.err("unexpected text after the expression");
    }
    Ok(e)
}

impl Expr {
    /// The parameters this expression reads.
    pub fn params(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Lit(_) => {}
            Expr::Param(i) => out.push(*i),
            Expr::Neg(e) | Expr::Not(e) => e.params(out),
            Expr::Bin(_, a, b) => {
                a.params(out);
                b.params(out);
            }
        }
    }

    /// Evaluates with `get` giving each parameter's value (`None` when inactive).
    /// Errors are type errors (e.g. `"a" * 2`), reported as messages.
    pub fn eval(&self, get: &impl Fn(usize) -> Option<Val>) -> Result<Val, String> {
        Ok(match self {
            Expr::Lit(v) => v.clone(),
            Expr::Param(i) => get(*i).ok_or("inactive parameter")?,
            Expr::Neg(e) => Val::Num(-num(&e.eval(get)?)?),
            Expr::Not(e) => Val::Bool(!truthy(&e.eval(get)?)),
            Expr::Bin(Op::Or, a, b) => Val::Bool(truthy(&a.eval(get)?) || truthy(&b.eval(get)?)),
            Expr::Bin(Op::And, a, b) => Val::Bool(truthy(&a.eval(get)?) && truthy(&b.eval(get)?)),
            Expr::Bin(op, a, b) => apply(*op, &a.eval(get)?, &b.eval(get)?)?,
        })
    }
}

/// An operator applied to two values already evaluated ([`Expr::eval`] short-circuits
/// `and`/`or` itself, so that a parameter the answer does not depend on is not read).
pub fn apply(op: Op, x: &Val, y: &Val) -> Result<Val, String> {
    Ok(match op {
        Op::Eq => Val::Bool(loose_eq(x, y)),
        Op::Ne => Val::Bool(!loose_eq(x, y)),
        Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            let ord = match (x, y) {
                (Val::Str(s), Val::Str(t)) => s.partial_cmp(t),
                _ => num(x)?.partial_cmp(&num(y)?),
            }
            .ok_or("comparison with NaN")?;
            use std::cmp::Ordering::*;
            Val::Bool(match op {
                Op::Lt => ord == Less,
                Op::Le => ord != Greater,
                Op::Gt => ord == Greater,
                _ => ord != Less,
            })
        }
        Op::Add => Val::Num(num(x)? + num(y)?),
        Op::Sub => Val::Num(num(x)? - num(y)?),
        Op::Mul => Val::Num(num(x)? * num(y)?),
        Op::Div => Val::Num(num(x)? / num(y)?),
        Op::Rem => Val::Num(num(x)? % num(y)?),
        Op::Or => Val::Bool(truthy(x) || truthy(y)),
        Op::And => Val::Bool(truthy(x) && truthy(y)),
    })
}

/// The number a value stands for (booleans as 0/1, strings parsed).
pub fn num(v: &Val) -> Result<f64, String> {
    match v {
        Val::Num(x) => Ok(*x),
        Val::Bool(b) => Ok(*b as u8 as f64),
        Val::Str(s) => s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a number")),
    }
}

/// Whether a value counts as true (nonzero, non-empty).
pub fn truthy(v: &Val) -> bool {
    match v {
        Val::Bool(b) => *b,
        Val::Num(x) => *x != 0.0,
        Val::Str(s) => !s.is_empty(),
    }
}

fn loose_eq(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Str(s), Val::Str(t)) => s == t,
        (Val::Num(_), _) | (_, Val::Num(_)) => match (num(a), num(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        },
        _ => truthy(a) == truthy(b) && !matches!((a, b), (Val::Str(_), _) | (_, Val::Str(_))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &str) -> Option<usize> {
        ["P0", "P1", "P10", "S"].iter().position(|x| *x == n)
    }

    fn ev(src: &str, vals: &[Val]) -> Val {
        let e = parse(src, &names).unwrap();
        e.eval(&|i| vals.get(i).cloned()).unwrap()
    }

    #[test]
    fn deep_or_long_expressions_are_refused_not_overflowed() {
        let look = |n: &str| (n == "P0").then_some(0);
        let deep = format!("{}P0{}", "(".repeat(300), ")".repeat(300));
        let e = parse(&deep, &look).unwrap_err();
        assert!(e.message.contains("nests more than"), "{}", e.message);
        let deeper = format!("{}P0{}", "(".repeat(7000), ")".repeat(7000));
        assert!(parse(&deeper, &look).is_err());
        let nots = format!("{}true", "not ".repeat(5000));
        assert!(parse(&nots, &look).is_err());
        let long = vec!["P0"; 3000].join(" + ");
        let e = parse(&long, &look).unwrap_err();
        assert!(e.message.contains("longer than"), "{}", e.message);
        assert!(parse(
            &format!("{}P0{} < 3", "(".repeat(50), ")".repeat(50)),
            &look
        )
        .is_ok());
    }

    #[test]
    fn a_fact_of_the_machine_is_a_number_and_an_unknown_one_an_error_at_its_column() {
        let cores = Host::read().cores as f64;
        assert_eq!(
            ev("P0 <= machine.cores", &[Val::Num(cores)]),
            Val::Bool(true)
        );
        assert_eq!(ev("machine.cores * 2", &[]), Val::Num(2.0 * cores));
        let e = parse("P0 * P1 <= machine.registers", &names).unwrap_err();
        assert_eq!(e.col, 11);
        assert!(
            e.message.contains("machine.vector_registers"),
            "{}",
            e.message
        );
        // A dot before a digit is not part of a name: `P0.5` is no name.
        assert!(parse("P0.5", &names).is_err());
    }

    #[test]
    fn arithmetic_and_comparison() {
        let v = [
            Val::Num(64.0),
            Val::Num(128.0),
            Val::Num(3.0),
            Val::Str("x".into()),
        ];
        assert_eq!(ev("P0 * P1 <= 8192", &v), Val::Bool(true));
        assert_eq!(ev("P0 * P1 < 8192", &v), Val::Bool(false));
        assert_eq!(ev("-P10 + 2 * (1 + 2) % 4", &v), Val::Num(-1.0));
        assert_eq!(ev("S == 'x' and not P10 == 4", &v), Val::Bool(true));
        assert_eq!(
            ev("S != \"x\" || P0 >= 64 && P1 > 1e2", &v),
            Val::Bool(true)
        );
    }

    #[test]
    fn errors_name_the_column() {
        let e = parse("P0 * Q9 <= 4", &names).unwrap_err();
        assert_eq!(e.col, 5);
        assert!(e.message.contains("`Q9`"));
        assert!(parse("P0 <=", &names).is_err());
        assert!(parse("(P0", &names).is_err());
        assert!(parse("P0 $ 2", &names).is_err());
    }
}
