"""Hand tracking: ADBench's hand model (section 4.3 of the ADBench paper), the "simple" variant.

26 pose parameters ``theta`` (global rotation as an angle-axis vector 0:3, global translation
3:6, then for each of 5 fingers: two angles of its first bone and one of each of the next two)
are spread over a (bones + 3, 3) table of pose parameters; each bone's rotation is built from
Euler angles and applied to its base transform relative to its parent; the absolute transforms
(down the tree of parents) times the inverse base absolutes skin the model's vertices with the
skinning weights; a global rotation, scale and translation place them. The residuals are the
measured points minus the vertices they correspond to, a (3, N) array; the Jacobian is taken
with respect to theta: (3, N, 26).

The model here is synthetic, of ADBench's shapes (22 bones: root, wrist, 5 fingers of 4 bones;
544 vertices) from a seeded RNG: ADBench's model files cannot be downloaded here.
"""
import math

import numpy as np

import srcgrad

from .common import as_numpy

SIZES = {"N=100": dict(n_pts=100), "N=12800": dict(n_pts=12800)}
QUICK = {"N=100": dict(n_pts=100), "N=800": dict(n_pts=800)}
TINY = dict(n_pts=10, n_verts=30)
PARENTS = np.array([-1, 0] + [p for f in range(5) for p in (1, 2 + 4 * f, 3 + 4 * f, 4 + 4 * f)], dtype=np.int64)


def _rotation(rng, scale):
    a = rng.standard_normal(3) * scale
    t = np.linalg.norm(a)
    k = a / t
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(t) * K + (1 - math.cos(t)) * K @ K


def inputs(n_pts, n_verts=544, seed=0):
    rng = np.random.default_rng(seed)
    B = PARENTS.shape[0]
    base_relatives = np.zeros((B, 4, 4))
    for i in range(B):
        base_relatives[i, :3, :3] = _rotation(rng, 0.3)
        base_relatives[i, :3, 3] = [0.0, 1.0, 0.0] if i > 1 else rng.standard_normal(3) * 0.1
        base_relatives[i, 3, 3] = 1.0
    absolutes = np.zeros((B, 4, 4))
    for i in range(B):
        absolutes[i] = base_relatives[i] if PARENTS[i] < 0 else absolutes[PARENTS[i]] @ base_relatives[i]
    inverse_base_absolutes = np.linalg.inv(absolutes)
    bone_of = rng.integers(0, B, n_verts)
    base_positions = np.ones((4, n_verts))
    base_positions[:3] = absolutes[bone_of, :3, 3].T + rng.standard_normal((3, n_verts)) * 0.2
    weights = np.zeros((B, n_verts))
    for v in range(n_verts):                      # each vertex on its bone and that bone's parent
        b = bone_of[v]
        share = rng.random()
        weights[b, v] = share
        weights[max(PARENTS[b], 0), v] += 1.0 - share
    theta = rng.standard_normal(26) * 0.3
    correspondences = rng.integers(0, n_verts, n_pts).astype(np.int64)
    points = rng.standard_normal((3, n_pts)) * 2.0
    return dict(theta=theta, parents=PARENTS.copy(), base_relatives=base_relatives,
                inverse_base_absolutes=inverse_base_absolutes, base_positions=base_positions, weights=weights,
                points=points, correspondences=correspondences)


ARGS = ("parents", "base_relatives", "inverse_base_absolutes", "base_positions", "weights", "points",
        "correspondences")


# ---------------------------------------------------------------- srcgrad: plain numpy

def to_pose_params(theta, n_bones):
    pose_params = np.zeros((n_bones + 3, 3))
    pose_params[0] = theta[0:3]
    pose_params[1] = np.ones(3)
    pose_params[2] = theta[3:6]
    i_theta = 6
    i_pose_params = 5
    for i_finger in range(5):
        for i in range(3):
            pose_params[i_pose_params, 0] = theta[i_theta]
            i_theta += 1
            if i == 0:
                pose_params[i_pose_params, 1] = theta[i_theta]
                i_theta += 1
            i_pose_params += 1
        i_pose_params += 1
    return pose_params


def euler_angles_to_rotation_matrix(xzy):
    tx, ty, tz = xzy[0], xzy[2], xzy[1]
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(tx), -np.sin(tx)], [0.0, np.sin(tx), np.cos(tx)]])
    Ry = np.array([[np.cos(ty), 0.0, np.sin(ty)], [0.0, 1.0, 0.0], [-np.sin(ty), 0.0, np.cos(ty)]])
    Rz = np.array([[np.cos(tz), -np.sin(tz), 0.0], [np.sin(tz), np.cos(tz), 0.0], [0.0, 0.0, 1.0]])
    return Rz @ Ry @ Rx


def angle_axis_to_rotation_matrix(angle_axis):
    n = np.sqrt(np.sum(angle_axis ** 2))
    if n < 0.0001:
        return np.eye(3)
    x, y, z = angle_axis[0] / n, angle_axis[1] / n, angle_axis[2] / n
    s, c = np.sin(n), np.cos(n)
    return np.array([[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                     [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
                     [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]])


def get_skinned_vertex_positions(pose_params, parents, base_relatives, inverse_base_absolutes,
                                 base_positions, weights):
    n_bones = base_relatives.shape[0]
    absolutes = np.zeros((n_bones, 4, 4))
    for i in range(n_bones):
        tr = np.eye(4)
        tr[:3, :3] = euler_angles_to_rotation_matrix(pose_params[i + 3])
        relative = base_relatives[i] @ tr
        if parents[i] == -1:
            absolutes[i] = relative
        else:
            absolutes[i] = absolutes[parents[i]] @ relative
    positions = np.zeros((3, base_positions.shape[1]))
    for i in range(n_bones):
        transform = absolutes[i] @ inverse_base_absolutes[i]
        positions += (transform @ base_positions)[:3] * weights[i]
    R = angle_axis_to_rotation_matrix(pose_params[0]) * pose_params[1]
    return R @ positions + pose_params[2][:, None]


def hand_objective(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
                   points, correspondences):
    pose_params = to_pose_params(theta, base_relatives.shape[0])
    vertex_positions = get_skinned_vertex_positions(pose_params, parents, base_relatives,
                                                    inverse_base_absolutes, base_positions, weights)
    return points - vertex_positions[:, correspondences]


hand_jacobian = srcgrad.jacobian(hand_objective)


def srcgrad_derivative(inp):
    """The Jacobian (3, N, 26)."""
    args = [inp[k] for k in ARGS]
    return lambda: hand_jacobian(inp["theta"], *args)


hand_jacfwd = srcgrad.jacfwd(hand_objective)


def _jacfwd(inp):
    args = [inp[k] for k in ARGS]
    return lambda: hand_jacfwd(inp["theta"], *args)


# srcgrad-only row: mode="fwd" chosen by hand (the default "auto" compiles both sweeps)
VARIANTS = {"jacfwd (mode='fwd')": _jacfwd}


def standard(result):
    return (as_numpy(result),)


def blocks(inp):
    return [inp["theta"]]


def outputs(inp, values, j, plain=True):
    """The residuals at theta = ``values[0]``, flattened (plain numpy: it is vectorised)."""
    return hand_objective(values[0], *(inp[k] for k in ARGS)).ravel()


def column(std, inp, j):
    return std[0][..., j].ravel()


# ---------------------------------------------------------------- JAX: jit(jacfwd)

def jax_derivative(inp):
    import jax
    import jax.numpy as jnp
    parents = [int(p) for p in inp["parents"]]

    def pose_of(theta):
        fingers = []
        i_theta = 6
        for _ in range(5):
            fingers += [jnp.array([theta[i_theta], theta[i_theta + 1], 0.0]),
                        jnp.array([theta[i_theta + 2], 0.0, 0.0]), jnp.array([theta[i_theta + 3], 0.0, 0.0]),
                        jnp.zeros(3)]
            i_theta += 4
        return jnp.stack([theta[0:3], jnp.ones(3), theta[3:6], jnp.zeros(3), jnp.zeros(3)] + fingers)

    def euler(xzy):
        tx, ty, tz = xzy[0], xzy[2], xzy[1]
        Rx = jnp.array([[1.0, 0.0, 0.0], [0.0, jnp.cos(tx), -jnp.sin(tx)], [0.0, jnp.sin(tx), jnp.cos(tx)]])
        Ry = jnp.array([[jnp.cos(ty), 0.0, jnp.sin(ty)], [0.0, 1.0, 0.0], [-jnp.sin(ty), 0.0, jnp.cos(ty)]])
        Rz = jnp.array([[jnp.cos(tz), -jnp.sin(tz), 0.0], [jnp.sin(tz), jnp.cos(tz), 0.0], [0.0, 0.0, 1.0]])
        return Rz @ Ry @ Rx

    def angle_axis(aa):
        n = jnp.sqrt(jnp.sum(aa ** 2))
        safe = jnp.where(n < 0.0001, 1.0, n)
        x, y, z = aa / safe
        s, c = jnp.sin(safe), jnp.cos(safe)
        R = jnp.array([[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                       [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
                       [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]])
        return jnp.where(n < 0.0001, jnp.eye(3), R)

    def objective(theta, base_relatives, inverse_base_absolutes, base_positions, weights, points, corr):
        pose = pose_of(theta)
        absolutes = []
        for i, parent in enumerate(parents):
            tr = jnp.eye(4).at[:3, :3].set(euler(pose[i + 3]))
            relative = base_relatives[i] @ tr
            absolutes.append(relative if parent < 0 else absolutes[parent] @ relative)
        transforms = jnp.stack(absolutes) @ inverse_base_absolutes
        positions = jnp.einsum("bij,jv,bv->iv", transforms[:, :3, :], base_positions, weights)
        R = angle_axis(pose[0]) * pose[1]
        return points - (R @ positions + pose[2][:, None])[:, corr]
    jac = jax.jit(jax.jacfwd(objective))
    args = [jnp.asarray(inp[k]) for k in ("theta",) + ARGS[1:]]
    return lambda: jac(*args).block_until_ready()


# ---------------------------------------------------------------- PyTorch: torch.func.jacfwd

def torch_derivative(inp):
    import torch
    from torch.func import jacfwd
    parents = [int(p) for p in inp["parents"]]
    f64 = dict(dtype=torch.float64)

    def pose_of(theta):
        zero, one = torch.zeros((), **f64), torch.ones(3, **f64)
        rows = [theta[0:3], one, theta[3:6], torch.zeros(3, **f64), torch.zeros(3, **f64)]
        i_theta = 6
        for _ in range(5):
            rows += [torch.stack([theta[i_theta], theta[i_theta + 1], zero]),
                     torch.stack([theta[i_theta + 2], zero, zero]), torch.stack([theta[i_theta + 3], zero, zero]),
                     torch.zeros(3, **f64)]
            i_theta += 4
        return torch.stack(rows)

    def euler(xzy):
        tx, ty, tz = xzy[0], xzy[2], xzy[1]
        o, z = torch.ones((), **f64), torch.zeros((), **f64)
        Rx = torch.stack([torch.stack([o, z, z]), torch.stack([z, torch.cos(tx), -torch.sin(tx)]),
                          torch.stack([z, torch.sin(tx), torch.cos(tx)])])
        Ry = torch.stack([torch.stack([torch.cos(ty), z, torch.sin(ty)]), torch.stack([z, o, z]),
                          torch.stack([-torch.sin(ty), z, torch.cos(ty)])])
        Rz = torch.stack([torch.stack([torch.cos(tz), -torch.sin(tz), z]),
                          torch.stack([torch.sin(tz), torch.cos(tz), z]), torch.stack([z, z, o])])
        return Rz @ Ry @ Rx

    def angle_axis(aa):
        n = torch.sqrt(torch.sum(aa ** 2))
        safe = torch.where(n < 0.0001, torch.ones_like(n), n)
        x, y, z = aa / safe
        s, c = torch.sin(safe), torch.cos(safe)
        R = torch.stack([torch.stack([x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s]),
                         torch.stack([x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s]),
                         torch.stack([x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c])])
        return torch.where(n < 0.0001, torch.eye(3, **f64), R)

    base_relatives, inverse_base_absolutes, base_positions, weights, points = (
        torch.as_tensor(inp[k]) for k in ARGS[1:6])
    corr = torch.as_tensor(inp["correspondences"])
    bottom = torch.tensor([[0.0, 0.0, 0.0, 1.0]], **f64)
    zcol = torch.zeros((3, 1), **f64)

    def objective(theta):
        pose = pose_of(theta)
        absolutes = []
        for i, parent in enumerate(parents):
            tr = torch.cat([torch.cat([euler(pose[i + 3]), zcol], 1), bottom], 0)
            relative = base_relatives[i] @ tr
            absolutes.append(relative if parent < 0 else absolutes[parent] @ relative)
        transforms = torch.stack(absolutes) @ inverse_base_absolutes
        positions = torch.einsum("bij,jv,bv->iv", transforms[:, :3, :], base_positions, weights)
        R = angle_axis(pose[0]) * pose[1]
        return points - (R @ positions + pose[2][:, None])[:, corr]
    jac = jacfwd(objective)
    theta = torch.as_tensor(inp["theta"])
    return lambda: jac(theta)


# ---------------------------------------------------------------- by hand: Numba, forward mode

def hand_derivative(inp):
    import numba

    @numba.njit(cache=False)
    def rotation_and_slope(aa, v, J):
        """R(aa) v, and d(R(aa) v)/d aa into J (3x3): Rodrigues' formula, differentiated."""
        th = math.sqrt(aa[0] * aa[0] + aa[1] * aa[1] + aa[2] * aa[2])
        out = np.empty(3)
        if th < 0.0001:
            out[:] = v
            J[:, :] = 0.0
            return out
        w = aa / th
        c, s = math.cos(th), math.sin(th)
        wv = w[0] * v[0] + w[1] * v[1] + w[2] * v[2]
        cr = np.array([w[1] * v[2] - w[2] * v[1], w[2] * v[0] - w[0] * v[2], w[0] * v[1] - w[1] * v[0]])
        for a in range(3):
            out[a] = v[a] * c + cr[a] * s + w[a] * wv * (1 - c)
        dth = -s * v + c * cr + s * wv * w
        Vx = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
        dw = np.empty((3, 3))
        for a in range(3):
            for b in range(3):
                dw[a, b] = -s * Vx[a, b] + (1 - c) * (w[a] * v[b] + (wv if a == b else 0.0))
        for a in range(3):
            for b in range(3):
                acc = 0.0
                for k in range(3):
                    acc += dw[a, k] * ((1.0 if k == b else 0.0) - w[k] * w[b])
                J[a, b] = dth[a] * w[b] + acc / th
        return out

    @numba.njit(cache=False)
    def euler_and_slopes(e):
        """R = Rz Ry Rx of (tx, tz, ty) = e, with dR/dtx and dR/dtz."""
        tx, ty, tz = e[0], e[2], e[1]
        cx, sx, cy, sy, cz, sz = math.cos(tx), math.sin(tx), math.cos(ty), math.sin(ty), math.cos(tz), math.sin(tz)
        Rx = np.array([[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]])
        dRx = np.array([[0.0, 0.0, 0.0], [0.0, -sx, -cx], [0.0, cx, -sx]])
        Ry = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
        Rz = np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]])
        dRz = np.array([[-sz, -cz, 0.0], [cz, -sz, 0.0], [0.0, 0.0, 0.0]])
        RzRy = Rz @ Ry
        return RzRy @ Rx, RzRy @ dRx, dRz @ (Ry @ Rx)

    @numba.njit(cache=False)
    def jacobian(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights, points,
                 correspondences):
        B = base_relatives.shape[0]
        V = base_positions.shape[1]
        N = points.shape[1]
        pose = np.zeros((B + 3, 3))
        pose[0] = theta[0:3]
        pose[1] = 1.0
        pose[2] = theta[3:6]
        owner = np.zeros((26, 2), dtype=np.int64)       # (bone, Euler component) of theta[j], j >= 6
        i_theta, i_pose = 6, 5
        for f in range(5):
            for i in range(3):
                pose[i_pose, 0] = theta[i_theta]
                owner[i_theta, 0], owner[i_theta, 1] = i_pose - 3, 0
                i_theta += 1
                if i == 0:
                    pose[i_pose, 1] = theta[i_theta]
                    owner[i_theta, 0], owner[i_theta, 1] = i_pose - 3, 1
                    i_theta += 1
                i_pose += 1
            i_pose += 1
        relatives = np.zeros((B, 4, 4))
        drel = np.zeros((B, 2, 4, 4))                   # d relative / d (Euler 0, Euler 1)
        absolutes = np.zeros((B, 4, 4))
        for i in range(B):
            R, dR0, dR1 = euler_and_slopes(pose[i + 3])
            tr = np.eye(4)
            tr[:3, :3] = R
            relatives[i] = base_relatives[i] @ tr
            d = np.zeros((4, 4))
            d[:3, :3] = dR0
            drel[i, 0] = base_relatives[i] @ d
            d[:3, :3] = dR1
            drel[i, 1] = base_relatives[i] @ d
            absolutes[i] = relatives[i] if parents[i] < 0 else absolutes[parents[i]] @ relatives[i]
        local = np.zeros((3, V))                        # skinned, before the global transform
        for i in range(B):
            T = absolutes[i] @ inverse_base_absolutes[i]
            local += (T @ base_positions)[:3] * weights[i]
        J = np.zeros((3, N, 26))
        Jg = np.empty((3, 3))
        for n in range(N):                               # R(aa) local + t: its slope in aa, t
            v = correspondences[n]
            rotation_and_slope(theta[0:3], local[:, v].copy(), Jg)
            for a in range(3):
                for b in range(3):
                    J[a, n, b] = -Jg[a, b]
                J[a, n, 3 + a] = -1.0
        # bone angles: a change of bone b's relative moves b's absolute and its descendants'
        Rg = np.empty((3, 3))
        for k in range(3):
            e = np.zeros(3)
            e[k] = 1.0
            Rg[:, k] = rotation_and_slope(theta[0:3], e, Jg)
        dabs = np.zeros((B, 4, 4))
        dlocal = np.zeros((3, V))
        for j in range(6, 26):
            b, comp = owner[j, 0], owner[j, 1]
            touched = np.zeros(B, dtype=np.bool_)
            for i in range(B):                           # parents come before children
                if i == b:
                    dabs[i] = drel[i, comp] if parents[i] < 0 else absolutes[parents[i]] @ drel[i, comp]
                    touched[i] = True
                elif parents[i] >= 0 and touched[parents[i]]:
                    dabs[i] = dabs[parents[i]] @ relatives[i]
                    touched[i] = True
            dlocal[:, :] = 0.0
            for i in range(B):
                if touched[i]:
                    dT = dabs[i] @ inverse_base_absolutes[i]
                    dlocal += (dT @ base_positions)[:3] * weights[i]
            for n in range(N):
                v = correspondences[n]
                for a in range(3):
                    J[a, n, j] = -(Rg[a, 0] * dlocal[0, v] + Rg[a, 1] * dlocal[1, v] + Rg[a, 2] * dlocal[2, v])
        return J
    args = [inp[k] for k in ("theta",) + ARGS]
    return lambda: jacobian(*args)
