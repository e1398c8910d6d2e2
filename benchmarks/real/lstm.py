"""LSTM: ADBench's objective (section 4.4 of the ADBench paper): a stack of l LSTM layers over a
sequence of c characters (one-hot vectors of b), whose prediction of the next character goes
through a log-softmax; the loss is minus the mean log-likelihood. Gradient with respect to
``main_params`` (2l, 4b: each layer's weights and biases, four gates of b) and ``extra_params``
(3, b: input weights, output weights and biases). ADBench's LSTM multiplies element-wise (each
gate's "weight" is a vector of b), and so does this one.
"""
import math

import numpy as np

import srcgrad

from .common import as_numpy

SIZES = {"l=2 c=1024 b=14": dict(l=2, c=1024, b=14), "l=4 c=4096 b=14": dict(l=4, c=4096, b=14)}
QUICK = {"l=2 c=64 b=14": dict(l=2, c=64, b=14), "l=2 c=256 b=14": dict(l=2, c=256, b=14)}
TINY = dict(l=2, c=6, b=5)
WRT = ("main_params", "extra_params")


def inputs(l, c, b, seed=0):
    rng = np.random.default_rng(seed)
    sequence = np.zeros((c, b))
    sequence[np.arange(c), rng.integers(0, b, c)] = 1.0
    return dict(main_params=rng.standard_normal((2 * l, 4 * b)) * 0.5,
                extra_params=rng.standard_normal((3, b)) * 0.5,
                state=rng.standard_normal((2 * l, b)) * 0.5, sequence=sequence)


# ---------------------------------------------------------------- srcgrad: plain numpy

def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_model(weight, bias, hidden, cell, inp):
    b = hidden.shape[0]
    forget = sigmoid(inp * weight[0:b] + bias[0:b])
    ingate = sigmoid(hidden * weight[b:2 * b] + bias[b:2 * b])
    outgate = sigmoid(inp * weight[2 * b:3 * b] + bias[2 * b:3 * b])
    change = np.tanh(hidden * weight[3 * b:] + bias[3 * b:])
    cell = cell * forget + ingate * change
    hidden = outgate * np.tanh(cell)
    return hidden, cell


def lstm_predict(main_params, extra_params, state, inp):
    new_state = state.copy()
    x = inp * extra_params[0]
    for i in range(0, state.shape[0], 2):
        hidden, cell = lstm_model(main_params[i], main_params[i + 1], state[i], state[i + 1], x)
        new_state[i] = hidden
        new_state[i + 1] = cell
        x = hidden
    return x * extra_params[1] + extra_params[2], new_state


def lstm_objective(main_params, extra_params, state, sequence):
    total = 0.0
    count = 0
    inp = sequence[0]
    for t in range(sequence.shape[0] - 1):
        ypred, state = lstm_predict(main_params, extra_params, state, inp)
        mx = np.max(ypred)
        ynorm = ypred - (mx + np.log(np.sum(np.exp(ypred - mx))))
        ygold = sequence[t + 1]
        total += np.sum(ygold * ynorm)
        count += ygold.shape[0]
        inp = ygold
    return -total / count


lstm_gradient = srcgrad.grad(lstm_objective, wrt=(0, 1))
lstm_value = srcgrad.jit(lstm_objective)        # for finite differences at the large sizes


def srcgrad_derivative(inp):
    """The gradient (dmain, dextra)."""
    args = [inp[k] for k in ("main_params", "extra_params", "state", "sequence")]
    return lambda: lstm_gradient(*args)


def standard(result):
    return tuple(as_numpy(a) for a in result)


def blocks(inp):
    return [inp[k] for k in WRT]


def outputs(inp, values, j, plain=True):
    """The loss at ``values`` = (main_params, extra_params): plain numpy, or ``srcgrad.jit``."""
    f = lstm_objective if plain else lstm_value
    return np.array([f(*values, inp["state"], inp["sequence"])])


def column(std, inp, j):
    return np.concatenate([a.ravel() for a in std])[j:j + 1]


# ---------------------------------------------------------------- JAX: lax.scan over time, jit(grad)

def jax_derivative(inp):
    import jax
    import jax.numpy as jnp
    l = inp["state"].shape[0] // 2

    def layer(weight, bias, hidden, cell, x):
        b = hidden.shape[0]
        forget = jax.nn.sigmoid(x * weight[0:b] + bias[0:b])
        ingate = jax.nn.sigmoid(hidden * weight[b:2 * b] + bias[b:2 * b])
        outgate = jax.nn.sigmoid(x * weight[2 * b:3 * b] + bias[2 * b:3 * b])
        change = jnp.tanh(hidden * weight[3 * b:] + bias[3 * b:])
        cell = cell * forget + ingate * change
        return outgate * jnp.tanh(cell), cell

    def loss(main_params, extra_params, state, sequence):
        def step(state, pair):
            x, ygold = pair
            x = x * extra_params[0]
            rows = []
            for i in range(l):
                h, c = layer(main_params[2 * i], main_params[2 * i + 1], state[2 * i], state[2 * i + 1], x)
                rows += [h, c]
                x = h
            ypred = x * extra_params[1] + extra_params[2]
            ynorm = ypred - jax.scipy.special.logsumexp(ypred)
            return jnp.stack(rows), jnp.sum(ygold * ynorm)
        _, totals = jax.lax.scan(step, state, (sequence[:-1], sequence[1:]))
        return -jnp.sum(totals) / ((sequence.shape[0] - 1) * sequence.shape[1])
    g = jax.jit(jax.grad(loss, argnums=(0, 1)))
    args = [jnp.asarray(inp[k]) for k in ("main_params", "extra_params", "state", "sequence")]
    return lambda: [a.block_until_ready() for a in g(*args)]


# ---------------------------------------------------------------- PyTorch: a loop, autograd

def torch_derivative(inp):
    import torch
    state0, sequence = torch.as_tensor(inp["state"]), torch.as_tensor(inp["sequence"])
    l = state0.shape[0] // 2

    def layer(weight, bias, hidden, cell, x):
        b = hidden.shape[0]
        forget = torch.sigmoid(x * weight[0:b] + bias[0:b])
        ingate = torch.sigmoid(hidden * weight[b:2 * b] + bias[b:2 * b])
        outgate = torch.sigmoid(x * weight[2 * b:3 * b] + bias[2 * b:3 * b])
        change = torch.tanh(hidden * weight[3 * b:] + bias[3 * b:])
        cell = cell * forget + ingate * change
        return outgate * torch.tanh(cell), cell

    def gradient():
        main, extra = (torch.tensor(inp[k], requires_grad=True) for k in WRT)
        state = [state0[i] for i in range(2 * l)]
        total = 0.0
        x_in = sequence[0]
        for t in range(sequence.shape[0] - 1):
            x = x_in * extra[0]
            for i in range(l):
                state[2 * i], state[2 * i + 1] = layer(main[2 * i], main[2 * i + 1], state[2 * i], state[2 * i + 1], x)
                x = state[2 * i]
            ypred = x * extra[1] + extra[2]
            ygold = sequence[t + 1]
            total = total + torch.sum(ygold * (ypred - torch.logsumexp(ypred, 0)))
            x_in = ygold
        loss = -total / ((sequence.shape[0] - 1) * sequence.shape[1])
        return torch.autograd.grad(loss, (main, extra))
    return gradient


# ---------------------------------------------------------------- by hand: Numba, reverse mode

def hand_derivative(inp):
    import numba

    @numba.njit(cache=False)
    def gradient(main_params, extra_params, state, sequence):
        l2, b = state.shape
        l = l2 // 2
        c = sequence.shape[0]
        T = c - 1
        # forward, keeping each step's layer inputs, gates and states
        X = np.empty((T, l, b))                      # input of each layer
        H0 = np.empty((T, l, b))                     # hidden and cell before the step
        C0 = np.empty((T, l, b))
        F = np.empty((T, l, b))
        I = np.empty((T, l, b))
        O = np.empty((T, l, b))
        G = np.empty((T, l, b))
        C1 = np.empty((T, l, b))
        P = np.empty((T, b))                          # softmax of the prediction
        hid = np.empty((l, b))
        cel = np.empty((l, b))
        for i in range(l):
            hid[i] = state[2 * i]
            cel[i] = state[2 * i + 1]
        for t in range(T):
            for j in range(b):
                X[t, 0, j] = sequence[t, j] * extra_params[0, j]
            for i in range(l):
                W = main_params[2 * i]
                Bs = main_params[2 * i + 1]
                for j in range(b):
                    x, h, cc = X[t, i, j], hid[i, j], cel[i, j]
                    H0[t, i, j], C0[t, i, j] = h, cc
                    f = 1.0 / (1.0 + math.exp(-(x * W[j] + Bs[j])))
                    ig = 1.0 / (1.0 + math.exp(-(h * W[b + j] + Bs[b + j])))
                    o = 1.0 / (1.0 + math.exp(-(x * W[2 * b + j] + Bs[2 * b + j])))
                    g = math.tanh(h * W[3 * b + j] + Bs[3 * b + j])
                    cn = cc * f + ig * g
                    F[t, i, j], I[t, i, j], O[t, i, j], G[t, i, j], C1[t, i, j] = f, ig, o, g, cn
                    cel[i, j] = cn
                    hid[i, j] = o * math.tanh(cn)
                    if i + 1 < l:
                        X[t, i + 1, j] = hid[i, j]
            mx = -np.inf
            for j in range(b):
                y = hid[l - 1, j] * extra_params[1, j] + extra_params[2, j]
                P[t, j] = y
                mx = max(mx, y)
            s = 0.0
            for j in range(b):
                P[t, j] = math.exp(P[t, j] - mx)
                s += P[t, j]
            for j in range(b):
                P[t, j] /= s
        # reverse
        scale = -1.0 / (T * b)
        dmain = np.zeros(main_params.shape)
        dextra = np.zeros(extra_params.shape)
        dh = np.zeros((l, b))                        # adjoints of the carried state
        dc = np.zeros((l, b))
        dx = np.empty(b)
        for t in range(T - 1, -1, -1):
            ysum = 0.0
            for j in range(b):
                ysum += sequence[t + 1, j]
            for j in range(b):
                dy = scale * (sequence[t + 1, j] - P[t, j] * ysum)
                hl = O[t, l - 1, j] * math.tanh(C1[t, l - 1, j])
                dextra[1, j] += dy * hl
                dextra[2, j] += dy
                dx[j] = dy * extra_params[1, j]        # adjoint of the top layer's new hidden
            for i in range(l - 1, -1, -1):
                W = main_params[2 * i]
                for j in range(b):
                    dhn = dh[i, j] + dx[j]
                    tc = math.tanh(C1[t, i, j])
                    f, ig, o, g = F[t, i, j], I[t, i, j], O[t, i, j], G[t, i, j]
                    do = dhn * tc
                    dcn = dc[i, j] + dhn * o * (1.0 - tc * tc)
                    df = dcn * C0[t, i, j]
                    di = dcn * g
                    dg = dcn * ig
                    zf, zi, zo, zg = df * f * (1 - f), di * ig * (1 - ig), do * o * (1 - o), dg * (1 - g * g)
                    x, h = X[t, i, j], H0[t, i, j]
                    dmain[2 * i, j] += zf * x
                    dmain[2 * i + 1, j] += zf
                    dmain[2 * i, b + j] += zi * h
                    dmain[2 * i + 1, b + j] += zi
                    dmain[2 * i, 2 * b + j] += zo * x
                    dmain[2 * i + 1, 2 * b + j] += zo
                    dmain[2 * i, 3 * b + j] += zg * h
                    dmain[2 * i + 1, 3 * b + j] += zg
                    dc[i, j] = dcn * f
                    dh[i, j] = zi * W[b + j] + zg * W[3 * b + j]
                    dx[j] = zf * W[j] + zo * W[2 * b + j]       # to the layer below (or the input)
            for j in range(b):
                dextra[0, j] += dx[j] * sequence[t, j]
        return dmain, dextra
    args = [inp[k] for k in ("main_params", "extra_params", "state", "sequence")]
    return lambda: gradient(*args)
