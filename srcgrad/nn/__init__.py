"""``srcgrad.nn``: PyTorch's ``torch.nn`` for the eager mode — ``Module``, ``Parameter``,
layers, losses, ``init``, ``functional`` and ``utils``.

Example:
    >>> import srcgrad as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    >>> loss = torch.nn.CrossEntropyLoss()(model(torch.randn(32, 784)), torch.randint(0, 10, (32,)))
    >>> loss.backward()
"""
from . import functional, grad, init, utils  # noqa: F401
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus, Tanh
from .container import ModuleDict, ModuleList, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout, Flatten, Unflatten
from .linear import Bilinear, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, Embedding, LayerNorm
from .parameter import Buffer, Parameter
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d,
                      MaxPool1d, MaxPool2d)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = ["Module", "Parameter", "Buffer", "Linear", "Bilinear", "Identity", "Sequential", "ModuleList", "ModuleDict",
           "ParameterList", "Flatten", "Unflatten", "Dropout", "ReLU", "ReLU6", "Tanh", "Sigmoid", "SiLU", "Softplus",
           "GELU", "LeakyReLU", "Softmax", "LogSoftmax", "Conv1d", "Conv2d", "ConvTranspose1d",
           "ConvTranspose2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "LayerNorm",
           "Embedding", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
