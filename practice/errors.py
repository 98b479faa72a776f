"""The error the practice flow refuses a request with, in a module of its own so the modules
that flow calls (practice.napkin) can raise it without importing flow."""


class FlowError(Exception):
    """A request the flow refuses; the message is a sentence for the candidate."""
