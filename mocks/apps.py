from django.apps import AppConfig


class MocksConfig(AppConfig):
    name = "mocks"
    verbose_name = "Mock interviews"

    def ready(self) -> None:
        from mocks.hooks import MockInterviewHooks
        from practice import extensions

        extensions.register(MockInterviewHooks())
