"""Python source → SSA IR with structured control flow, specialised on argument types: the
entry point (``lower``), and the two tables that say which function lowers each kind of
statement and expression (``STATEMENTS``, ``EXPRESSIONS``), gathered here from the modules
that define them and handed to every context (context.py), so that those modules reach each
other through the tables, never by importing each other.

The source is read (source.py) and desugared (desugar.py: loop exits as flags) first; then
each statement lowers into ops, SSA-style: names map to values in an ``env``, an ``if`` or a
loop yields the names it rebinds. Names resolve as Python resolves them: parameters and
assigned names are locals; everything else is read once, at compile time, from the closure
or the module globals. ``math`` and ``numpy`` are recognised by identity, not by name.

A node type missing from a table is refused with its name and the user's line (context.py's
``WHAT_INSTEAD`` says what to write instead, where there is a rewrite).

Example:
    >>> from srcgrad.ir.types import I64
    >>> def f(x):
    ...     s = 0.0
    ...     for i in range(3):
    ...         s += x * i
    ...     return s
    >>> print(lower(f, [I64]))
    func f(%x: i64) -> f64 {
      %s = for %i = 0 to 3 step 1 iter(%s.1 = 0.0) {
        %0 = mul %x, %i : i64
        %1 = to_f64 %0 : f64
        %s.2 = add %s.1, %1 : f64
        yield %s.2
      } : f64
      return %s
    }
"""
import ast

from .containers import dict_display, generator_expr, list_comprehension, sequence_display
from .context import Tables
from .defs import lower_function
from .expressions import attribute_expr, binop_expr, bool_op_expr, compare_expr, constant_expr, if_expr, \
    name_expr, unary_expr
from .functions import call, def_stmt, lambda_value
from .indexing import subscript
from .loops import for_stmt, while_stmt
from .source import source_of     # noqa: F401  (re-exported: compiled.py imports it from here)
from .statements import ann_assign_stmt, assert_stmt, assign_stmt, aug_assign_stmt, break_stmt, continue_stmt, \
    expr_stmt, if_stmt, return_stmt

STATEMENTS = {
    ast.Assign: assign_stmt, ast.AugAssign: aug_assign_stmt, ast.AnnAssign: ann_assign_stmt,
    ast.If: if_stmt, ast.For: for_stmt, ast.While: while_stmt, ast.FunctionDef: def_stmt,
    ast.Expr: expr_stmt, ast.Assert: assert_stmt, ast.Return: return_stmt,
    ast.Continue: continue_stmt, ast.Break: break_stmt,
}

EXPRESSIONS = {
    ast.Constant: constant_expr, ast.Name: name_expr, ast.BinOp: binop_expr, ast.UnaryOp: unary_expr,
    ast.Compare: compare_expr, ast.BoolOp: bool_op_expr, ast.IfExp: if_expr, ast.Attribute: attribute_expr,
    ast.Subscript: subscript, ast.Call: call, ast.Lambda: lambda_value,
    ast.Tuple: sequence_display, ast.List: sequence_display, ast.Dict: dict_display,
    ast.ListComp: list_comprehension, ast.GeneratorExp: generator_expr,
}

TABLES = Tables(STATEMENTS, EXPRESSIONS)


def lower(fn, arg_types, name=None, unit_axes=None):
    """The IR Function of ``fn`` specialised on ``arg_types`` (a list of compiler types) and, if
    given, ``unit_axes``: for each leaf parameter, the axes of size 1 of an array argument
    (``x.squeeze()`` of an argument needs them; else it raises NeedsUnitAxes)."""
    return lower_function(fn, arg_types, TABLES, name, unit_axes)
