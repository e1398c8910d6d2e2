"""Text form of the IR (``.ir``): one op a line, regions indented, values named after the
user's variables where they have one.

Example:
    func f(%x: f64) -> f64 {
      %s = mul %x, %x : f64
      return %s
    }
"""


class _Names:
    """Stable, unique printed names: the user's name, then name.1, name.2; else a counter."""

    def __init__(self):
        self.names, self.used, self.counter = {}, set(), 0

    def __call__(self, v):
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


def _attrs(op):
    shown = {k: v for k, v in op.attrs.items() if k not in ("type", "result_types", "value", "reverse_sweep")}
    return " {" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + "}" if shown else ""


def _block(block, names, indent, lines):
    for op in block.ops:
        _op(op, names, indent, lines)


def _op(op, names, indent, lines):
    pad = "  " * indent
    res = ", ".join(names(r) for r in op.results)
    lhs = f"{res} = " if res else ""
    ins = ", ".join(names(v) for v in op.operands)
    types = ", ".join(repr(r.type) for r in op.results)
    if op.prim == "const":
        value = op.attrs["value"]
        shown = f"array(shape={value.shape})" if hasattr(value, "shape") and value.shape else repr(value)
        lines.append(f"{pad}{lhs}const {shown} : {types}")
    elif not op.regions:
        lines.append(f"{pad}{lhs}{op.prim} {ins}{_attrs(op)}" + (f" : {types}" if types else ""))
    elif op.prim == "for":
        start, stop, step, *init = op.operands
        body = op.regions[0]
        i, *carried = body.args
        it = ", ".join(f"{names(a)} = {names(v)}" for a, v in zip(carried, init))
        lines.append(f"{pad}{lhs}for {names(i)} = {names(start)} to {names(stop)} step {names(step)}"
                     f" iter({it}) {{")
        _block(body, names, indent + 1, lines)
        lines.append(f"{pad}}}" + (f" : {types}" if types else ""))
    elif op.prim == "while":
        cond, body = op.regions
        it = ", ".join(f"{names(a)} = {names(v)}" for a, v in zip(cond.args, op.operands))
        lines.append(f"{pad}{lhs}while iter({it}) {{")
        _block(cond, names, indent + 1, lines)
        lines.append(f"{pad}}} do ({', '.join(names(a) for a in body.args)}) {{")
        _block(body, names, indent + 1, lines)
        lines.append(f"{pad}}}" + (f" : {types}" if types else ""))
    else:   # if
        lines.append(f"{pad}{lhs}if {ins} {{")
        _block(op.regions[0], names, indent + 1, lines)
        lines.append(f"{pad}}} else {{")
        _block(op.regions[1], names, indent + 1, lines)
        lines.append(f"{pad}}}" + (f" : {types}" if types else ""))


def format_op(op):
    lines = []
    _op(op, _Names(), 0, lines)
    return "\n".join(lines)


def format_function(fn):
    names = _Names()
    params = ", ".join(f"{names(p)}: {p.type!r}" for p in fn.params)
    results = ", ".join(repr(t) for t in fn.result_types)
    lines = [f"func {fn.name}({params}) -> {results} {{"]
    _block(fn.body, names, 1, lines)
    lines.append("}")
    return "\n".join(lines)
