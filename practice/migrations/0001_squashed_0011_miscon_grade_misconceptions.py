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


class Migration(migrations.Migration):

    replaces = [('interview', '0001_initial'), ('interview', '0002_attempts'), ('interview', '0003_attempt_state_version'), ('interview', '0004_stepanswer_row_version'), ('interview', '0005_drop_version_triggers'), ('interview', '0006_grading_review'), ('interview', '0007_attempt_is_preview'), ('interview', '0008_author_revision_published'), ('interview', '0009_review_trust'), ('interview', '0010_mock_sessions'), ('interview', '0011_miscon_grade_misconceptions')]

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Concept',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('slug', models.SlugField(unique=True)),
                ('title', models.CharField(max_length=200)),
                ('summary', models.CharField(max_length=500)),
                ('related', models.JSONField(default=list)),
                ('body_markdown', models.TextField()),
                ('body_html', models.TextField()),
                ('content_hash', models.CharField(max_length=64)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('source_text', models.TextField(blank=True, default='')),
            ],
            options={
                'ordering': ['title'],
            },
        ),
        migrations.CreateModel(
            name='Question',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('slug', models.SlugField(unique=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'ordering': ['slug'],
            },
        ),
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
            ],
            options={
                'ordering': ['-started_at'],
            },
        ),
        migrations.CreateModel(
            name='MockSession',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('mode', models.CharField(choices=[('human', 'A person, by invite link'), ('app', 'The app')], max_length=10)),
                ('started_at', models.DateTimeField()),
                ('total_minutes', models.FloatField()),
                ('step_minutes', models.JSONField(default=dict)),
                ('ended_at', models.DateTimeField(blank=True, null=True)),
                ('invite_nonce', models.CharField(blank=True, max_length=32)),
                ('invite_expires_at', models.DateTimeField(blank=True, null=True)),
                ('invite_used_at', models.DateTimeField(blank=True, null=True)),
                ('invite_revoked_at', models.DateTimeField(blank=True, null=True)),
                ('share_nonce', models.CharField(blank=True, max_length=32)),
                ('last_seq', models.PositiveIntegerField(default=0)),
                ('attempt', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='mock', to='interview.attempt')),
                ('interviewer', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='mocks_interviewed', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-started_at'],
            },
        ),
        migrations.CreateModel(
            name='QuestionRevision',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('number', models.PositiveIntegerField()),
                ('content_hash', models.CharField(max_length=64)),
                ('source_text', models.TextField()),
                ('source_path', models.CharField(blank=True, max_length=500)),
                ('title', models.CharField(max_length=200)),
                ('summary', models.CharField(max_length=500)),
                ('difficulty', models.CharField(max_length=20)),
                ('tags', models.JSONField(default=list)),
                ('spec', models.JSONField(help_text='The parsed front matter: brief and the five steps.')),
                ('scenario_markdown', models.TextField(blank=True)),
                ('rendered', models.JSONField(help_text='HTML of every Markdown field, rendered on load.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('is_published', models.BooleanField(default=True)),
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='revisions', to='interview.question')),
            ],
            options={
                'ordering': ['question', '-number'],
            },
        ),
        migrations.AddField(
            model_name='question',
            name='current_revision',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='interview.questionrevision'),
        ),
        migrations.AddField(
            model_name='attempt',
            name='revision',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='attempts', to='interview.questionrevision'),
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
            name='GradeDispute',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('reason', models.TextField()),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('submission', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='disputes', to='interview.submission')),
            ],
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
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='calibration_labels', to='interview.question')),
                ('submission', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='calibration_labels', to='interview.submission')),
            ],
            options={
                'ordering': ['question', 'step_key', 'created_at'],
            },
        ),
        migrations.CreateModel(
            name='MockEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('seq', models.PositiveIntegerField()),
                ('kind', models.CharField(max_length=30)),
                ('step_key', models.CharField(blank=True, default='', max_length=20)),
                ('payload', models.JSONField(blank=True, default=dict)),
                ('at', models.DateTimeField()),
                ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='events', to='interview.mocksession')),
            ],
            options={
                'ordering': ['session', 'seq'],
                'constraints': [models.UniqueConstraint(fields=('session', 'seq'), name='one_mock_event_per_seq')],
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
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='calibration_runs', to='interview.question')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('question', 'step_key', 'grader'), name='one_run_per_step_grader')],
            },
        ),
        migrations.AddConstraint(
            model_name='questionrevision',
            constraint=models.UniqueConstraint(condition=models.Q(('is_published', True)), fields=('question', 'number'), name='unique_revision_number'),
        ),
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
            model_name='gradedispute',
            constraint=models.UniqueConstraint(fields=('submission',), name='one_dispute_per_submission'),
        ),
        migrations.AddConstraint(
            model_name='grade',
            constraint=models.UniqueConstraint(fields=('submission', 'grader'), name='one_grade_per_grader'),
        ),
        migrations.AddConstraint(
            model_name='calibrationlabel',
            constraint=models.UniqueConstraint(fields=('question', 'step_key', 'follow_up_id', 'answer_hash'), name='one_label_per_answer'),
        ),
    ]
