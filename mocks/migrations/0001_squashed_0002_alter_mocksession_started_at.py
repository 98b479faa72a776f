"""Mock interviews move here from the `interview` app (their tables keep their names), and a
session's clock may wait to start (`started_at` empty until then): the app's first two
migrations as one.

A database that applied both counts this one as applied (`replaces`); a new database runs this
instead. A database that applied the first but not the second must first be migrated by a
release that still has them (commit 2f6e021, as practice/checks.py says)."""

from django.conf import settings
from django.db import migrations, models

from practice.migrations import _moved_models


class Migration(migrations.Migration):
    replaces = [("mocks", "0001_initial"), ("mocks", "0002_alter_mocksession_started_at")]

    initial = True

    dependencies = [
        ("interview", "0012_split_apps_by_domain"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The models as the squashed `interview` migration creates them: both build them from one
        # description, so the two cannot disagree.
        _moved_models.taken_over_by("mocks"),
        migrations.AlterField(
            model_name="mocksession",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
