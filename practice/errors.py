"""The error the practice flow refuses a request with, in a module of its own so the modules
that flow calls (practice.napkin) can raise it without importing flow."""


class FlowError(Exception):
    """A request the flow refuses; the message is a sentence for the candidate. A refusal
    that always says the same sentence sets it as `message` and is raised with no arguments."""

    message = ""

    def __init__(self, *args: object) -> None:
        if not args and self.message:
            args = (self.message,)
        super().__init__(*args)
