"""GMM: the negative log-likelihood of a Gaussian mixture with a Wishart prior on the precision
matrices (ADBench's objective, section 4.1 of the ADBench paper), gradient in (alphas, means, icf).

Parameters, as ADBench lays them out: ``alphas`` (K) unnormalised log mixture weights, ``means``
(K, d), ``icf`` (K, d(d+1)/2): for each component the logs of the diagonal of Q (the Cholesky
factor of its precision matrix, lower triangular), then Q's entries below the diagonal column by
column. Data ``x`` (n, d), Wishart parameters gamma and m.

    err = -n d/2 log(2 pi) + sum_i logsumexp_k(alpha_k + sum(q_k) - |Q_k (x_i - mu_k)|^2 / 2)
          - n logsumexp(alpha) + sum_k (gamma^2/2 (|diag Q_k|^2 + |offdiag Q_k|^2) - m sum(q_k)) - K C

with C = n_w d (log gamma - log(2)/2) - log Gamma_d(n_w / 2), n_w = d + m + 1.
"""
import math

import numpy as np

import srcgrad

from .common import as_numpy

SIZES = {"d=2 K=5 n=1000": dict(d=2, K=5, n=1000), "d=10 K=25 n=10000": dict(d=10, K=25, n=10000)}
QUICK = {"d=2 K=5 n=100": dict(d=2, K=5, n=100), "d=4 K=6 n=200": dict(d=4, K=6, n=200)}
TINY = dict(d=3, K=4, n=20)
WRT = ("alphas", "means", "icf")


def inputs(d, K, n, seed=0):
    """ADBench's shapes, from a seeded RNG (ADBench's files cannot be downloaded here)."""
    rng = np.random.default_rng(seed)
    return dict(alphas=rng.standard_normal(K), means=rng.random((K, d)),
                icf=rng.standard_normal((K, d * (d + 1) // 2)) * 0.5, x=rng.standard_normal((n, d)),
                gamma=1.0, m=0)


def log_gamma_distrib(a, p):
    """log of the multivariate gamma function Gamma_p(a); a constant of the objective."""
    out = 0.25 * p * (p - 1) * math.log(math.pi)
    for j in range(1, p + 1):
        out += math.lgamma(a + 0.5 * (1 - j))
    return out


# ---------------------------------------------------------------- srcgrad: plain numpy, loops

def lower_factor(icf_k, d):
    """Q: exp of the first d entries on the diagonal, the rest below it column by column."""
    Q = np.diag(np.exp(icf_k[:d]))
    idx = d
    for col in range(d):
        for row in range(col + 1, d):
            Q[row, col] = icf_k[idx]
            idx += 1
    return Q


def gmm_objective(alphas, means, icf, x, gamma, m, lgamma_const):
    # lgamma_const is log_gamma_distrib(0.5 * (d + m + 1), d): the user's first version called
    # log_gamma_distrib here, and srcgrad said "srcgrad does not support calling math.lgamma
    # (yet)"; it depends on no parameter, so it is computed outside and passed in.
    n, d = x.shape
    K = alphas.shape[0]
    Qs = np.zeros((K, d, d))
    for k in range(K):
        Qs[k] = lower_factor(icf[k], d)
    sum_qs = np.sum(icf[:, :d], axis=1)
    slse = 0.0
    main = np.zeros(K)
    for i in range(n):
        for k in range(K):
            z = Qs[k] @ (x[i] - means[k])
            main[k] = alphas[k] + sum_qs[k] - 0.5 * np.dot(z, z)
        mx = np.max(main)
        slse += mx + np.log(np.sum(np.exp(main - mx)))
    amax = np.max(alphas)
    lse_alphas = amax + np.log(np.sum(np.exp(alphas - amax)))
    prior = 0.0
    for k in range(K):
        frobenius = np.sum(np.diag(Qs[k]) ** 2) + np.sum(icf[k, d:] ** 2)
        prior += 0.5 * gamma * gamma * frobenius - m * sum_qs[k]
    nw = d + m + 1
    C = nw * d * (math.log(gamma) - 0.5 * math.log(2.0)) - lgamma_const
    return -0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas + prior - K * C


def log_wishart_prior(icf, d, gamma, m, lgamma_const):
    """The prior's terms of gmm_objective, for the variants below."""
    K = icf.shape[0]
    prior = 0.0
    for k in range(K):
        prior += 0.5 * gamma * gamma * (np.sum(np.exp(icf[k, :d]) ** 2) + np.sum(icf[k, d:] ** 2))
        prior -= m * np.sum(icf[k, :d])
    nw = d + m + 1
    return prior - K * (nw * d * (math.log(gamma) - 0.5 * math.log(2.0)) - lgamma_const)


def gmm_objective_fresh_main(alphas, means, icf, x, gamma, m, lgamma_const):
    """Variant: ``main`` made anew for each point instead of one scratch array written over for
    every point (whose writes srcgrad's gradient logs to undo them)."""
    n, d = x.shape
    K = alphas.shape[0]
    Qs = np.zeros((K, d, d))
    for k in range(K):
        Qs[k] = lower_factor(icf[k], d)
    sum_qs = np.sum(icf[:, :d], axis=1)
    slse = 0.0
    for i in range(n):
        main = np.zeros(K)
        for k in range(K):
            z = Qs[k] @ (x[i] - means[k])
            main[k] = alphas[k] + sum_qs[k] - 0.5 * np.dot(z, z)
        mx = np.max(main)
        slse += mx + np.log(np.sum(np.exp(main - mx)))
    amax = np.max(alphas)
    lse_alphas = amax + np.log(np.sum(np.exp(alphas - amax)))
    return (-0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas
            + log_wishart_prior(icf, d, gamma, m, lgamma_const))


def gmm_objective_vectorised(alphas, means, icf, x, gamma, m, lgamma_const):
    """Variant: vectorised over the points, a loop over the components (a numpy user's habit)."""
    n, d = x.shape
    K = alphas.shape[0]
    sum_qs = np.sum(icf[:, :d], axis=1)
    main = np.zeros((n, K))
    for k in range(K):
        z = (x - means[k]) @ lower_factor(icf[k], d).T
        main[:, k] = alphas[k] + sum_qs[k] - 0.5 * np.sum(z * z, axis=1)
    mx = np.max(main, axis=1, keepdims=True)
    slse = np.sum(mx) + np.sum(np.log(np.sum(np.exp(main - mx), axis=1)))
    amax = np.max(alphas)
    lse_alphas = amax + np.log(np.sum(np.exp(alphas - amax)))
    return (-0.5 * n * d * math.log(2.0 * math.pi) + slse - n * lse_alphas
            + log_wishart_prior(icf, d, gamma, m, lgamma_const))


def objective_args(inp):
    d = inp["x"].shape[1]
    return (inp["alphas"], inp["means"], inp["icf"], inp["x"], inp["gamma"], inp["m"],
            log_gamma_distrib(0.5 * (d + inp["m"] + 1), d))


gmm_gradient = srcgrad.grad(gmm_objective, wrt=(0, 1, 2))
gmm_value = srcgrad.jit(gmm_objective)          # for finite differences at the large sizes


def srcgrad_derivative(inp):
    """The gradient (da, dmeans, dicf)."""
    args = objective_args(inp)
    return lambda: gmm_gradient(*args)


fresh_main_gradient = srcgrad.grad(gmm_objective_fresh_main, wrt=(0, 1, 2))
vectorised_gradient = srcgrad.grad(gmm_objective_vectorised, wrt=(0, 1, 2))


def _variant(compiled):
    def make(inp):
        args = objective_args(inp)
        return lambda: compiled(*args)
    return make


# srcgrad-only rows of the benchmark: the same gradient from code written otherwise
VARIANTS = {"scratch array made anew per point": _variant(fresh_main_gradient),
            "vectorised over points": _variant(vectorised_gradient)}


def standard(result):
    return tuple(as_numpy(a) for a in result)


def blocks(inp):
    return [inp[k] for k in WRT]


def outputs(inp, values, j, plain=True):
    """The objective at ``values`` = (alphas, means, icf): plain numpy, or ``srcgrad.jit``."""
    f = gmm_objective if plain else gmm_value
    return np.array([f(*values, *objective_args(inp)[3:])])


def column(std, inp, j):
    return np.concatenate([a.ravel() for a in std])[j:j + 1]


# ---------------------------------------------------------------- JAX: vectorised, jit(grad)

def jax_derivative(inp):
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp
    n, d = inp["x"].shape
    K = inp["alphas"].shape[0]
    rows, cols = np.tril_indices(d, -1)
    order = np.lexsort((rows, cols))                     # below the diagonal, column by column
    rows, cols = rows[order], cols[order]
    gamma, m = inp["gamma"], inp["m"]
    lgc = log_gamma_distrib(0.5 * (d + m + 1), d)

    def loss(alphas, means, icf, x):
        qs = icf[:, :d]
        sum_qs = jnp.sum(qs, axis=1)
        Q = jnp.zeros((K, d, d)).at[:, rows, cols].set(icf[:, d:])
        Q = Q + jax.vmap(jnp.diag)(jnp.exp(qs))
        xc = x[:, None, :] - means[None, :, :]                       # n K d
        z = jnp.einsum("kab,nkb->nka", Q, xc)
        main = alphas + sum_qs - 0.5 * jnp.sum(z * z, axis=2)
        slse = jnp.sum(logsumexp(main, axis=1))
        frob = jnp.sum(jnp.exp(qs) ** 2, axis=1) + jnp.sum(icf[:, d:] ** 2, axis=1)
        prior = jnp.sum(0.5 * gamma * gamma * frob - m * sum_qs)
        C = (d + m + 1) * d * (math.log(gamma) - 0.5 * math.log(2.0)) - lgc
        return (-0.5 * n * d * math.log(2 * math.pi) + slse - n * logsumexp(alphas) + prior - K * C)
    g = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    args = [jnp.asarray(inp[k]) for k in ("alphas", "means", "icf", "x")]
    return lambda: [a.block_until_ready() for a in g(*args)]


# ---------------------------------------------------------------- PyTorch: vectorised, autograd

def torch_derivative(inp):
    import torch
    n, d = inp["x"].shape
    K = inp["alphas"].shape[0]
    rows, cols = np.tril_indices(d, -1)
    order = np.lexsort((rows, cols))
    rows, cols = torch.as_tensor(rows[order]), torch.as_tensor(cols[order])
    gamma, m = inp["gamma"], inp["m"]
    lgc = log_gamma_distrib(0.5 * (d + m + 1), d)
    x = torch.as_tensor(inp["x"])

    def gradient():
        alphas, means, icf = (torch.tensor(inp[k], requires_grad=True) for k in WRT)
        qs = icf[:, :d]
        sum_qs = qs.sum(1)
        Q = torch.zeros((K, d, d), dtype=torch.float64)
        Q[:, rows, cols] = icf[:, d:]
        Q = Q + torch.diag_embed(torch.exp(qs))
        xc = x[:, None, :] - means[None, :, :]
        z = torch.einsum("kab,nkb->nka", Q, xc)
        main = alphas + sum_qs - 0.5 * (z * z).sum(2)
        slse = torch.logsumexp(main, 1).sum()
        frob = (torch.exp(qs) ** 2).sum(1) + (icf[:, d:] ** 2).sum(1)
        prior = (0.5 * gamma * gamma * frob - m * sum_qs).sum()
        C = (d + m + 1) * d * (math.log(gamma) - 0.5 * math.log(2.0)) - lgc
        err = -0.5 * n * d * math.log(2 * math.pi) + slse - n * torch.logsumexp(alphas, 0) + prior - K * C
        return torch.autograd.grad(err, (alphas, means, icf))
    return gradient


# ---------------------------------------------------------------- by hand: Numba, reverse mode

def hand_derivative(inp):
    import numba

    @numba.njit(cache=False, fastmath=False)
    def gradient(alphas, means, icf, x, gamma, m):
        n, d = x.shape
        K = alphas.shape[0]
        da = np.zeros(K)
        dmeans = np.zeros((K, d))
        dicf = np.zeros(icf.shape)
        Q = np.zeros((K, d, d))
        for k in range(K):
            for a in range(d):
                Q[k, a, a] = math.exp(icf[k, a])
            idx = d
            for col in range(d):
                for row in range(col + 1, d):
                    Q[k, row, col] = icf[k, idx]
                    idx += 1
        sum_qs = np.zeros(K)
        for k in range(K):
            for a in range(d):
                sum_qs[k] += icf[k, a]
        main = np.zeros(K)
        Z = np.zeros((K, d))
        XC = np.zeros((K, d))
        for i in range(n):
            for k in range(K):
                for a in range(d):
                    XC[k, a] = x[i, a] - means[k, a]
                s = 0.0
                for a in range(d):
                    z = 0.0
                    for b in range(a + 1):
                        z += Q[k, a, b] * XC[k, b]
                    Z[k, a] = z
                    s += z * z
                main[k] = alphas[k] + sum_qs[k] - 0.5 * s
            mx = main.max()
            tot = 0.0
            for k in range(K):
                main[k] = math.exp(main[k] - mx)
                tot += main[k]
            for k in range(K):
                r = main[k] / tot                      # d lse_i / d main_k
                da[k] += r
                for a in range(d):
                    dicf[k, a] += r                    # through sum_qs
                # d main / d z = -z;  z = Q xc
                for b in range(d):
                    acc = 0.0
                    for a in range(b, d):
                        acc += Q[k, a, b] * Z[k, a]
                    dmeans[k, b] += r * acc            # d xc / d mu = -1
                for a in range(d):
                    dicf[k, a] -= r * Z[k, a] * XC[k, a] * Q[k, a, a]
                idx = d
                for col in range(d):
                    for row in range(col + 1, d):
                        dicf[k, idx] -= r * Z[k, row] * XC[k, col]
                        idx += 1
        amax = alphas.max()
        tot = 0.0
        for k in range(K):
            tot += math.exp(alphas[k] - amax)
        for k in range(K):
            da[k] -= n * math.exp(alphas[k] - amax) / tot
            for a in range(d):
                dicf[k, a] += gamma * gamma * Q[k, a, a] * Q[k, a, a] - m
            for j in range(d, icf.shape[1]):
                dicf[k, j] += gamma * gamma * icf[k, j]
        return da, dmeans, dicf
    args = [inp[k] for k in ("alphas", "means", "icf", "x", "gamma", "m")]
    return lambda: gradient(*args)
