"""More programs in the style of PyTorch's autograd tutorials (beyond shared/seeds/), replayed
against PyTorch by test_tutorials.py: fitting a polynomial with autograd, a custom Function,
the blitz tutorial's vector-Jacobian product and hooks, higher-order gradients."""

POLYNOMIAL = [  # "Learning PyTorch with examples": polynomial_autograd.py, shortened
    """
import torch
import math

dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)
a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(200):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print(t, round(loss.item(), 1))
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3')
""",
]

LEGENDRE = [  # "Defining new autograd Functions": polynomial_custom_function.py, shortened
    """
import torch
import math


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.1, dtype=dtype, requires_grad=True)  # 0.0 in the tutorial: c stays at 0 up to rounding noise, whose sign would be compared
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(200):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print(t, round(loss.item(), 2))
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(y_pred.grad_fn)
print(f'Result: y = {a.item():.3f} + {b.item():.3f} * P3({c.item():.3f} + {d.item():.3f} x)')
""",
]

BLITZ = [  # "A Gentle Introduction to torch.autograd"
    "import torch",
    """
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3*a**3 - b**2
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
print(9*a**2 == a.grad)
print(-2*b == b.grad)
""",
    """
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")
""",
    """
x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
print(z, out)
out.backward()
print(x.grad)
""",
    """
a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)
""",
    """
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y.grad_fn)
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad.shape, x.grad.dtype)
""",
    """
print(x.requires_grad)
print((x ** 2).requires_grad)
with torch.no_grad():
    print((x ** 2).requires_grad)
y = x.detach()
print(y.requires_grad)
print(x.eq(y).all())
""",
]

MECHANICS = [  # "Autograd mechanics" notes and common idioms
    "import torch",
    """
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x.exp()
print(y.grad_fn.next_functions)
print(y.grad_fn.name(), y.is_leaf, x.is_leaf, y.grad_fn.next_functions[0][0].variable is x)
""",
    """
x = torch.tensor([0.5, -1.5], requires_grad=True)
h = x.register_hook(lambda g: g * 2)
(x ** 2).sum().backward()
print(x.grad)
h.remove()
x.grad.data.zero_()
(x ** 2).sum().backward()
print(x.grad)
""",
    """
x = torch.tensor(2.0, requires_grad=True)
y = x ** 4
g, = torch.autograd.grad(y, x, create_graph=True)
gg, = torch.autograd.grad(g, x, create_graph=True)
ggg, = torch.autograd.grad(gg, x)
print(g, gg, ggg)
""",
    """
a = torch.randn(3, requires_grad=True)
b = a.sigmoid()
c = b * 2
b.add_(1)
try:
    c.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, str(e)[:60])
""",
    """
w = torch.randn(4, 3, requires_grad=True)
x = torch.randn(2, 4)
out = (x @ w).relu().sum(dim=1)
out.backward(torch.ones(2))
print(w.grad.shape, out.grad_fn, out.shape)
print(torch.autograd.grad((x @ w).pow(2).mean(), w)[0].shape)
""",
    """
x = torch.randn(10, 3)
target = torch.tensor([0, 2, 1, 1, 0, 2, 2, 1, 0, 0])
W = torch.zeros(3, 3, requires_grad=True)
for step in range(30):
    loss = torch.nn.functional.cross_entropy(x @ W, target)
    loss.backward()
    with torch.no_grad():
        W -= 0.5 * W.grad
        W.grad.zero_()
print(round(loss.item(), 4), loss.grad_fn)
""",
]

TUTORIALS = {"polynomial": POLYNOMIAL, "legendre": LEGENDRE, "blitz": BLITZ, "mechanics": MECHANICS}
