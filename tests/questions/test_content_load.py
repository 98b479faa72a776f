"""load_content: idempotent, revisions on edit, and the seed questions complete."""

import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from questionbank import STEP_KEYS
from questions.models import Concept, Question, QuestionRevision, RevisionImmutableError
from questions.services import content_load
from tests.conftest import CORE_SLUGS

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"
BANK = sorted(p.stem for p in (CONTENT / "questions").glob("*.md"))
# The seed's interviewer follow-ups, per question (how many each must carry).
SEED_FOLLOW_UPS = {"chat-api-50qps": 4, "multi-tenant-lora": 3, "long-context-rag": 3}


@pytest.fixture
def content_copy(tmp_path) -> Path:
    copy = tmp_path / "content"
    shutil.copytree(CONTENT / "questions", copy / "questions")
    shutil.copytree(CONTENT / "concepts", copy / "concepts")
    return copy


@pytest.mark.django_db
def test_loading_twice_creates_no_new_revision(content_copy):
    first = content_load(root=content_copy)
    assert not first.problems
    assert sorted(first.created) == [f"{s} r1" for s in BANK]
    second = content_load(root=content_copy)
    assert second.created == []
    assert QuestionRevision.objects.count() == len(BANK)
    assert Concept.objects.count() >= 10


@pytest.mark.django_db
def test_editing_a_file_creates_a_new_current_revision(content_copy):
    content_load(root=content_copy)
    path = content_copy / "questions" / "long-context-rag.md"
    path.write_text(path.read_text() + "\nOne more paragraph for the scenario.\n")
    report = content_load(root=content_copy)
    assert report.created == ["long-context-rag r2"]
    question = Question.objects.get(slug="long-context-rag")
    assert question.current_revision.number == 2
    assert "One more paragraph" in question.current_revision.rendered["scenario"]
    old = question.revisions.get(number=1)
    assert "One more paragraph" not in old.rendered["scenario"]


@pytest.mark.django_db
def test_a_revision_is_immutable(content_loaded):
    revision = QuestionRevision.objects.first()
    revision.title = "changed"
    with pytest.raises(RevisionImmutableError):
        revision.save()


@pytest.mark.django_db
def test_a_broken_file_loads_nothing(content_copy):
    path = content_copy / "questions" / "chat-api-50qps.md"
    path.write_text(path.read_text().replace("\n  clarify:\n", "\n  clarifi:\n", 1))
    report = content_load(root=content_copy)
    assert report.problems
    assert QuestionRevision.objects.count() == 0


def test_the_bank_publishes_at_least_fifteen_questions_and_keeps_the_seed_three():
    assert len(BANK) >= 15 and set(CORE_SLUGS) <= set(BANK)


@pytest.mark.django_db
def test_load_content_command_is_idempotent(capsys):
    call_command("load_content")
    call_command("load_content")
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith(f"0 new revision(s), {len(BANK)} unchanged")


@pytest.mark.django_db
@pytest.mark.parametrize("slug", CORE_SLUGS)
def test_seed_question_is_complete(content_loaded, slug):
    revision = Question.objects.get(slug=slug).current_revision
    spec = revision.question_spec
    assert [step.key for step in spec.steps] == list(STEP_KEYS)
    for key in ("clarify", "architecture", "bottlenecks", "tradeoffs"):
        assert len(spec.step(key).rubric) >= 3, key
    assert len(spec.step("estimate").quantities) >= 4
    for key in STEP_KEYS:
        assert len(spec.step(key).reference.split()) >= 60, f"{key} reference too short"
        assert revision.html(key)["reference"].startswith("<")
    follow_ups = spec.step("tradeoffs").follow_ups
    assert len(follow_ups) >= SEED_FOLLOW_UPS[slug]
    for fu in follow_ups:
        assert fu.reference.strip() and len(fu.rubric) >= 2
        assert spec.follow_up(fu.id) is fu
