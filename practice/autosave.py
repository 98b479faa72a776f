"""Autosave with a version guard, one way for every editor on the site: a candidate's draft of
a step (practice) and an instructor's working copy of a content file (authoring).

A row that two tabs may edit carries a `version` that grows by one on every save. A form
names the version its tab loaded (`posted_version`); `versioned_save` writes only while the
row is still at that version, so a stale tab is refused (StaleDraft, holding the newer row to
show) instead of overwriting newer text. `save_status` renders the autosave's answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.db import IntegrityError, models, transaction
from django.db.models import F
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone

from practice.errors import FlowError

FORM_INCOMPLETE = "The form was incomplete; reload the page (your draft is saved)."
GONE = "This draft no longer exists; reload the page."
STALE_MESSAGE = (
    "This step was changed in another tab or window since you opened it. Your text here was "
    "not saved over it: copy what you need, then reload to continue."
)


class StaleDraft(FlowError):
    """The row changed in another tab since this one loaded it; nothing was overwritten.
    `current` is the row as it is now stored, for the page to show beside the refused text."""

    def __init__(self, current: models.Model, message: str = STALE_MESSAGE):
        self.current = current
        super().__init__(message)


def posted_version(data: Mapping[str, Any]) -> int:
    """The version a form's tab loaded (its `base_version`); FlowError when the form lacks a
    usable one (nothing can be saved against it, and nothing was)."""
    try:
        return int(data.get("base_version", ""))
    except (TypeError, ValueError):
        raise FlowError(FORM_INCOMPLETE) from None


def versioned_save[Row: models.Model](
    row: Row,
    *,
    key: Mapping[str, Any] | None = None,
    base_version: int,
    values: Mapping[str, Any],
    same: Callable[[Row], bool],
    bump: Mapping[str, int] | None = None,
    stale_message: str = STALE_MESSAGE,
) -> tuple[Row, bool]:
    """Write `values` to `row` if the stored row is still at `base_version`, moving its
    version (and `updated_at`) on and adding `bump`'s amounts to those counters. Returns the
    row as now stored and whether this call wrote it.

    The guard is the UPDATE's own WHERE clause, so of two saves at once only one can match.
    A row not stored yet (no pk, `key` names it) is inserted at version 1 when the tab loaded
    none (`base_version` 0), its unique constraint deciding a race of two first saves. When
    the guard fails the stored row is read back: if `same(stored)` (the same content arrived
    twice, a retried request) it is returned unwritten, else StaleDraft carries it.
    """
    model = type(row)
    manager = model._default_manager
    key = dict(key) if key is not None else {"pk": row.pk}
    now = timezone.now()
    bump = bump or {}
    if row.pk is None:
        if base_version != 0:
            raise FlowError(GONE)
        for name, value in {**values, "version": 1, "updated_at": now}.items():
            setattr(row, name, value)
        try:
            with transaction.atomic():
                row.save(force_insert=True)
            return row, True
        except IntegrityError:  # another tab's first save got there first
            current = manager.filter(**key).first()
    else:
        updated = manager.filter(**key, version=base_version).update(
            **values,
            version=F("version") + 1,
            updated_at=now,
            **{name: F(name) + amount for name, amount in bump.items()},
        )
        if updated:
            # The update matched the version we named, so the row is now exactly this.
            for name, value in {**values, "version": base_version + 1, "updated_at": now}.items():
                setattr(row, name, value)
            for name, amount in bump.items():
                setattr(row, name, getattr(row, name) + amount)
            return row, True
        try:
            row.refresh_from_db()  # in place: the caller's other references see it too
            current = row
        except model.DoesNotExist:
            current = None
    if current is None:
        raise FlowError(GONE)
    if same(current):
        return current, False
    raise StaleDraft(current, stale_message)


def saved_at() -> str:
    """Now, as a save status shows it (UTC, to the second)."""
    return timezone.now().strftime("%H:%M:%S")


def save_status(
    template: str, name: str, row: Any, *, refused: FlowError | None = None, **context: Any
) -> HttpResponse:
    """The autosave's answer, the `save-status` partial of `template` showing `row` (under
    `name`): saved now; or, for a stale tab (409), the newer row beside the refusal; or, for
    any other refusal (422), why. Rendered without the request: the partial needs no CSRF
    token, user or messages."""
    conflict = error = ""
    status = 200
    if isinstance(refused, StaleDraft):
        row, conflict, status = refused.current, str(refused), 409
    elif refused is not None:
        error, status = str(refused), 422
    context |= {
        name: row,
        "conflict": conflict,
        "error": error,
        "saved_at": "" if refused is not None else saved_at(),
    }
    return HttpResponse(render_to_string(f"{template}#save-status", context), status=status)
