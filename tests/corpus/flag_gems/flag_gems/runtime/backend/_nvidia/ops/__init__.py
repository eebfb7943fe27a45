from .add import add
from .gelu import gelu

__all__ = ["add", "gelu"]
