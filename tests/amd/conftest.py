"""The ``kernel`` fixture: the KernelBuilder class of :mod:`amd_asm`."""
import pytest

from amd_asm import KernelBuilder


@pytest.fixture
def kernel():
    return KernelBuilder
