"""Linear-algebra lines for the whole-array fuzz programs (array_programs.py): np.einsum,
np.tensordot, np.inner, np.vdot, np.matmul, np.linalg.norm/det/slogdet/inv/solve/cholesky,
the singular values (np.linalg.norm ord=2, -2, 'nuc'; np.linalg.svd(compute_uv=False),
np.linalg.svdvals), matrix products big enough for BLAS, producing arrays of the generator's kinds n=(5,), m=(3,), nm=(5,3) and
numbers s.

The square matrices are Gram matrices of tanh of an n×m array plus the identity (built with
a loop of writes): symmetric positive definite and well conditioned, so no draw is singular.
The singular values are those of D = diag(3, 2, 1) (5×3, a loop of writes) + 0.1 tanh of an
n×m array (its non-finite elements taken as 0: numpy raises for a NaN): the perturbation's
2-norm is below 0.1·√15 < 0.5, so D's singular values stay apart and away from 0 (no tie, no
zero: no kink, where the backends' SVDs could pick different subgradients)."""
from hypothesis import strategies as st

_FORMS = {
    "n": ["np.einsum('ij,j->i', {nm}, {m})", "np.tensordot({nm}, {m}, axes=1)", "np.inner({nm}, {m})",
          "np.linalg.norm({nm}, axis=1)", "np.linalg.norm({nm}, ord=1, axis=-1)", "{nm} @ np.linalg.solve({G}, {m})",
          "np.matmul({nm}, {m})"],
    "m": ["np.linalg.solve({G}, {m})", "np.linalg.inv({G}) @ {m}", "np.linalg.cholesky({G}) @ {m}",
          "np.einsum('ij,i->j', {nm}, {n})", "np.linalg.norm({nm}, axis=0)", "np.linalg.norm({nm}, np.inf, 0)",
          "np.tensordot({n}, {nm}, axes=([0], [0]))", "np.einsum('ii,i->i', {G}, {m})",
          "np.linalg.svd({D}, compute_uv=False)", "np.linalg.svd({D}.T, False, False) * {m}", "np.linalg.svdvals({D})"],
    "nm": ["np.einsum('ij,j->ij', {nm}, {m})", "np.einsum('i,j->ij', {n}, {m})", "{nm} @ np.linalg.inv({G})",
           "np.linalg.solve({G}, {nm}.T).T", "{nm} / np.linalg.norm({nm}, axis=0, keepdims=True)",
           "{nm} * np.linalg.norm({nm}, ord=1, axis=1, keepdims=True)", "{nm} * np.linalg.norm({D}, 2, keepdims=True)"],
    "s": ["np.linalg.norm({n})", "np.linalg.norm({nm})", "np.linalg.norm({m}, 1)", "np.linalg.norm({nm}, np.inf)",
          "np.linalg.norm({nm}, -1)", "np.linalg.norm({n}, -np.inf)", "np.tensordot({nm}, {nm}, axes=2)",
          "np.vdot({nm}, {nm})", "np.inner({m}, {m})", "np.einsum('ij,ij->', {nm}, {nm})",
          "np.einsum('i,ij,j->', {n}, {nm}, {m})", "np.linalg.det({G})", "SLOGDET",
          "np.sum(np.linalg.cholesky({G}) * {nm}[:3])", "np.einsum('ii->', {G})", "np.linalg.norm({D}, 2)",
          "np.linalg.norm({D}.T, -2)", "np.linalg.norm({D}, 'nuc')", "np.linalg.norm({D}, -2, axis=(1, 0))"],
}

# products big enough for BLAS (backends/llvm/blas.py: GEMM_MIN, GEMV_MIN), their operands C
# arrays, transposes (column-major) and slices (rows further apart than a row), cut back to the
# generator's kinds; their gradients are such products too
_BIG = {
    "n": ["(np.tile({nm}, (40, 40)) @ np.tile({m}, 40))[:5]"],
    "m": ["(np.tile({n}, 40) @ np.tile({nm}, (40, 40)))[:3]", "(np.tile({nm}, (40, 40)).T @ np.tile({n}, 40))[:3]"],
    "nm": ["(np.tile({nm}, (20, 40)) @ np.tile({nm}.T, (40, 1)))[:5, :3]",
           "(np.tile({nm}, (30, 8)).T @ np.tile({nm}, (30, 8)))[:5, :3] * 0.01",
           "(np.tile({nm}, (20, 40))[:, 3:103] @ np.tile({nm}, (40, 1))[:100])[:5, :3] * 0.01"],
    "s": ["np.sum(np.tanh(np.tile({nm}, (20, 40)) @ np.tile({nm}, (20, 40)).T * 0.01))",
          # 96×96 Gram matrices: past LAPACK's thresholds (linalg.py: SOLVE_MIN, CHOLESKY_MIN)
          "np.sum(np.linalg.solve({BIG}, np.tile({m}, 32))) * 0.1", "np.sum(np.linalg.cholesky({BIG})) * 0.01",
          "np.sum(np.linalg.inv({BIG}) * np.tile({nm}, (20, 32))[:96]) * 0.01",
          "np.linalg.slogdet({BIG})[1] * 0.1", "np.log(np.linalg.det({BIG})) * 0.1"],
}
for _kind, _forms in _BIG.items():
    _FORMS[_kind] = _FORMS[_kind] + _forms


def linalg_lines(draw, name, kind, pick):
    """The lines assigning ``name`` (of ``kind``) from a linear-algebra form."""
    form = draw(st.sampled_from(_FORMS[kind]))
    lines = []
    g = f"{name}_g"
    if "{G}" in form or form == "SLOGDET":
        e, i = f"{name}_e", f"{name}_i"
        t = pick("nm")
        lines += [f"    {e} = np.zeros((3, 3))", f"    for {i} in range(3):", f"        {e}[{i}, {i}] = 1.0",
                  f"    {g} = np.tanh({t}).T @ np.tanh({t}) * 0.5 + {e}"]
    if "{D}" in form:
        e, i, d = f"{name}_de", f"{name}_di", f"{name}_d"
        t = pick("nm")
        lines += [f"    {e} = np.zeros((5, 3))", f"    for {i} in range(3):", f"        {e}[{i}, {i}] = 3.0 - {i}",
                  f"    {d} = np.tanh(np.where(np.isfinite({t}), {t}, 0.0)) * 0.1 + {e}"]
    if "{BIG}" in form:
        t = f"{name}_t"
        lines.append(f"    {t} = np.tanh(np.tile({pick('nm')}, (20, 32)))")
        lines.append(f"    {g}_big = {t}.T @ {t} * 0.01 + np.eye(96)")
    if form == "SLOGDET":
        lines.append(f"    {name}_s, {name}_l = np.linalg.slogdet({g})")
        return lines + [f"    {name} = {name}_s * {name}_l"]
    expr = form.format(G=g, D=f"{name}_d", BIG=f"{g}_big", n=pick("n"), m=pick("m"), nm=pick("nm"))
    return lines + [f"    {name} = {expr}"]
