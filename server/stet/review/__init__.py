"""The review service (see service.py); the rest of Stet imports it from here."""
from .common import Editor, FileEdit, Limits, new_id
from .service import Review

__all__ = ["Editor", "FileEdit", "Limits", "Review", "new_id"]
