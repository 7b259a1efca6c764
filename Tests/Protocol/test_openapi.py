"""The published API description (`/openapi.json`, OpenAPI 3.1, written by
hand in Sources/Web/Public/openapi.json) fuzzed with
schemathesis against a running `vinylogue serve --demo`: every operation
(the JSON API, ListenBrainz's `/1/`, Last.fm's `/2.0/`) is called with
generated inputs, and no answer may be a server error or differ from the
document in status, content type or JSON shape.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance]


@pytest.fixture(scope="module")
def api_schema(module_server):
    return schemathesis.openapi.from_url(module_server.url + "/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_the_document_says(case):
    case.call_and_validate(checks=CHECKS)


def test_the_document_is_served_and_covers_every_api(module_server):
    with module_server.open(module_server.url + "/openapi.json") as answer:
        assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
        document = json.load(answer)
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) == {"/api/u/{user}/chart", "/api/u/{user}/history", "/api/u/{user}/year/{year}", "/api/users", "/1/submit-listens",
                                      "/1/validate-token", "/2.0/"}
