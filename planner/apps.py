from django.apps import AppConfig


class PlannerConfig(AppConfig):
    """The napkin-math worksheet and the capacity planner."""

    name = "planner"
