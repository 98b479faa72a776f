from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review and calibration"

    def ready(self) -> None:
        from practice import extensions
        from review.hooks import ReviewHooks

        extensions.register(ReviewHooks())
