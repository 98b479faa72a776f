"""The one error type of the napkin-math engine."""


class NapkinError(ValueError):
    """A bad input, told in one sentence, with the 0-based character offset it applies to.

    `position` is an offset into the text that was evaluated (None when the error is about
    the whole input, e.g. its length).
    """

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position

    def __str__(self) -> str:
        return self.message


class FormulaError(NapkinError):
    """An authored formula or given (not the candidate's answer) does not evaluate."""
