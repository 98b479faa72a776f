"""Database sessions, read with one prepared primary-key lookup and a remembered decoding.

Django's database store, except for the two steps every signed-in request takes:
- loading the row goes through `config.rows.get_row` instead of the ORM's query compiler: the
  same row, the same expiry rule, about a fifth of the cost;
- decoding it (check the signature, base64, zlib, JSON: about 20 us) happens once per distinct
  `session_data` string. The string is the signed value itself, so equal strings decode
  equally; each request still gets fresh objects, parsed from the remembered JSON. Data that
  fails to decode is not remembered, so it is logged as corrupted every time, as in Django.

Writing, rotating and flushing are Django's own.
"""

from __future__ import annotations

import json

from django.contrib.sessions.backends import db
from django.core.signing import JSONSerializer
from django.utils import timezone

from config.rows import get_row

_DECODED: dict[str, str] = {}  # session_data -> its data as JSON
_DECODED_MAX = 4096


class SessionStore(db.SessionStore):
    def _get_session_from_db(self):
        session = get_row(self.model, session_key=self.session_key)
        if session is None or session.expire_date <= timezone.now():
            self._session_key = None  # unknown or expired: start afresh, as Django does
            return None
        return session

    def decode(self, session_data):
        if self.serializer is not JSONSerializer:  # the JSON round trip is exact only for it
            return super().decode(session_data)
        text = _DECODED.get(session_data)
        if text is None:
            data = super().decode(session_data)
            if not data:
                return data
            if len(_DECODED) >= _DECODED_MAX:
                _DECODED.clear()
            _DECODED[session_data] = text = json.dumps(data)
        return json.loads(text)
