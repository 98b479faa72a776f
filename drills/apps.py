from django.apps import AppConfig


class DrillsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "drills"
    verbose_name = "Napkin drills and progress"

    def ready(self) -> None:
        from drills.hooks import DrillHooks
        from practice import extensions

        extensions.register(DrillHooks())
