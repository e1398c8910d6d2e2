"""``LBFGS`` (PyTorch's ``torch.optim.LBFGS``): limited-memory BFGS, a quasi-Newton method that
re-evaluates the loss through a closure, optionally with a strong-Wolfe line search.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.tensor([-1.5, 2.0], dtype=torch.float64, requires_grad=True)
    >>> opt = optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2
    ...     loss.backward()
    ...     return loss
    >>> for _ in range(5):
    ...     loss = opt.step(closure)
"""
import numpy as np

from ..eager.tensor import Tensor, wrap
from ..eager.versions import bump_version
from .optimizer import Optimizer
from .updates import check_lr, scalar

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped to
    ``bounds`` (by default [x1, x2]); the bounds' midpoint when the cubic has no minimum."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    # Nocedal & Wright, "Numerical Optimization", 2nd ed., equation (3.59)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step ``t`` along ``d`` that satisfies the strong Wolfe conditions (Nocedal & Wright,
    algorithms 3.5 and 3.6): bracket a step, then zoom into the bracket by cubic interpolation.
    ``obj_func(x, t, d)`` gives the loss and flat gradient at ``x + t d``; ``f``, ``g`` and
    ``gtd`` are the loss, gradient and directional derivative at ``x``.
    Returns ``(loss, flat gradient, t, number of evaluations)``."""
    d_norm = np.abs(d).max()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracketing phase
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            # sufficient decrease fails (or the loss went up): the step lies in [t_prev, t]
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            # the curvature condition holds as well: done
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            # the slope turned positive: a minimum lies in [t_prev, t]
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # extrapolate, between 1.01 t and 10 t
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        previous = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:
        # out of evaluations: choose between the start and the last step
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase (with max_ls < 0 there is no bracket: bracket_f is unbound here, as in PyTorch)
    low_pos = 0 if bracket_f[0] <= bracket_f[-1] else 1
    if not done and ls_iter < max_ls:
        low_pos, zoom_evals = _zoom(obj_func, x, d, f, gtd, bracket, bracket_f, bracket_g, bracket_gtd, c1, c2,
                                    tolerance_change, max_ls - ls_iter, d_norm)
        ls_func_evals += zoom_evals
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _zoom(obj_func, x, d, f, gtd, bracket, bracket_f, bracket_g, bracket_gtd, c1, c2, tolerance_change, max_ls,
          d_norm):
    """The zoom phase of ``_strong_wolfe``: shrink the bracket (its lists updated in place) until
    a step satisfies both conditions, within ``max_ls`` evaluations.
    Returns ``(position of the bracket's low end, number of evaluations)``."""
    done = insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    ls_iter = 0
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        t, insuf_progress = _keep_inside(t, bracket, insuf_progress)

        f_new, g_new = obj_func(x, t, d)
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # not a sufficient decrease: t becomes the high end
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the old low end becomes the high end
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new, gtd_new
    return low_pos, ls_iter


def _keep_inside(t, bracket, insuf_progress):
    """``t`` moved away from the bracket's ends unless the last steps made progress (the zoom's
    safeguard). Returns ``(t, insuf_progress)``."""
    eps = 0.1 * (max(bracket) - min(bracket))
    if min(max(bracket) - t, t - min(bracket)) < eps:
        if insuf_progress or t >= max(bracket) or t <= min(bracket):
            if abs(t - max(bracket)) < abs(t - min(bracket)):
                t = max(bracket) - eps
            else:
                t = min(bracket) + eps
            insuf_progress = False
        else:
            insuf_progress = True
    else:
        insuf_progress = False
    return t, insuf_progress


def _saved(value):
    """A value of the step's arithmetic as LBFGS's state keeps it: arrays and numpy scalars as
    tensors (PyTorch's state holds 0-d tensors there), lists element by element."""
    if isinstance(value, list):
        return [_saved(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return wrap(value)
    return value


def _loaded(value):
    """The inverse of ``_saved``: tensors back to arrays (0-d ones to numpy scalars)."""
    if isinstance(value, list):
        return [_loaded(v) for v in value]
    if isinstance(value, Tensor):
        return value._data if value._data.ndim else value._data[()]
    return value


def _load_history(state):
    """What the last ``step`` left in LBFGS's state: ``(d, t, old_dirs, old_stps, ro, H_diag,
    prev_flat_grad, prev_loss)``, as arrays (None before the first step)."""
    return (_loaded(state.get("d")), _loaded(state.get("t")), _loaded(state.get("old_dirs")),
            _loaded(state.get("old_stps")), _loaded(state.get("ro")), _loaded(state.get("H_diag")),
            _loaded(state.get("prev_flat_grad")), state.get("prev_loss"))


def _save_history(state, d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss):
    """Keep the history for the next ``step``, under PyTorch's keys and in its order."""
    state["d"] = _saved(d)
    state["t"] = _saved(t)
    state["old_dirs"] = _saved(old_dirs)
    state["old_stps"] = _saved(old_stps)
    state["ro"] = _saved(ro)
    state["H_diag"] = _saved(H_diag)
    state["prev_flat_grad"] = _saved(prev_flat_grad)
    state["prev_loss"] = prev_loss


def _update_history(flat_grad, prev_flat_grad, d, t, old_dirs, old_stps, ro, H_diag, history_size):
    """Add the curvature pair of the last move ``t d`` to the history (the lists, in place),
    when y.s > 1e-10, dropping the oldest pair beyond ``history_size``. Returns ``H_diag``,
    the initial inverse Hessian's scale y.s / y.y (unchanged when the pair is skipped)."""
    y = flat_grad - prev_flat_grad
    s = d * t
    ys = y.dot(s)
    if ys > 1e-10:
        if len(old_dirs) == history_size:          # forget the oldest pair
            old_dirs.pop(0)
            old_stps.pop(0)
            ro.pop(0)
        old_dirs.append(y)
        old_stps.append(s)
        ro.append(1.0 / ys)
        H_diag = ys / y.dot(y)
    return H_diag


def _two_loop_direction(state, flat_grad, old_dirs, old_stps, ro, H_diag, history_size):
    """The direction ``d = -H g`` by the two-loop recursion over the history; the first loop's
    coefficients are kept in ``state["al"]``, as PyTorch keeps them."""
    num_old = len(old_dirs)
    if "al" not in state:
        state["al"] = [None] * history_size
    al = _loaded(state["al"])
    q = -flat_grad
    for i in range(num_old - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q += old_dirs[i] * float(-al[i])
    d = r = q * H_diag
    for i in range(num_old):
        be_i = old_dirs[i].dot(r) * ro[i]
        r += old_stps[i] * float(al[i] - be_i)
    state["al"] = _saved(al)
    return d


def _should_stop(n_iter, max_iter, current_evals, max_eval, opt_cond, d, t, loss, prev_loss, tolerance_change):
    """The stopping conditions after a move, tested in PyTorch's order: out of iterations or
    evaluations, the gradient small enough, or the step or the loss change too small."""
    if n_iter == max_iter:
        return True
    if current_evals >= max_eval:
        return True
    if opt_cond:
        return True
    if np.abs(d * t).max() <= tolerance_change:
        return True
    return abs(loss - prev_loss) < tolerance_change


class LBFGS(Optimizer):
    """L-BFGS (Nocedal & Wright, algorithm 7.4, after minFunc), as PyTorch's ``torch.optim.LBFGS``.
    ``step(closure)`` runs up to ``max_iter`` iterations (``max_eval`` loss evaluations): each
    takes the direction ``d = -H g`` from the two-loop recursion over the last ``history_size``
    pairs ``s = x_{k+1} - x_k``, ``y = g_{k+1} - g_k`` (pairs with ``y.s <= 1e-10`` are skipped),
    ``H_0 = (y.s / y.y) I``, and moves ``lr * d`` (``min(1, 1/|g|_1) * lr`` on the very first
    iteration) or, with ``line_search_fn="strong_wolfe"``, as far as a strong-Wolfe line search
    says. It stops early when ``max|g| <= tolerance_grad`` or the step or the loss changes by
    less than ``tolerance_change``.

    The arithmetic is float64 or float32 as the parameters are (scalars such as ``y.s`` are
    rounded to the parameters' dtype as PyTorch's 0-d tensors are); there is one parameter group
    and the state lives in ``state[params[0]]`` with PyTorch's keys. The closure must clear the
    gradients, compute the loss, call ``backward`` and return the loss.

    >>> import srcgrad as torch
    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = LBFGS([w], lr=1, history_size=10, line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 3.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> loss = opt.step(closure)         # the loss at the start; w at the minimum
    >>> loss, w
    (tensor(29., grad_fn=<SumBackward0>), tensor([3.0000, 3.0000], requires_grad=True))
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    @property
    def _params(self):
        return self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        """All gradients as one new flat array (zeros for a parameter without one)."""
        parts = [np.zeros(p._data.size, p._data.dtype) if p._grad is None else p._grad._data.ravel()
                 for p in self._params]
        return np.concatenate(parts)

    def _add_grad(self, step_size, update):
        """``p += step_size * update`` for each parameter's slice of the flat ``update``."""
        step_size = float(step_size)
        offset = 0
        for p in self._params:
            w = p._data
            w += update[offset:offset + w.size].reshape(w.shape) * step_size
            offset += w.size
            bump_version(p)

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            bump_version(p)

    def _directional_evaluate(self, closure, x, t, d):
        """The loss and flat gradient at ``x + t d``; the parameters are then put back to ``x``."""
        self._add_grad(t, d)
        loss = float(self._closure_loss(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` re-evaluates the model and
        returns the loss. Returns the loss of the first evaluation."""
        group = self.param_groups[0]
        lr = group["lr"]
        if isinstance(lr, Tensor):
            lr = scalar(lr)
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        with np.errstate(all="ignore"):
            return self._run(closure, lr, max_iter, max_eval, tolerance_grad, tolerance_change, line_search_fn,
                             history_size)

    def _run(self, closure, lr, max_iter, max_eval, tolerance_grad, tolerance_change, line_search_fn,
             history_size):
        # PyTorch keeps the whole state with the first parameter
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._closure_loss(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        opt_cond = np.abs(flat_grad).max() <= tolerance_grad
        if opt_cond:                                        # already optimal
            return orig_loss

        # the state of the previous step
        d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss = _load_history(state)

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                H_diag = _update_history(flat_grad, prev_flat_grad, d, t, old_dirs, old_stps, ro, H_diag,
                                         history_size)
                d = _two_loop_direction(state, flat_grad, old_dirs, old_stps, ro, H_diag, history_size)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            # the step length: on the very first iteration scaled down to the gradient's size
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr

            gtd = flat_grad.dot(d)      # the directional derivative
            if gtd > -tolerance_change:
                break

            loss, flat_grad, t, opt_cond, ls_func_evals = self._move_along(
                closure, line_search_fn, d, t, loss, flat_grad, gtd, opt_cond, tolerance_grad,
                max_eval, current_evals, n_iter == max_iter)
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if _should_stop(n_iter, max_iter, current_evals, max_eval, opt_cond, d, t, loss, prev_loss,
                            tolerance_change):
                break

        _save_history(state, d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss)
        return orig_loss

    def _move_along(self, closure, line_search_fn, d, t, loss, flat_grad, gtd, opt_cond, tolerance_grad,
                    max_eval, current_evals, last):
        """Move the parameters along ``d``: by the strong-Wolfe line search's step, or by ``t``
        (then the loss and gradient there, unless this is the ``last`` iteration).
        Returns ``(loss, flat_grad, t, opt_cond, evaluations)``, as they are after the move."""
        ls_func_evals = 0
        if line_search_fn is not None:
            if line_search_fn != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = self._clone_param()

            def obj_func(x, t, d):
                return self._directional_evaluate(closure, x, t, d)

            loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                              max_ls=max_eval - current_evals)
            self._add_grad(t, d)
            opt_cond = np.abs(flat_grad).max() <= tolerance_grad
        else:
            # a fixed step, then the loss and gradient there (not after the last iteration)
            self._add_grad(t, d)
            if not last:
                loss = float(self._closure_loss(closure))
                flat_grad = self._gather_flat_grad()
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                ls_func_evals = 1
        return loss, flat_grad, t, opt_cond, ls_func_evals
