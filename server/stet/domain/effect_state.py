"""What a journaled effect does and where it stands: the words of the `effects` table's `action`
and `state` columns, apart from effect_outcome.py (which imports typing) so that `stet status`,
which reads the effects not finished yet, loads only these."""

from enum import StrEnum


class Action(StrEnum):
    """What an effect does (the `effects.action` column)."""

    APPLY = "apply"
    REAPPLY = "reapply"  # an applied hunk whose text was removed, put back
    REVERT = "revert"


class State(StrEnum):
    """Where an effect stands (the `effects.state` column)."""

    PENDING = "pending"
    UNSAVED = "unsaved"  # done in an editor's buffer not saved yet
    DONE = "done"
