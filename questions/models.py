"""Question content: questions as immutable revisions of their content files, and concept
notes."""

from functools import cached_property

from django.db import models

from questionbank import QuestionSpec

# Tables keep the names they had when these models lived in the `interview` app (db_table).


class Concept(models.Model):
    """A concept note, e.g. the TPOT floor; its Markdown is rendered to HTML once, on load."""

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=500)
    related = models.JSONField(default=list)
    body_markdown = models.TextField()
    body_html = models.TextField()
    # The file exactly as loaded, so export_content writes back the same bytes (empty for a
    # note loaded before this field existed: export then rebuilds the file from the fields).
    source_text = models.TextField(blank=True, default="")
    content_hash = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "interview_concept"
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Question(models.Model):
    """A design question; what it says lives in its revisions, the newest being current."""

    slug = models.SlugField(unique=True)
    current_revision = models.ForeignKey(
        "QuestionRevision", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "interview_question"
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


# Typed specs by content hash: building one from its JSON costs more than a page's own work,
# and the same text always gives the same spec, so a process keeps the ones it has built.
QUESTION_SPECS_KEPT = 256
_question_specs: dict[str, QuestionSpec] = {}


class RevisionImmutableError(Exception):
    pass


class QuestionRevision(models.Model):
    """One version of a question file. Never changed once saved: attempts point here.

    Published revisions are numbered 1, 2, ... and only they become a question's current
    revision, the one candidates see. An unpublished one (`is_published=False`, number 0) is an
    instructor's draft made real so a preview attempt can point at it; no candidate reaches it.
    """

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64)
    source_text = models.TextField()
    source_path = models.CharField(max_length=500, blank=True)
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=500)
    difficulty = models.CharField(max_length=20)
    tags = models.JSONField(default=list)
    spec = models.JSONField(help_text="The parsed front matter: brief and the five steps.")
    scenario_markdown = models.TextField(blank=True)
    rendered = models.JSONField(help_text="HTML of every Markdown field, rendered on load.")
    created_at = models.DateTimeField(auto_now_add=True)
    is_published = models.BooleanField(default=True)

    class Meta:
        db_table = "interview_questionrevision"
        ordering = ["question", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["question", "number"],
                condition=models.Q(is_published=True),
                name="unique_revision_number",
            ),
        ]

    def __str__(self) -> str:
        if not self.is_published:
            return f"{self.question.slug} preview"
        return f"{self.question.slug} r{self.number}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise RevisionImmutableError("a published revision is immutable; publish a new one")
        super().save(*args, **kwargs)

    @cached_property
    def question_spec(self) -> QuestionSpec:
        """The question as typed data, built from the stored front matter once per process
        for each content hash (a published revision never changes)."""
        spec = _question_specs.get(self.content_hash)
        if spec is None:
            spec = QuestionSpec.from_meta(self.spec, scenario=self.scenario_markdown)
            if len(_question_specs) >= QUESTION_SPECS_KEPT:
                _question_specs.clear()
            _question_specs[self.content_hash] = spec
        return spec

    def html(self, step_key: str, follow_up_id: str = "") -> dict[str, str]:
        """The rendered {"prompt", "reference"} HTML of a step, or of one of its follow-ups."""
        step = self.rendered["steps"][step_key]
        return step["follow_ups"][follow_up_id] if follow_up_id else step
