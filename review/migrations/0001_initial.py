"""Review and calibration move here from the `interview` app; their tables keep their names."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ('interview', '0012_split_apps_by_domain'),
        ('questions', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The tables stay: only Django's idea of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='CalibrationLabel',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('step_key', models.CharField(max_length=20)),
                        ('follow_up_id', models.CharField(blank=True, default='', max_length=64)),
                        ('answer', models.TextField()),
                        ('answer_hash', models.CharField(max_length=64)),
                        ('labels', models.JSONField(help_text='{point id: "hit" | "partial" | "miss"}')),
                        ('source', models.CharField(choices=[('review', 'Instructor review'), ('import', 'Labels file')], default='import', max_length=10)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('labelled_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='calibration_labels', to='questions.question')),
                        ('submission', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='calibration_labels', to='interview.submission')),
                    ],
                    options={
                        'db_table': 'interview_calibrationlabel',
                        'ordering': ['question', 'step_key', 'created_at'],
                        'constraints': [models.UniqueConstraint(fields=('question', 'step_key', 'follow_up_id', 'answer_hash'), name='one_label_per_answer')],
                    },
                ),
                migrations.CreateModel(
                    name='CalibrationRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('step_key', models.CharField(max_length=20)),
                        ('grader', models.CharField(max_length=20)),
                        ('model', models.CharField(blank=True, max_length=200)),
                        ('prompt_version', models.CharField(blank=True, max_length=40)),
                        ('n', models.PositiveIntegerField(default=0)),
                        ('kappa', models.FloatField(blank=True, null=True)),
                        ('agreement', models.FloatField(blank=True, null=True)),
                        ('points', models.JSONField(default=list)),
                        ('disagreements', models.JSONField(default=list)),
                        ('warnings', models.JSONField(default=list)),
                        ('created_at', models.DateTimeField(auto_now=True)),
                        ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='calibration_runs', to='questions.question')),
                    ],
                    options={
                        'db_table': 'interview_calibrationrun',
                        'constraints': [models.UniqueConstraint(fields=('question', 'step_key', 'grader'), name='one_run_per_step_grader')],
                    },
                ),
                migrations.CreateModel(
                    name='GradeDispute',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('reason', models.TextField()),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('submission', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='disputes', to='interview.submission')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'interview_gradedispute',
                        'constraints': [models.UniqueConstraint(fields=('submission',), name='one_dispute_per_submission')],
                    },
                ),
            ],
        ),
    ]
