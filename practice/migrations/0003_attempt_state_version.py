"""Attempt.state_version: what cached pages of an attempt are keyed on (see interview.flow)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("interview", "0002_attempts")]

    operations = [
        migrations.AddField(
            model_name="attempt",
            name="state_version",
            field=models.PositiveBigIntegerField(default=0, editable=False),
        ),
    ]
