"""Problem reports point at the questions app's models (the same tables as before)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ('authoring', '0001_initial'),
        ('questions', '0001_initial'),
    ]

    operations = [
        # The tables stay: only Django's idea of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='problemreport',
                    name='fixed_in',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='fixed_reports', to='questions.questionrevision'),
                ),
                migrations.AlterField(
                    model_name='problemreport',
                    name='question',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='problem_reports', to='questions.question'),
                ),
                migrations.AlterField(
                    model_name='problemreport',
                    name='revision',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='problem_reports', to='questions.questionrevision'),
                ),
            ],
        ),
    ]
