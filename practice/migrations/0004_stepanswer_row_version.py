"""StepAnswer.row_version: lets a page be keyed on the answers it shows (see interview.flow)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("interview", "0003_attempt_state_version")]

    operations = [
        migrations.AddField(
            model_name="stepanswer",
            name="row_version",
            field=models.PositiveBigIntegerField(default=0, editable=False),
        ),
    ]
