"""Functions of numbers for the CUDA launch tests (srcgrad reads their source from this file)."""
from tests.compiler.test_custom_vjp import softplus


def identity(x):
    return x * 1.0


def checked(x):
    assert x < 0.75, "x must stay below 0.75"
    return x * 2.0


def int_division(x, n):
    return x * (7 // n)


def three_results(x, y):
    return x * y, x > y, int(x * 10.0)


def mixed(x, y, n, flag):
    return x * y + n if flag else x - y


def calls_python(x):
    return softplus(x) * 2.0


def sine_kernel_module():
    """An LLVM module for the NVPTX target calling llvm.sin.f64, which NVPTX cannot lower."""
    from llvmlite import ir

    from srcgrad.backends.cuda.target import cuda_target
    t = cuda_target("sm_90")
    module = ir.Module()
    module.triple = t.triple()
    d = ir.DoubleType()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [d.as_pointer()]), name="srcgrad_kernel")
    fn.calling_convention = "ptx_kernel"
    b = ir.IRBuilder(fn.append_basic_block())
    sin = module.declare_intrinsic("llvm.sin", [d])
    b.store(b.call(sin, [b.load(fn.args[0])]), fn.args[0])
    b.ret_void()
    return module

