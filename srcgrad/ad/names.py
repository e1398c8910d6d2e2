"""How derivative values are named in the IR and so in generated code: after the primal
variable, ``d<name>`` (``dx`` is the adjoint or the tangent of ``x``)."""


def derivative_name(v, default="v"):
    """``d<name>`` for the primal value ``v``."""
    return "d" + (v.name or default)


def adjoint_name(v, primal):
    """``v`` (a derivative value), named after ``primal`` unless it already has a name."""
    if v is not None and v.name is None and primal.name:
        v.name = "d" + primal.name
    return v


__all__ = ["derivative_name", "adjoint_name"]
