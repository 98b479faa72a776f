from django.apps import AppConfig


class PracticeConfig(AppConfig):
    """A candidate's attempts at the five steps. Its label is still "interview", the app's
    name before question content, mock interviews and review left it: the label names its
    tables and migrations, which a rename would have to rewrite on every database."""

    name = "practice"
    label = "interview"
    verbose_name = "Practice"

    def ready(self) -> None:
        from practice import checks  # noqa: F401 (registers the database check)
