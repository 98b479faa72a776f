"""Question content moves here from the `interview` app; its tables keep their names."""

from django.db import migrations

from practice.migrations import _moved_models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("interview", "0001_squashed_0011_miscon_grade_misconceptions"),
    ]

    # The models as the squashed `interview` migration creates them: both build them from one
    # description, so the two cannot disagree.
    operations = [_moved_models.taken_over_by("questions")]
