"""The CUDA target: ``vectorize(fun, target="cuda")`` as one PTX kernel (docs/compiler.md, "On the GPU").

The element function is lowered by the llvm backend's lowering for a second target object
(target.py: the nvptx64 triple, libdevice's ``__nv_*`` math), wrapped in a grid-stride kernel
(kernel.py), linked with a trimmed libdevice (libdevice.py), optimised and emitted as PTX by
LLVM's NVPTX backend (ptx.py).
"""
