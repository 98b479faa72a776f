"""Review and calibration move here from the `interview` app; their tables keep their names."""

from django.conf import settings
from django.db import migrations

from practice.migrations import _moved_models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("interview", "0012_split_apps_by_domain"),
        ("questions", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    # The models as the squashed `interview` migration creates them: both build them from one
    # description, so the two cannot disagree.
    operations = [_moved_models.taken_over_by("review")]
