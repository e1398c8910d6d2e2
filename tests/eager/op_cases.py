"""One case per differentiable op: how to call it (with a torch-like module ``T``) and the
shapes of its float inputs. Shared by the gradcheck tests and the comparison with PyTorch."""
import numpy as np

F = lambda T: T.nn.functional  # noqa: E731


def _pos(x):
    return x.abs() + 0.5


CASES = {
    # binary arithmetic with broadcasting
    "add": (lambda T, a, b: a + b, [(2, 3), (3,)]),
    "add_scalar": (lambda T, a: 2.5 + a, [(2, 3)]),
    "add_alpha": (lambda T, a, b: T.add(a, b, alpha=2), [(2, 3), (2, 1)]),
    "sub": (lambda T, a, b: a - b, [(2, 3), (1, 3)]),
    "rsub": (lambda T, a: 1 - a, [(3,)]),
    "mul": (lambda T, a, b: a * b, [(2, 3), (2, 1)]),
    "mul_scalar": (lambda T, a: a * 3, [(4,)]),
    "div": (lambda T, a, b: a / _pos(b), [(2, 3), (3,)]),
    "rdiv": (lambda T, a: 2 / _pos(a), [(3,)]),
    "pow_scalar": (lambda T, a: a ** 3, [(2, 2)]),
    "pow_method": (lambda T, a: (a + 1).pow(2), [(5, 5)]),
    "pow_tensor": (lambda T, a, b: _pos(a) ** b, [(3,), (3,)]),
    "rpow": (lambda T, a: 2 ** a, [(3,)]),
    "neg": (lambda T, a: -a, [(3,)]),
    "maximum": (lambda T, a, b: T.maximum(a, b), [(4,), (4,)]),
    "minimum": (lambda T, a, b: T.minimum(a, b), [(4,), (4,)]),
    "where": (lambda T, a, b: T.where(a > 0, a, b), [(2, 3), (2, 3)]),
    "clamp": (lambda T, a: a.clamp(-0.5, 0.5), [(6,)]),
    # unary functions
    "exp": (lambda T, a: a.exp(), [(2, 3)]),
    "log": (lambda T, a: _pos(a).log(), [(2, 3)]),
    "log1p": (lambda T, a: _pos(a).log1p(), [(3,)]),
    "sqrt": (lambda T, a: _pos(a).sqrt(), [(3,)]),
    "sin": (lambda T, a: a.sin(), [(3,)]),
    "cos": (lambda T, a: a.cos(), [(3,)]),
    "tan": (lambda T, a: (a * 0.3).tan(), [(3,)]),
    "tanh": (lambda T, a: a.tanh(), [(2, 3)]),
    "sigmoid": (lambda T, a: a.sigmoid(), [(2, 3)]),
    "relu": (lambda T, a: a.relu(), [(2, 3)]),
    "abs": (lambda T, a: a.abs(), [(5,)]),
    "atan": (lambda T, a: T.atan(a), [(3,)]),
    "sinh": (lambda T, a: T.sinh(a), [(3,)]),
    "cosh": (lambda T, a: T.cosh(a), [(3,)]),
    "reciprocal": (lambda T, a: _pos(a).reciprocal(), [(3,)]),
    "square": (lambda T, a: a.square(), [(3,)]),
    "erf": (lambda T, a: T.erf(a), [(3,)]),
    # reductions
    "sum": (lambda T, a: a.sum(), [(2, 3)]),
    "sum_dim": (lambda T, a: a.sum(1), [(2, 3)]),
    "sum_dims_keep": (lambda T, a: a.sum((0, 2), keepdim=True), [(2, 3, 4)]),
    "mean": (lambda T, a: a.mean(), [(2, 3)]),
    "mean_dim": (lambda T, a: a.mean(dim=0), [(2, 3)]),
    "max": (lambda T, a: a.max(), [(2, 3)]),
    "max_dim": (lambda T, a: a.max(1)[0], [(2, 3)]),
    "min": (lambda T, a: a.min(), [(2, 3)]),
    "min_dim_keep": (lambda T, a: a.min(0, keepdim=True).values, [(2, 3)]),
    "norm": (lambda T, a: a.norm(), [(2, 3)]),
    "norm_dim": (lambda T, a: a.norm(dim=1), [(2, 3)]),
    "prod": (lambda T, a: a.prod(), [(4,)]),
    "var": (lambda T, a: a.var(), [(5,)]),
    "std_dim": (lambda T, a: a.std(dim=1), [(2, 4)]),
    "logsumexp": (lambda T, a: T.logsumexp(a, dim=1), [(2, 3)]),
    "cumsum": (lambda T, a: a.cumsum(0), [(4,)]),
    # linear algebra
    "matmul_vv": (lambda T, a, b: T.matmul(a, b), [(3,), (3,)]),
    "matmul_vm": (lambda T, a, b: T.matmul(a, b), [(5,), (5, 3)]),
    "matmul_mv": (lambda T, a, b: a @ b, [(2, 3), (3,)]),
    "matmul_mm": (lambda T, a, b: a @ b, [(2, 3), (3, 4)]),
    "matmul_batched": (lambda T, a, b: a @ b, [(2, 2, 3), (3, 4)]),
    "matmul_bb": (lambda T, a, b: a @ b, [(2, 2, 3), (2, 3, 2)]),
    "mm": (lambda T, a, b: T.mm(a, b), [(2, 3), (3, 2)]),
    "mm_t": (lambda T, a, b: T.mm(a, b.t()), [(1, 10), (20, 10)]),
    "dot": (lambda T, a, b: T.dot(a, b), [(4,), (4,)]),
    "outer": (lambda T, a, b: T.outer(a, b), [(3,), (2,)]),
    # shapes and indexing
    "view": (lambda T, a: a.view(3, 2), [(2, 3)]),
    "reshape": (lambda T, a: a.reshape(-1), [(2, 3)]),
    "t": (lambda T, a: a.t(), [(2, 3)]),
    "T": (lambda T, a: a.T, [(2, 3)]),
    "transpose": (lambda T, a: a.transpose(0, 2), [(2, 3, 4)]),
    "permute": (lambda T, a: a.permute(2, 0, 1), [(2, 3, 4)]),
    "unsqueeze": (lambda T, a: a.unsqueeze(1), [(3,)]),
    "squeeze": (lambda T, a: a.squeeze(1), [(3, 1)]),
    "expand": (lambda T, a: a.expand(2, 3), [(3,)]),
    "flatten": (lambda T, a: a.flatten(), [(2, 3)]),
    "select": (lambda T, a: a[1], [(2, 3)]),
    "slice": (lambda T, a: a[:, 1:], [(2, 3)]),
    "index_mixed": (lambda T, a: a[0, 1:], [(2, 3)]),
    "index_list": (lambda T, a: a[[0, 0, 1]], [(2, 3)]),
    "index_mask": (lambda T, a: a[a > 0], [(2, 3)]),
    "index_none": (lambda T, a: a[None, :, 1], [(2, 3)]),
    "cat": (lambda T, a, b: T.cat([a, b], dim=1), [(2, 3), (2, 2)]),
    "stack": (lambda T, a, b: T.stack([a, b]), [(3,), (3,)]),
    "clone": (lambda T, a: a.clone(), [(3,)]),
    "to_double": (lambda T, a: a.float().double(), [(3,)]),
    "flip": (lambda T, a: a.flip(0), [(3,)]),
    "split": (lambda T, a: a.split(2)[1], [(5,)]),
    "setitem": (lambda T, a, b: _setitem(a, b), [(4,), (2,)]),
    "inplace_chain": (lambda T, a: (a * 1).mul_(2).add_(1).exp_(), [(3,)]),
    # nn.functional
    "bce_logits": (lambda T, a, b: F(T).binary_cross_entropy_with_logits(a, b.sigmoid()), [(3,), (3,)]),
    "bce_logits_pos_weight": (lambda T, a, b: F(T).binary_cross_entropy_with_logits(
        a, b.sigmoid(), pos_weight=T.tensor([0.5, 1.0, 2.0], dtype=a.dtype), reduction="sum"), [(2, 3), (2, 3)]),
    "bce": (lambda T, a, b: F(T).binary_cross_entropy(a.sigmoid(), b.sigmoid()), [(4,), (4,)]),
    "mse": (lambda T, a, b: F(T).mse_loss(a, b), [(2, 3), (2, 3)]),
    "mse_none": (lambda T, a, b: F(T).mse_loss(a, b, reduction="none"), [(3,), (3,)]),
    "cross_entropy": (lambda T, a: F(T).cross_entropy(a, T.tensor([0, 2, 1])), [(3, 4)]),
    "cross_entropy_sum": (lambda T, a: F(T).cross_entropy(a, T.tensor([1, 1]), reduction="sum"), [(2, 3)]),
    "nll": (lambda T, a: F(T).nll_loss(a, T.tensor([0, 2])), [(2, 3)]),
    "nll_weight": (lambda T, a: F(T).nll_loss(a, T.tensor([0, 2, 2]), weight=T.tensor([0.5, 1.0, 2.0],
                                                                                      dtype=a.dtype)), [(3, 3)]),
    "nll_ignore_index": (lambda T, a: F(T).nll_loss(a, T.tensor([0, -100, 2])), [(3, 3)]),
    "nll_ignore_sum": (lambda T, a: F(T).nll_loss(a, T.tensor([1, 1, 0]), ignore_index=1, reduction="sum"),
                       [(3, 3)]),
    "nll_none": (lambda T, a: F(T).nll_loss(a, T.tensor([2, 0]), reduction="none"), [(2, 3)]),
    "softmax": (lambda T, a: F(T).softmax(a, dim=1), [(2, 3)]),
    "log_softmax": (lambda T, a: F(T).log_softmax(a, dim=0), [(2, 3)]),
    "linear": (lambda T, x, w, b: F(T).linear(x, w, b), [(2, 3), (4, 3), (4,)]),
    "linear_1d": (lambda T, x, w, b: F(T).linear(x, w, b), [(3,), (4, 3), (4,)]),
    "linear_nobias": (lambda T, x, w: F(T).linear(x, w), [(2, 3), (4, 3)]),
    "F_relu": (lambda T, a: F(T).relu(a), [(3,)]),
    "F_sigmoid": (lambda T, a: F(T).sigmoid(a), [(3,)]),
    "F_tanh": (lambda T, a: F(T).tanh(a), [(3,)]),
}


# float32 rounding inside the case defeats finite differences; compared with PyTorch only
NO_GRADCHECK = {"to_double"}


def _setitem(a, b):
    y = a * 1
    y[1:3] = b * 2
    return y


def inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    # keep values away from kinks (|x| > 0.1) and ties so finite differences are exact enough
    out = []
    for s in shapes:
        v = rng.uniform(0.2, 1.5, size=s) * rng.choice([-1.0, 1.0], size=s)
        out.append(v)
    return out
