"""PyTorch's tutorial "Automatic Differentiation with torch.autograd", run by srcgrad.

The only change from the tutorial is the import line: ``import srcgrad as torch``.
Run it with:  python examples/autograd_tutorial.py
"""
import srcgrad as torch

# The simplest one-layer network: input x, parameters w and b, and a loss.
x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

# Tensors, Functions and the computational graph: grad_fn points at the backward function.
print('Gradient function for z =', z.grad_fn)
print('Gradient function for loss =', loss.grad_fn)

# Computing gradients: d(loss)/dw and d(loss)/db land in w.grad and b.grad.
loss.backward()
print(w.grad)
print(b.grad)

# Disabling gradient tracking, with no_grad() ...
z = torch.matmul(x, w) + b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)

# ... or with detach().
z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)

# Tensor gradients and Jacobian products: backward(v) computes v^T . J, and gradients accumulate.
inp = torch.eye(5, requires_grad=True)
out = (inp + 1).pow(2)
out.backward(torch.ones_like(inp), retain_graph=True)
print("First call\n", inp.grad)
out.backward(torch.ones_like(inp), retain_graph=True)
print("\nSecond call\n", inp.grad)
inp.grad.zero_()
out.backward(torch.ones_like(inp), retain_graph=True)
print("\nCall after zeroing gradients\n", inp.grad)
