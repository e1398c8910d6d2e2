"""Recurrent layers: ``RNN`` (tanh or ReLU), ``LSTM`` and ``GRU``, and their one-step cells
``RNNCell``, ``LSTMCell`` and ``GRUCell``, with PyTorch's constructor arguments, parameter
names, initialisation, input and state shapes, reprs and error messages.

Everything is composed of eager ops (addmm, sigmoid, tanh, chunk, stack...), so gradients and
double backward come from those ops. As in cuDNN-style implementations, each layer and
direction projects the whole input sequence with one matmul before its time loop; each step
then costs one small addmm with the hidden weights plus the gate arithmetic.

Gate order and formulas are PyTorch's: an LSTM's rows are (input, forget, cell, output) gates,
a GRU's (reset, update, new).

Example:
    >>> import srcgrad as torch
    >>> lstm = torch.nn.LSTM(10, 20, num_layers=2, batch_first=True)
    >>> output, (h_n, c_n) = lstm(torch.randn(3, 5, 10))
    >>> output.shape, h_n.shape
    (torch.Size([3, 5, 20]), torch.Size([2, 3, 20]))
"""
import math
import numbers
import warnings

from ..eager import creation
from ..eager.ops import linalg, pointwise, shape
from ..eager.ops.pointwise import relu, tanh
from . import functional as F
from . import init
from .module import Module, factory_kwargs
from .parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


sigmoid = pointwise.sigmoid


# ---------------------------------------------------------------------------------------------
# one time step of each kind: ``xw`` is the input's projection (x W_ihᵀ + biases) for this step,
# ``w_hh_t`` the transposed hidden weights (transposed once, outside the time loop)


def _rnn_step(xw, h, w_hh_t, activation):
    return activation(linalg.addmm(xw, h, w_hh_t))


def _lstm_step(xw, h, c, w_hh_t):
    gates = linalg.addmm(xw, h, w_hh_t)
    i, f, g, o = gates.chunk(4, 1)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    return h, c


def _gru_step(xw_rz, xw_n, h, w_hh_t, b_hh):
    # The new gate's hidden part (W_hn h + b_hn) is multiplied by r before it meets the input's,
    # so b_hh stays with the hidden projection instead of folding into xw.
    hw = linalg.addmm(b_hh, h, w_hh_t) if b_hh is not None else linalg.mm(h, w_hh_t)
    hidden = hw.shape[1] // 3
    hw_rz, hw_n = hw.split([2 * hidden, hidden], 1)
    r, z = sigmoid(xw_rz + hw_rz).chunk(2, 1)
    n = tanh(xw_n + r * hw_n)
    return z * (h - n) + n          # (1 - z) * n + z * h, with one op less


def _project(x, w_ih, bias):
    """x (L, B, In) @ w_ihᵀ + bias, for every time step at once: (L, B, G)."""
    steps, batch = x.shape[0], x.shape[1]
    flat = x.reshape(steps * batch, x.shape[2])
    xw = F.linear(flat, w_ih, bias)
    return xw.view(steps, batch, xw.shape[1])


def _refuse_packed(input):
    if hasattr(input, "batch_sizes"):
        raise NotImplementedError("srcgrad: PackedSequence inputs (torch.nn.utils.rnn.pack_padded_sequence) are "
                                  "not supported; pass the padded tensor instead")


# ---------------------------------------------------------------------------------------------
# the multi-layer modules


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: the parameters of every layer and direction
    (``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, ``..._reverse``), the
    argument checks, and the loop over layers and directions."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size > 0:
            raise NotImplementedError("srcgrad: LSTM with proj_size > 0 (projected hidden states) is not supported")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        kw = factory_kwargs(dtype, device)
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for direction in range(directions):
                suffix = f"l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {f"weight_ih_{suffix}": (gate_size, layer_input),
                          f"weight_hh_{suffix}": (gate_size, hidden_size)}
                if bias:
                    shapes.update({f"bias_ih_{suffix}": (gate_size,), f"bias_hh_{suffix}": (gate_size,)})
                for name, size in shapes.items():
                    setattr(self, name, Parameter(creation.empty(*size, **kw)))
                self._flat_weights_names.extend(shapes)
                self._all_weights.append(list(shapes))
        self.reset_parameters()

    def reset_parameters(self):
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch does."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters per layer and direction: [[weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0], ...]."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Nothing to do: PyTorch packs the weights into one buffer for cuDNN; the CPU needs no such thing."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------------ argument checks
    def _check_input(self, input):
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def _expected_hidden(self, input):
        batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    @staticmethod
    def _check_hidden(hx, expected, what="hidden"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")

    def _zeros(self, input):
        return creation.zeros(*self._expected_hidden(input), dtype=input.dtype)

    def _dimension_error(self, input):
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        tail = " tensor" if name == "RNN" else ""      # (PyTorch's three messages differ so)
        return ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail} instead")

    # ------------------------------------------------------------------ the computation
    def _layers(self, x, h0, c0=None):
        """x (L, B, In) time-major, h0 (and c0) (layers * directions, B, H): the last layer's
        outputs (L, B, directions * H) and the final states, stacked as h0 is."""
        directions = 2 if self.bidirectional else 1
        h0 = h0.unbind(0)
        c0 = c0.unbind(0) if c0 is not None else None
        weights = self.all_weights
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                out, h, c = self._direction(x, weights[k], h0[k], c0[k] if c0 is not None else None,
                                            reverse=direction == 1)
                outputs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = outputs[0] if directions == 1 else shape.cat(outputs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, shape.stack(h_n, 0), (shape.stack(c_n, 0) if c0 is not None else None)

    def _direction(self, x, weights, h, c, reverse):
        """One layer in one direction over the whole sequence: (outputs (L, B, H), h_L, c_L)."""
        w_ih, w_hh = weights[0], weights[1]
        b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
        w_hh_t = w_hh.t()
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outputs = []
        if self.mode == "GRU":
            xw = _project(x, w_ih, b_ih)
            xw_rz, xw_n = xw.split([2 * self.hidden_size, self.hidden_size], 2)
            xw_rz, xw_n = xw_rz.unbind(0), xw_n.unbind(0)
            for t in steps:
                h = _gru_step(xw_rz[t], xw_n[t], h, w_hh_t, b_hh)
                outputs.append(h)
        else:
            # both biases enter every step unchanged: add them to the input's projection once
            xw = _project(x, w_ih, b_ih + b_hh if self.bias else None).unbind(0)
            if self.mode == "LSTM":
                for t in steps:
                    h, c = _lstm_step(xw[t], h, c, w_hh_t)
                    outputs.append(h)
            else:
                activation = tanh if self.mode == "RNN_TANH" else relu
                for t in steps:
                    h = _rnn_step(xw[t], h, w_hh_t, activation)
                    outputs.append(h)
        if reverse:
            outputs.reverse()
        return shape.stack(outputs, 0), h, c

    def _batched(self, input):
        """``(input, batched, batch_dim)``: an unbatched (2-D) input gets its batch dimension."""
        _refuse_packed(input)
        if input.dim() not in (2, 3):
            raise self._dimension_error(input)
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        return (input if batched else input.unsqueeze(batch_dim)), batched, batch_dim

    def _forward_one_state(self, input, hx):
        """RNN's and GRU's forward: ``(output, h_n)``."""
        input, batched, batch_dim = self._batched(input)
        if not batched:
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if hx is None:
            hx = self._zeros(input)
        self._check_input(input)
        self._check_hidden(hx, self._expected_hidden(input))
        out, h_n, _ = self._run(input, hx)
        if not batched:
            out, h_n = out.squeeze(batch_dim), h_n.squeeze(1)
        return out, h_n

    def _run(self, input, hx, cx=None):
        """Shared by the forwards once the states are batched and checked."""
        x = input.transpose(0, 1) if self.batch_first else input
        out, h_n, c_n = self._layers(x, hx, cx)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, h_n, c_n


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh) (or ReLU), per layer.

    Input (L, N, input_size) (``batch_first``: (N, L, input_size)) or unbatched (L, input_size);
    returns ``(output, h_n)``: output (L, N, D * hidden_size), h_n (D * num_layers, N, hidden_size).

    >>> import srcgrad as torch
    >>> rnn = torch.nn.RNN(10, 20, 2)
    >>> output, h_n = rnn(torch.randn(5, 3, 10), torch.randn(2, 3, 20))
    >>> output.shape
    torch.Size([5, 3, 20])
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"RNN.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)

    def forward(self, input, hx=None):
        return self._forward_one_state(input, hx)


class GRU(RNNBase):
    """A gated recurrent unit, per layer:
    r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 - z) ⊙ n + z ⊙ h.

    Same inputs and outputs as ``RNN``.

    >>> import srcgrad as torch
    >>> gru = torch.nn.GRU(10, 20, bidirectional=True)
    >>> output, h_n = gru(torch.randn(5, 3, 10))
    >>> output.shape, h_n.shape
    (torch.Size([5, 3, 40]), torch.Size([2, 3, 20]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"GRU.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)

    def forward(self, input, hx=None):
        return self._forward_one_state(input, hx)


class LSTM(RNNBase):
    """A long short-term memory network, per layer:
    i, f, o = σ(W_i{i,f,o} x + b_i{i,f,o} + W_h{i,f,o} h + b_h{i,f,o}), g = tanh(W_ig x + b_ig + W_hg h + b_hg),
    c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c').

    Returns ``(output, (h_n, c_n))``; the optional initial state is a pair ``(h_0, c_0)``.
    ``proj_size > 0`` is not supported.

    >>> import srcgrad as torch
    >>> lstm = torch.nn.LSTM(3, 3)
    >>> out, (h, c) = lstm(torch.randn(5, 1, 3))
    >>> out.shape, h.shape
    (torch.Size([5, 1, 3]), torch.Size([1, 1, 3]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def forward(self, input, hx=None):
        input, batched, batch_dim = self._batched(input)
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        else:
            h0, c0 = hx
            if batched and (h0.dim() != 3 or c0.dim() != 3):
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({h0.dim()}-D, {c0.dim()}-D) tensors")
            if not batched:
                if h0.dim() != 2 or c0.dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({h0.dim()}-D, {c0.dim()}-D) tensors")
                hx = (h0.unsqueeze(1), c0.unsqueeze(1))
        self._check_input(input)
        expected = self._expected_hidden(input)
        self._check_hidden(hx[0], expected, "hidden[0]")
        self._check_hidden(hx[1], expected, "hidden[1]")
        out, h_n, c_n = self._run(input, hx[0], hx[1])
        if not batched:
            out, h_n, c_n = out.squeeze(batch_dim), h_n.squeeze(1), c_n.squeeze(1)
        return out, (h_n, c_n)


# ---------------------------------------------------------------------------------------------
# the cells: one time step, parameters weight_ih, weight_hh, bias_ih, bias_hh


class RNNCellBase(Module):
    """What the cells share: the parameters and the checks of the input and state shapes."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = factory_kwargs(dtype, device)
        self.weight_ih = Parameter(creation.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(creation.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(creation.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(creation.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch does."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, states):
        """``input`` and the states ``states`` (None: zeros) made 2-D and checked; returns
        (batched, input, states)."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, s in enumerate(states):
            if s is not None and s.dim() not in (1, 2):
                what = "hidden" if len(states) == 1 else f"hx[{i}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            states = [s.unsqueeze(0) if s is not None else None for s in states]
        states = [s if s is not None else creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
                  for s in states]
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        for i, s in enumerate(states):
            if s.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                                   f"{s.shape[0]}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, expected "
                                   f"{self.hidden_size}")
        return batched, input, states

    def _input_projection(self, input, fold_biases):
        bias = self.bias_ih
        if fold_biases and bias is not None:
            bias = bias + self.bias_hh
        return F.linear(input, self.weight_ih, bias)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or ReLU).

    >>> import srcgrad as torch
    >>> cell = torch.nn.RNNCell(10, 20)
    >>> cell(torch.randn(3, 10)).shape
    torch.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        batched, input, (hx,) = self._prepare(input, [hx])
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        activation = tanh if self.nonlinearity == "tanh" else relu
        # (no bias folding for one step: the sum of the two projections is PyTorch's graph)
        h = activation(self._input_projection(input, False) + F.linear(hx, self.weight_hh, self.bias_hh))
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')`` from the input and the state ``(h, c)`` (zeros if not given).

    >>> import srcgrad as torch
    >>> cell = torch.nn.LSTMCell(10, 20)
    >>> h, c = cell(torch.randn(3, 10))
    >>> h.shape, c.shape
    (torch.Size([3, 20]), torch.Size([3, 20]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        batched, input, (h, c) = self._prepare(input, list(hx) if hx is not None else [None, None])
        h, c = _lstm_step(self._input_projection(input, True), h, c, self.weight_hh.t())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (the formulas of ``GRU``).

    >>> import srcgrad as torch
    >>> cell = torch.nn.GRUCell(10, 20)
    >>> cell(torch.randn(3, 10), torch.zeros(3, 20)).shape
    torch.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        batched, input, (hx,) = self._prepare(input, [hx])
        xw = self._input_projection(input, False)
        xw_rz, xw_n = xw.split([2 * self.hidden_size, self.hidden_size], 1)
        h = _gru_step(xw_rz, xw_n, hx, self.weight_hh.t(), self.bias_hh)
        return h if batched else h.squeeze(0)


__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
