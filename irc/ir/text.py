"""The IR text form: a deterministic printer and a parser that round-trips it.

Grammar (also in ARCHITECTURE.md)::

    file    := header* 'module' SYMBOL '{' graph* '}'
    header  := '#' KEY ':' TEXT NEWLINE
    graph   := 'graph' SYMBOL 'on' ('host' | 'device') '{' node* '}'
    node    := [results '='] OPNAME '(' [VALUE (',' VALUE)*] ')' [attrs]
               ':' '(' [type (',' type)*] ')' '->' outtypes meta* ['#' LOC]
    results := VALUE (',' VALUE)*
    attrs   := '{' [IDENT '=' attr (',' IDENT '=' attr)*] '}'
    attr    := INT | FLOAT | STRING | 'true' | 'false' | 'none' | SYMBOL
             | '[' [attr (',' attr)*] ']' | attrs
    outtypes:= type | '(' [type (',' type)*] ')'
    type    := DTYPE '[' [dim (',' dim)*] ']'
    dim     := INT | IDENT | '?'
    meta    := '@' ('host' | 'device') | 'col' STRING | 'scope' STRING
             | 'prov' STRING
    VALUE   := '%' NAME        SYMBOL := '@' NAME       LOC := FILE ':' LINE

One node per line.  The printer emits nodes in a stable topological order,
attributes sorted by key, placement only where it differs from the graph's.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ..diagnostics import UserError, file_error, shorten
from .graph import DEVICE, HOST, GraphRef, Loc, Module, Node, Value, copy_attr, gc_paused, is_plain_attr
from .registry import lookup
from .types import TensorType, is_dtype

# ----------------------------------------------------------------------------
# printing


# A string as JSON writes it (json.dumps(s) for a str, without its encoder
# object: a fifth of printing a module went to json.dumps).
quote = json.encoder.encode_basestring_ascii


# Float attributes repeat (means, epsilons, scales) and repr is the
# costliest step of printing them: their text is memoised.  Zeros (0.0 and
# -0.0 are equal keys) and NaN (not equal to itself) are never stored.
_FLOAT_TEXT: dict[float, str] = {}


def _float_text(x: float) -> str:
    text = _FLOAT_TEXT.get(x)
    if text is None:
        text = repr(x)      # 'nan', 'inf' and '-inf' included
        if x != 0.0 and x == x:
            if len(_FLOAT_TEXT) >= 4096:
                _FLOAT_TEXT.clear()
            _FLOAT_TEXT[x] = text
    return text


def format_attr(v: Any) -> str:
    # the common exact types first, by type (a tenth of printing a module)
    kind = type(v)
    if kind is float:
        return _float_text(v)
    if kind is int:
        return str(v)
    if kind is str:
        return quote(v)
    if kind is list:
        return _format_list(v)
    if v is None:
        return "none"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, GraphRef):
        return str(v)
    if hasattr(v, "item") and not isinstance(v, (list, tuple, dict, str)):
        return format_attr(v.item())  # numpy scalar
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return _float_text(float(v))
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(map(format_attr, v)) + "]"
    if isinstance(v, dict):
        return format_attrs(v)
    raise TypeError(f"attribute value {v!r} of type {type(v).__name__} cannot be printed")


def _format_list(v: list) -> str:
    # a list of numbers of one exact type (sizes, means) is written by repr
    # alone: a third of the time of a call per entry
    if v:
        first = type(v[0])
        if first is float or first is int:
            for x in v:
                if type(x) is not first:
                    break
            else:
                return "[" + ", ".join(map(_float_text if first is float else repr, v)) + "]"
    return "[" + ", ".join(map(format_attr, v)) + "]"


def format_attrs(attrs: dict) -> str:
    return "{" + ", ".join([f"{k} = {format_attr(attrs[k])}" for k in sorted(attrs)]) + "}"


def printed_attrs(node: Node) -> dict:
    """The node's attributes less those equal to the op's default (the parser
    fills defaults back in, so the round trip is exact)."""
    opdef = lookup(node.op)
    if opdef is None:
        return node.attrs
    defaults, missing = opdef.defaults, _MISSING
    return {k: v for k, v in node.attrs.items()
            if (d := defaults.get(k, missing)) is missing or type(d) is not type(v) or d != v}


_MISSING = object()


def format_node(graph, node: Node) -> str:
    results = node.results
    head = ("%" + ", %".join(results) + " = ") if results else ""
    names = graph.operand_names(node)
    operands = ("%" + ", %".join(names)) if names else ""
    attrs = printed_attrs(node)
    attrs = " " + format_attrs(attrs) if attrs else ""
    ins = ", ".join(map(str, node.in_types))
    outs = node.out_types
    outs = str(outs[0]) if len(outs) == 1 else "(" + ", ".join(map(str, outs)) + ")"
    line = f"{head}{node.op}({operands}){attrs} : ({ins}) -> {outs}"
    if node.placement != graph.placement:
        line += f" @{node.placement}"
    if node.column is not None:
        line += f" col {quote(node.column)}"
    if node.scope is not None:
        line += f" scope {quote(node.scope)}"
    if node.prov:
        line += f" prov {quote(','.join(node.prov))}"
    if node.loc is not None:
        line += f"  # {node.loc.file}:{node.loc.line}"
    return line


HEADER = "# irc: "    # the first line of every module irc prints: its version (meta "irc")


def is_printed_by_irc(path) -> bool:
    """Whether the file at ``path`` is IR text irc printed (its header line)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(HEADER)) == HEADER.encode()
    except OSError:
        return False


def print_module(module: Module) -> str:
    lines = [f"# {k}: {v}" for k, v in module.meta.items()]
    lines.append(f"module @{module.name} {{")
    for i, graph in enumerate(module.graphs.values()):
        if i:
            lines.append("")
        lines.append(f"  graph @{graph.name} on {graph.placement} {{")
        for node in graph.topo_order():
            lines.append("    " + format_node(graph, node))
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def node_lines(module: Module) -> dict[tuple[str, str], int]:
    """(graph, node) -> 1-based line number in ``print_module(module)``.
    The viewer uses it to link a drawn node to its line of IR text."""
    out = {}
    line = len(module.meta) + 1
    for i, graph in enumerate(module.graphs.values()):
        line += 2 if i else 1
        for node in graph.topo_order():
            line += 1
            out[(graph.name, node.name)] = line
        line += 1
    return out


# ----------------------------------------------------------------------------
# parsing

TEXT_FORM_HINT = ("irc reads the IR text irc compile writes (OUT/NN_<pass>.ir); "
                  "ARCHITECTURE.md, 'The IR text form', gives its grammar")


class ParseError(UserError):
    """A syntax or reference error at FILE:LINE:COL (a user error: exit 1,
    located, with a hint)."""

    def __init__(self, file: str, line: int, col: int, message: str, hint: str = TEXT_FORM_HINT):
        super().__init__(message, where=f"{file}:{line}:{col}", hint=hint)
        self.file, self.line, self.col = file, line, col


# Attribute values nest ('[[1, 2], {k = [3]}]'); deeper than this is not a
# module irc wrote, and parsing it would exhaust Python's stack.
MAX_NESTING = 64
# Integers are ONNX's int64 (attributes) or a dimension.
INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1


# The lexical pieces, spelled once: the token parser and the fast path for
# printed node lines (below) are built from them.
_VALUE = r"%[A-Za-z0-9_.]+"
_SYMBOL = r"@[A-Za-z0-9_.]+"
_STRING = r'"(?:[^"\\]|\\.)*"'
_TYPE_OPEN = r"[a-z][a-z0-9]*\[[^\]\s#]*"     # a type before its ']' (a missing one is reported)
_IDENT = r"[A-Za-z_][A-Za-z0-9_.]*"

# One match per token, the blanks before it included; the group that
# matched (m.lastindex) names the kind through _KINDS.
_TOKEN = re.compile(rf"""
    [ \t]*(?:
    (\#.*)
  | ({_VALUE})
  | ({_SYMBOL})
  | ({_STRING})
  | ({_TYPE_OPEN}\]?)
  | ((?:-inf|-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)(?![A-Za-z0-9_]))
  | (->)
  | ({_IDENT})
  | ([(){{}}\[\],=:?])
  | $)
""", re.VERBOSE)
_KINDS = (None, "comment", "value", "symbol", "string", "type", "number", "arrow", "ident", "punct")
_COMMENT = 1

# Tokens are (kind, text, column) tuples: the parser handles a few hundred
# thousand of them for a large graph, so they stay as light as possible.
KIND, TEXT, COL = 0, 1, 2


class _Line:
    """Tokens of one line with a cursor."""

    __slots__ = ("file", "lineno", "text", "toks", "comment", "i", "types")

    def __init__(self, file: str, lineno: int, text: str, types: dict | None = None):
        self.file, self.lineno, self.text = file, lineno, text
        # type text -> TensorType (and ("attrs", text) -> attributes), per file
        self.types = {} if types is None else types
        self.comment: str | None = None
        toks = []
        pos = 0
        end = len(text)
        for m in _TOKEN.finditer(text):
            if m.start() != pos:
                break
            group = m.lastindex
            if group is None:           # blanks up to the end of the line
                pos = end
                break
            pos = m.end()
            if group == _COMMENT:
                self.comment = m.group(group)[1:].strip()
                break
            toks.append((_KINDS[group], m.group(group), m.start(group) + 1))
        if pos != end:
            blanks = len(text) - len(text[pos:].lstrip(" \t"))
            raise ParseError(file, lineno, blanks + 1, f"unexpected character {text[blanks]!r}")
        self.toks = toks
        self.i = 0

    def error(self, expected: str) -> ParseError:
        if self.i < len(self.toks):
            kind, text, col = self.toks[self.i]
            return ParseError(self.file, self.lineno, col,
                              f"expected {expected}, found {shorten(text)!r}")
        return ParseError(self.file, self.lineno, len(self.text.rstrip()) + 1,
                          f"expected {expected}, found end of line")

    def peek(self, text: str | None = None, kind: str | None = None) -> bool:
        if self.i >= len(self.toks):
            return False
        tok = self.toks[self.i]
        return (text is None or tok[TEXT] == text) and (kind is None or tok[KIND] == kind)

    def take(self, text: str | None = None, kind: str | None = None, what: str | None = None):
        if self.i >= len(self.toks):
            raise self.error(what or (repr(text) if text else kind))
        tok = self.toks[self.i]
        if (text is not None and tok[TEXT] != text) or (kind is not None and tok[KIND] != kind):
            raise self.error(what or (repr(text) if text else kind))
        self.i += 1
        return tok

    def accept(self, text: str) -> bool:
        if self.i < len(self.toks) and self.toks[self.i][TEXT] == text:
            self.i += 1
            return True
        return False

    def at_end(self) -> bool:
        return self.i >= len(self.toks)


def _parse_int(ln: _Line, tok, low: int = INT64_MIN, what: str = "an integer") -> int:
    text = tok[TEXT]
    # a bound on the digits first: int() of a huge literal is slow, then refused
    if len(text.lstrip("-")) > 19 or not low <= int(text) <= INT64_MAX:
        raise ParseError(ln.file, ln.lineno, tok[COL],
                         f"{what} {shorten(text, 24)} is out of range ({low} to {INT64_MAX})")
    return int(text)


def _json_string(text: str) -> str:
    """The value of a JSON string literal; ValueError where JSON refuses it
    or where it is not UTF-8 (both parsers' rule for a string)."""
    value = json.loads(text)
    value.encode("utf-8")
    return value


def _parse_string(ln: _Line, what: str = "a string") -> str:
    """A JSON string literal; refused where JSON refuses it, or where it
    could not be written back as UTF-8 (a lone surrogate such as \\ud800)."""
    tok = ln.take(kind="string", what=what)
    try:
        value = _json_string(tok[TEXT])
    except ValueError as e:   # json.JSONDecodeError, UnicodeEncodeError
        reason = e.msg if isinstance(e, json.JSONDecodeError) else "a lone surrogate (not UTF-8)"
        pos = e.pos if isinstance(e, json.JSONDecodeError) else 0
        raise ParseError(ln.file, ln.lineno, tok[COL] + pos,
                         f"bad string literal: {reason}",
                         hint="strings are JSON strings: the escapes are \\\" \\\\ \\/ \\b \\f \\n "
                              "\\r \\t and \\u followed by four hex digits (\\u00e9)") from None
    return value


def _parse_attr(ln: _Line, depth: int = 0) -> Any:
    if depth > MAX_NESTING:
        tok = ln.toks[min(ln.i, len(ln.toks) - 1)]
        raise ParseError(ln.file, ln.lineno, tok[COL],
                         f"attribute value nested more than {MAX_NESTING} levels deep")
    if ln.peek(kind="number"):
        tok = ln.take()
        text = tok[TEXT]
        if text == "-inf":
            return float(text)
        return float(text) if any(c in text for c in ".eE") else _parse_int(ln, tok)
    if ln.peek(kind="string"):
        return _parse_string(ln)
    if ln.peek(kind="symbol"):
        return GraphRef(ln.take()[TEXT][1:])
    if ln.accept("true"):
        return True
    if ln.accept("false"):
        return False
    if ln.accept("none"):
        return None
    if ln.accept("nan"):
        return float("nan")
    if ln.accept("inf"):          # an identifier to the lexer, like nan
        return float("inf")
    if ln.accept("["):
        items = []
        if not ln.accept("]"):
            while True:
                items.append(_parse_attr(ln, depth + 1))
                if ln.accept("]"):
                    break
                ln.take(",", what="',' or ']'")
        return items
    if ln.peek("{"):
        return _parse_attrs(ln, depth + 1)
    raise ln.error("an attribute value")


def _parse_attrs(ln: _Line, depth: int = 0) -> dict:
    ln.take("{")
    out: dict = {}
    if ln.accept("}"):
        return out
    while True:
        key = ln.take(kind="ident", what="an attribute name")
        if key[TEXT] in out:
            raise ParseError(ln.file, ln.lineno, key[COL], f"attribute {key[TEXT]!r} given twice")
        ln.take("=", what="'='")
        out[key[TEXT]] = _parse_attr(ln, depth)
        if ln.accept("}"):
            return out
        ln.take(",", what="',' or '}'")


_DIM = re.compile(r"\d+|[A-Za-z_][A-Za-z0-9_]*|\?")


def _parse_type(ln: _Line) -> TensorType:
    tok = ln.take(kind="type", what="a type such as f32[N,3,32,32]")
    # A module spells few distinct types: each text is checked once per parse.
    known = ln.types.get(tok[TEXT])
    if known is None:
        known = ln.types[tok[TEXT]] = _check_type(ln, tok)
    return known


def _check_type(ln: _Line, tok) -> TensorType:
    kind, text, col = tok
    dtype, _, rest = text.partition("[")
    if not is_dtype(dtype):
        raise ParseError(ln.file, ln.lineno, col, f"unknown dtype {dtype!r}")
    if not rest.endswith("]"):
        raise ParseError(ln.file, ln.lineno, col + len(text), "expected ',' or ']' to close the shape")
    dims: list = []
    offset = col + len(dtype) + 1
    if rest != "]":
        for part in rest[:-1].split(","):
            if not _DIM.fullmatch(part):
                raise ParseError(ln.file, ln.lineno, offset,
                                 f"expected a dimension (number, symbol or '?'), found {part!r}")
            dims.append(_parse_int(ln, ("number", part, offset), 0, "dimension")
                        if part.isdigit() else part)
            offset += len(part) + 1
    return TensorType(dtype, tuple(dims))


def _parse_type_list(ln: _Line) -> list[TensorType]:
    ln.take("(", what="'('")
    types: list[TensorType] = []
    if ln.accept(")"):
        return types
    while True:
        types.append(_parse_type(ln))
        if ln.accept(")"):
            return types
        ln.take(",", what="',' or ')'")


def _parse_node(ln: _Line, graph, values: dict[str, Value]) -> None:
    results: list[tuple] = []
    if ln.peek(kind="value"):
        while True:
            results.append(ln.take(kind="value"))
            if ln.accept("="):
                break
            ln.take(",", what="',' or '='")
    op_tok = ln.take(kind="ident", what="an op name")
    opdef = lookup(op_tok[TEXT])
    if opdef is None:
        raise ParseError(ln.file, ln.lineno, op_tok[COL], f"unknown op {op_tok[TEXT]!r}")
    ln.take("(", what="'('")
    operands: list[Value] = []
    if not ln.accept(")"):
        while True:
            tok = ln.take(kind="value", what="an operand like %x")
            if tok[TEXT][1:] not in values:
                raise ParseError(ln.file, ln.lineno, tok[COL],
                                 f"use of undefined value {tok[TEXT]} (values must be defined before use)")
            operands.append(values[tok[TEXT][1:]])
            if ln.accept(")"):
                break
            ln.take(",", what="',' or ')'")
    attrs = _parse_attrs(ln) if ln.peek("{") else {}
    ln.take(":", what="':' and the op's type")
    in_types = _parse_type_list(ln)
    ln.take("->", what="'->'")
    out_types = _parse_type_list(ln) if ln.peek("(") else [_parse_type(ln)]
    if len(out_types) != len(results):
        raise ParseError(ln.file, ln.lineno, op_tok[COL],
                         f"{len(results)} results but {len(out_types)} result types")
    if len(in_types) != len(operands):
        raise ParseError(ln.file, ln.lineno, op_tok[COL],
                         f"{len(operands)} operands but {len(in_types)} operand types")
    placement, column, scope, prov = graph.placement, None, None, []
    while not ln.at_end():
        if ln.peek(kind="symbol"):
            tok = ln.take()
            if tok[TEXT][1:] not in (HOST, DEVICE):
                raise ParseError(ln.file, ln.lineno, tok[COL], "placement must be @host or @device")
            placement = tok[TEXT][1:]
        elif ln.accept("col"):
            column = _parse_string(ln, "a column name string")
        elif ln.accept("scope"):
            scope = _parse_string(ln, "a scope string")
        elif ln.accept("prov"):
            prov = _parse_string(ln, "a provenance string").split(",")
        else:
            raise ln.error("'@host', '@device', 'col', 'scope', 'prov' or '# file:line'")
    loc = None
    if ln.comment:
        m = re.fullmatch(r"(.+):(\d{1,9})", ln.comment)
        if not m:
            raise ParseError(ln.file, ln.lineno, ln.text.index("#") + 1,
                             "expected '# FILE:LINE' after the node")
        loc = Loc(m.group(1), int(m.group(2)))
    try:
        attrs = opdef.normalize_attrs(attrs)
    except KeyError as e:
        raise ParseError(ln.file, ln.lineno, op_tok[COL], str(e.args[0])) from None
    for tok in results:
        if tok[TEXT][1:] in values:
            raise ParseError(ln.file, ln.lineno, tok[COL], f"value {tok[TEXT]} is defined twice")
    _add_parsed_node(graph, values, ln.file, ln.lineno, op_tok[COL], op_tok[TEXT], operands,
                     attrs, in_types, out_types, [t[TEXT][1:] for t in results],
                     placement=placement, column=column, loc=loc, scope=scope, prov=prov)


def _add_parsed_node(graph, values: dict[str, Value], file: str, lineno: int, col: int, op: str,
                     operands: list[Value], attrs: dict, in_types: list[TensorType],
                     out_types: list[TensorType], results: list[str], **meta) -> None:
    """Add the node of a parsed line (its attributes normalised) and name its results."""
    try:
        node = graph.add(op, operands, attrs, out_types=out_types, names=results,
                         exact_names=True, attrs_normalized=True, **meta)
    except ValueError as e:
        raise ParseError(file, lineno, col, str(e)) from None
    # Keep the operand types as written: the verifier compares them with the
    # producers' result types.
    node.in_types = in_types
    node.defined_at = Loc(file, lineno)
    for i, name in enumerate(results):
        values[name] = Value(node.name, i)


# The fast path: a node line exactly as the printer writes it, matched by
# one expression.  Anything else (other spacing, metadata in another order,
# any error) goes to the token parser, which owns every message.
_PRINTED_NODE = re.compile(rf"""
    [ ]{{4}}(?:(?P<results>{_VALUE}(?:,[ ]{_VALUE})*)[ ]=[ ])?
    (?P<op>{_IDENT})\((?P<operands>(?:{_VALUE}(?:,[ ]{_VALUE})*)?)\)
    (?:\ (?P<attrs>\{{.*?\}}))?
    \ :\ \((?P<ins>[^()]*)\)\ ->\ (?:\((?P<outs>[^()]*)\)|(?P<out>[^\s()]+))
    (?:\ @(?P<placement>host|device))?
    (?:\ col\ (?P<col>{_STRING}))?(?:\ scope\ (?P<scope>{_STRING}))?
    (?:\ prov\ (?P<prov>{_STRING}))?
    (?:\ \ \#\ (?P<file>\S.*):(?P<line>\d{{1,9}}))?""", re.VERBOSE)
_TYPE_TOKEN = re.compile(rf"{_TYPE_OPEN}\]")


class _NotPrinted(Exception):
    """A line the fast path leaves to the token parser."""


def _parse_printed_node(file: str, lineno: int, raw: str, graph, values: dict[str, Value],
                        types: dict[str, TensorType]) -> bool:
    """Add the node of a line in the printer's own form; False (nothing
    changed) for any other line."""
    m = _PRINTED_NODE.fullmatch(raw)
    if m is None:
        return False
    try:
        node, operands = _printed_node(file, lineno, m, graph, values, types)
    except (_NotPrinted, ParseError, KeyError):
        return False
    graph.insert(node, operands)
    for i, name in enumerate(node.results):
        values[name] = Value(node.name, i)
    return True


def _printed_node(file, lineno, m, graph, values, types) -> tuple[Node, list[Value]]:
    """The node of a printed line and its operands, checked as the token
    parser and graph.add check them (_NotPrinted, ParseError or KeyError
    where they would refuse)."""
    (results, op, operands, attrs, ins, outs, out,
     placement, col, scope, prov, loc_file, loc_line) = m.groups()
    opdef = lookup(op)
    results = results[1:].split(", %") if results else []
    operands = [values[name] for name in operands[1:].split(", %")] if operands else []
    in_types, out_types = _printed_signature(ins, outs, out, types)
    if (opdef is None or len(out_types) != len(results) or len(in_types) != len(operands)
            or not results or results[0] in graph.nx._node
            or (len(results) > 1 and len(set(results)) != len(results))):
        raise _NotPrinted
    value_names = graph._value_names
    for r in results:
        if r in values or r in value_names:
            raise _NotPrinted
    node = Node(name=results[0], op=op, attrs=_printed_attrs(file, lineno, opdef, attrs, types),
                results=results, out_types=out_types, in_types=in_types,
                placement=placement or graph.placement,
                column=_printed_string(col, types), loc=Loc(loc_file, int(loc_line)) if loc_file else None,
                scope=_printed_string(scope, types),
                prov=_printed_string(prov, types).split(",") if prov else [],
                defined_at=Loc(file, lineno))
    return node, operands


def _printed_attrs(file: str, lineno: int, opdef, text: str | None, known: dict) -> dict:
    """The attributes ``{...}`` (None: none written), normalised for the op;
    a text seen before on the same op (ops repeat their attributes) is
    parsed and normalised once, then copied: the dict, and the values that
    are not plain (lists, dicts)."""
    key = ("attrs", opdef.name, text)
    seen = known.get(key)
    if seen is None:
        parsed = {}
        if text is not None:
            ln = _Line(file, lineno, text, known)
            parsed = _parse_attrs(ln)
            if not ln.at_end() or ln.comment is not None:
                raise _NotPrinted
        parsed = opdef.normalize_attrs(parsed)
        seen = known[key] = (parsed, [k for k, v in parsed.items() if not is_plain_attr(v)])
    parsed, nested = seen
    attrs = parsed.copy()
    for k in nested:
        attrs[k] = copy_attr(parsed[k])
    return attrs


def _printed_signature(ins: str, outs: str | None, out: str | None,
                       types: dict) -> tuple[list[TensorType], list[TensorType]]:
    """The operand and result types of ``(ins) -> outs``; nodes repeat
    their signatures, each is read once (fresh lists for each node)."""
    key = ("signature", ins, outs, out)
    known = types.get(key)
    if known is None:
        known = types[key] = (
            [_printed_type(t, types) for t in ins.split(", ")] if ins else [],
            [_printed_type(out, types)] if out
            else [_printed_type(t, types) for t in outs.split(", ")] if outs else [])
    return list(known[0]), list(known[1])


def _printed_type(text: str, types: dict[str, TensorType]) -> TensorType:
    known = types.get(text)
    if known is None:
        if not _TYPE_TOKEN.fullmatch(text):
            raise _NotPrinted
        known = types[text] = _check_type(_Line("", 0, ""), ("type", text, 1))
    return known


def _printed_string(text: str | None, known: dict) -> str | None:
    """A quoted string (a column, scope or provenance: they repeat), decoded once."""
    if text is None:
        return None
    key = ("string", text)
    value = known.get(key)
    if value is None:
        try:
            value = known[key] = _json_string(text)
        except ValueError:
            raise _NotPrinted from None
    return value


def _lines(text: str) -> list[str]:
    """The text's lines as editors number them: split at '\n' only (a form
    feed or U+2028 is a character the tokenizer refuses, not a line break),
    a CRLF file's '\r' dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def parse_module(text: str, file: str = "<string>") -> Module:
    with gc_paused():
        return _parse_module(text, file)


def _parse_module(text: str, file: str) -> Module:
    module: Module | None = None
    graph = None
    values: dict[str, Value] = {}
    meta: dict[str, str] = {}
    closed = False
    lines = _lines(text)
    types: dict[str, TensorType] = {}
    for lineno, raw in enumerate(lines, 1):
        if graph is not None and _parse_printed_node(file, lineno, raw, graph, values, types):
            continue
        ln = _Line(file, lineno, raw, types)
        if not ln.toks:
            if module is None and ln.comment is not None:
                key, sep, value = ln.comment.partition(": ")
                if sep and re.fullmatch(r"[A-Za-z0-9_.-]+", key):
                    meta[key] = value
            continue
        if closed:
            raise ParseError(file, lineno, ln.toks[0][COL], "text after the end of the module")
        if module is None:
            ln.take("module", what="'module @name {'")
            name = ln.take(kind="symbol", what="the module's @name")[TEXT][1:]
            ln.take("{", what="'{'")
            module = Module(name, meta=meta)
        elif graph is None:
            if ln.accept("}"):
                closed = True
                continue
            ln.take("graph", what="'graph @name on host|device {' or '}'")
            sym = ln.take(kind="symbol", what="the graph's @name")
            ln.take("on", what="'on'")
            place = ln.take(kind="ident", what="'host' or 'device'")
            if place[TEXT] not in (HOST, DEVICE):
                raise ParseError(file, lineno, place[COL], "expected 'host' or 'device'")
            ln.take("{", what="'{'")
            if sym[TEXT][1:] in module.graphs:
                raise ParseError(file, lineno, sym[COL], f"graph {sym[TEXT]} is defined twice")
            graph = module.add_graph(sym[TEXT][1:], place[TEXT])
            graph.defined_at = Loc(file, lineno)
            values = {}
        elif ln.accept("}"):
            graph = None
        else:
            _parse_node(ln, graph, values)
            if not ln.at_end():
                raise ln.error("end of line")
        if not ln.at_end():
            raise ln.error("end of line")
    if module is None:
        raise ParseError(file, 1, 1, "expected 'module @name {', found an empty file")
    if graph is not None or not closed:
        raise ParseError(file, len(lines), 1, "expected '}': the module is not closed",
                         hint="the file is cut short, or a '}' was deleted")
    return module


def parse_file(path) -> Module:
    """Parse an .ir file; a file that cannot be read, or is not UTF-8 text,
    is a located UserError like any syntax error."""
    from pathlib import Path
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise file_error(path, e) from None
    return parse_module(decode_text(data, str(path)), str(path))


_NOT_TEXT_HINT = "irc reads the IR text irc compile writes (OUT/NN_<pass>.ir), in UTF-8"


def decode_text(data: bytes, file: str) -> str:
    """A file's bytes as UTF-8 text; binary data or another encoding is a
    ParseError at the first byte that is not UTF-8 text."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ParseError(file, 1, 1, "the file is UTF-16 text, irc reads UTF-8",
                         hint=f"convert it: iconv -f UTF-16 -t UTF-8 {file} > NEW.ir")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]      # a UTF-8 byte-order mark, as some editors write
    bad = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = e.start if bad < 0 else min(bad, e.start)
    else:
        if bad < 0:
            return text
    line = data.count(b"\n", 0, bad) + 1
    col = bad - (data.rfind(b"\n", 0, bad) + 1) + 1
    raise ParseError(file, line, col, f"not IR text: byte 0x{data[bad]:02x} is not text in UTF-8 "
                     f"(a binary file?)", hint=_NOT_TEXT_HINT)
