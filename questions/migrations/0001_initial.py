"""Question content moves here from the `interview` app; its tables keep their names."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ('interview', '0001_squashed_0011_miscon_grade_misconceptions'),
    ]

    operations = [
        # The tables stay: only Django's idea of which app owns them changes.
        migrations.SeparateDatabaseAndState(
            state_operations=[
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
                        ('source_text', models.TextField(blank=True, default='')),
                        ('content_hash', models.CharField(max_length=64)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'interview_concept',
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
                        'db_table': 'interview_question',
                        'ordering': ['slug'],
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
                        ('question', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='revisions', to='questions.question')),
                    ],
                    options={
                        'db_table': 'interview_questionrevision',
                        'ordering': ['question', '-number'],
                    },
                ),
                migrations.AddField(
                    model_name='question',
                    name='current_revision',
                    field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='questions.questionrevision'),
                ),
                migrations.AddConstraint(
                    model_name='questionrevision',
                    constraint=models.UniqueConstraint(condition=models.Q(('is_published', True)), fields=('question', 'number'), name='unique_revision_number'),
                ),
            ],
        ),
    ]
