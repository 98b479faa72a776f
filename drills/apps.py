from django.apps import AppConfig


class DrillsConfig(AppConfig):
    name = "drills"
    verbose_name = "Napkin drills and progress"

    def ready(self) -> None:
        from drills.hooks import DrillHooks
        from practice import extensions

        extensions.register(DrillHooks())
