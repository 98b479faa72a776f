"""The app's schema as it stood before question content, mock interviews and review left it
(migrations 0001 to 0011, removed), as one migration.

A database that applied all eleven counts this one as applied (`replaces`) and goes on with
0012; a new database runs this instead of the eleven. A database part-way through them must
first be migrated by a release that still has them (commit 2f6e021). Their data migrations are
not here: the SLO-review move and the trigger clean-up had nothing to do on a new database.
tests/config/test_split_upgrade.py checks that this builds the tables the eleven built.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from practice.migrations import _moved_models


class Migration(migrations.Migration):

    replaces = [('interview', '0001_initial'), ('interview', '0002_attempts'), ('interview', '0003_attempt_state_version'), ('interview', '0004_stepanswer_row_version'), ('interview', '0005_drop_version_triggers'), ('interview', '0006_grading_review'), ('interview', '0007_attempt_is_preview'), ('interview', '0008_author_revision_published'), ('interview', '0009_review_trust'), ('interview', '0010_mock_sessions'), ('interview', '0011_miscon_grade_misconceptions')]

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The models that leave for apps of their own at 0012 come from the one description
        # of them that those apps' first migrations share.
        *_moved_models.created_in_interview("questions"),
        migrations.CreateModel(
            name='Attempt',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('active', 'In progress'), ('finished', 'Finished')], default='active', max_length=10)),
                ('started_at', models.DateTimeField(auto_now_add=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('state_version', models.PositiveBigIntegerField(default=0, editable=False)),
                ('is_preview', models.BooleanField(default=False)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='attempts', to=settings.AUTH_USER_MODEL)),
                ('revision', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='attempts', to='interview.questionrevision')),
            ],
            options={
                'ordering': ['-started_at'],
            },
        ),
        migrations.CreateModel(
            name='StepAnswer',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('step_key', models.CharField(max_length=20)),
                ('follow_up_id', models.CharField(blank=True, default='', max_length=64)),
                ('text', models.TextField(blank=True, default='')),
                ('fields', models.JSONField(blank=True, default=dict)),
                ('version', models.PositiveIntegerField(default=0)),
                ('opened_at', models.DateTimeField(blank=True, null=True)),
                ('seconds_spent', models.PositiveIntegerField(default=0)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('row_version', models.PositiveBigIntegerField(default=0, editable=False)),
                ('attempt', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='answers', to='interview.attempt')),
            ],
        ),
        migrations.CreateModel(
            name='Submission',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('number', models.PositiveIntegerField()),
                ('text', models.TextField(blank=True)),
                ('fields', models.JSONField(blank=True, default=dict)),
                ('draft_version', models.PositiveIntegerField()),
                ('grade_status', models.CharField(choices=[('queued', 'Queued'), ('grading', 'Grading'), ('done', 'Done'), ('offline', 'Offline grade, model unavailable')], default='queued', max_length=10)),
                ('grade_attempts', models.PositiveIntegerField(default=0)),
                ('status_changed_at', models.DateTimeField(auto_now_add=True)),
                ('submitted_at', models.DateTimeField(auto_now_add=True)),
                ('review_reason', models.CharField(blank=True, default='', max_length=300)),
                ('answer', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='submissions', to='interview.stepanswer')),
            ],
            options={
                'ordering': ['answer', 'number'],
            },
        ),
        migrations.CreateModel(
            name='Grade',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('grader', models.CharField(max_length=20)),
                ('model', models.CharField(blank=True, max_length=200)),
                ('prompt_version', models.CharField(blank=True, max_length=40)),
                ('score', models.FloatField()),
                ('points', models.JSONField(default=list)),
                ('feedback', models.TextField(blank=True)),
                ('warnings', models.JSONField(default=list)),
                ('fallback_reason', models.CharField(blank=True, max_length=300)),
                ('latency_ms', models.FloatField(default=0)),
                ('usage', models.JSONField(default=dict)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('slo_review', models.JSONField(blank=True, null=True)),
                ('raw_response', models.TextField(blank=True, default='')),
                ('misconceptions', models.JSONField(blank=True, default=list)),
                ('reviewer', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('submission', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='grades', to='interview.submission')),
            ],
        ),
        *_moved_models.created_in_interview("review"),
        *_moved_models.created_in_interview("mocks"),
        migrations.AddIndex(
            model_name='attempt',
            index=models.Index(fields=['user', '-started_at'], name='interview_a_user_id_d9fbfc_idx'),
        ),
        migrations.AddConstraint(
            model_name='stepanswer',
            constraint=models.UniqueConstraint(fields=('attempt', 'step_key', 'follow_up_id'), name='one_answer_per_step'),
        ),
        migrations.AddIndex(
            model_name='submission',
            index=models.Index(fields=['grade_status', 'status_changed_at'], name='interview_s_grade_s_56e9a7_idx'),
        ),
        migrations.AddConstraint(
            model_name='submission',
            constraint=models.UniqueConstraint(fields=('answer', 'number'), name='unique_submission_number'),
        ),
        migrations.AddConstraint(
            model_name='submission',
            constraint=models.UniqueConstraint(fields=('answer', 'draft_version'), name='one_submission_per_draft'),
        ),
        migrations.AddConstraint(
            model_name='grade',
            constraint=models.UniqueConstraint(fields=('submission', 'grader'), name='one_grade_per_grader'),
        ),
    ]
