from .model import PersistantModel
from .sql import SQLPersistantModel

__all__ = ["PersistantModel", "SQLPersistantModel"]
