"""Programs in the style of PyTorch's tutorials beyond the autograd basics — "Learning PyTorch
with examples" (the polynomial with nn, optim and a custom Module, the dynamic net), the
blitz "Neural Networks" tutorial, Jacobians and Hessians with torch.func, forward-mode AD and
saved-tensor hooks — replayed against PyTorch by test_tutorial_replay.py. Where a tutorial
relies on a layer's random initialisation, the cell sets the weights from ``torch.randn``
(which the replay feeds the same numbers in both libraries)."""

SET_WEIGHTS = """
def set_weights(model, scale=0.1):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(*p.shape) * scale)
"""

POLYNOMIAL_NN = [  # polynomial_nn.py, shortened
    """
import torch
import math

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print(xx.shape)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
""" + SET_WEIGHTS + """
set_weights(model)
loss_fn = torch.nn.MSELoss(reduction='sum')
print(model)

learning_rate = 1e-6
for t in range(300):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, round(loss.item(), 1))
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item():.4f} + {linear_layer.weight[:, 0].item():.4f} x + '
      f'{linear_layer.weight[:, 1].item():.4f} x^2 + {linear_layer.weight[:, 2].item():.4f} x^3')
""",
    "loss.grad_fn",
    "[n for n, _ in model.named_parameters()]",
]

POLYNOMIAL_OPTIM = [  # polynomial_optim.py, shortened
    """
import torch
import math

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
""" + SET_WEIGHTS + """
set_weights(model)
loss_fn = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for t in range(400):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, round(loss.item(), 1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    "optimizer",
    "[round(v, 2) + 0.0 for v in model[0].weight.detach().flatten().tolist()]",
]

POLYNOMIAL_MODULE = [  # polynomial_module.py and dynamic_net.py, shortened
    """
import torch
import math


class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return f'y = {self.a.item():.3f} + {self.b.item():.3f} x + {self.c.item():.3f} x^2 + {self.d.item():.3f} x^3'


x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
model = Polynomial3()
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(300):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, round(loss.item(), 1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f'Result: {model.string()}')
""",
    "model",
    "list(model.state_dict())",
    """
class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x, n):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, n):
            y = y + self.e * x ** exp
        return y


model = DynamicNet()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(200):
    y_pred = model(x, 4 + t % 3)
    loss = criterion(y_pred, y)
    if t % 50 == 49:
        print(t, round(loss.item(), 1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
]

BLITZ_NN = [  # "Neural Networks" (the 60-minute blitz), as written there
    """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


net = Net()
print(net)
""" + SET_WEIGHTS + """
set_weights(net)
""",
    """
params = list(net.parameters())
print(len(params))
print(params[0].size())
""",
    """
input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)
""",
    """
net.zero_grad()
out.backward(torch.randn(1, 10))
""",
    """
output = net(input)
target = torch.randn(10)
target = target.view(1, -1)
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)
""",
    """
print(loss.grad_fn)
print(loss.grad_fn.next_functions[0][0])
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])
""",
    """
net.zero_grad()

print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)

loss.backward()

print('conv1.bias.grad after backward')
print(net.conv1.bias.grad)
""",
    """
learning_rate = 0.01
with torch.no_grad():
    for f in net.parameters():
        f.sub_(f.grad * learning_rate)
""",
    """
import torch.optim as optim

optimizer = optim.SGD(net.parameters(), lr=0.01)

optimizer.zero_grad()
output = net(input)
loss = criterion(output, target)
loss.backward()
optimizer.step()
print(round(criterion(net(input), target).item(), 4))
""",
]

NN_TUTORIALS = {"polynomial_nn": POLYNOMIAL_NN, "polynomial_optim": POLYNOMIAL_OPTIM,
                "polynomial_module": POLYNOMIAL_MODULE, "blitz_neural_networks": BLITZ_NN}

JACOBIANS_HESSIANS = [  # "Jacobians, Hessians, hvp, vhp, and more: composing function transforms", shortened
    """
import torch
import torch.nn.functional as F
from functools import partial


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 8
weight = torch.randn(D, D, dtype=torch.float64)
bias = torch.randn(D, dtype=torch.float64)
x = torch.randn(D, dtype=torch.float64)
xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D, dtype=torch.float64)


def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0] for vec in unit_vectors]
    return torch.stack(jacobian_rows)


jacobian = compute_jac(xp)
print(jacobian.shape)
print(jacobian[0])
""",
    """
from torch.func import vmap, vjp

_, vjp_fn = vjp(partial(predict, weight, bias), x)
ft_jacobian, = vmap(vjp_fn)(unit_vectors)
assert torch.allclose(ft_jacobian, jacobian)

from torch.func import jacrev, jacfwd, hessian

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
assert torch.allclose(ft_jacobian, jacobian)
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(ft_jac_weight.shape, ft_jac_bias.shape)
assert torch.allclose(jacfwd(predict, argnums=2)(weight, bias, x), jacobian, atol=1e-6)
hess = hessian(predict, argnums=2)(weight, bias, x)
print(hess.shape)
hess_api = torch.autograd.functional.hessian(lambda v: predict(weight, bias, v).sum(), x)
print(hess_api.shape, torch.allclose(hess.sum(0), hess_api, atol=1e-5))
""",
    """
from torch.func import jvp, grad


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.randn(2048)
tangent = torch.randn(2048)
result = hvp(f, (x,), (tangent,))
print(torch.allclose(result, -x.sin() * tangent, atol=1e-6))
batch = torch.randn(4, 3)
print(vmap(grad(lambda v: (v ** 3).sum()))(batch).shape)
""",
]

FORWARD_AD = [  # "Forward-mode Automatic Differentiation", shortened
    """
import torch
import torch.autograd.forward_ad as fwAD

primal = torch.randn(10, 10)
tangent = torch.randn(10, 10)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent
    plain_tensor = torch.randn(10, 10)
    dual_output = fn(dual_input, plain_tensor)
    jvp = fwAD.unpack_dual(dual_output).tangent

assert fwAD.unpack_dual(dual_output).tangent is None
print(jvp[0])
""",
    """
import torch.nn as nn

model = nn.Linear(5, 5)
with torch.no_grad():
    model.weight.copy_(torch.randn(5, 5))
    model.bias.copy_(torch.randn(5))
input = torch.randn(16, 5)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.randn(*p.shape) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(input)
    jvp = fwAD.unpack_dual(out).tangent
print(jvp[:2].detach())
""",
    """
from torch.func import functional_call

model = nn.Linear(5, 5)
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp2 = fwAD.unpack_dual(out).tangent
print(torch.allclose(jvp, jvp2))
""",
    """
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO


fn = Fn.apply
primal = torch.randn(4, 4, dtype=torch.double, requires_grad=True)
tangent = torch.randn(4, 4)
with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp = fwAD.unpack_dual(dual_output).tangent
print(torch.allclose(jvp, tangent * primal.exp()))
""",
]

NN_TUTORIALS.update({"jacobians_hessians": JACOBIANS_HESSIANS, "forward_ad": FORWARD_AD})

SAVED_TENSOR_HOOKS = [  # "Hooks for autograd saved tensors", shortened (the disk example with torch.save)
    """
import torch

x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(x.equal(y.grad_fn._saved_self))
print(x is y.grad_fn._saved_self)

x = torch.randn(5, requires_grad=True)
y = x.exp()
print(y.equal(y.grad_fn._saved_result))
print(y is y.grad_fn._saved_result)
""",
    """
def pack_hook(x):
    print("Packing", x)
    return x


def unpack_hook(x):
    print("Unpacking", x)
    return x


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b

y.sum().backward()
""",
    """
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
y.sum().backward()
""",
    """
def pack(x):
    print("pack")
    return x.clone()


def unpack(x):
    print("unpack")
    return x


with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    x = torch.randn(5, requires_grad=True)
    y = (x * x).sin()
y.sum().backward()
print(torch.allclose(x.grad, 2 * x * (x * x).cos()))
""",
    """
import os
import uuid
import tempfile

tmp_dir_obj = tempfile.TemporaryDirectory()
tmp_dir = tmp_dir_obj.name


def pack_hook(tensor):
    name = os.path.join(tmp_dir, str(uuid.uuid4()))
    torch.save(tensor, name)
    return name


def unpack_hook(name):
    return torch.load(name, weights_only=True)


x = torch.randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = x.pow(2)
print(y.grad_fn._saved_self.equal(x))
y.sum().backward()
print(torch.allclose(x.grad, 2 * x))
tmp_dir_obj.cleanup()
""",
    """
with torch.autograd.graph.save_on_cpu(pin_memory=False):
    y = (x * x).exp()
y.sum().backward()
print(x.grad.shape)
with torch.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            pass
    except RuntimeError as e:
        print(e)
""",
]

NN_TUTORIALS["saved_tensor_hooks"] = SAVED_TENSOR_HOOKS
