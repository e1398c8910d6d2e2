"""Text form of the IR (``.ir``): one op a line, regions indented, values named after the
user's variables where they have one, scalar constants written where they are used (so a
line says what it computes: ``gt %s, 1.0``), and with ``locs`` the user's source line above
the ops made from it.

Example:
    func f(%x: f64) -> f64 {
      %s = mul %x, %x : f64
      %0 = add %s, 1.0 : f64
      return %0
    }
"""
import linecache


class _Names:
    """Stable, unique printed names: the user's name, then name.1, name.2; else a counter."""

    def __init__(self):
        self.names, self.used, self.counter = {}, set(), 0

    def __call__(self, v):
        literal = _literal(v)
        if literal is not None:
            return literal
        n = self.names.get(v)
        if n is None:
            if v.name:
                n, k = v.name, 1
                while n in self.used:
                    n, k = f"{v.name}.{k}", k + 1
            else:
                n = str(self.counter)
                self.counter += 1
                while n in self.used:
                    n = str(self.counter)
                    self.counter += 1
            self.used.add(n)
            self.names[v] = n
        return "%" + n


def _literal(v):
    """The text of a scalar constant, written in place of its name; None for other values."""
    op = v.owner
    if op is None or op.prim != "const" or hasattr(op.attrs["value"], "shape"):
        return None
    return repr(op.attrs["value"])


def _attrs(op):
    hidden = ("type", "result_types") + (("value",) if op.prim == "const" else ())
    shown = {k: v for k, v in op.attrs.items() if k not in hidden}
    return " {" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + "}" if shown else ""


class _Lines(list):
    """The printed lines; with ``locs``, each source line the ops come from is printed above
    the first of them, as a comment."""

    def __init__(self, locs=False):
        super().__init__()
        self.locs, self.last = locs, None

    def source(self, op, pad):
        loc = op.loc and op.loc.outermost()      # an inlined helper's ops: under the line calling it
        if not self.locs or loc is None or (loc.file, loc.line) == self.last:
            return
        self.last = (loc.file, loc.line)
        text = linecache.getline(loc.file, loc.line).strip()
        self.append(f"{pad}# line {loc.line}: {text}" if text else f"{pad}# line {loc.line}")


def _block(block, names, indent, lines):
    for op in block.ops:
        _op(op, names, indent, lines)


def _op(op, names, indent, lines):
    if op.prim == "const" and _literal(op.results[0]) is not None:
        return          # written where it is used
    pad = "  " * indent
    lines.source(op, pad)
    res = ", ".join(names(r) for r in op.results)
    lhs = f"{res} = " if res else ""
    ins = ", ".join(names(v) for v in op.operands)
    types = ", ".join(repr(r.type) for r in op.results)
    if op.prim == "const":
        value = op.attrs["value"]
        shown = f"array(shape={value.shape})" if hasattr(value, "shape") and value.shape else repr(value)
        lines.append(f"{pad}{lhs}const {shown} : {types}")
    elif not op.regions:
        head = f"{op.prim} {ins}" if ins else op.prim
        lines.append(f"{pad}{lhs}{head}{_attrs(op)}" + (f" : {types}" if types else ""))
    elif op.prim == "for":
        start, stop, step = op.bounds
        it = ", ".join(f"{names(a)} = {names(v)}" for a, v in zip(op.carried, op.inits))
        lines.append(f"{pad}{lhs}for {names(op.index)} = {names(start)} to {names(stop)} step {names(step)}"
                     f" iter({it}){_attrs(op)} {{")
        _block(op.body, names, indent + 1, lines)
        lines.append(f"{pad}}}" + (f" : {types}" if types else ""))
    elif op.prim == "while":
        cond, body = op.test, op.body
        it = ", ".join(f"{names(a)} = {names(v)}" for a, v in zip(cond.args, op.inits))
        lines.append(f"{pad}{lhs}while iter({it}) {{")
        _block(cond, names, indent + 1, lines)
        lines.append(f"{pad}}} do ({', '.join(names(a) for a in body.args)}) {{")
        _block(body, names, indent + 1, lines)
        lines.append(f"{pad}}}" + (f" : {types}" if types else ""))
    else:   # if
        lines.append(f"{pad}{lhs}if {ins} {{")
        _block(op.then, names, indent + 1, lines)
        lines.append(f"{pad}}} else {{")
        _block(op.orelse, names, indent + 1, lines)
        lines.append(f"{pad}}}" + (f" : {types}" if types else ""))


def format_op(op):
    if op.prim == "const":
        return f"{_Names()(op.results[0])} = const {op.attrs['value']!r} : {op.results[0].type!r}"
    lines = _Lines()
    _op(op, _Names(), 0, lines)
    return "\n".join(lines)


def format_function(fn, locs=False):
    """The text of ``fn``; with ``locs``, the user's source lines as comments above their ops."""
    names = _Names()
    params = ", ".join(f"{names(p)}: {p.type!r}" for p in fn.params)
    results = ", ".join(repr(t) for t in fn.result_types)
    lines = _Lines(locs)
    lines.append(f"func {fn.name}({params}) -> {results} {{")
    _block(fn.body, names, 1, lines)
    lines.append("}")
    return "\n".join(lines)
