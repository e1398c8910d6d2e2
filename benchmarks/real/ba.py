"""BA: bundle adjustment, ADBench's objective (section 4.2 of the ADBench paper).

n cameras of 11 parameters each (Rodrigues rotation 0:3, centre 3:6, focal length 6, principal
point 7:9, radial distortion 9:11), m points (3), p observations ``obs[i] = (camera, point)`` with
a weight ``w[i]`` and a measured feature ``feats[i]`` (2). Residuals: the reprojection error
``w[i] * (project(cam, X) - feat)`` (2 per observation) and the weight error ``1 - w[i]**2``.
The Jacobian is sparse: per observation a 2x15 block (11 camera, 3 point, 1 weight columns), and
the weight error's derivative ``-2 w[i]``; every tool returns those, as a (p, 2, 15) array and
a (p,) array.
"""
import numpy as np

import srcgrad

from .common import as_numpy

SIZES = {"n=3 m=40 p=200": dict(n=3, m=40, p=200), "n=21 m=11315 p=36455": dict(n=21, m=11315, p=36455)}
QUICK = {"n=3 m=40 p=200": dict(n=3, m=40, p=200), "n=5 m=200 p=1000": dict(n=5, m=200, p=1000)}
TINY = dict(n=2, m=5, p=8)


def inputs(n, m, p, seed=0):
    """Cameras looking at points in front of them, from a seeded RNG, ADBench's shapes."""
    rng = np.random.default_rng(seed)
    cams = np.empty((n, 11))
    cams[:, 0:3] = rng.standard_normal((n, 3)) * 0.1                 # small rotations
    cams[:, 3:6] = rng.uniform(-0.5, 0.5, (n, 3)) + [0.0, 0.0, -5.0]   # centres 4 to 6 behind the points
    cams[:, 6] = 300.0 + 50.0 * rng.random(n)                       # focal length
    cams[:, 7:9] = rng.standard_normal((n, 2)) * 2.0
    cams[:, 9:11] = rng.standard_normal((n, 2)) * 1e-3
    X = rng.uniform(-1.0, 1.0, (m, 3))                              # so every point is well in front
    w = 0.5 + rng.random(p)
    obs = np.stack([np.arange(p) % n, rng.integers(0, m, p)], axis=1).astype(np.int64)
    obs[:m, 1] = np.arange(min(m, p))                               # every point seen
    feats = rng.standard_normal((p, 2)) * 100.0
    return dict(cams=cams, X=X, w=w, obs=obs, feats=feats)


# ---------------------------------------------------------------- srcgrad: plain numpy

def cross(a, b):
    # the user's first version called np.cross(w, X); srcgrad said "srcgrad does not support
    # calling np.cross (yet)", so it is written out
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def rodrigues_rotate_point(rot, X):
    sqtheta = np.sum(rot ** 2)
    if sqtheta != 0.0:
        theta = np.sqrt(sqtheta)
        costheta = np.cos(theta)
        sintheta = np.sin(theta)
        w = rot / theta
        return X * costheta + cross(w, X) * sintheta + w * (np.dot(w, X) * (1.0 - costheta))
    return X + cross(rot, X)


def radial_distort(rad, proj):
    rsq = np.sum(proj ** 2)
    return proj * (1.0 + rad[0] * rsq + rad[1] * rsq * rsq)


def project(cam, X):
    Xcam = rodrigues_rotate_point(cam[0:3], X - cam[3:6])
    distorted = radial_distort(cam[9:11], Xcam[0:2] / Xcam[2])
    return distorted * cam[6] + cam[7:9]


def reproj_err(cam, X, w, feat):
    return w * (project(cam, X) - feat)


def w_err(w):
    return 1.0 - w * w


reproj_jacobian = srcgrad.jacobian(reproj_err, wrt=(0, 1, 2))
w_err_slope = srcgrad.vectorize(srcgrad.grad(w_err))


def ba_jacobian(cams, X, w, obs, feats):
    """Every observation's 2x15 block: the per-observation Jacobian, called in a loop."""
    p = obs.shape[0]
    J = np.zeros((p, 2, 15))
    for i in range(p):
        jc, jx, jw = reproj_jacobian(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i])
        J[i, :, 0:11] = jc
        J[i, :, 11:14] = jx
        J[i, :, 14] = jw
    return J


ba_jacobian_compiled = srcgrad.jit(ba_jacobian)


def srcgrad_derivative(inp, batched=True):
    """The per-observation residual's Jacobian, ``srcgrad.jacobian(reproj_err, wrt=(0, 1, 2))``.
    ``batched``: called from a loop over the observations that srcgrad compiles too (a compiled
    function calling a compiled Jacobian is inlined, docs/compiler.md); otherwise a Python loop
    calls it once per observation. The weight error's derivative is ``vectorize(grad(w_err))``."""
    cams, X, w, obs, feats = (inp[k] for k in ("cams", "X", "w", "obs", "feats"))
    if batched:
        return lambda: (ba_jacobian_compiled(cams, X, w, obs, feats), w_err_slope(w))
    # the same loop run by Python: each observation's Jacobian is one compiled call
    return lambda: (ba_jacobian(cams, X, w, obs, feats), w_err_slope(w))


VARIANTS = {"called per observation from a Python loop": lambda inp: srcgrad_derivative(inp, batched=False)}


def standard(result):
    return tuple(as_numpy(a) for a in result)


def blocks(inp):
    return [inp["cams"], inp["X"], inp["w"]]


def _touched(inp, j):
    """The observations coordinate ``j`` (cameras, then points, then weights) enters, and its
    column within an observation's block."""
    n, m = inp["cams"].shape[0], inp["X"].shape[0]
    obs = inp["obs"]
    if j < 11 * n:
        return np.flatnonzero(obs[:, 0] == j // 11), j % 11
    if j < 11 * n + 3 * m:
        return np.flatnonzero(obs[:, 1] == (j - 11 * n) // 3), 11 + (j - 11 * n) % 3
    return np.array([j - 11 * n - 3 * m]), 14


def outputs(inp, values, j, plain=True):
    """The residuals that coordinate ``j`` enters (plain numpy): reprojection errors, then weight
    errors, of the observations it touches (the rest of the sparse Jacobian's column is 0)."""
    cams, X, w = values
    sel, _ = _touched(inp, j)
    obs, feats = inp["obs"], inp["feats"]
    r = [reproj_err(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i]) for i in sel]
    return np.concatenate([np.ravel(r), w_err(w[sel])])


def column(std, inp, j):
    J, dw = std
    sel, q = _touched(inp, j)
    return np.concatenate([J[sel, :, q].ravel(), dw[sel] if q == 14 else np.zeros(len(sel))])


# ---------------------------------------------------------------- JAX: vmap(jacfwd)

def jax_derivative(inp):
    import jax
    import jax.numpy as jnp

    def rodrigues(rot, X):
        sq = jnp.sum(rot ** 2)
        safe = jnp.where(sq != 0.0, sq, 1.0)
        theta = jnp.sqrt(safe)
        w = rot / theta
        c, s = jnp.cos(theta), jnp.sin(theta)
        rotated = X * c + jnp.cross(w, X) * s + w * (jnp.dot(w, X) * (1.0 - c))
        return jnp.where(sq != 0.0, rotated, X + jnp.cross(rot, X))

    def residual(cam, X, w, feat):
        Xcam = rodrigues(cam[0:3], X - cam[3:6])
        proj = Xcam[0:2] / Xcam[2]
        rsq = jnp.sum(proj ** 2)
        proj = proj * (1.0 + cam[9] * rsq + cam[10] * rsq * rsq)
        return w * (proj * cam[6] + cam[7:9] - feat)

    block = jax.vmap(jax.jacfwd(residual, argnums=(0, 1, 2)))
    dw = jax.vmap(jax.grad(lambda w: 1.0 - w * w))

    @jax.jit
    def jacobian(cams, X, w, obs, feats):
        jc, jx, jw = block(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
        return jnp.concatenate([jc, jx, jw[:, :, None]], axis=2), dw(w)
    args = [jnp.asarray(inp[k]) for k in ("cams", "X", "w", "obs", "feats")]
    return lambda: [a.block_until_ready() for a in jacobian(*args)]


# ---------------------------------------------------------------- PyTorch: torch.func.vmap(jacfwd)

def torch_derivative(inp):
    import torch
    from torch.func import jacfwd, vmap

    def rodrigues(rot, X):
        sq = torch.sum(rot ** 2)
        safe = torch.where(sq != 0.0, sq, torch.ones_like(sq))
        theta = torch.sqrt(safe)
        w = rot / theta
        c, s = torch.cos(theta), torch.sin(theta)
        rotated = X * c + torch.linalg.cross(w, X) * s + w * (torch.dot(w, X) * (1.0 - c))
        return torch.where(sq != 0.0, rotated, X + torch.linalg.cross(rot, X))

    def residual(cam, X, w, feat):
        Xcam = rodrigues(cam[0:3], X - cam[3:6])
        proj = Xcam[0:2] / Xcam[2]
        rsq = torch.sum(proj ** 2)
        proj = proj * (1.0 + cam[9] * rsq + cam[10] * rsq * rsq)
        return w * (proj * cam[6] + cam[7:9] - feat)

    block = vmap(jacfwd(residual, argnums=(0, 1, 2)))
    cams, X, w, obs, feats = (torch.as_tensor(inp[k]) for k in ("cams", "X", "w", "obs", "feats"))

    def jacobian():
        jc, jx, jw = block(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
        wt = w.clone().requires_grad_(True)
        (dw,) = torch.autograd.grad((1.0 - wt * wt).sum(), wt)
        return torch.cat([jc, jx, jw[:, :, None]], dim=2), dw
    return jacobian


# ---------------------------------------------------------------- by hand: Numba, chain rule

def hand_derivative(inp):
    import math

    import numba

    @numba.njit(cache=False)
    def jacobian(cams, X, w, obs, feats):
        p = obs.shape[0]
        J = np.zeros((p, 2, 15))
        dw = np.empty(p)
        R = np.empty((3, 3))
        dXr_dr = np.empty((3, 3))
        for i in range(p):
            cam = cams[obs[i, 0]]
            xc0 = X[obs[i, 1], 0] - cam[3]
            xc1 = X[obs[i, 1], 1] - cam[4]
            xc2 = X[obs[i, 1], 2] - cam[5]
            r0, r1, r2 = cam[0], cam[1], cam[2]
            sq = r0 * r0 + r1 * r1 + r2 * r2
            if sq != 0.0:
                th = math.sqrt(sq)
                c, s = math.cos(th), math.sin(th)
                w0, w1, w2 = r0 / th, r1 / th, r2 / th
                wx = w0 * xc0 + w1 * xc1 + w2 * xc2
                # R = c I + s [w]x + (1 - c) w w^T
                R[0, 0] = c + (1 - c) * w0 * w0
                R[0, 1] = -s * w2 + (1 - c) * w0 * w1
                R[0, 2] = s * w1 + (1 - c) * w0 * w2
                R[1, 0] = s * w2 + (1 - c) * w1 * w0
                R[1, 1] = c + (1 - c) * w1 * w1
                R[1, 2] = -s * w0 + (1 - c) * w1 * w2
                R[2, 0] = -s * w1 + (1 - c) * w2 * w0
                R[2, 1] = s * w0 + (1 - c) * w2 * w1
                R[2, 2] = c + (1 - c) * w2 * w2
                cr0 = w1 * xc2 - w2 * xc1
                cr1 = w2 * xc0 - w0 * xc2
                cr2 = w0 * xc1 - w1 * xc0
                # d Xr / d theta, and d Xr / d w = -s [xc]x + (1 - c)(w xc^T + (w . xc) I)
                dth0 = -s * xc0 + c * cr0 + s * wx * w0
                dth1 = -s * xc1 + c * cr1 + s * wx * w1
                dth2 = -s * xc2 + c * cr2 + s * wx * w2
                wv = (w0, w1, w2)
                xv = (xc0, xc1, xc2)
                dth = (dth0, dth1, dth2)
                for a in range(3):
                    for b in range(3):
                        # entry (a, b) of -s [xc]x:  [v]x[a, b] = -eps_abk v_k
                        cx = 0.0
                        if a == 0 and b == 1:
                            cx = -xv[2]
                        elif a == 0 and b == 2:
                            cx = xv[1]
                        elif a == 1 and b == 0:
                            cx = xv[2]
                        elif a == 1 and b == 2:
                            cx = -xv[0]
                        elif a == 2 and b == 0:
                            cx = -xv[1]
                        elif a == 2 and b == 1:
                            cx = xv[0]
                        dXr_dr[a, b] = -s * cx + (1 - c) * (wv[a] * xv[b] + (wx if a == b else 0.0))
                # chain through w = r / th, th = |r|: dXr/dr = dth w^T + dXr/dw (I - w w^T) / th
                tmp = np.empty((3, 3))
                for a in range(3):
                    for b in range(3):
                        acc = 0.0
                        for k in range(3):
                            acc += dXr_dr[a, k] * ((1.0 if k == b else 0.0) - wv[k] * wv[b])
                        tmp[a, b] = dth[a] * wv[b] + acc / th
                xr0 = xc0 * c + cr0 * s + w0 * wx * (1 - c)
                xr1 = xc1 * c + cr1 * s + w1 * wx * (1 - c)
                xr2 = xc2 * c + cr2 * s + w2 * wx * (1 - c)
            else:
                xr0 = xc0 + (r1 * xc2 - r2 * xc1)
                xr1 = xc1 + (r2 * xc0 - r0 * xc2)
                xr2 = xc2 + (r0 * xc1 - r1 * xc0)
                # R = I + [r]x ; d Xr / d r = -[xc]x
                R[0, 0], R[0, 1], R[0, 2] = 1.0, -r2, r1
                R[1, 0], R[1, 1], R[1, 2] = r2, 1.0, -r0
                R[2, 0], R[2, 1], R[2, 2] = -r1, r0, 1.0
                tmp = np.empty((3, 3))
                tmp[0, 0], tmp[0, 1], tmp[0, 2] = 0.0, xc2, -xc1
                tmp[1, 0], tmp[1, 1], tmp[1, 2] = -xc2, 0.0, xc0
                tmp[2, 0], tmp[2, 1], tmp[2, 2] = xc1, -xc0, 0.0
            p0, p1 = xr0 / xr2, xr1 / xr2
            rsq = p0 * p0 + p1 * p1
            k1, k2 = cam[9], cam[10]
            L = 1.0 + k1 * rsq + k2 * rsq * rsq
            f = cam[6]
            wi = w[i]
            d0, d1 = p0 * L, p1 * L
            # d distorted / d p = L I + 2 (k1 + 2 k2 rsq) p p^T
            g = 2.0 * (k1 + 2.0 * k2 * rsq)
            D00, D01, D10, D11 = L + g * p0 * p0, g * p0 * p1, g * p1 * p0, L + g * p1 * p1
            # d p / d Xr
            iz = 1.0 / xr2
            P = ((iz, 0.0, -xr0 * iz * iz), (0.0, iz, -xr1 * iz * iz))
            # M = w f D P  (2x3): d err / d Xr
            M = np.empty((2, 3))
            for b in range(3):
                M[0, b] = wi * f * (D00 * P[0][b] + D01 * P[1][b])
                M[1, b] = wi * f * (D10 * P[0][b] + D11 * P[1][b])
            for a in range(2):
                for b in range(3):
                    acc_r = 0.0
                    acc_x = 0.0
                    for k in range(3):
                        acc_r += M[a, k] * tmp[k, b]
                        acc_x += M[a, k] * R[k, b]
                    J[i, a, b] = acc_r
                    J[i, a, 3 + b] = -acc_x
                    J[i, a, 11 + b] = acc_x
            J[i, 0, 6] = wi * d0
            J[i, 1, 6] = wi * d1
            J[i, 0, 7] = wi
            J[i, 1, 8] = wi
            J[i, 0, 9] = wi * f * p0 * rsq
            J[i, 1, 9] = wi * f * p1 * rsq
            J[i, 0, 10] = wi * f * p0 * rsq * rsq
            J[i, 1, 10] = wi * f * p1 * rsq * rsq
            J[i, 0, 14] = f * d0 + cam[7] - feats[i, 0]
            J[i, 1, 14] = f * d1 + cam[8] - feats[i, 1]
            dw[i] = -2.0 * wi
        return J, dw
    args = [inp[k] for k in ("cams", "X", "w", "obs", "feats")]
    return lambda: jacobian(*args)
