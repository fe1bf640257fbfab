"""A problem file's `constraints:` expressions, for the peers' harness (standard library only).

The grammar and values are moldtune's (src/problem/expr.rs, docs/problem-file.md): `or`/`||`,
`and`/`&&`, `not`/`!`, comparisons `== != < <= > >=`, `+ - * / %`, unary `-`, parentheses,
numbers, "strings" or 'strings', `true`/`false` and parameter names. A parameter's value is
typed as moldtune types it (`Constraint`); `==` compares numbers as numbers when either side
is one; a value is true when nonzero and non-empty. A configuration
satisfies a constraint when it evaluates to true; an error (an inactive parameter, a string
where a number is needed) counts as not satisfied, as moldtune's sampler refuses it.

    c = Constraint("P0 * P1 <= 12800", ["P0", "P1"])
    c.holds({"P0": 128.0, "P1": 4.0})   # True
"""
from __future__ import annotations

import math
import re

TOKEN = re.compile(r"""\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|("[^"]*"|'[^']*')|
                       ([A-Za-z_][A-Za-z0-9_]*)|(\|\||&&|==|!=|<=|>=|[-+*/%()<>!]))""", re.X)


class Invalid(Exception):
    """An expression that cannot be evaluated for a configuration."""


def tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read {text[pos:]!r} in constraint {text!r}")
        num, string, name, op = m.groups()
        if num is not None:
            out.append(("num", num))
        elif string is not None:
            out.append(("str", string[1:-1]))
        elif name in ("and", "or", "not"):
            out.append(("op", {"and": "&&", "or": "||", "not": "!"}[name]))
        elif name is not None:
            out.append(("name", name))
        else:
            out.append(("op", op))
        pos = m.end()
    return out


def number(v) -> float:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, float):
        return v
    try:
        return float(v.strip())
    except ValueError:
        raise Invalid(f"`{v}` is not a number") from None


def truthy(v) -> bool:
    return v if isinstance(v, bool) else (v != 0.0 if isinstance(v, float) else v != "")


def loose_eq(a, b) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, float) or isinstance(b, float):
        try:
            return number(a) == number(b)
        except Invalid:
            return False
    if isinstance(a, str) or isinstance(b, str):
        return False
    return truthy(a) == truthy(b)


def compare(op: str, a, b) -> bool:
    x, y = (a, b) if isinstance(a, str) and isinstance(b, str) else (number(a), number(b))
    if x != x or y != y:
        raise Invalid("comparison with NaN")
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def arith(op: str, x: float, y: float) -> float:
    """IEEE arithmetic, as Rust's f64 (a division by zero is infinite or NaN, not an error)."""
    if op in "/%" and y == 0:
        return math.nan if (op == "%" or x == 0 or x != x) else math.copysign(math.inf, x)
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    return x / y if op == "/" else math.fmod(x, y)


class Constraint:
    """One expression, parsed once; `holds(values)` with each active parameter's value typed
    as moldtune types it (a number for a numeric ordinal, integer or real; a string for a
    categorical or a text ordinal; a bool for a boolean) and None for an inactive one."""

    def __init__(self, text: str, names: list[str]):
        self.text = text
        self.toks, self.pos = tokens(text), 0
        self.tree = self.disjunction()
        if self.pos != len(self.toks):
            raise ValueError(f"constraint {text!r}: unexpected {self.toks[self.pos][1]!r}")
        for kind, t in self.toks:
            if kind == "name" and t not in ("true", "false") and t not in names:
                raise ValueError(f"constraint {text!r} names `{t}`, which is not a parameter")

    def holds(self, values: dict) -> bool:
        try:
            return truthy(self.eval(self.tree, values))
        except Invalid:
            return False

    def eval(self, node, values):
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "name":
            v = values.get(node[1])
            if v is None:
                raise Invalid(f"`{node[1]}` is inactive")
            return v
        if kind == "neg":
            return -number(self.eval(node[1], values))
        if kind == "not":
            return not truthy(self.eval(node[1], values))
        op, a, b = node[1], node[2], node[3]
        if op == "||":  # short-circuit: a parameter the answer does not depend on is not read
            return truthy(self.eval(a, values)) or truthy(self.eval(b, values))
        if op == "&&":
            return truthy(self.eval(a, values)) and truthy(self.eval(b, values))
        x, y = self.eval(a, values), self.eval(b, values)
        if op in ("==", "!="):
            return loose_eq(x, y) == (op == "==")
        if op in ("<", "<=", ">", ">="):
            return compare(op, x, y)
        return arith(op, number(x), number(y))

    # Recursive descent, loosest first: or, and, not, comparison, sum, product, unary, atom.
    def peek(self):
        return self.toks[self.pos] if self.pos < len(self.toks) else ("end", "")

    def take(self, *ops):
        kind, t = self.peek()
        if kind == "op" and t in ops:
            self.pos += 1
            return t
        return None

    def binary(self, ops, operand):
        node = operand()
        while (op := self.take(*ops)):
            node = ("bin", op, node, operand())
        return node

    def disjunction(self):
        return self.binary(("||",), self.conjunction)

    def conjunction(self):
        return self.binary(("&&",), self.negation)

    def negation(self):
        if self.take("!"):
            return ("not", self.negation())
        return self.comparison()

    def comparison(self):
        node = self.sum()
        op = self.take("==", "!=", "<", "<=", ">", ">=")
        return ("bin", op, node, self.sum()) if op else node

    def sum(self):
        return self.binary(("+", "-"), self.product)

    def product(self):
        return self.binary(("*", "/", "%"), self.unary)

    def unary(self):
        if self.take("-"):
            return ("neg", self.unary())
        return self.atom()

    def atom(self):
        kind, t = self.peek()
        self.pos += 1
        if kind == "num":
            return ("lit", float(t))
        if kind == "str":
            return ("lit", t)
        if kind == "name":
            return ("lit", t == "true") if t in ("true", "false") else ("name", t)
        if kind == "op" and t == "(":
            node = self.disjunction()
            if not self.take(")"):
                raise ValueError(f"constraint {self.text!r}: `)` missing")
            return node
        raise ValueError(f"constraint {self.text!r}: unexpected {t or 'end'!r}")
