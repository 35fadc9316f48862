"""The review service (see service.py); the rest of Stet imports it from here."""

from .config import Editor, Limits, NoEditor, new_id
from .service import Review
from .session import Opened, open_review

__all__ = ["Editor", "Limits", "NoEditor", "Opened", "Review", "new_id", "open_review"]
