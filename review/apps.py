from django.apps import AppConfig


class ReviewConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "review"
    verbose_name = "Review and calibration"

    def ready(self) -> None:
        from practice import extensions
        from review.hooks import ReviewHooks

        extensions.register(ReviewHooks())
