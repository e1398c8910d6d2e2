"""Every code cell of the five tutorials in shared/seeds/, in order, as written there
(indentation restored where the text lost it). Cells that do not touch torch (graphviz
rendering into IPython) are left out; so are the prose cells."""

SEED_000 = [  # PyTorch tutorial "Automatic Differentiation with torch.autograd"
    """
import torch
x = torch.ones(5) # input tensor
y = torch.zeros(3) # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
""",
    """
print('Gradient function for z =', z.grad_fn)
print('Gradient function for loss =', loss.grad_fn)
""",
    """
loss.backward()
print(w.grad)
print(b.grad)
""",
    """
z = torch.matmul(x, w)+b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)
""",
    """
z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)
""",
    """
inp = torch.eye(5, requires_grad=True)
out = (inp+1).pow(2)
out.backward(torch.ones_like(inp), retain_graph=True)
print("First call\\n", inp.grad)
out.backward(torch.ones_like(inp), retain_graph=True)
print("\\nSecond call\\n", inp.grad)
inp.grad.zero_()
out.backward(torch.ones_like(inp), retain_graph=True)
print("\\nCall after zeroing gradients\\n", inp.grad)
""",
]

SEED_001 = [  # notebook notes on the same tutorial
    "import torch",
    """
x = torch.ones(5) # input tensor
y = torch.zeros(3)  # expected output

w = torch.randn(5, 3, requires_grad = True)
b = torch.randn(3, requires_grad = True)
z = torch.matmul(x, w) + b # y_hat

loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
""",
    """
print('Gradient function for z = ', z.grad_fn)
print('Gradient function for loss = ', loss.grad_fn)
""",
    """
loss.backward()
print(w.grad)
print(b.grad)
""",
    """
x = torch.ones(5)
y = torch.zeros(3)

w = torch.randn(5, 3, requires_grad = True)
b = torch.randn(3, requires_grad = True)
z = torch.matmul(x, w) + b

loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

loss.backward(retain_graph=True)
print('w gradients after backward 1: ', w.grad)

loss.backward(retain_graph=True)
print('w gradients after backward 2: ', w.grad)

w.grad.zero_()
print('w gradients after grad.zero: ', w.grad)
""",
    """
z = torch.matmul(x, w) + b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)
""",
    """
z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)
""",
]

SEED_002 = [  # "PyTorch Autograd functions" notebook
    "import torch",
    """
torch.set_default_dtype(torch.float32)
torch.get_default_dtype()
""",
    """
tensor1 = torch.tensor([[1, 2, 3],
                         [4, 5, 6]], dtype=torch.float32)
tensor1
""",
    """
tensor2 = torch.tensor([[10, 20, 30],
                        [40, 50, 60]], dtype=torch.float32)
tensor2
""",
    "tensor1.requires_grad",
    "tensor2.requires_grad",
    "tensor1.requires_grad_() # Updates the requires grad property IN-Place",
    "tensor1.requires_grad # check",
    "tensor2.requires_grad # still False",
    "print(tensor1.grad) # no gradients have been calculated",
    "print(tensor1.grad_fn) # the computational tree is empty",
    """
output_tensor = tensor1 * tensor2
output_tensor
""",
    "output_tensor.requires_grad ",
    "print(output_tensor.grad) ",
    "print(output_tensor.grad_fn) # multiplication based tensor",
    """
print(tensor1.grad_fn)
print(tensor2.grad_fn)
""",
    """
output_tensor = (tensor1 * tensor2).mean()
print(output_tensor.grad_fn) # grad_fn references the last function
""",
    "print(tensor1.grad) # only when backward function is called on an output",
    "output_tensor.backward() # partial derivatives now calculated",
    "print(tensor1.grad)",
    "tensor1.grad.shape, tensor1.shape",
    "print(tensor2.grad) # none calculated, required_grad was False",
    "print(output_tensor.grad) # this is the value wrt the partial derivatives are calculated so it doesn't have gradients",
    """
new_tensor = tensor1 * 3
print(new_tensor.requires_grad)
""",
    """
with torch.no_grad(): # to stop autograd to stop computations with tracking hist off
    new_tensor = tensor1 * 3
    print('new tensor = ', new_tensor)
    print('requires_grad for tensor = ', tensor1.requires_grad)
    print('requires_grad for tensor1 = ', tensor2.requires_grad)
    print('requires_grad for new_tensor = ', new_tensor.requires_grad)
""",
    """
def calculate(t):
    return t * 2
""",
    """
@torch.no_grad()
def calculate_with_no_grad(t):
    return t * 2
""",
    """
result_tensor = calculate(tensor1)
result_tensor # grad function is MulBackward0 because it was created using a multiplication operation
""",
    "result_tensor.requires_grad",
    """
result_tensor_no_grad = calculate_with_no_grad(tensor1)
result_tensor_no_grad # does not keep track
""",
    "result_tensor_no_grad.requires_grad",
    """
with torch.no_grad():
    new_tensor_no_grad = tensor1 * 3
    print('new_tensor_no_grad = ', new_tensor_no_grad)

    with torch.enable_grad():
        new_tensor_grad = tensor1 * 3
        print('new_tensor_grad = ', new_tensor_grad)
""",
    """
tensor_one = torch.tensor([[1.0, 2.0],
                           [3.0, 4.0]], requires_grad=True)
tensor_one
""",
    """
tensor_two = torch.Tensor([[5, 6],
                           [7, 8]])
tensor_two
""",
    "tensor_one.requires_grad, tensor_two.requires_grad",
    "tensor_two.requires_grad_()",
    "tensor_one.requires_grad, tensor_two.requires_grad",
    """
final_tensor = (tensor_one + tensor_two).mean()
final_tensor
""",
    "final_tensor.backward()",
    "print(tensor_one.grad)",
    "print(tensor_two.grad)",
    """
detached_tensor = tensor_one.detach()
detached_tensor
""",
    """
mean_tensor = (tensor_one + detached_tensor).mean()
mean_tensor.backward()
""",
    "tensor_one.grad",
    "mean_tensor.backward()",
    "tensor_one.grad",
    "detached_tensor.grad # none calculated",
    """
import torch
from torch.autograd import Variable
""",
    """
var = Variable(torch.FloatTensor([9]))
var, var.requires_grad
""",
    "var.requires_grad_()",
    """
w1 = Variable(torch.FloatTensor([3]), requires_grad=True)
w2 = Variable(torch.FloatTensor([10]), requires_grad=True)
print(w1)
print(w2)
""",
    """
result_var = var * w1
result_var # this is also a `tensor`
""",
    "result_var.requires_grad",
    "result_var.backward()",
    "(w1.grad, w2.grad, var.grad)",
    "w2.grad",
    """
x = torch.rand(1, 10, requires_grad=True)
prev_h = torch.rand(1, 20)
W_h = torch.rand(20, 20)
W_x = torch.rand(20, 10)

i2h = torch.mm(W_x, x.t())
h2h = torch.mm(W_h, prev_h.t())
next_h = i2h + h2h
next_h = next_h.tanh()
""",
    "x.requires_grad",
    "next_h.requires_grad",
    "next_h.backward()",
    "2.95/2700",
]

SEED_003 = [  # Korean notes on the tutorial
    """
import torch

x = torch.ones(5) # input tensor
y = torch.zeros(3) # expected output


w = torch.randn(5, 3, requires_grad = True) # parameter1
b = torch.randn(3, requires_grad = True) # parameter2

z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
""",
    """
print(f'Gradient function for z = {z.grad_fn}')
print(f'Gradient function for loss = {loss.grad_fn}')
""",
    """
loss.backward() # to compute these derivatives
print(w.grad) # to retrive the values
print(b.grad) # to retrive the values
""",
    """
z = torch.matmul(x, w) + b
print(z.requires_grad)

with torch.no_grad():
  z = torch.matmul(x, w) + b
print(z.requires_grad)
""",
    """
z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)
""",
]

SEED_004 = [  # "Autograd: Automatic Differentiation" notebook
    "import torch",
    """
x = torch.ones(2, 2, requires_grad = True)
print(x)
print(x.grad_fn)
""",
    """
y = x + 2
print(y)
print(y.grad_fn)
""",
    """
z = y * y * 3
out = z.mean()
print(z, '\\n', out)
""",
    """
a = torch.randn(2, 2)
print(a, a.requires_grad, a.grad_fn)

a = ((a * 3) / (a - 1))
print(a, a.requires_grad, a.grad_fn)

b = (a * a).sum()
print(b.grad_fn)

a.requires_grad_(True)
print(a.requires_grad)

b = (a * a).sum()
print(b.grad_fn)
""",
    """
x = torch.ones(2, 2, requires_grad = True)
y = x + 2
z = y * y * 3
out = z.mean()
print(out)
""",
    """
out = z.mean()
out.backward()
print(x.grad)
print(y.retain_grad)
""",
    """
x = torch.randn(3, requires_grad = True)
y = x * 2
while y.data.norm() < 1000:
  y = y * 2

print(y)

v = torch.tensor([0.1, 1.0, 0.0001], dtype = torch.float)
y.backward(v)
print(x.grad)
""",
    """
print(x.requires_grad)
print((x ** 2).requires_grad)
with torch.no_grad():
  print(x.requires_grad)
  print((x ** 2).requires_grad)
""",
    """
print(x.requires_grad)
y = x.detach()
print(y.requires_grad)

print(x.eq(y).all())
""",
]

SEEDS = {"000": SEED_000, "001": SEED_001, "002": SEED_002, "003": SEED_003, "004": SEED_004}
