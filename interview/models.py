"""Questions (as immutable revisions of their content files) and concept notes."""

from django.db import models


class Concept(models.Model):
    """A concept note, e.g. the TPOT floor; its Markdown is rendered to HTML once, on load."""

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=500)
    related = models.JSONField(default=list)
    body_markdown = models.TextField()
    body_html = models.TextField()
    content_hash = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
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
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class RevisionImmutableError(Exception):
    pass


class QuestionRevision(models.Model):
    """One published version of a question file. Never changed once saved: attempts point here."""

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

    class Meta:
        ordering = ["question", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["question", "number"], name="unique_revision_number"),
        ]

    def __str__(self) -> str:
        return f"{self.question.slug} r{self.number}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise RevisionImmutableError("a published revision is immutable; publish a new one")
        super().save(*args, **kwargs)

    @property
    def brief(self) -> dict:
        return self.spec.get("brief", {})

    def step(self, key: str) -> dict:
        return self.spec["steps"][key]
