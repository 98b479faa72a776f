from django.apps import AppConfig


class SimulatorConfig(AppConfig):
    name = "simulator"
    verbose_name = "Load simulator"

    def ready(self) -> None:
        from practice import extensions
        from simulator.hooks import SimulatorHooks

        extensions.register(SimulatorHooks())
