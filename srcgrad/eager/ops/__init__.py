"""The eager ops by family (pointwise, reduce, shape, conv, norm, pooling, ...): each records its
node of the graph with PyTorch's grad_fn name and saved values. A regular package, so that a
non-editable install (setuptools' find_packages) includes it.
"""
