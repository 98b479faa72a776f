"""Mock interviews move here from the `interview` app; their tables keep their names."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ('interview', '0012_split_apps_by_domain'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The tables stay: only Django's idea of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
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
                        'db_table': 'interview_mocksession',
                        'ordering': ['-started_at'],
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
                        ('session', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='events', to='mocks.mocksession')),
                    ],
                    options={
                        'db_table': 'interview_mockevent',
                        'ordering': ['session', 'seq'],
                        'constraints': [models.UniqueConstraint(fields=('session', 'seq'), name='one_mock_event_per_seq')],
                    },
                ),
            ],
        ),
    ]
