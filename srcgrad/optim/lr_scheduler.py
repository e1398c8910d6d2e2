"""Learning-rate schedulers (PyTorch's ``torch.optim.lr_scheduler``): each ``step()`` moves
``last_epoch`` on by one and writes the new learning rates into the optimizer's groups.

Example:
    >>> import srcgrad as torch
    >>> import srcgrad.optim as optim
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = optim.SGD([w], lr=0.1)
    >>> sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> for epoch in range(4):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.025]
"""
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from functools import wraps
from weakref import ref

from ..eager.tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "PolynomialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau",
           "CosineAnnealingWarmRestarts", "OneCycleLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please "
    "use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. Please open an issue if you are "
    "unable to replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")


def _copy(value):
    # a tensor lr is copied so that the scheduler's lists never alias the optimizer's groups
    return value.clone() if isinstance(value, Tensor) else value


def _group_values(optimizer, key):
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group, key, value):
    # a tensor option is filled in place, so that whoever holds it sees the new value
    if isinstance(group[key], Tensor):
        group[key].fill_(float(value))
    else:
        group[key] = value


def _format_param(name, optimizer, param):
    """One value per parameter group: ``param`` repeated, or a list of the right length."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                             f"{len(param)} values, param_groups has {len(optimizer.param_groups)}.")
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(value) for value in param]


def _mark_step_calls(optimizer):
    """Make ``optimizer.step`` record that it ran (``_opt_called``), so that the scheduler can warn
    when its own ``step()`` comes first."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = ref(optimizer)        # a weak reference: no cycle through the optimizer's own attribute
    step = optimizer.step.__func__

    @wraps(step)
    def marked_step(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return step(opt, *args, **kwargs)

    marked_step._wrapped_by_lr_sched = True
    optimizer.step = marked_step


class LRScheduler:
    """Base class of the schedulers: subclasses implement ``get_lr()``, the learning rates for
    epoch ``last_epoch`` (usually from the current ones, "chainable"), and may give
    ``_get_closed_form_lr()`` for ``step(epoch)``.

    Making a scheduler stores each group's ``initial_lr`` (``base_lrs``) and takes a first step
    to epoch 0. Pass ``last_epoch`` only to resume (the groups must then have ``initial_lr``).

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = ExponentialLR(opt, gamma=0.9)
    >>> opt.step(); sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.09]
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                        "last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume training from a "
                        "checkpoint but haven't properly loaded the optimizer state\n2. You're using last_epoch >= 0 "
                        "for a fresh training run (not recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _mark_step_calls(optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """Every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last ``step()`` set, one per parameter group."""
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def _warn_if_outside_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)

    def step(self, epoch=None):
        """Move to the next epoch (or, deprecated, to ``epoch``) and set the groups' ``lr``.
        Call it after ``optimizer.step()``."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                    "initialization. Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. "
                    "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, "
                    "you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  "
                    "Failure to do this will result in PyTorch skipping the first value of the learning rate "
                    "schedule. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """Move to the next epoch (or to ``epoch``, by the closed form where there is one) and
        write the new learning rates into the groups."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False

        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


# the old name, still used by some code
class _LRScheduler(LRScheduler):
    pass


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``; ``lr_lambda`` is one function or one per group.

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = LambdaLR(opt, lr_lambda=lambda epoch: 0.95 ** epoch)
    >>> for epoch in range(2):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.09025]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """As the base class, but plain functions (and lambdas) are saved as None: only the
        attributes of callable objects are kept."""
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        lr_lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self):
        self._warn_if_outside_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs:
    ``lr = initial_lr * gamma ** (epoch // step_size)``.

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = StepLR(opt, step_size=30, gamma=0.1)
    >>> for epoch in range(30):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.01]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each epoch in ``milestones`` (a milestone
    listed twice multiplies by ``gamma ** 2``).

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
    >>> for epoch in range(80):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.001]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_outside_step()
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch] for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch: ``lr = initial_lr * gamma ** epoch``.

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = ExponentialLR(opt, gamma=0.95)
    >>> for epoch in range(2):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.09025]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_outside_step()
        # the first step made by the constructor leaves a resumed schedule where it is
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing (SGDR, Loshchilov & Hutter, without restarts), in PyTorch's recursive form
    that follows changes made to ``lr`` from outside::

        lr_{t+1} = eta_min + (lr_t - eta_min) * (1 + cos(pi (t+1) / T_max)) / (1 + cos(pi t / T_max))

    which, left alone, equals ``eta_min + (initial_lr - eta_min) * (1 + cos(pi t / T_max)) / 2``;
    past ``T_max`` the learning rate climbs back, with period ``2 * T_max``.

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = CosineAnnealingLR(opt, T_max=50, eta_min=1e-5)
    >>> for epoch in range(25):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.050005]
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_outside_step()
        t, T, eta_min = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and t > 0:
            # the first step of a resumed schedule: the closed form
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(t * math.pi / T)) / 2 for base_lr in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            # leaving the minimum, where the ratio below would divide by 1 + cos(pi) = 0
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (group["lr"] - eta_min)
                + eta_min for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the learning rate by ``factor`` until epoch ``total_iters``, then restore it:
    ``lr = initial_lr * factor`` for ``epoch < total_iters``, ``initial_lr`` after (chainable: the
    factor is applied at epoch 0 and undone at ``total_iters``).

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = ConstantLR(opt, factor=0.5, total_iters=4)     # a warm-up at half the rate
    >>> for epoch in range(4):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.1]
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor that goes linearly from ``start_factor`` at epoch 0 to
    ``end_factor`` at epoch ``total_iters`` and stays there::

        lr = initial_lr * (start_factor + (end_factor - start_factor) * min(epoch, total_iters) / total_iters)

    computed in the chainable form (each step multiplies by the ratio of successive factors).

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = LinearLR(opt, start_factor=0.1, total_iters=10)   # a linear warm-up
    >>> for epoch in range(5):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.055]
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        # factor(t) / factor(t - 1), with factor(t) = start + (end - start) t / total_iters
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rate polynomially to zero at epoch ``total_iters``::

        lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power

    computed in the chainable form (each step multiplies by the ratio of successive values).

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = PolynomialLR(opt, total_iters=50, power=0.9)
    >>> for epoch in range(25):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.053589]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        t, n = self.last_epoch, self.total_iters
        decay_factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


def _check_schedulers(owner, schedulers, optimizer):
    """The checks SequentialLR and ChainedScheduler make of the schedulers they are given."""
    name = type(owner).__name__
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                             "kwargs to be specified when calling `step`, but got one at index "
                             f"{i} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is "
                             f"different from {type(optimizer).__name__}.")


def _nested_state_dict(scheduler):
    # every attribute but the optimizer, with the inner schedulers' own state_dicts
    state = {key: value for key, value in scheduler.__dict__.items() if key not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [s.state_dict() for s in scheduler._schedulers]
    return state


def _load_nested_state_dict(scheduler, state_dict):
    state = {key: value for key, value in state_dict.items() if key != "_schedulers"}
    scheduler.__dict__.update(state)
    for inner, saved in zip(scheduler._schedulers, state_dict["_schedulers"]):
        inner.load_state_dict(saved)


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after the other: ``schedulers[i]`` from epoch ``milestones[i - 1]``
    on. At a milestone the next scheduler starts from its epoch 0 (by its closed form where it
    has one), from the learning rates its predecessor left.

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
    >>> decay = ExponentialLR(opt, gamma=0.9)
    >>> sched = SequentialLR(opt, schedulers=[warmup, decay], milestones=[5])
    >>> for epoch in range(6):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.09]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(self, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer

        # undo the first step each scheduler took when it was made, then start the first one again
        for group in self.optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None):
        """Take one epoch off each (possibly nested) scheduler: undoes the step each took when made."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        """The attributes (not the optimizer), with each scheduler's own state_dict."""
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict):
        _load_nested_state_dict(self, state_dict)


class ChainedScheduler(LRScheduler):
    """Step several chainable schedulers together: each ``step()`` steps all of them in order, so
    that their factors multiply.

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = ChainedScheduler([ConstantLR(opt, factor=0.1, total_iters=2), ExponentialLR(opt, gamma=0.9)])
    >>> for epoch in range(2):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.081]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def state_dict(self):
        """The attributes (not the optimizer), with each scheduler's own state_dict."""
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict):
        _load_nested_state_dict(self, state_dict)


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by ``factor`` when a metric has not improved for more than
    ``patience`` epochs, then wait ``cooldown`` epochs before counting again. ``step(metric)``
    takes the metric (lower is better with ``mode='min'``). A value improves on the best one when
    it beats ``best * (1 - threshold)`` ('rel', in 'min' mode), ``best * (1 + threshold)`` ('rel',
    'max'), or ``best -/+ threshold`` ('abs'). The rate never drops below ``min_lr``, and a change
    smaller than ``eps`` is skipped.

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=3)
    >>> for val_loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9]:       # no better than 0.9 for 4 epochs
    ...     sched.step(val_loss)
    >>> sched.get_last_lr()
    [0.05]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        """Forget the best value and the bad-epoch and cooldown counters."""
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch

        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0         # bad epochs during the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(self.optimizer.param_groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new "
                    "param group being added to the optimizer. Please modify the `min_lrs` field to match the "
                    "length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts (SGDR, Loshchilov & Hutter)::

        lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2

    where ``T_cur`` counts the epochs since the last restart and the i-th period lasts
    ``T_i = T_0 * T_mult ** i`` epochs. ``step(epoch)`` takes fractional epochs too (e.g.
    ``epoch + batch / batches``).

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2, eta_min=1e-5)
    >>> for epoch in range(5):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.050005]
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_if_outside_step()
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Move to the next epoch, or to ``epoch`` (which may be fractional)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:          # a restart
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # the periods before the current one sum to T_0 (T_mult**n - 1) / (T_mult - 1)
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)

        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


def _one_cycle_total_steps(total_steps, epochs, steps_per_epoch):
    """OneCycleLR's number of steps: ``total_steps``, or ``epochs * steps_per_epoch``, checked."""
    if total_steps is not None:
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
        return epochs * steps_per_epoch
    raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")


def _one_cycle_phases(total_steps, pct_start, three_phase):
    """OneCycleLR's phases: each ends at a step and moves between two of the group's keys."""
    rise_end = float(pct_start * total_steps) - 1
    if three_phase:
        return [
            {"end_step": rise_end, "start_lr": "initial_lr", "end_lr": "max_lr",
             "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
            {"end_step": float(2 * pct_start * total_steps) - 2, "start_lr": "max_lr",
             "end_lr": "initial_lr", "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
            {"end_step": total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
             "start_momentum": "max_momentum", "end_momentum": "max_momentum"},
        ]
    return [
        {"end_step": rise_end, "start_lr": "initial_lr", "end_lr": "max_lr",
         "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
        {"end_step": total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
         "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
    ]


def _start_one_cycle_momentum(optimizer, max_momentums, base_momentums, use_beta1):
    """A new OneCycleLR's momentum (or Adam's beta1) in each group: its maximum, and the range
    kept under the group's keys."""
    for m_momentum, b_momentum, group in zip(max_momentums, base_momentums, optimizer.param_groups):
        if use_beta1:
            group["betas"] = (m_momentum, *group["betas"][1:])
        else:
            group["momentum"] = m_momentum
        group["max_momentum"] = m_momentum
        group["base_momentum"] = b_momentum


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, "Super-Convergence"), stepped after every batch: the
    learning rate rises from ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start``
    of ``total_steps`` (or ``epochs * steps_per_epoch``) steps, then falls to
    ``max_lr / div_factor / final_div_factor``, by cosine (or linear) annealing. With
    ``three_phase`` it first comes back to the initial rate, symmetrically, and only then falls
    further. With ``cycle_momentum`` the momentum (or Adam's beta1) moves the opposite way,
    between ``max_momentum`` and ``base_momentum``. Stepping past ``total_steps`` raises.

    >>> import srcgrad as torch
    >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = OneCycleLR(opt, max_lr=0.1, total_steps=100)
    >>> for epoch in range(30):
    ...     opt.step()
    ...     sched.step()
    >>> [round(lr, 6) for lr in sched.get_last_lr()]
    [0.09995]
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer

        self.total_steps = _one_cycle_total_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _one_cycle_phases(self.total_steps, pct_start, three_phase)

        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy

        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(self.optimizer.param_groups, max_lrs):
                group["initial_lr"] = group_max_lr / div_factor
                group["max_lr"] = group_max_lr
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            if "momentum" not in self.optimizer.defaults and "betas" not in self.optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in self.optimizer.defaults
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                _start_one_cycle_momentum(optimizer, max_momentums, base_momentums, self.use_beta1)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start, end, pct):
        """Cosine anneal from ``start`` to ``end`` as pct goes from 0.0 to 1.0."""
        cos_out = math.cos(math.pi * pct) + 1
        return end + (start - end) / 2.0 * cos_out

    @staticmethod
    def _annealing_linear(start, end, pct):
        """Linearly anneal from ``start`` to ``end`` as pct goes from 0.0 to 1.0."""
        return (end - start) * pct + start

    def get_lr(self):
        self._warn_if_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    computed_lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        computed_momentum = self._anneal_func(group[phase["start_momentum"]],
                                                              group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(computed_lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (computed_momentum, *group["betas"][1:])
                else:
                    group["momentum"] = computed_momentum
        return lrs
